//! The frames of an OpenAI Chat Completions stream (`chat.completion.chunk`), read into structs
//! holding only the fields llm-baton's decoder uses: every streamed token is read here.

use std::borrow::Cow;

use crate::frame::{Frame, Read};
use crate::json::{Json, Kind};

/// The fields of a `chat.completion.chunk` frame the decoder uses.
#[derive(Default)]
pub struct Chunk<'a> {
    pub model: Option<Cow<'a, str>>,
    /// The choices followed (`index` 0, as n = 1 has): nearly always one, so it needs no list.
    pub choice: Option<ChunkChoice<'a>>,
    /// Any further choices at `index` 0, in order.
    pub more_choices: Vec<ChunkChoice<'a>>,
    /// `usage`, unless absent or `null`: read once per stream, for the caller to take its counts.
    pub usage: Option<Json<'a>>,
    /// `error`, unless absent or `null`.
    pub error: Option<Json<'a>>,
}

#[derive(Default)]
pub struct ChunkChoice<'a> {
    pub index: Option<u32>,
    pub delta: Option<ChunkDelta<'a>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

#[derive(Default)]
pub struct ChunkDelta<'a> {
    /// `content` as a string.
    pub content: Option<Cow<'a, str>>,
    /// `content` as a list of parts (Mistral's reasoning models send one): their text and
    /// thinking, in order.
    pub content_parts: Vec<ContentPiece<'a>>,
    pub reasoning_content: Option<Cow<'a, str>>,
    pub reasoning: Option<Cow<'a, str>>,
    pub refusal: Option<Cow<'a, str>>,
    pub tool_calls: Vec<ChunkToolCall<'a>>,
}

/// What a part of a `content` list holds.
pub enum ContentPiece<'a> {
    /// A part's `text` (a `text` part's, or any other part's but `thinking`).
    Text(Cow<'a, str>),
    /// A text of a `thinking` part.
    Thinking(Cow<'a, str>),
}

#[derive(Default)]
pub struct ChunkToolCall<'a> {
    pub index: Option<u32>,
    pub id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    pub arguments: Option<Cow<'a, str>>,
}

/// One frame, read whole before any of it is used: a frame with a field of the wrong type is
/// malformed, and none of its deltas count.
#[inline(never)]
pub fn parse_chunk(data: &str) -> Read<Chunk<'_>> {
    let mut f = Frame::new(data);
    let mut chunk = Chunk::default();
    f.members("chunk")?;
    while let Some(key) = f.key()? {
        match &*key {
            "model" => chunk.model = f.string("model")?,
            "choices" => {
                (chunk.choice, chunk.more_choices) = (None, Vec::new());
                if f.list("choices")? {
                    while f.item()? {
                        let choice = read_choice(&mut f)?;
                        if choice.index.unwrap_or(0) != 0 {
                            continue;
                        }
                        match chunk.choice {
                            None => chunk.choice = Some(choice),
                            Some(_) => chunk.more_choices.push(choice),
                        }
                    }
                }
            }
            "usage" => {
                let usage = f.value()?;
                chunk.usage = (!usage.is_null()).then_some(usage);
            }
            "error" => chunk.error = Some(f.value()?).filter(|e| !e.is_null()),
            _ => f.skip()?,
        }
    }
    f.end()?;
    Ok(chunk)
}

fn read_choice<'a>(f: &mut Frame<'a>) -> Read<ChunkChoice<'a>> {
    let mut choice = ChunkChoice::default();
    f.members("choices[]")?;
    while let Some(key) = f.key()? {
        match &*key {
            "index" => choice.index = f.index("choices[].index")?,
            "delta" => choice.delta = if f.object("choices[].delta")? { Some(read_delta(f)?) } else { None },
            "finish_reason" => choice.finish_reason = f.string("choices[].finish_reason")?,
            _ => f.skip()?,
        }
    }
    Ok(choice)
}

