// The settings dialog: the config editor (a line gutter, an error shown on the line of the field it
// names), the API key fields, "Use a gateway", and applying a config: a new Baton, or the error.
import { Baton, BatonError } from "../pkg/browser.js";
import { $, h } from "./dom.js";
import { state, keys } from "./state.js";
import { locate, lineAt } from "./locate.js";
import { defaultConfig, gatewayConfig, scenarioOf, renderFaults } from "./faults.js";
import { renderPanel, renderTargets } from "./panel.js";

// ---- Config and keys --------------------------------------------------------------------------

export const KEYS_ITEM = "llm-baton.keys";
const LINE_PX = 20; // the config editor's line height (style.css)

/** Checks `text` and builds a Baton from it plus the keys; returns an error `{message, path?, at?}` or null. */
export function applyConfig(text, newKeys) {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    const pos = /position (\d+)/.exec(e.message);
    return { message: `Not valid JSON: ${e.message}`, at: pos ? Number(pos[1]) : text.length };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return { message: "The config must be a JSON object." };
  for (const [name, target] of Object.entries(parsed.targets ?? {})) {
    if (target && typeof target === "object" && "apiKey" in target) {
      return { path: `targets.${name}.apiKey`, message: `targets.${name}.apiKey: keep keys out of the config text; type them in the key fields below, which stay in memory` };
    }
  }
  const withKeys = structuredClone(parsed);
  for (const [name, key] of newKeys) {
    if (key && withKeys.targets?.[name] && typeof withKeys.targets[name] === "object") withKeys.targets[name].apiKey = key;
  }
  let next;
  try {
    next = new Baton(withKeys);
  } catch (e) {
    if (e instanceof BatonError && e.kind === "config") return { message: e.message, path: e.path };
    throw e;
  }
  const routes = next.routes();
  if (routes.length === 0) return { path: "routes", message: "routes is empty: name at least one route or target to answer" };
  state.configText = text;
  state.config = parsed;
  state.baton = next;
  state.route = routes[0];
  keys.clear();
  for (const [name, key] of newKeys) if (key) keys.set(name, key);
  renderWhere();
  renderFaults();
  state.current = null;
  renderPanel();
  renderTargets();
  return null;
}

function renderWhere() {
  const hosts = [...new Set(Object.values(state.config.targets).map((t) => {
    if (scenarioOf(t)) return "scripted provider";
    try {
      return new URL(t.baseUrl).host;
    } catch {
      return t.baseUrl;
    }
  }))];
  $("where").textContent = `route ${state.route} · ${Object.keys(state.config.targets).join(", ")} · ${hosts.join(", ")}`;
}

function rememberKeys(remember) {
  if (remember && keys.size > 0) sessionStorage.setItem(KEYS_ITEM, JSON.stringify(Object.fromEntries(keys)));
  else sessionStorage.removeItem(KEYS_ITEM);
}

// ---- The dialog -------------------------------------------------------------------------------

export const dialog = $("settings");
const editor = $("config-text");
let draftKeys = new Map();

function openSettings() {
  editor.value = state.configText;
  draftKeys = new Map(keys);
  showConfigError(null);
  renderGutter();
  renderKeyFields();
  dialog.showModal();
  editor.focus();
  editor.setSelectionRange(0, 0);
  editor.scrollTop = 0;
}

function renderGutter() {
  const count = editor.value.split("\n").length;
  const lines = $("gutter-lines");
  if (lines.childElementCount !== count) {
    lines.replaceChildren(...Array.from({ length: count }, (_, i) => h("div", { textContent: String(i + 1) })));
  }
  syncScroll();
}

function syncScroll() {
  $("gutter-lines").style.transform = `translateY(${-editor.scrollTop}px)`;
  const mark = $("line-mark");
  if (!mark.hidden) mark.style.transform = `translateY(${(Number(mark.dataset.line) - 1) * LINE_PX - editor.scrollTop}px)`;
}

/** Shows an error on the line of the field it names (or at a JSON syntax error's position). */
function showConfigError(error) {
  const box = $("config-error");
  const mark = $("line-mark");
  for (const el of $("gutter-lines").querySelectorAll(".bad")) el.classList.remove("bad");
  editor.ariaInvalid = String(Boolean(error));
  if (!error) {
    box.hidden = true;
    mark.hidden = true;
    return;
  }
  const text = editor.value;
  const span = error.path ? locate(text, error.path) : { start: error.at ?? 0, end: (error.at ?? 0) + 1, line: lineAt(text, error.at ?? 0) };
  box.replaceChildren(h("span", { className: "where-line mono", textContent: `Line ${span.line}` }), document.createTextNode(error.message));
  box.dataset.line = String(span.line);
  box.dataset.path = error.path ?? "";
  box.hidden = false;
  mark.dataset.line = String(span.line);
  mark.hidden = false;
  $("gutter-lines").children[span.line - 1]?.classList.add("bad");
  editor.focus();
  editor.setSelectionRange(span.start, span.end);
  editor.scrollTop = Math.max(0, (span.line - 4) * LINE_PX);
  syncScroll();
}

function renderKeyFields() {
  let names;
  try {
    names = Object.keys(JSON.parse(editor.value).targets ?? {});
  } catch {
    return; // keep the fields of the last valid text while the user types
  }
  const fields = names.map((name) => {
    const input = h("input", { type: "password", id: `key-${name}`, autocomplete: "off", spellcheck: false, placeholder: "no key", value: draftKeys.get(name) ?? "" });
    input.addEventListener("input", () => draftKeys.set(name, input.value));
    return h("div", { className: "key" }, h("label", { htmlFor: input.id, textContent: name }), input);
  });
  $("keys").replaceChildren(...(fields.length ? fields : [h("p", { className: "hint", textContent: "No targets in the config." })]));
}

export function setupSettings() {
  $("open-settings").addEventListener("click", openSettings);
  $("close-settings").addEventListener("click", () => dialog.close());
  $("cancel-settings").addEventListener("click", () => dialog.close());
  editor.addEventListener("scroll", syncScroll);
  editor.addEventListener("input", () => {
    renderGutter();
    showConfigError(null);
    renderKeyFields();
  });
  $("reset-config").addEventListener("click", () => {
    editor.value = JSON.stringify(defaultConfig(), null, 2);
    editor.dispatchEvent(new Event("input"));
  });
  $("use-gateway").addEventListener("click", () => {
    const url = $("gateway-url").value.trim() || $("gateway-url").placeholder;
    editor.value = JSON.stringify(gatewayConfig(url, $("gateway-model").value.trim() || "chat"), null, 2);
    editor.dispatchEvent(new Event("input"));
    editor.focus();
  });
  $("settings-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const error = applyConfig(editor.value, draftKeys);
    showConfigError(error);
    if (error) return;
    rememberKeys($("remember-keys").checked);
    dialog.close();
  });
}
