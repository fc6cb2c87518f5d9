//! Typed readers of each provider format's stream frames, over [`crate::frame::Frame`].
//!
//! They live here, not beside their formats in llm-baton, because they run once per streamed
//! event: built at this crate's opt-level 3 they decode a stream in about half the time the same
//! code takes built for size. What a frame means (deltas, finish, errors) stays with the format;
//! these only read its fields, with the checks and error texts a derived `Deserialize` had.

pub mod anthropic_messages;
pub mod bedrock_converse;
pub mod gemini;
pub mod openai_chat;
pub mod openai_responses;

use crate::frame::{Frame, Read};
use crate::json::Json;

/// A member the caller reads whole with its own checks (an error, a usage, a block's start, a
/// call's arguments), as a tree; `None` when it is `null`.
fn tree<'a>(f: &mut Frame<'a>) -> Read<Option<Json<'a>>> {
    Ok(Some(f.value()?).filter(|v| !v.is_null()))
}
