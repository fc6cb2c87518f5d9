//! Playing a step: deciding the answer, then sending it on the step's schedule.
//!
//! An answer is laid out ahead of time as [`Piece`]s (bytes, each after a wait) and an
//! [`Ending`]; [`ScriptedBody`] then sends them with tokio timers. Laying it out first keeps the
//! faults (stall, in-stream error, missing success marker, dripping) independent of the format:
//! the format only says which events are content and which are its success marker.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::num::NonZeroUsize;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use hyper::ext::ReasonPhrase;
use hyper::header::{HeaderValue, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Response, StatusCode};
use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::{sleep, Sleep};

use crate::scenario::{Outcome, RawBody, RequestTracker, Step};
use crate::wire::{reasoning, Answer, ErrorInfo, Format, LastTurn, Output, Usage};

const DEFAULT_TEXT: &str = "Hello from the scripted provider.";
const DEFAULT_INPUT_TOKENS: u64 = 3;
/// How long `stallAfterEvents` holds the connection when `stallMs` is not given.
const DEFAULT_STALL: Duration = Duration::from_secs(600);
/// Tool arguments are streamed in fragments of this many characters unless `chunks` is given.
const TOOL_FRAGMENT_CHARS: usize = 8;
/// `dripMs` sends a non-streamed body in this many pieces.
const DRIP_PIECES: usize = 10;
/// A whole body larger than this goes out in pieces of this size, so a client that stops reading
/// and closes is seen as `client_closed`, not as a completed answer.
const BODY_PIECE_BYTES: usize = 64 << 10;
/// `padToBytes` streams: bytes of text per content event.
const PADDED_EVENT_BYTES: usize = 16 << 10;
/// What Anthropic answers (400, `invalid_request_error`) when a model does not take a prefill.
const PREFILL_REFUSED: &str =
    "This model does not support assistant message prefill. The conversation must end with a user message.";
/// How much of the prefill and of `continueFrom` a mismatch shows.
const SHOWN_CHARS: usize = 40;

/// What the request asked for, as far as the answer depends on it.
pub struct Ask {
    pub format: Format,
    pub stream: bool,
    pub model: String,
    pub include_usage: bool,
    pub serial: u64,
    /// The request's credentials as an echoing proxy writes them (`authorization=Bearer sk-…`).
    pub credentials: String,
    /// Whether the conversation ends with a prefill (`continueFrom`, `refusePrefill`).
    pub last_turn: LastTurn,
    /// Why a reasoning model's provider refuses the request's history, if it does.
    pub history_refused: Option<String>,
    /// A Responses request asked for `reasoning.encrypted_content`.
    pub encrypted_reasoning: bool,
    /// A Chat request's `messages`, which a [`reasoning::ChatStyle`] checks.
    pub chat_messages: Vec<Value>,
    /// An OpenAI Chat or Responses request asked for log probabilities (`logprobs: true`,
    /// `include: ["message.output_text.logprobs"]`), with this many alternatives each.
    pub top_logprobs: Option<u64>,
    /// The request came on a connection the client reused (its second or later there).
    pub reused_connection: bool,
    /// The text of the request's last user turn (what an `echo` step answers).
    pub last_user_text: Option<String>,
}

