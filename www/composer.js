// The message box: Enter sends, Shift+Enter adds a line, Stop or Esc aborts the answer, and images
// picked, dropped or pasted are staged (or refused, with the reason) for the next message.
import { $, h } from "./dom.js";
import { state } from "./state.js";
import { ACCEPT, MAX_IMAGES, MAX_IMAGE_BYTES, dataUrl, readImage, size } from "./attach.js";
import { announce, send } from "./conversation.js";
import { renderPanel } from "./panel.js";
import { dialog } from "./settings.js";

/** Shows why a file was not attached (an alert, so a screen reader says it), or clears it. */
function showAttachError(message) {
  const box = $("attach-error");
  box.textContent = message ?? "";
  box.hidden = !message;
}

/** The previews of the images staged for the next message, each with its remove button. */
function renderStaged() {
  const list = $("attachments");
  list.replaceChildren(...state.staged.map((image) => {
    const remove = h("button", { type: "button", className: "btn ghost icon remove", textContent: "✕", ariaLabel: `Remove ${image.name}` });
    remove.addEventListener("click", () => unstage(image));
    return h("li", { className: "attachment" },
      h("img", { src: dataUrl(image), alt: image.name }),
      h("span", { className: "attachment-name", textContent: image.name, title: image.name, ariaHidden: "true" }), // the alt says it
      h("span", { className: "attachment-size mono", textContent: size(image.size) }),
      remove);
  }));
  list.hidden = state.staged.length === 0;
}

function unstage(image) {
  const at = state.staged.indexOf(image);
  state.staged = state.staged.filter((other) => other !== image);
  renderStaged();
  showAttachError(null);
  announce(`Removed ${image.name}.`);
  const buttons = $("attachments").querySelectorAll(".remove");
  (buttons[Math.min(at, buttons.length - 1)] ?? $("prompt")).focus();
}

let attaching = Promise.resolve(); // one batch at a time, so the count per message holds

/**
 * Stages the image files among `files` for the next message; a file that cannot be sent (not an
 * image the providers read, too large, one image too many) is refused with the reason shown.
 */
function attach(files) {
  attaching = attaching.then(() => stage(files));
  return attaching;
}

async function stage(files) {
  const refused = [];
  const added = [];
  for (const file of files) {
    if (state.staged.length >= MAX_IMAGES) {
      refused.push(`“${file.name}” was not attached: a message takes at most ${MAX_IMAGES} images.`);
      continue;
    }
    const { image, error } = await readImage(file);
    if (error) refused.push(error);
    else {
      state.staged.push(image);
      added.push(image);
    }
  }
  renderStaged();
  showAttachError(refused.length ? refused.join(" ") : null);
  if (added.length > 0) {
    const names = added.map((image) => `${image.name} (${size(image.size)})`).join(", ");
    announce(`Attached ${names}. ${state.staged.length} image${state.staged.length === 1 ? "" : "s"} will go with the next message.`);
  }
}

/** Whether a drag carries files (and not text or a link from the page). */
const carriesFiles = (event) => Array.from(event.dataTransfer?.types ?? []).includes("Files");

export function setupAttachments() {
  const input = $("attach-input");
  const composer = $("composer");
  input.accept = ACCEPT;
  $("attach").title = `Attach an image (PNG, JPEG or WebP, up to ${size(MAX_IMAGE_BYTES)})`;
  $("attach").addEventListener("click", () => input.click());
  input.addEventListener("change", async () => {
    const files = [...input.files];
    input.value = ""; // picking the same file again fires change again
    await attach(files);
    $("prompt").focus();
  });
  // A file dropped anywhere else would make the browser open it in place of the conversation.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (event) => {
      if (carriesFiles(event) && !composer.contains(event.target)) {
        event.preventDefault();
        event.dataTransfer.dropEffect = "none";
      }
    });
  }
  let depth = 0; // dragenter/dragleave fire for each child the drag crosses
  composer.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth += 1;
    composer.classList.add("dropping");
  });
  composer.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  });
  composer.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) composer.classList.remove("dropping");
  });
  composer.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth = 0;
    composer.classList.remove("dropping");
    attach([...event.dataTransfer.files]).then(() => $("prompt").focus());
  });
  $("prompt").addEventListener("paste", (event) => {
    const files = [...(event.clipboardData?.files ?? [])];
    if (files.length === 0) return; // plain text pastes as usual
    event.preventDefault();
    attach(files);
  });
}

export function setupComposer() {
  const prompt = $("prompt");
  const grow = () => {
    prompt.style.height = "auto";
    prompt.style.height = `${Math.min(prompt.scrollHeight, 200)}px`;
  };
  prompt.addEventListener("input", grow);
  prompt.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = prompt.value.trim();
    if ((!text && state.staged.length === 0) || document.body.classList.contains("busy")) return;
    const images = state.staged;
    state.staged = [];
    renderStaged();
    showAttachError(null);
    prompt.value = "";
    grow();
    send(text, images);
  });
  $("stop").addEventListener("click", () => state.current?.controller.abort());
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && document.body.classList.contains("busy") && !dialog.open) state.current?.controller.abort();
  });
  // Hidden tabs wake the ticker late; redraw from the real clock the moment the tab is back.
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) renderPanel();
  });
}
