//! The events of an OpenAI Responses stream, read into structs holding only the fields
//! llm-baton's decoder uses: every streamed token (`response.output_text.delta` and the other
//! delta events) is read here.

use std::borrow::Cow;

use super::tree;
use crate::frame::{Frame, Read};
use crate::json::Json;

/// Every event's data. The once-per-stream parts (`item`, `response`, and an `error` event's
/// `code` and `error`) are kept as trees, for the caller to read with its own type checks; each
/// is `None` when absent or `null`.
#[derive(Default)]
pub struct Event<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub delta: Option<Cow<'a, str>>,
    /// A `response.function_call_arguments.done` event's final arguments.
    pub arguments: Option<Cow<'a, str>>,
    pub output_index: Option<u32>,
    pub summary_index: Option<u32>,
    pub content_index: Option<u32>,
    pub item: Option<Json<'a>>,
    pub response: Option<Json<'a>>,
    pub code: Option<Json<'a>>,
    pub message: Option<Cow<'a, str>>,
    pub error: Option<Json<'a>>,
    /// A `response.output_text.delta` event's `logprobs`' text, unless absent or `null`.
    pub logprobs: Option<&'a str>,
}

/// One event's data, read whole (in text order) before any of it is used.
#[inline(never)]
pub fn parse_event(data: &str) -> Read<Event<'_>> {
    let mut f = Frame::new(data);
    let mut event = Event::default();
    f.members("event")?;
    while let Some(key) = f.key()? {
        match &*key {
            "type" => event.kind = f.string("type")?,
            "delta" => event.delta = f.string("delta")?,
            "arguments" => event.arguments = f.string("arguments")?,
            "output_index" => event.output_index = f.index("output_index")?,
            "summary_index" => event.summary_index = f.index("summary_index")?,
            "content_index" => event.content_index = f.index("content_index")?,
            "item" => event.item = tree(&mut f)?,
            "response" => event.response = tree(&mut f)?,
            "code" => event.code = tree(&mut f)?,
            "message" => event.message = f.string("message")?,
            "error" => event.error = tree(&mut f)?,
            "logprobs" => event.logprobs = f.raw()?,
            _ => f.skip()?,
        }
    }
    f.end()?;
    Ok(event)
}