/// Answers one request as its step says. `reset` is the connection's abort switch: a `reset`
/// step fires it and never answers, and the connection task closes the socket with an RST.
pub async fn play(step: Arc<Step>, ask: Ask, mut tracker: RequestTracker, reset: &Notify) -> Response<ScriptedBody> {
    if step.headers_delay_ms > 0 {
        sleep(Duration::from_millis(step.headers_delay_ms)).await;
    }
    let text = answer_text(&step, &ask);
    if (step.reset || (step.reset_reused && ask.reused_connection)) && text.is_ok() {
        tracker.finish(Outcome::Reset);
        reset.notify_one();
        return std::future::pending().await;
    }
    let json = HeaderValue::from_static("application/json");
    let event_stream = HeaderValue::from_static("text/event-stream; charset=utf-8");
    let (status, content_type, plan) = match (text, &step.raw, step.status) {
        (Err(message), _, _) => {
            let error = ErrorInfo { status: StatusCode::BAD_REQUEST, kind: None, message };
            // The request itself is refused: none of the step's timing or faults apply.
            (error.status, json, whole_plan(ask.format.error_body(&error).to_string(), None, &Step::default()))
        }
        (Ok(_), Some(raw), _) => {
            (raw.status, raw.content_type.clone().unwrap_or(event_stream), raw_plan(raw, &ask, &step))
        }
        (Ok(_), None, Some(status)) => (status, json, whole_plan(error_body(status, &ask, &step), None, &step)),
        (Ok(text), None, None) if ask.stream => (StatusCode::OK, event_stream, stream_plan(&ask, &step, text)),
        (Ok(text), None, None) => {
            let (body, usage) = whole_body(&ask, &step, text);
            (StatusCode::OK, json, whole_plan(body, Some(usage), &step))
        }
    };
    let mut response = Response::new(ScriptedBody::new(plan.pieces, plan.ending, Some(tracker)));
    *response.status_mut() = status;
    if step.keep_alive {
        response.extensions_mut().insert(crate::server::KeepAlive);
    }
    if status.canonical_reason().is_none() {
        // hyper would write `529 <none>`.
        response.extensions_mut().insert(ReasonPhrase::from_static(b"Scripted Error"));
    }
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, content_type);
    match plan.length {
        Some(length) => headers.insert(CONTENT_LENGTH, length.into()),
        None => headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    };
    headers.extend(step.headers.clone());
    if let Some(tracker) = &response.body().tracker {
        tracker.headers_sent();
        if let Some(input_tokens) = plan.billed_input {
            tracker.bill_input(input_tokens);
        }
    }
    response
}

/// The answer's text (for `continueFrom`, what follows the request's prefill), or the message of
/// the 400 that the request gets instead: a refused, missing or mismatched prefill, or per-event
/// usage asked of a format that has none.
fn answer_text(step: &Step, ask: &Ask) -> Result<String, String> {
    if step.refuse_prefill && matches!(ask.last_turn, LastTurn::Assistant { .. }) {
        return Err(PREFILL_REFUSED.to_owned());
    }
    if let Some(refused) = ask.history_refused.as_ref().filter(|_| step.reasons()) {
        return Err(refused.clone());
    }
    if let Some(style) = step.chat_reasoning.filter(|_| ask.format == Format::OpenAiChat) {
        if let Some(refused) = reasoning::chat_refusal(style, &ask.chat_messages, &ask.model) {
            return Err(refused);
        }
    }
    let end_only = match ask.format {
        Format::AnthropicMessages => Some("message_delta"),
        Format::OpenAiResponses => Some("response.completed"),
        Format::OpenAiChat | Format::Gemini => None,
    };
    if let (true, true, Some(event)) = (step.usage_per_event, ask.stream, end_only) {
        return Err(format!(
            "usagePerEvent: {} streams report output tokens only at the end ({event}); \
             script it for openai_chat or gemini",
            ask.format.name()
        ));
    }
    match (&step.continue_from, step.echo) {
        (Some(full), _) => continued_text(full, &ask.last_turn).map(str::to_owned),
        (None, true) => ask.last_user_text.clone().ok_or_else(|| {
            "echo: the request has no user turn with text to answer with (its last `role: \"user\"` \
             item in messages, input or contents)"
                .to_owned()
        }),
        (None, false) => Ok(step.text.clone().unwrap_or_else(|| DEFAULT_TEXT.to_owned())),
    }
}

/// `continueFrom`: the rest of `full` after the request's prefill, which must be a prefix of it.
fn continued_text<'a>(full: &'a str, last_turn: &LastTurn) -> Result<&'a str, String> {
    let (at, prefill) = match last_turn {
        LastTurn::Assistant { at, text: Some(text) } => (at, text),
        LastTurn::Assistant { at, text: None } => {
            return Err(format!(
                "continueFrom: the request ends with an assistant turn ({at}) that is not only text \
                 (a tool call?); a prefill is the text so far"
            ))
        }
        LastTurn::Other(why) => {
            return Err(format!(
                "continueFrom: the request must end with an assistant turn holding the text so far \
                 (a prefill), but {why}"
            ))
        }
    };
    full.strip_prefix(prefill.as_str()).ok_or_else(|| {
        let same = full.chars().zip(prefill.chars()).take_while(|(scripted, sent)| scripted == sent).count();
        format!(
            "continueFrom: the prefill in {at} is not a prefix of the scripted text (they differ at \
             character {same}): prefill {:?}, scripted {:?}",
            shown(prefill),
            shown(full)
        )
    })
}

