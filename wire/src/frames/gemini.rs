//! A Gemini `GenerateContentResponse` (one stream chunk, or a whole answer: the same shape), read
//! into structs holding only the fields llm-baton's decoder uses: every streamed token is read
//! here.

use std::borrow::Cow;

use super::tree;
use crate::frame::{Frame, Read};
use crate::json::Json;

/// The fields of a `GenerateContentResponse` the decoder uses.
#[derive(Default)]
pub struct Chunk<'a> {
    pub candidates: Vec<Candidate<'a>>,
    /// `usageMetadata`, unless absent or `null`, for the caller to take its counts.
    pub usage: Option<Json<'a>>,
    pub model_version: Option<Cow<'a, str>>,
    /// A blocked prompt has no candidates, only `promptFeedback.blockReason`.
    pub prompt_blocked: bool,
    /// `error`, unless absent or `null`.
    pub error: Option<Json<'a>>,
}

#[derive(Default)]
pub struct Candidate<'a> {
    pub parts: Vec<ChunkPart<'a>>,
    pub finish_reason: Option<Cow<'a, str>>,
}

#[derive(Default)]
pub struct ChunkPart<'a> {
    pub text: Option<Cow<'a, str>>,
    pub thought: Option<bool>,
    pub function_call: Option<ChunkFunctionCall<'a>>,
    /// `thoughtSignature`: the reasoning state Gemini wants back on this part.
    pub thought_signature: Option<Cow<'a, str>>,
}

#[derive(Default)]
pub struct ChunkFunctionCall<'a> {
    pub id: Option<Cow<'a, str>>,
    pub name: Option<Cow<'a, str>>,
    /// `args`, unless absent or `null`.
    pub args: Option<Json<'a>>,
}

/// One chunk, read whole (in text order) before any of it is used.
#[inline(never)]
pub fn parse_chunk(text: &str) -> Read<Chunk<'_>> {
    let mut f = Frame::new(text);
    let mut chunk = Chunk::default();
    f.members("response")?;
    while let Some(key) = f.key()? {
        match &*key {
            "candidates" => {
                chunk.candidates.clear();
                if f.list("candidates")? {
                    while f.item()? {
                        chunk.candidates.push(read_candidate(&mut f)?);
                    }
                }
            }
            "usageMetadata" => chunk.usage = tree(&mut f)?,
            "modelVersion" => chunk.model_version = f.string("modelVersion")?,
            "promptFeedback" => {
                chunk.prompt_blocked = false;
                if f.object("promptFeedback")? {
                    while let Some(key) = f.key()? {
                        match &*key {
                            "blockReason" => chunk.prompt_blocked = f.string("promptFeedback.blockReason")?.is_some(),
                            _ => f.skip()?,
                        }
                    }
                }
            }
            "error" => chunk.error = tree(&mut f)?,
            _ => f.skip()?,
        }
    }
    f.end()?;
    Ok(chunk)
}

fn read_candidate<'a>(f: &mut Frame<'a>) -> Read<Candidate<'a>> {
    let mut candidate = Candidate::default();
    f.members("candidates[]")?;
    while let Some(key) = f.key()? {
        match &*key {
            "content" => {
                candidate.parts.clear();
                if f.object("candidates[].content")? {
                    while let Some(key) = f.key()? {
                        match &*key {
                            "parts" => {
                                candidate.parts.clear();
                                if f.list("candidates[].content.parts")? {
                                    while f.item()? {
                                        candidate.parts.push(read_part(f)?);
                                    }
                                }
                            }
                            _ => f.skip()?,
                        }
                    }
                }
            }
            "finishReason" => candidate.finish_reason = f.string("candidates[].finishReason")?,
            _ => f.skip()?,
        }
    }
    Ok(candidate)
}

fn read_part<'a>(f: &mut Frame<'a>) -> Read<ChunkPart<'a>> {
    let mut part = ChunkPart::default();
    f.members("parts[]")?;
    while let Some(key) = f.key()? {
        match &*key {
            "text" => part.text = f.string("parts[].text")?,
            "thought" => part.thought = f.boolean("parts[].thought")?,
            "thoughtSignature" => part.thought_signature = f.string("parts[].thoughtSignature")?,
            "functionCall" => {
                part.function_call = if f.object("parts[].functionCall")? { Some(read_function_call(f)?) } else { None }
            }
            _ => f.skip()?,
        }
    }
    Ok(part)
}

/// An entered `functionCall` object.
fn read_function_call<'a>(f: &mut Frame<'a>) -> Read<ChunkFunctionCall<'a>> {
    let mut call = ChunkFunctionCall::default();
    while let Some(key) = f.key()? {
        match &*key {
            "id" => call.id = f.string("functionCall.id")?,
            "name" => call.name = f.string("functionCall.name")?,
            "args" => call.args = tree(f)?,
            _ => f.skip()?,
        }
    }
    Ok(call)
}
