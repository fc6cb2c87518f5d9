//! Typed reads of stream frames over the JSON [`Cursor`], for llm-baton's format readers.
//!
//! It lives here, not in llm-baton, because every token of every stream passes through its
//! methods: built at this crate's opt-level 3 and never inlined into a caller built for size.
//!
//! The reads check what serde's derived `Option<T>` fields checked, in the same order: absent or
//! `null` is `None`, a value of another type is an error naming the field and quoting what was
//! there, and the first problem in the text is the one reported.

use std::borrow::Cow;

use crate::json::{Cursor, Json, JsonError, Kind, MAX_DEPTH};
use crate::write::ToJson;

/// A read's result: its error is the text shown in a malformed-frame report.
pub type Read<T> = Result<T, String>;

/// A frame read in text order with a [`Cursor`]: no tree is built, values not asked for are
/// skipped (still checked), and the first problem in the text or in a field's type is the one
/// reported, as a derived `Deserialize` reported it.
pub struct Frame<'a>(Cursor<'a>);

#[cold]
#[inline(never)]
fn syntax(e: JsonError) -> String {
    e.to_string()
}

impl<'a> Frame<'a> {
    pub fn new(data: &'a str) -> Frame<'a> {
        Frame(Cursor::new(data, MAX_DEPTH))
    }

    /// Enters the object the frame (or a member that must be one) holds: `at` names it in the
    /// error when it is something else.
    #[inline(never)]
    pub fn members(&mut self, at: &str) -> Read<()> {
        match self.0.peek().map_err(syntax)? {
            Kind::Object => self.0.enter_object().map_err(syntax),
            _ => Err(invalid(at, &self.value()?, "an object")),
        }
    }

    /// Enters an object-valued member: `false` (and read past) when it is `null`.
    #[inline(never)]
    pub fn object(&mut self, at: &str) -> Read<bool> {
        match self.0.peek().map_err(syntax)? {
            Kind::Null => self.skip().map(|()| false),
            _ => self.members(at).map(|()| true),
        }
    }

    /// Enters a list-valued member: `false` (and read past) when it is `null`.
    #[inline(never)]
    pub fn list(&mut self, at: &str) -> Read<bool> {
        match self.0.peek().map_err(syntax)? {
            Kind::Array => self.0.enter_array().map(|()| true).map_err(syntax),
            Kind::Null => self.skip().map(|()| false),
            _ => Err(invalid(at, &self.value()?, "a list")),
        }
    }

    /// The next member's key in an entered object; `None` after its end.
    #[inline(never)]
    pub fn key(&mut self) -> Read<Option<Cow<'a, str>>> {
        self.0.next_key().map_err(syntax)
    }

    /// Whether another item follows in an entered list.
    #[inline(never)]
    pub fn item(&mut self) -> Read<bool> {
        self.0.next_item().map_err(syntax)
    }

    /// A string-valued member: `None` when it is `null`.
    #[inline(never)]
    pub fn string(&mut self, at: &str) -> Read<Option<Cow<'a, str>>> {
        match self.0.peek().map_err(syntax)? {
            Kind::String => self.0.string().map(Some).map_err(syntax),
            _ => string(self.value()?, at),
        }
    }

    /// An index-valued member (a whole number from 0 to `u32::MAX`): `None` when it is `null`.
    #[inline(never)]
    pub fn index(&mut self, at: &str) -> Read<Option<u32>> {
        index(&self.value()?, at)
    }

    /// A boolean-valued member: `None` when it is `null`.
    #[inline(never)]
    pub fn boolean(&mut self, at: &str) -> Read<Option<bool>> {
        match self.value()? {
            Json::Bool(b) => Ok(Some(b)),
            Json::Null => Ok(None),
            other => Err(invalid(at, &other, "a boolean")),
        }
    }

    /// What the next value is, without reading it: for a member of more than one type.
    #[inline(never)]
    pub fn kind(&mut self) -> Read<Kind> {
        self.0.peek().map_err(syntax)
    }

    /// The next value as a tree, for the parts read seldom.
    #[inline(never)]
    pub fn value(&mut self) -> Read<Json<'a>> {
        self.0.value().map_err(syntax)
    }

    /// The next value's text, unless it is `null`: a part passed on as it came, read whole only
    /// by the caller that wants it.
    #[inline(never)]
    pub fn raw(&mut self) -> Read<Option<&'a str>> {
        self.kind()?;
        let start = self.0.read_so_far().len();
        self.skip()?;
        let text = &self.0.read_so_far()[start..];
        Ok((text != "null").then_some(text))
    }

    #[inline(never)]
    pub fn skip(&mut self) -> Read<()> {
        self.0.skip().map_err(syntax)
    }

    /// After the frame's value: only whitespace may follow.
    #[inline(never)]
    pub fn end(&mut self) -> Read<()> {
        self.0.finish().map_err(syntax)
    }
}

/// What `got` is, for an error message: strings quoted (escaped), so the reader sees the value.
#[cold]
fn describe(got: &Json) -> String {
    match got {
        Json::Null => "null".into(),
        Json::Bool(b) => format!("the boolean {b}"),
        Json::Number(n) => format!("the number {}", n.as_str()),
        Json::String(s) => format!("the string {}", s.to_json()),
        Json::Array(_) => "a list".into(),
        Json::Object(_) => "an object".into(),
    }
}

#[cold]
#[inline(never)]
fn invalid(at: &str, got: &Json, expected: &str) -> String {
    format!("invalid type: `{at}` is {}, expected {expected}", describe(got))
}

fn string<'a>(v: Json<'a>, at: &str) -> Read<Option<Cow<'a, str>>> {
    match v {
        Json::String(s) => Ok(Some(s)),
        Json::Null => Ok(None),
        other => Err(invalid(at, &other, "a string")),
    }
}

/// An index (a whole number from 0 to `u32::MAX`).
fn index(v: &Json, at: &str) -> Read<Option<u32>> {
    match v {
        Json::Null => Ok(None),
        Json::Number(n) => match n.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Ok(Some(n)),
            None => Err(invalid(at, v, "a whole number from 0 to 4294967295")),
        },
        other => Err(invalid(at, other, "a whole number")),
    }
}