/// The start of a text for an error message.
fn shown(text: &str) -> String {
    let mut chars = text.chars();
    let mut start: String = chars.by_ref().take(SHOWN_CHARS).collect();
    if chars.next().is_some() {
        start.push('…');
    }
    start
}

/// The message of an error answer or in-stream error, with the credentials echo if asked for.
fn error_message(scripted: Option<&str>, default: impl FnOnce() -> String, ask: &Ask, step: &Step) -> String {
    let message = scripted.map_or_else(default, str::to_owned);
    if step.echo_credentials {
        format!("{message} (upstream said: {})", ask.credentials)
    } else {
        message
    }
}

/// The error body of a `status` step, its message padded to `padToBytes`.
fn error_body(status: StatusCode, ask: &Ask, step: &Step) -> String {
    let message = error_message(step.message.as_deref(), || format!("scripted {}", status.as_u16()), ask, step);
    let mut error = ErrorInfo { status, kind: step.error_type.clone(), message };
    let body = ask.format.error_body(&error).to_string();
    match step.pad_to_bytes {
        Some(size) if size > body.len() => {
            error.message.push_str(&"x".repeat(size - body.len()));
            ask.format.error_body(&error).to_string()
        }
        _ => body,
    }
}

/// A whole answer, its text padded so the body has at least `padToBytes` bytes, and its usage.
fn whole_body(ask: &Ask, step: &Step, text: String) -> (String, Usage) {
    let mut answer = answer(ask, step, text);
    let whole = |answer: &Answer| match step.reasons() {
        true => {
            let body = ask.format.whole(answer);
            reasoning::whole(ask.format, answer, body, ask.encrypted_reasoning, step.chat_reasoning).to_string()
        }
        false => ask.format.whole(answer).to_string(),
    };
    let body = whole(&answer);
    let body = match (step.pad_to_bytes, &mut answer.output) {
        (Some(size), Output::Text { text, .. }) if size > body.len() => {
            text.push_str(&"x".repeat(size - body.len()));
            whole(&answer)
        }
        _ => body,
    };
    (body, answer.usage)
}

/// The answer: the step's tool call, else `text`.
fn answer(ask: &Ask, step: &Step, mut text: String) -> Answer {
    let output = match &step.tool_call {
        Some(call) => Output::ToolCall {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            input: call.input.clone(),
            fragments: split(&call.arguments, step.chunks, Split::Every(TOOL_FRAGMENT_CHARS)),
        },
        None => {
            // Whole answers are padded by `whole_body`, to the size of the body.
            match step.pad_to_bytes {
                Some(size) if ask.stream => {
                    text.push_str(&"x".repeat(size.saturating_sub(text.len())));
                    let fragments = match step.chunks {
                        Some(_) => split(&text, step.chunks, Split::Words),
                        None => split_bytes(&text, PADDED_EVENT_BYTES),
                    };
                    Output::Text { fragments, text }
                }
                _ => Output::Text { fragments: split(&text, step.chunks, Split::Words), text },
            }
        }
    };
    let words = match &output {
        Output::Text { text, .. } => text.split_whitespace().count(),
        Output::ToolCall { arguments, .. } => arguments.split_whitespace().count(),
    };
    Answer {
        serial: ask.serial,
        model: ask.model.clone(),
        created: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()),
        output,
        usage: Usage {
            input_tokens: step.usage.input_tokens.unwrap_or(DEFAULT_INPUT_TOKENS),
            output_tokens: step.usage.output_tokens.unwrap_or(words as u64),
        },
        include_usage: ask.include_usage,
        usage_per_event: step.usage_per_event,
        top_logprobs: ask.top_logprobs,
    }
}

