//! Small writers every client format's answer shares: an SSE frame, a nullable string field, and
//! token counts where a client needs numbers.

use llm_baton_wire::write::JsonWriter;

use crate::chat::Usage;

/// (input, output) token counts for a client body. Every client format requires numbers, so a
/// count the provider did not report (or reported as no count) is sent as 0.
pub(crate) fn token_counts(usage: Usage) -> (u64, u64) {
    (usage.input_tokens.unwrap_or(0), usage.output_tokens.unwrap_or(0))
}

/// One SSE frame whose data is the JSON `write` writes; `event` is the event's name (Anthropic
/// and Responses name theirs, OpenAI Chat sends bare `data:` lines). The writer is a `dyn`, so
/// every event of every format shares this one function.
pub(crate) fn sse(out: &mut String, event: Option<&str>, write: &dyn Fn(&mut JsonWriter)) {
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    out.push_str("data: ");
    let mut w = JsonWriter::appending(std::mem::take(out));
    write(&mut w);
    *out = w.finish();
    out.push_str("\n\n");
}

/// `"key":"value"`, or `"key":null` for `None`: a field the client's API always lists.
pub(crate) fn string_or_null(w: &mut JsonWriter, key: &str, value: Option<&str>) {
    w.key(key);
    match value {
        Some(value) => w.string(value),
        None => w.null(),
    }
}
