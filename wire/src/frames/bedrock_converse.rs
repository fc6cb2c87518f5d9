//! The events of an Amazon Bedrock ConverseStream (each an event-stream message's JSON payload,
//! named by its `:event-type` header), read into a struct holding only the fields llm-baton's
//! decoder uses: every streamed token (`contentBlockDelta`) is read here. Fields Bedrock adds to
//! pad an event's length (`p`) are skipped like any other unknown member.

use std::borrow::Cow;

use super::tree;
use crate::frame::{Frame, Read};
use crate::json::Json;

/// Any event's payload. `start` (a `contentBlockStart`'s) and `usage` (the `metadata` event's)
/// are read once per block or stream, so they stay trees.
#[derive(Default)]
pub struct Event<'a> {
    /// `contentBlockIndex`.
    pub index: Option<u32>,
    pub delta: Option<EventDelta<'a>>,
    pub start: Option<Json<'a>>,
    /// A `messageStop`'s `stopReason`.
    pub stop_reason: Option<Cow<'a, str>>,
    pub usage: Option<Json<'a>>,
    /// An exception's `message`.
    pub message: Option<Cow<'a, str>>,
}

/// A `contentBlockDelta`'s `delta`: text, a piece of a tool call's input, or reasoning (its text,
/// its signature, or redacted reasoning as base64).
#[derive(Default)]
pub struct EventDelta<'a> {
    pub text: Option<Cow<'a, str>>,
    pub tool_input: Option<Cow<'a, str>>,
    pub reasoning_text: Option<Cow<'a, str>>,
    pub signature: Option<Cow<'a, str>>,
    pub redacted: Option<Cow<'a, str>>,
}

/// One event's payload, read whole (in text order) before any of it is used.
#[inline(never)]
pub fn parse_event(data: &str) -> Read<Event<'_>> {
    let mut f = Frame::new(data);
    let mut event = Event::default();
    f.members("event")?;
    while let Some(key) = f.key()? {
        match &*key {
            "contentBlockIndex" => event.index = f.index("contentBlockIndex")?,
            "delta" => event.delta = if f.object("delta")? { Some(read_delta(&mut f)?) } else { None },
            "start" => event.start = tree(&mut f)?,
            "stopReason" => event.stop_reason = f.string("stopReason")?,
            "usage" => event.usage = tree(&mut f)?,
            "message" => event.message = f.string("message")?,
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
            "text" => delta.text = f.string("delta.text")?,
            "toolUse" => {
                if !f.object("delta.toolUse")? {
                    continue;
                }
                while let Some(key) = f.key()? {
                    match &*key {
                        "input" => delta.tool_input = f.string("delta.toolUse.input")?,
                        _ => f.skip()?,
                    }
                }
            }
            "reasoningContent" => {
                if !f.object("delta.reasoningContent")? {
                    continue;
                }
                while let Some(key) = f.key()? {
                    match &*key {
                        "text" => delta.reasoning_text = f.string("delta.reasoningContent.text")?,
                        "signature" => delta.signature = f.string("delta.reasoningContent.signature")?,
                        "redactedContent" => delta.redacted = f.string("delta.reasoningContent.redactedContent")?,
                        _ => f.skip()?,
                    }
                }
            }
            _ => f.skip()?,
        }
    }
    Ok(delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_read_their_fields_and_skip_padding() {
        let e = parse_event(r#"{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"a\":"}},"p":"abcdef"}"#).unwrap();
        assert_eq!((e.index, e.delta.unwrap().tool_input.as_deref()), (Some(2), Some("{\"a\":")));
        let e = parse_event(r#"{"delta":{"reasoningContent":{"signature":"sig"}}}"#).unwrap();
        assert_eq!(e.delta.unwrap().signature.as_deref(), Some("sig"));
        let e = parse_event(r#"{"stopReason":"tool_use","additionalModelResponseFields":{}}"#).unwrap();
        assert_eq!(e.stop_reason.as_deref(), Some("tool_use"));
        let e = parse_event(r#"{"delta":{"toolUse":null},"usage":{"inputTokens":3}}"#).unwrap();
        assert!(e.delta.unwrap().tool_input.is_none());
        assert!(e.usage.is_some());
        assert_eq!(
            parse_event(r#"{"delta":{"text":1}}"#).err().unwrap(),
            "invalid type: `delta.text` is the number 1, expected a string"
        );
    }
}
