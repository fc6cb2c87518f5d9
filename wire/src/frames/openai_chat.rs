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
    /// Azure OpenAI's `prompt_filter_results`' text, unless absent or `null`.
    pub prompt_filter_results: Option<&'a str>,
}

#[derive(Default)]
pub struct ChunkChoice<'a> {
    pub index: Option<u32>,
    pub delta: Option<ChunkDelta<'a>>,
    pub finish_reason: Option<Cow<'a, str>>,
    /// `logprobs`'s text, unless absent or `null`: what a client of this format asked for.
    pub logprobs: Option<&'a str>,
    /// Azure OpenAI's `content_filter_results`' text, unless absent or `null`.
    pub content_filter_results: Option<&'a str>,
}

#[derive(Default)]
pub struct ChunkDelta<'a> {
    /// `content` as a string.
    pub content: Option<Cow<'a, str>>,
    /// `content` as a list of parts (Mistral's reasoning models send one), as a tree for the
    /// caller to read as it reads a whole answer's.
    pub content_parts: Option<Json<'a>>,
    pub reasoning_content: Option<Cow<'a, str>>,
    pub reasoning: Option<Cow<'a, str>>,
    pub refusal: Option<Cow<'a, str>>,
    pub tool_calls: Vec<ChunkToolCall<'a>>,
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
            "prompt_filter_results" => chunk.prompt_filter_results = f.raw()?,
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
            "logprobs" => choice.logprobs = f.raw()?,
            "content_filter_results" => choice.content_filter_results = f.raw()?,
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
                (delta.content, delta.content_parts) = match f.kind()? {
                    Kind::Array => (None, Some(f.value()?)),
                    _ => (f.string("delta.content")?, None),
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