/// An entered `delta` object.
fn read_delta<'a>(f: &mut Frame<'a>) -> Read<ChunkDelta<'a>> {
    let mut delta = ChunkDelta::default();
    while let Some(key) = f.key()? {
        match &*key {
            "content" => {
                delta.content_parts.clear();
                delta.content = match f.kind()? {
                    Kind::Array => {
                        read_content_parts(f, &mut delta.content_parts)?;
                        None
                    }
                    Kind::String | Kind::Null => f.string("delta.content")?,
                    _ => return Err(f.unexpected("delta.content", "a string or a list of parts")),
                };
            }
            "reasoning_content" => delta.reasoning_content = f.string("delta.reasoning_content")?,
            "reasoning" => delta.reasoning = f.string("delta.reasoning")?,
            "refusal" => delta.refusal = f.string("delta.refusal")?,
            "tool_calls" => {
                delta.tool_calls.clear();
                if f.list("delta.tool_calls")? {
                    while f.item()? {
                        delta.tool_calls.push(read_tool_call(f)?);
                    }
                }
            }
            _ => f.skip()?,
        }
    }
    Ok(delta)
}

/// A `content` list, read as a whole answer's `message.content` list is: a `thinking` part's
/// `thinking` is reasoning, any other part's `text` is text (an image or a reference part has
/// none). Mistral's parts: `{"type": "text", "text"}` and `{"type": "thinking", "thinking":
/// [{"type": "text", "text"}], "closed"?}`.
fn read_content_parts<'a>(f: &mut Frame<'a>, out: &mut Vec<ContentPiece<'a>>) -> Read<()> {
    f.list("delta.content")?;
    while f.item()? {
        let (mut kind, mut text, mut thinking) = (None, None, Vec::new());
        f.members("delta.content[]")?;
        while let Some(key) = f.key()? {
            match &*key {
                "type" => kind = f.string("delta.content[].type")?,
                "text" => text = f.string("delta.content[].text")?,
                "thinking" => {
                    thinking.clear();
                    read_thinking(f, &mut thinking)?;
                }
                _ => f.skip()?,
            }
        }
        if kind.as_deref() == Some("thinking") {
            out.extend(thinking.into_iter().map(ContentPiece::Thinking));
        } else if let Some(text) = text {
            out.push(ContentPiece::Text(text));
        }
    }
    Ok(())
}

/// A `thinking` part's `thinking`: Mistral's list of parts (each `text` counts), or one string
/// (as Anthropic's thinking blocks have it, which compatible proxies pass on).
fn read_thinking<'a>(f: &mut Frame<'a>, out: &mut Vec<Cow<'a, str>>) -> Read<()> {
    match f.kind()? {
        Kind::Array => {
            f.list("delta.content[].thinking")?;
            while f.item()? {
                let mut text = None;
                f.members("delta.content[].thinking[]")?;
                while let Some(key) = f.key()? {
                    match &*key {
                        "text" => text = f.string("delta.content[].thinking[].text")?,
                        _ => f.skip()?,
                    }
                }
                out.extend(text);
            }
        }
        Kind::String | Kind::Null => out.extend(f.string("delta.content[].thinking")?),
        _ => return Err(f.unexpected("delta.content[].thinking", "a string or a list of parts")),
    }
    Ok(())
}

fn read_tool_call<'a>(f: &mut Frame<'a>) -> Read<ChunkToolCall<'a>> {
    let mut call = ChunkToolCall::default();
    f.members("delta.tool_calls[]")?;
    while let Some(key) = f.key()? {
        match &*key {
            "index" => call.index = f.index("delta.tool_calls[].index")?,
            "id" => call.id = f.string("delta.tool_calls[].id")?,
            "function" => {
                (call.name, call.arguments) = (None, None);
                if f.object("delta.tool_calls[].function")? {
                    while let Some(key) = f.key()? {
                        match &*key {
                            "name" => call.name = f.string("delta.tool_calls[].function.name")?,
                            "arguments" => call.arguments = f.string("delta.tool_calls[].function.arguments")?,
                            _ => f.skip()?,
                        }
                    }
                }
            }
            _ => f.skip()?,
        }
    }
    Ok(call)
}

/// `data` without its surrounding whitespace. A frame nearly always starts and ends with a printable
/// ASCII byte (`{`, `}`, `[`, `]`), which is no whitespace: then there is nothing to look for.
pub fn trimmed(data: &str) -> &str {
    match (data.as_bytes().first(), data.as_bytes().last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => data,
        _ => data.trim(),
    }
}
