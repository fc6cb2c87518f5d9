// What the page holds between events, shared by its modules: the applied config and its Baton, the
// keys, the conversation, the staged images, the call in flight, the armed fault. The values that
// change sit in one object, so every module reads and sets the same ones (an imported `let` cannot
// be assigned).

export const state = {
  providerUrl: null, // the scripted provider, from /config.json (served by www/serve.mjs)
  configText: "", // the applied config, as typed (never holds keys)
  config: null, // configText parsed
  baton: null,
  route: null,
  staged: [], // images attached to the next message: { name, size, mediaType, data }
  current: null, // the call in flight, or the last one
  armed: null, // the demo fault for the next message
};
export const keys = new Map(); // target name -> API key, in memory (sessionStorage only on request)
export const history = []; // the conversation sent with each message, images included