/// How text is split into content events when `chunks` is not given.
enum Split {
    /// One event per word, each word keeping the whitespace before it.
    Words,
    /// Fragments of this many characters.
    Every(usize),
}

fn split(text: &str, chunks: Option<NonZeroUsize>, default: Split) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let count = match (chunks, default) {
        (Some(chunks), _) => chunks.get().min(chars.len()),
        (None, Split::Every(size)) => chars.len().div_ceil(size).max(1),
        (None, Split::Words) => {
            let mut words = Vec::new();
            for (index, &c) in chars.iter().enumerate() {
                let starts_word = index > 0 && c.is_whitespace() && !chars[index - 1].is_whitespace();
                if words.is_empty() || starts_word {
                    words.push(String::new());
                }
                if let Some(word) = words.last_mut() {
                    word.push(c);
                }
            }
            return words;
        }
    };
    (0..count)
        .map(|index| chars[index * chars.len() / count..(index + 1) * chars.len() / count].iter().collect())
        .collect()
}

/// Pieces of at most `max` bytes (at least one character each), cut at character boundaries.
fn split_bytes(text: &str, max: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = max.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (piece, after) = rest.split_at(end);
        pieces.push(piece.to_owned());
        rest = after;
    }
    pieces
}

/// An answer laid out in time.
struct Plan {
    pieces: Vec<Piece>,
    ending: Ending,
    /// `content-length` of a non-streamed answer.
    length: Option<usize>,
    /// Input tokens a 2xx scripted answer bills; `None` for error answers and raw bodies.
    billed_input: Option<u64>,
}

struct Piece {
    wait: Duration,
    bytes: Bytes,
    /// Output tokens billed once this piece is written: 1 per content event of a stream, a whole
    /// answer's output tokens on its last piece.
    output: u64,
}

enum Ending {
    Complete,
    /// Hold the connection silent this long, then cut it without finishing the response.
    Abort {
        after: Duration,
    },
}

fn stall(step: &Step) -> Ending {
    Ending::Abort { after: step.stall_ms.map_or(DEFAULT_STALL, Duration::from_millis) }
}

/// A whole JSON body: one piece (64 KiB pieces if larger), or ~10 pieces spread over `dripMs`.
/// `stallAfterEvents` counts pieces here, so `0` sends the headers and then stalls before any of
/// the body. A successful answer (`usage`) bills its output only with its last piece.
fn whole_plan(body: String, usage: Option<Usage>, step: &Step) -> Plan {
    let body = Bytes::from(body);
    let length = body.len();
    let (count, gap) = match step.drip_ms {
        Some(drip) => {
            let count = DRIP_PIECES.min(length).max(1);
            (count, Duration::from_millis(drip) / count as u32)
        }
        None => (length.div_ceil(BODY_PIECE_BYTES).max(1), Duration::ZERO),
    };
    let mut pieces: Vec<Piece> = (0..count)
        .map(|index| Piece {
            wait: gap,
            bytes: body.slice(index * length / count..(index + 1) * length / count),
            output: 0,
        })
        .collect();
    if let (Some(last), Some(usage)) = (pieces.last_mut(), usage) {
        last.output = usage.output_tokens;
    }
    if let Some(first) = pieces.first_mut() {
        first.wait = first.wait.saturating_add(Duration::from_millis(step.first_chunk_delay_ms));
    }
    let ending = match step.stall_after_events {
        Some(after) if after < count => {
            pieces.truncate(after);
            stall(step)
        }
        _ => Ending::Complete,
    };
    Plan { pieces, ending, length: Some(length), billed_input: usage.map(|usage| usage.input_tokens) }
}

/// A raw body: each chunk as given (empty ones skipped), with `{{credentials}}` filled in, on
/// the step's chunk schedule; `stallAfterEvents` counts chunks.
fn raw_plan(raw: &RawBody, ask: &Ask, step: &Step) -> Plan {
    let quoted = Value::String(ask.credentials.clone()).to_string();
    let echo = &quoted[1..quoted.len() - 1];
    let chunks = raw.chunks.iter().filter(|chunk| !chunk.is_empty());
    let mut pieces: Vec<Piece> = chunks
        .enumerate()
        .map(|(index, chunk)| Piece {
            wait: Duration::from_millis(if index == 0 { step.first_chunk_delay_ms } else { step.chunk_delay_ms }),
            bytes: Bytes::from(chunk.replace("{{credentials}}", echo)),
            output: 0,
        })
        .collect();
    let ending = match step.stall_after_events {
        Some(after) if after < pieces.len() => {
            pieces.truncate(after);
            stall(step)
        }
        Some(_) => stall(step),
        None => Ending::Complete,
    };
    Plan { pieces, ending, length: None, billed_input: None }
}

