// A config document read from JSON text, whose syntax error says where (line and column) and
// why without quoting the text: V8's own messages show the text around the error, and a config
// holds provider keys.

/** `text` parsed as JSON, else an Error `${what} is not valid JSON: <why> at line L, column C`. */
export function parseJson(text, what) {
  try {
    return JSON.parse(text);
  } catch {
    const { at, reason } = locateSyntaxError(text);
    const before = text.slice(0, at).split("\n");
    throw new Error(`${what} is not valid JSON: ${reason} at line ${before.length}, column ${before.at(-1).length + 1}`);
  }
}

const WHITESPACE = " \t\n\r";
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Where the first syntax error in `text` is (an offset), and what is wrong there. */
function locateSyntaxError(text) {
  let i = 0;
  const fail = (reason) => {
    throw { at: i, reason };
  };
  const space = () => {
    while (i < text.length && WHITESPACE.includes(text[i])) i += 1;
  };
  const string = () => {
    i += 1;
    for (;;) {
      if (i >= text.length) fail("a string is not closed");
      const c = text[i];
      if (c === '"') return void (i += 1);
      if (c < " ") fail("a control character (such as a line break) inside a string; escape it");
      if (c !== "\\") {
        i += 1;
        continue;
      }
      const escaped = text[i + 1];
      if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) i += 2;
      else if (escaped === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
      else fail("an invalid escape inside a string");
    }
  };
  const members = (close, member) => {
    i += 1;
    space();
    if (text[i] === close) return void (i += 1);
    for (;;) {
      member();
      space();
      if (text[i] === ",") i += 1;
      else if (text[i] === close) return void (i += 1);
      else fail(`expected ',' or '${close}'`);
    }
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === "{") {
      return members("}", () => {
        space();
        if (text[i] !== '"') fail(text[i] === "}" ? "a comma before '}' (trailing commas are not JSON)" : "expected a property name in double quotes");
        string();
        space();
        if (text[i] !== ":") fail("expected ':' after a property name");
        i += 1;
        value();
      });
    }
    if (c === "[") return members("]", value);
    if (c === '"') return string();
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) return void (i = NUMBER.lastIndex);
    for (const word of ["true", "false", "null"]) if (text.startsWith(word, i)) return void (i += word.length);
    if (i >= text.length) fail("the text ends where a value should be");
    fail("expected a value (an object, array, string in double quotes, number, true, false or null)");
  };
  try {
    value();
    space();
    if (i < text.length) fail("more text after the end of the JSON value");
  } catch (e) {
    if (e instanceof RangeError) return { at: 0, reason: "nested too deeply to read" };
    if (e?.reason) return e;
    throw e;
  }
  // JSON.parse refused what this scan accepts: name no position rather than a wrong one.
  return { at: 0, reason: "refused by JSON.parse" };
}
