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
use tokio::sync::Notify;
use tokio::time::{sleep, Sleep};

use crate::scenario::{Outcome, RequestTracker, Step};
use crate::wire::{Answer, ErrorInfo, Format, Output, Usage};

const DEFAULT_TEXT: &str = "Hello from the scripted provider.";
const DEFAULT_INPUT_TOKENS: u64 = 3;
/// How long `stallAfterEvents` holds the connection when `stallMs` is not given.
const DEFAULT_STALL: Duration = Duration::from_secs(600);
/// Tool arguments are streamed in fragments of this many characters unless `chunks` is given.
const TOOL_FRAGMENT_CHARS: usize = 8;
/// `dripMs` sends a non-streamed body in this many pieces.
const DRIP_PIECES: usize = 10;

/// What the request asked for, as far as the answer depends on it.
pub struct Ask {
    pub format: Format,
    pub stream: bool,
    pub model: String,
    pub include_usage: bool,
    pub serial: u64,
}

/// Answers one request as its step says. `reset` is the connection's abort switch: a `reset`
/// step fires it and never answers, and the connection task closes the socket with an RST.
pub async fn play(step: Arc<Step>, ask: Ask, mut tracker: RequestTracker, reset: &Notify) -> Response<ScriptedBody> {
    if step.headers_delay_ms > 0 {
        sleep(Duration::from_millis(step.headers_delay_ms)).await;
    }
    if step.reset {
        tracker.finish(Outcome::Reset);
        reset.notify_one();
        return std::future::pending().await;
    }
    let (status, content_type, plan) = match step.status {
        Some(status) => {
            let error = ErrorInfo {
                status,
                kind: step.error_type.clone(),
                message: step.message.clone().unwrap_or_else(|| format!("scripted {}", status.as_u16())),
            };
            (status, "application/json", whole_plan(ask.format.error_body(&error).to_string(), &step))
        }
        None if ask.stream => (StatusCode::OK, "text/event-stream; charset=utf-8", stream_plan(&ask, &step)),
        None => {
            (StatusCode::OK, "application/json", whole_plan(ask.format.whole(&answer(&ask, &step)).to_string(), &step))
        }
    };
    let mut response = Response::new(ScriptedBody::new(plan.pieces, plan.ending, Some(tracker)));
    *response.status_mut() = status;
    if status.canonical_reason().is_none() {
        // hyper would write `529 <none>`.
        response.extensions_mut().insert(ReasonPhrase::from_static(b"Scripted Error"));
    }
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    match plan.length {
        Some(length) => headers.insert(CONTENT_LENGTH, length.into()),
        None => headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    };
    headers.extend(step.headers.clone());
    if let Some(tracker) = &response.body().tracker {
        tracker.headers_sent();
    }
    response
}

fn answer(ask: &Ask, step: &Step) -> Answer {
    let output = match &step.tool_call {
        Some(call) => Output::ToolCall {
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            input: call.input.clone(),
            fragments: split(&call.arguments, step.chunks, Split::Every(TOOL_FRAGMENT_CHARS)),
        },
        None => {
            let text = step.text.clone().unwrap_or_else(|| DEFAULT_TEXT.to_owned());
            Output::Text { fragments: split(&text, step.chunks, Split::Words), text }
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

/// An answer laid out in time.
struct Plan {
    pieces: Vec<Piece>,
    ending: Ending,
    /// `content-length` of a non-streamed answer.
    length: Option<usize>,
}

struct Piece {
    wait: Duration,
    bytes: Bytes,
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

/// A whole JSON body: one piece, or ~10 pieces spread over `dripMs`. `stallAfterEvents` counts
/// pieces here, so `0` sends the headers and then stalls before any of the body.
fn whole_plan(body: String, step: &Step) -> Plan {
    let body = Bytes::from(body);
    let length = body.len();
    let (count, gap) = match step.drip_ms {
        Some(drip) => {
            let count = DRIP_PIECES.min(length).max(1);
            (count, Duration::from_millis(drip) / count as u32)
        }
        None => (1, Duration::ZERO),
    };
    let mut pieces: Vec<Piece> = (0..count)
        .map(|index| Piece { wait: gap, bytes: body.slice(index * length / count..(index + 1) * length / count) })
        .collect();
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
    Plan { pieces, ending, length: Some(length) }
}

/// A stream: the preamble at once, content events on the step's schedule, then either a stall,
/// an in-stream error, or the closing events and (unless `omitDone`) the success marker.
/// `stallAfterEvents` and `streamError.afterEvents` beyond the content count act after all content.
fn stream_plan(ask: &Ask, step: &Step) -> Plan {
    let events = ask.format.stream(&answer(ask, step));
    let content_count = events.content.len();
    let stall_at = step.stall_after_events.map(|after| after.min(content_count));
    let error_at = step.stream_error.as_ref().map(|error| error.after_events.min(content_count));
    let cut = stall_at.into_iter().chain(error_at).min();

    let first_wait = Duration::from_millis(step.first_chunk_delay_ms);
    let gap = Duration::from_millis(step.chunk_delay_ms);
    let mut timeline: Vec<_> = events.preamble.into_iter().map(|event| (Duration::ZERO, event)).collect();
    let content = events.content.into_iter().take(cut.unwrap_or(content_count));
    timeline.extend(content.enumerate().map(|(index, event)| (if index == 0 { first_wait } else { gap }, event)));
    let mut ending = Ending::Complete;
    match (cut, &step.stream_error) {
        (Some(at), _) if stall_at == Some(at) => ending = stall(step),
        (Some(at), Some(error)) => {
            let status = error.status.unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let error = ErrorInfo {
                status,
                kind: error.kind.clone(),
                message: error.message.clone().unwrap_or_else(|| "scripted stream error".to_owned()),
            };
            timeline.push((if at == 0 { first_wait } else { gap }, ask.format.stream_error(&error)));
        }
        _ => {
            timeline.extend(events.closing.into_iter().map(|event| (Duration::ZERO, event)));
            if !step.omit_done {
                timeline.extend(events.marker.into_iter().map(|event| (Duration::ZERO, event)));
            }
        }
    }
    let (waits, events): (Vec<_>, Vec<_>) = timeline.into_iter().unzip();
    let framed = ask.format.frame(events);
    let pieces = waits.into_iter().zip(framed).map(|(wait, bytes)| Piece { wait, bytes }).collect();
    Plan { pieces, ending, length: None }
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
        Self::new(vec![Piece { wait: Duration::ZERO, bytes: bytes.into() }], Ending::Complete, None)
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
    fn chunks_split_evenly_by_characters() {
        assert_eq!(split("abcdéf", NonZeroUsize::new(3), Split::Words), ["ab", "cd", "éf"]);
        assert_eq!(split(r#"{"city":"Paris"}"#, None, Split::Every(8)), [r#"{"city":"#, r#""Paris"}"#]);
    }
}
