// Images attached to a message are checked here, before anything is sent: a file no provider
// would read is refused on the page with the reason, instead of a 400 from upstream after the
// deadline has started. The image's type is read from its first bytes, not its name, because the
// providers check the bytes against the media type they are told.

/**
 * The image types every one of the four formats' providers reads: OpenAI and Anthropic also take
 * GIF, Gemini does not, and a route may fail over to any of them.
 */
const SIGNATURES = [
  { mediaType: "image/png", name: "PNG", matches: (b) => startsWith(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mediaType: "image/jpeg", name: "JPEG", matches: (b) => startsWith(b, 0, [0xff, 0xd8, 0xff]) },
  { mediaType: "image/webp", name: "WebP", matches: (b) => startsWith(b, 0, ascii("RIFF")) && startsWith(b, 8, ascii("WEBP")) },
];
const HEAD_BYTES = 12;
const KINDS = "a PNG, JPEG or WebP image";

/** The media types the picker offers. */
export const ACCEPT = SIGNATURES.map((s) => s.mediaType).join(",");

/**
 * Anthropic refuses an image whose base64 text is over 5 MiB, the lowest limit of the four
 * providers; base64 is 4/3 of the bytes, so 3.75 MiB of file is the most that fits.
 */
export const MAX_IMAGE_BYTES = (5 * 1024 * 1024 * 3) / 4;

/** Images per message: each is sent again with every later message of the conversation. */
export const MAX_IMAGES = 4;

function ascii(text) {
  return [...text].map((c) => c.charCodeAt(0));
}

function startsWith(bytes, at, expected) {
  return bytes.length >= at + expected.length && expected.every((byte, i) => bytes[at + i] === byte);
}

/** "812 bytes", "12 KB", "3.75 MB". */
export function size(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${Number((bytes / (1024 * 1024)).toFixed(2))} MB`;
}

/** The image type of a file's first bytes, or null. */
export function sniff(head) {
  return SIGNATURES.find((s) => s.matches(head)) ?? null;
}

/** Why `file`, whose first bytes are `head`, cannot be sent; null when it can. */
export function refusal(file, head) {
  const name = `“${file.name}”`;
  const kind = sniff(head);
  if (!kind) {
    const claimed = SIGNATURES.find((s) => s.mediaType === file.type);
    if (claimed) return `${name} is named as a ${claimed.name} image but its content is not ${KINDS}, so it was not attached.`;
    if (file.type.startsWith("image/")) {
      return `${name} is an image of type ${file.type}, which not every provider reads, so it was not attached: ` +
        `attach ${KINDS} (the types all four formats' providers take).`;
    }
    return `${name} is not an image (${file.type || "a file of unknown type"}), so it was not attached: attach ${KINDS}.`;
  }
  if (file.size > MAX_IMAGE_BYTES) {
    return `${name} is ${size(file.size)}, above the ${size(MAX_IMAGE_BYTES)} an image may be (5 MB once base64-encoded, ` +
      "the most Anthropic takes per image), so it was not attached: attach a smaller image.";
  }
  return null;
}

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/**
 * Reads `file` as an image to send: `{ image: { name, size, mediaType, data } }` (data is base64)
 * or `{ error }`, a sentence that says why not.
 */
export async function readImage(file) {
  let head;
  try {
    head = new Uint8Array(await file.slice(0, HEAD_BYTES).arrayBuffer());
  } catch (e) {
    return { error: `“${file.name}” could not be read (${e?.message ?? e}), so it was not attached.` };
  }
  const error = refusal(file, head);
  if (error) return { error };
  const { mediaType } = sniff(head);
  try {
    const url = await readAsDataUrl(file);
    return { image: { name: file.name, size: file.size, mediaType, data: url.slice(url.indexOf(",") + 1) } };
  } catch (e) {
    return { error: `“${file.name}” could not be read (${e?.message ?? e}), so it was not attached.` };
  }
}

/** The `data:` URL that shows an image read by `readImage`. */
export function dataUrl(image) {
  return `data:${image.mediaType};base64,${image.data}`;
}
