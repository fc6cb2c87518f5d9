// The chat page: one llm-baton call per message, streamed, with the gate's decisions made visible
// (notices in the conversation, a timeline of attempts, the deadline counting down, each target's
// circuit breaker) and a Stop button that aborts the call upstream. A message may carry images
// (picked, dropped or pasted), sent as image parts and kept in the conversation for later turns.
// All times come from performance.now(), never from counting timer ticks: a hidden tab wakes
// timers late, and the page must still tell the truth when it comes back.
//
// A real app would `import { Baton } from "llm-baton"`; this page's modules import the package's
// browser entry by path so it runs without a bundler.
//
// The page's modules: state.js (what it holds), faults.js (the scripted provider and the demo
// faults), conversation.js (the messages and the call), panel.js (deadline, attempts, breakers,
// result), settings.js (the config and keys), composer.js (the message box and its images), with
// dom.js, words.js, attach.js and locate.js beneath them. This file starts the page.
import { $ } from "./dom.js";
import { state } from "./state.js";
import { defaultConfig } from "./faults.js";
import { KEYS_ITEM, applyConfig, setupSettings } from "./settings.js";
import { setupAttachments, setupComposer } from "./composer.js";

async function start() {
  state.providerUrl = await fetch("config.json").then((r) => (r.ok ? r.json() : {})).then((j) => j.providerUrl ?? null, () => null);
  const saved = sessionStorage.getItem(KEYS_ITEM);
  const savedKeys = new Map(saved ? Object.entries(JSON.parse(saved)) : []);
  $("remember-keys").checked = Boolean(saved);
  const error = applyConfig(JSON.stringify(defaultConfig(), null, 2), savedKeys);
  if (error) throw new Error(`the default config was refused: ${error.message}`);
  setupSettings();
  setupComposer();
  setupAttachments();
  $("attach").disabled = false;
  $("prompt").disabled = false;
  $("send").disabled = false;
  $("prompt").focus();
  document.body.dataset.ready = "true";
}

start();
