// What the cloud scenario modules (azure_, bedrock_, vertex_ and clouds_scenarios.mjs) and the
// gateway suites share: a check that compares JSON whatever its keys' order, a stream read to its
// end, and the text of a gateway's OpenAI Chat SSE. The scenarios run in every runtime
// (everywhere.mjs), so this uses nothing but the language.

/** Throws `what: expected …, got …` unless `actual` and `expected` are the same JSON. */
export function eq(actual, expected, what) {
  const [a, e] = [canonical(actual), canonical(expected)];
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

function canonical(v) {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
  return JSON.stringify(v) ?? "undefined";
}

/** What a stream reads: its text (and in how many pieces), its content_filter events, and the done event. */
export async function streamed(baton, route, request, options) {
  const read = { text: "", pieces: 0, filters: [], done: null };
  for await (const ev of baton.stream(route, request, options)) {
    if (ev.type === "text") {
      read.text += ev.text;
      read.pieces += 1;
    }
    if (ev.type === "content_filter") read.filters.push(Object.fromEntries(Object.entries(ev).filter(([k]) => k !== "type")));
    if (ev.type === "done") read.done = ev;
  }
  return read;
}

/** The text of an OpenAI Chat SSE body, and whether it ended with [DONE]. */
export function chatSseText(raw) {
  let text = "";
  for (const line of raw.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    text += JSON.parse(line.slice(6)).choices?.[0]?.delta?.content ?? "";
  }
  return { text, done: raw.endsWith("data: [DONE]\n\n") };
}