/// A stream: the preamble at once, content events on the step's schedule, then either a stall,
/// an in-stream error, or the closing events and (unless `omitDone`) the success marker.
/// `stallAfterEvents` and `streamError.afterEvents` beyond the content count act after all content.
fn stream_plan(ask: &Ask, step: &Step, text: String) -> Plan {
    let answer = answer(ask, step, text);
    let events = match step.reasons() {
        true => {
            let events = ask.format.stream(&answer);
            reasoning::stream(ask.format, &answer, events, ask.encrypted_reasoning, step.chat_reasoning)
        }
        false => ask.format.stream(&answer),
    };
    let content_count = events.content.len();
    let stall_at = step.stall_after_events.map(|after| after.min(content_count));
    let error_at = step.stream_error.as_ref().map(|error| error.after_events.min(content_count));
    let cut = stall_at.into_iter().chain(error_at).min();

    let first_wait = Duration::from_millis(step.first_chunk_delay_ms);
    let gap = Duration::from_millis(step.chunk_delay_ms);
    // (wait before, event, output tokens it bills)
    let mut timeline: Vec<_> = events.preamble.into_iter().map(|event| (Duration::ZERO, event, 0)).collect();
    let content = events.content.into_iter().take(cut.unwrap_or(content_count));
    timeline.extend(content.enumerate().map(|(index, event)| (if index == 0 { first_wait } else { gap }, event, 1)));
    let mut ending = Ending::Complete;
    match (cut, &step.stream_error) {
        (Some(at), _) if stall_at == Some(at) => ending = stall(step),
        (Some(at), Some(error)) => {
            let status = error.status.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let message = error_message(error.message.as_deref(), || "scripted stream error".to_owned(), ask, step);
            let error = ErrorInfo { status, kind: error.kind.clone(), message };
            timeline.push((if at == 0 { first_wait } else { gap }, ask.format.stream_error(&error), 0));
        }
        _ => {
            timeline.extend(events.closing.into_iter().map(|event| (Duration::ZERO, event, 0)));
            if !step.omit_done {
                timeline.extend(events.marker.into_iter().map(|event| (Duration::ZERO, event, 0)));
            }
        }
    }
    let (schedule, events): (Vec<_>, Vec<_>) =
        timeline.into_iter().map(|(wait, event, output)| ((wait, output), event)).unzip();
    let framed = ask.format.frame(events);
    let pieces =
        schedule.into_iter().zip(framed).map(|((wait, output), bytes)| Piece { wait, bytes, output }).collect();
    Plan { pieces, ending, length: None, billed_input: Some(answer.usage.input_tokens) }
}

/// A response body that sends its pieces on schedule and reports how the response ended.
pub struct ScriptedBody {
    pieces: VecDeque<Piece>,
    ending: Ending,
    timer: Option<Pin<Box<Sleep>>>,
    tracker: Option<RequestTracker>,
    done: bool,
}

impl ScriptedBody {
    fn new(pieces: Vec<Piece>, ending: Ending, tracker: Option<RequestTracker>) -> Self {
        ScriptedBody { pieces: pieces.into(), ending, timer: None, tracker, done: false }
    }

    /// A body sent at once and not tracked (control API answers, preflights).
    pub fn immediate(bytes: impl Into<Bytes>) -> Self {
        Self::new(vec![Piece { wait: Duration::ZERO, bytes: bytes.into(), output: 0 }], Ending::Complete, None)
    }

    fn finish(&mut self, outcome: Outcome) {
        self.done = true;
        if let Some(tracker) = &mut self.tracker {
            tracker.finish(outcome);
        }
    }
}

