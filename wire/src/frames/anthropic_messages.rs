//! The events of an Anthropic Messages stream, read into structs holding only the fields
//! llm-baton's decoder uses: every streamed token (`content_block_delta`) is read here.

use std::borrow::Cow;

use super::tree;
use crate::frame::{Frame, Read};
use crate::json::Json;

/// Every event's data. The once-per-stream parts (`content_block`, `message`, `usage`, `error`)
/// are kept as trees, for the caller to read with its own type checks; each is `None` when absent
/// or `null`.
#[derive(Default)]
pub struct Event<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub index: Option<u32>,
    pub delta: Option<EventDelta<'a>>,
    pub content_block: Option<Json<'a>>,
    pub message: Option<Json<'a>>,
    pub usage: Option<Json<'a>>,
    pub error: Option<Json<'a>>,
}

/// The `delta` of a `content_block_delta` or `message_delta` event.
#[derive(Default)]
pub struct EventDelta<'a> {
    pub kind: Option<Cow<'a, str>>,
    pub text: Option<Cow<'a, str>>,
    pub thinking: Option<Cow<'a, str>>,
    pub partial_json: Option<Cow<'a, str>>,
    /// A `signature_delta`'s signature of the thinking block.
    pub signature: Option<Cow<'a, str>>,
    pub stop_reason: Option<Cow<'a, str>>,
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
            "index" => event.index = f.index("index")?,
            "delta" => event.delta = if f.object("delta")? { Some(read_delta(&mut f)?) } else { None },
            "content_block" => event.content_block = tree(&mut f)?,
            "message" => event.message = tree(&mut f)?,
            "usage" => event.usage = tree(&mut f)?,
            "error" => event.error = tree(&mut f)?,
            _ => f.skip()?,
        }
    }
    f.end()?;
    Ok(event)
}

/// An entered `delta` object.
fn read_delta<'a>(f: &mut Frame<'a>) -> Read<EventDelta<'a>> {
    let mut delta = EventDelta::default();
    while let Some(key) = f.key()? {
        match &*key {
            "type" => delta.kind = f.string("delta.type")?,
            "text" => delta.text = f.string("delta.text")?,
            "thinking" => delta.thinking = f.string("delta.thinking")?,
            "partial_json" => delta.partial_json = f.string("delta.partial_json")?,
            "signature" => delta.signature = f.string("delta.signature")?,
            "stop_reason" => delta.stop_reason = f.string("delta.stop_reason")?,
            _ => f.skip()?,
        }
    }
    Ok(delta)
}
