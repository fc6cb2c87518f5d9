// Finds where a config path such as `routes.chat.fallback[0].attempts` (BatonError.path) sits in
// the JSON text the user typed, so the settings editor can show the error on that line.

/** `a.b[0]["odd key"]` -> ["a", "b", 0, "odd key"]. */
export function parsePath(path) {
  const parts = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g)) {
    parts.push(m[1] ?? (m[2] !== undefined ? Number(m[2]) : JSON.parse(m[3])));
  }
  return parts;
}

/** Text ranges of every key (and array element) of valid JSON, keyed by JSON.stringify(path). */
function spans(text) {
  const found = new Map();
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const string = () => {
    const start = i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i));
  };
  const value = (path) => {
    skipSpace();
    const open = text[i];
    if (open === "{" || open === "[") {
      i++;
      for (let n = 0; ; n++) {
        skipSpace();
        if (text[i] === "}" || text[i] === "]") break;
        const start = i;
        let child;
        if (open === "{") {
          child = [...path, string()];
          found.set(JSON.stringify(child), { start, end: i });
          skipSpace();
          i++; // the colon
          value(child);
        } else {
          child = [...path, n];
          value(child);
          found.set(JSON.stringify(child), { start, end: i });
        }
        skipSpace();
        if (text[i] === ",") i++;
      }
      i++;
    } else if (open === '"') {
      string();
    } else {
      while (i < text.length && !/[\s,}\]]/.test(text[i])) i++;
    }
  };
  value([]);
  return found;
}

/**
 * The range and 1-based line of `path` in `text` (valid JSON), or of its nearest ancestor that is
 * written there (a missing field points at the object that lacks it).
 */
export function locate(text, path) {
  const found = spans(text);
  const parts = parsePath(path);
  for (let n = parts.length; n > 0; n--) {
    const span = found.get(JSON.stringify(parts.slice(0, n)));
    if (span) return { ...span, line: lineAt(text, span.start) };
  }
  return { start: 0, end: 0, line: 1 };
}

/** The 1-based line of a character offset. */
export function lineAt(text, offset) {
  return text.slice(0, offset).split("\n").length;
}