/// The error that makes hyper cut a stream short: a stall ended without the response's end.
#[derive(Debug)]
pub struct StallEnded;

impl fmt::Display for StallEnded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the scripted stall ended; the response is cut short")
    }
}

impl std::error::Error for StallEnded {}

impl Body for ScriptedBody {
    type Data = Bytes;
    type Error = StallEnded;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StallEnded>>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(timer) = &mut this.timer {
                ready!(timer.as_mut().poll(cx));
                this.timer = None;
            }
            if let Some(piece) = this.pieces.front_mut() {
                if !piece.wait.is_zero() {
                    this.timer = Some(Box::pin(sleep(std::mem::take(&mut piece.wait))));
                    continue;
                }
            }
            match (this.pieces.pop_front(), &mut this.ending) {
                (Some(piece), ending) => {
                    if let (Some(tracker), 1..) = (&this.tracker, piece.output) {
                        tracker.bill_output(piece.output);
                    }
                    // The last bytes are the end: say so now, since hyper stops polling a body
                    // whose `content-length` is satisfied and drops it.
                    if this.pieces.is_empty() && matches!(ending, Ending::Complete) {
                        this.finish(Outcome::Completed);
                    }
                    return Poll::Ready(Some(Ok(Frame::data(piece.bytes))));
                }
                (None, Ending::Complete) => {
                    this.finish(Outcome::Completed);
                    return Poll::Ready(None);
                }
                (None, Ending::Abort { after }) if !after.is_zero() => {
                    this.timer = Some(Box::pin(sleep(std::mem::take(after))));
                }
                (None, Ending::Abort { .. }) => {
                    this.finish(Outcome::Reset);
                    return Poll::Ready(Some(Err(StallEnded)));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_their_leading_spaces() {
        assert_eq!(split("Hello from  the", None, Split::Words), ["Hello", " from", "  the"]);
        assert_eq!(split(" x", None, Split::Words), [" x"]);
        assert!(split("", None, Split::Words).is_empty());
    }

    #[test]
    fn byte_pieces_never_cut_a_character() {
        assert_eq!(split_bytes("abcdefg", 3), ["abc", "def", "g"]);
        assert_eq!(split_bytes("aé€x", 2), ["aé", "€", "x"]);
        assert!(split_bytes("", 4).is_empty());
    }

    #[test]
    fn continuing_needs_a_text_prefill_that_is_a_prefix() {
        let prefill = |text: &str| LastTurn::Assistant { at: "messages[1]".into(), text: Some(text.into()) };
        assert_eq!(continued_text("Hello from here", &prefill("Hello from")), Ok(" here"));
        assert_eq!(continued_text("Hello", &prefill("Hello")), Ok(""));
        assert_eq!(continued_text("Héllo wörld", &prefill("Héllo")), Ok(" wörld"));
        let refused = [
            (prefill("Hello form"), "the prefill in messages[1] is not a prefix of the scripted text (they differ at character 7): prefill \"Hello form\", scripted \"Hello from here\""),
            (LastTurn::Assistant { at: "contents[2]".into(), text: None }, "an assistant turn (contents[2]) that is not only text"),
            (LastTurn::Other(r#"input[0].role is "user""#.into()), r#"(a prefill), but input[0].role is "user""#),
        ];
        for (last_turn, reason) in refused {
            let error = continued_text("Hello from here", &last_turn).err().unwrap_or_default();
            assert!(error.starts_with("continueFrom: ") && error.contains(reason), "{error}");
        }
    }

    #[test]
    fn mismatches_show_forty_characters() {
        assert_eq!(shown("short"), "short");
        let long = "é".repeat(41);
        assert_eq!(shown(&long), format!("{}…", "é".repeat(40)));
        assert_eq!(shown(&long[..80]), "é".repeat(40));
    }

    #[test]
    fn chunks_split_evenly_by_characters() {
        assert_eq!(split("abcdéf", NonZeroUsize::new(3), Split::Words), ["ab", "cd", "éf"]);
        assert_eq!(split(r#"{"city":"Paris"}"#, None, Split::Every(8)), [r#"{"city":"#, r#""Paris"}"#]);
    }
}
