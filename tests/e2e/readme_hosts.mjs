// Preloaded (`node --import`, `deno run --preload`) into the README's examples by readme.test.mjs,
// so they run as written while their providers' real hosts lead to the scripted provider on
// loopback. BATON_README_HOSTS maps an origin to its replacement, e.g.
// {"https://api.openai.com": "http://127.0.0.1:4321/s/readme-openai"}; a URL with another origin
// is fetched as it is.
import process from "node:process";

const hosts = JSON.parse(process.env.BATON_README_HOSTS ?? "{}");
const realFetch = globalThis.fetch;

function redirect(url) {
  for (const [origin, to] of Object.entries(hosts)) {
    if (url === origin || url.startsWith(`${origin}/`)) return to + url.slice(origin.length);
  }
  return url;
}

globalThis.fetch = (input, init) => {
  if (input instanceof Request) return realFetch(new Request(redirect(input.url), input), init);
  return realFetch(redirect(String(input)), init);
};
