//! Reading JSON text into a borrowed tree.
//!
//! Why not serde_json's `Value`: every stream frame is parsed here, so the reader must be fast
//! and small in wasm. [`parse`] makes one pass over the bytes, with no hashing and no recursion
//! (an explicit stack of open containers, so deep input is an error, never a stack overflow):
//! strings without escapes and all numbers borrow from the text, and a number keeps its text, so
//! a `u64` seed, `0.1` or `1e400` is never rounded or refused by reading (only by the accessor
//! that wants it as a machine number).
//!
//! [`Cursor`] reads the same text in order without building a tree, for the frames of a stream:
//! it skips (and checks) what its caller does not ask for.
//!
//! It accepts exactly what serde_json's `from_str` accepts, except numbers beyond `f64`'s range,
//! and its errors have serde_json's words and positions ("expected `,` or `}` at line 1 column
//! 17"): they are shown to users in config errors and in malformed-frame reports.
//!
//! # Examples
//!
//! ```
//! use llm_baton_wire::json::{parse, Json};
//!
//! let frame = parse(r#"{"choices":[{"delta":{"content":"Hi"}}],"seed":18446744073709551615}"#).unwrap();
//! let delta = frame["choices"][0].get("delta").unwrap();
//! assert_eq!(delta["content"].as_str(), Some("Hi"));
//! assert_eq!(frame["seed"].as_u64(), Some(u64::MAX));
//! assert!(parse("[1,]").unwrap_err().to_string().contains("trailing comma at line 1 column 4"));
//! ```

use std::borrow::Cow;
use std::fmt;
use std::ops::Index;

/// How many arrays and objects may be open at once before [`parse`] refuses a document:
/// serde_json's limit (the 128th open container is the error).
pub const MAX_DEPTH: usize = 128;

/// A parsed JSON value, borrowing from its text where it can.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Json<'a> {
    #[default]
    Null,
    Bool(bool),
    Number(Number<'a>),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

/// A JSON number, kept as its (valid JSON) text. Equality compares the text: `1.0 != 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number<'a>(Cow<'a, str>);

/// A JSON object: its members in the order of the text, duplicates kept. [`get`](Self::get)
/// finds the last of duplicate keys, as `JSON.parse` and serde_json keep the last. Equality
/// compares the members in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Json<'a>)>,
}

/// Why a text is not JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    code: ErrorCode,
    offset: usize,
    line: usize,
    column: usize,
}

/// What went wrong, in serde_json's words (see [`ErrorCode::message`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorCode {
    EofWhileParsingList,
    EofWhileParsingObject,
    EofWhileParsingString,
    EofWhileParsingValue,
    ExpectedColon,
    ExpectedListCommaOrEnd,
    ExpectedObjectCommaOrEnd,
    ExpectedSomeIdent,
    ExpectedSomeValue,
    InvalidEscape,
    InvalidNumber,
    ControlCharacterWhileParsingString,
    KeyMustBeAString,
    LoneLeadingSurrogateInHexEscape,
    TrailingComma,
    TrailingCharacters,
    UnexpectedEndOfHexEscape,
    RecursionLimitExceeded,
}

impl ErrorCode {
    pub fn message(self) -> &'static str {
        match self {
            ErrorCode::EofWhileParsingList => "EOF while parsing a list",
            ErrorCode::EofWhileParsingObject => "EOF while parsing an object",
            ErrorCode::EofWhileParsingString => "EOF while parsing a string",
            ErrorCode::EofWhileParsingValue => "EOF while parsing a value",
            ErrorCode::ExpectedColon => "expected `:`",
            ErrorCode::ExpectedListCommaOrEnd => "expected `,` or `]`",
            ErrorCode::ExpectedObjectCommaOrEnd => "expected `,` or `}`",
            ErrorCode::ExpectedSomeIdent => "expected ident",
            ErrorCode::ExpectedSomeValue => "expected value",
            ErrorCode::InvalidEscape => "invalid escape",
            ErrorCode::InvalidNumber => "invalid number",
            ErrorCode::ControlCharacterWhileParsingString => {
                "control character (\\u0000-\\u001F) found while parsing a string"
            }
            ErrorCode::KeyMustBeAString => "key must be a string",
            ErrorCode::LoneLeadingSurrogateInHexEscape => "lone leading surrogate in hex escape",
            ErrorCode::TrailingComma => "trailing comma",
            ErrorCode::TrailingCharacters => "trailing characters",
            ErrorCode::UnexpectedEndOfHexEscape => "unexpected end of hex escape",
            ErrorCode::RecursionLimitExceeded => "recursion limit exceeded",
        }
    }
}

impl JsonError {
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The byte offset of the offending byte, or the text's length when the text ended early.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The 1-based line of the error.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The column as serde_json counts it: bytes into the line up to and including the offending
    /// byte (so 1-based for a byte that is there, the line's length at the end of the text).
    pub fn column(&self) -> usize {
        self.column
    }

    #[cold]
    #[inline(never)]
    fn at(text: &[u8], offset: usize, code: ErrorCode) -> JsonError {
        let end = text.len().min(offset + 1);
        let line_start = text[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = 1 + text[..line_start].iter().filter(|&&b| b == b'\n').count();
        JsonError { code, offset, line, column: end - line_start }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at line {} column {}", self.code.message(), self.line, self.column)
    }
}

impl std::error::Error for JsonError {}

/// Parses a whole JSON document (surrounding whitespace allowed), refusing one that nests
/// [`MAX_DEPTH`] arrays and objects.
pub fn parse(text: &str) -> Result<Json<'_>, JsonError> {
    parse_with_depth(text, MAX_DEPTH)
}

/// [`parse`] with another depth limit: the document may hold fewer than `max_depth` arrays and
/// objects open at once. The reader never recurses, so any limit is safe for the reader itself;
/// dropping or copying a tree does recurse, so keep the limit in the thousands.
///
/// Never inlined: with LTO, a caller built for size would otherwise take the reader in and build
/// it at its own optimisation level.
#[inline(never)]
pub fn parse_with_depth(text: &str, max_depth: usize) -> Result<Json<'_>, JsonError> {
    let mut reader = Reader { text, bytes: text.as_bytes(), at: 0 };
    let value = reader.document(max_depth)?;
    reader.skip_whitespace();
    match reader.peek() {
        None => Ok(value),
        Some(_) => Err(reader.error(ErrorCode::TrailingCharacters)),
    }
}

/// What the next value is, from its first byte (a `t` that does not go on `rue` is still `Bool`:
/// reading it says what is wrong).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// A pull reader over one document, for hot paths that want a few fields of a frame without
/// building its tree: enter an object, walk its keys, read the values wanted (strings borrowed
/// where they have no escape) and [`skip`](Self::skip) the rest, which are still checked. Reading
/// is in text order, so the first problem in the text (or in what the caller expected) is the
/// one reported, with serde_json's words and positions, as a derived `Deserialize` reports it.
///
/// llm-baton reads it through [`crate::frame::Frame`], whose methods take these in and are never
/// inlined, for the reason [`parse_with_depth`] is not.
///
/// ```
/// use llm_baton_wire::json::{Cursor, Kind, MAX_DEPTH};
///
/// let mut c = Cursor::new(r#"{"id": "x", "delta": {"content": "Hi"}}"#, MAX_DEPTH);
/// let mut content = None;
/// c.enter_object().unwrap();
/// while let Some(key) = c.next_key().unwrap() {
///     if key == "delta" && c.peek().unwrap() == Kind::Object {
///         c.enter_object().unwrap();
///         while let Some(key) = c.next_key().unwrap() {
///             if key == "content" && c.peek().unwrap() == Kind::String {
///                 content = Some(c.string().unwrap());
///             } else {
///                 c.skip().unwrap();
///             }
///         }
///     } else {
///         c.skip().unwrap();
///     }
/// }
/// c.finish().unwrap();
/// assert_eq!(content.as_deref(), Some("Hi"));
/// ```
pub struct Cursor<'a> {
    reader: Reader<'a>,
    /// Arrays and objects entered and not yet left.
    depth: usize,
    max_depth: usize,
    /// The container just entered has had no member or item yet.
    first: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `text`; arrays and objects may nest fewer than `max_depth` deep.
    pub fn new(text: &'a str, max_depth: usize) -> Cursor<'a> {
        Cursor { reader: Reader { text, bytes: text.as_bytes(), at: 0 }, depth: 0, max_depth, first: false }
    }

    /// The kind of the next value (after whitespace); an error where no value starts.
    pub fn peek(&mut self) -> Result<Kind, JsonError> {
        let r = &mut self.reader;
        r.skip_whitespace();
        Ok(match r.peek() {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b'-' | b'0'..=b'9') => Kind::Number,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            None => return Err(r.error(ErrorCode::EofWhileParsingValue)),
            Some(_) => return Err(r.error(ErrorCode::ExpectedSomeValue)),
        })
    }

    /// The next value, whole.
    pub fn value(&mut self) -> Result<Json<'a>, JsonError> {
        self.reader.document(self.max_depth.saturating_sub(self.depth))
    }

    /// Reads past the next value, checking it.
    pub fn skip(&mut self) -> Result<(), JsonError> {
        self.value().map(drop)
    }

    /// The text read so far: what follows the last value read starts at its end.
    pub fn read_so_far(&self) -> &'a str {
        &self.reader.text[..self.reader.at]
    }

    /// The next value, which [`peek`](Self::peek) said is a string.
    pub fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.reader.skip_whitespace();
        match self.reader.peek() {
            Some(b'"') => self.reader.string(),
            _ => Err(self.reader.error(ErrorCode::ExpectedSomeValue)),
        }
    }

    fn enter(&mut self, open: u8) -> Result<(), JsonError> {
        let r = &mut self.reader;
        r.skip_whitespace();
        if r.peek() != Some(open) {
            return Err(r.error(ErrorCode::ExpectedSomeValue));
        }
        if self.depth + 1 >= self.max_depth {
            return Err(r.error(ErrorCode::RecursionLimitExceeded));
        }
        r.at += 1;
        self.depth += 1;
        self.first = true;
        Ok(())
    }

    /// Enters the object that [`peek`](Self::peek) said is next.
    pub fn enter_object(&mut self) -> Result<(), JsonError> {
        self.enter(b'{')
    }

    /// Enters the array that [`peek`](Self::peek) said is next.
    pub fn enter_array(&mut self) -> Result<(), JsonError> {
        self.enter(b'[')
    }

    fn leave(&mut self) {
        self.reader.at += 1;
        self.depth -= 1;
        self.first = false;
    }

    /// In an object: the next member's key (the cursor then at its value), or `None` after the
    /// object's end.
    pub fn next_key(&mut self) -> Result<Option<Cow<'a, str>>, JsonError> {
        let r = &mut self.reader;
        r.skip_whitespace();
        match r.peek() {
            Some(b'}') => {
                self.leave();
                return Ok(None);
            }
            Some(b',') if !self.first => {
                r.at += 1;
                r.skip_whitespace();
                match r.peek() {
                    Some(b'"') => {}
                    Some(b'}') => return Err(r.error(ErrorCode::TrailingComma)),
                    None => return Err(r.error(ErrorCode::EofWhileParsingValue)),
                    Some(_) => return Err(r.error(ErrorCode::KeyMustBeAString)),
                }
            }
            None => return Err(r.error(ErrorCode::EofWhileParsingObject)),
            Some(_) if !self.first => return Err(r.error(ErrorCode::ExpectedObjectCommaOrEnd)),
            Some(b'"') => {}
            Some(_) => return Err(r.error(ErrorCode::KeyMustBeAString)),
        }
        self.first = false;
        r.key().map(Some)
    }

    /// In an array: whether another item follows (the cursor then at it); `false` after the
    /// array's end.
    pub fn next_item(&mut self) -> Result<bool, JsonError> {
        let r = &mut self.reader;
        r.skip_whitespace();
        match r.peek() {
            Some(b']') => {
                self.leave();
                return Ok(false);
            }
            Some(b',') if !self.first => {
                r.at += 1;
                r.skip_whitespace();
                match r.peek() {
                    Some(b']') => return Err(r.error(ErrorCode::TrailingComma)),
                    None => return Err(r.error(ErrorCode::EofWhileParsingValue)),
                    Some(_) => {}
                }
            }
            None => return Err(r.error(ErrorCode::EofWhileParsingList)),
            Some(_) if !self.first => return Err(r.error(ErrorCode::ExpectedListCommaOrEnd)),
            Some(_) => {}
        }
        self.first = false;
        Ok(true)
    }

    /// After the document's value: only whitespace may follow.
    pub fn finish(&mut self) -> Result<(), JsonError> {
        self.reader.skip_whitespace();
        match self.reader.peek() {
            None => Ok(()),
            Some(_) => Err(self.reader.error(ErrorCode::TrailingCharacters)),
        }
    }
}

/// An array or object whose members are still being read.
enum Open<'a> {
    Array(Vec<Json<'a>>),
    /// The members so far and the key of the member being read.
    Object(Vec<(Cow<'a, str>, Json<'a>)>, Cow<'a, str>),
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that ends a run of plain string bytes: `"`, `\` or a
/// control character. Only the lowest flag is exact (a borrow may flag bytes above it), which is
/// all the scan needs.
#[inline(always)]
fn string_run_ends(word: u64) -> u64 {
    let quote = word ^ (ONES * b'"' as u64);
    let backslash = word ^ (ONES * b'\\' as u64);
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v;
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (has_zero(quote) | has_zero(backslash) | control) & HIGH_BITS
}

#[inline(always)]
fn ends_string_run(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

impl<'a> Reader<'a> {
    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[cold]
    fn error(&self, code: ErrorCode) -> JsonError {
        JsonError::at(self.bytes, self.at, code)
    }

    #[cold]
    fn error_at(&self, offset: usize, code: ErrorCode) -> JsonError {
        JsonError::at(self.bytes, offset, code)
    }

    #[inline(always)]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// The whole value at the cursor, containers read with an explicit stack.
    fn document(&mut self, max_depth: usize) -> Result<Json<'a>, JsonError> {
        let mut open: Vec<Open<'a>> = Vec::new();
        'value: loop {
            self.skip_whitespace();
            let mut value = match self.peek() {
                None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
                Some(b'[') => {
                    if open.len() + 1 >= max_depth {
                        return Err(self.error(ErrorCode::RecursionLimitExceeded));
                    }
                    self.at += 1;
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b']') => {
                            self.at += 1;
                            Json::Array(Vec::new())
                        }
                        None => return Err(self.error(ErrorCode::EofWhileParsingList)),
                        Some(_) => {
                            open.push(Open::Array(Vec::new()));
                            continue 'value;
                        }
                    }
                }
                Some(b'{') => {
                    if open.len() + 1 >= max_depth {
                        return Err(self.error(ErrorCode::RecursionLimitExceeded));
                    }
                    self.at += 1;
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b'}') => {
                            self.at += 1;
                            Json::Object(Object::new())
                        }
                        Some(b'"') => {
                            let key = self.key()?;
                            open.push(Open::Object(Vec::new(), key));
                            continue 'value;
                        }
                        None => return Err(self.error(ErrorCode::EofWhileParsingObject)),
                        Some(_) => return Err(self.error(ErrorCode::KeyMustBeAString)),
                    }
                }
                Some(b'"') => Json::String(self.string()?),
                Some(b'-' | b'0'..=b'9') => Json::Number(self.number()?),
                Some(b't') => self.literal(b"true", Json::Bool(true))?,
                Some(b'f') => self.literal(b"false", Json::Bool(false))?,
                Some(b'n') => self.literal(b"null", Json::Null)?,
                Some(_) => return Err(self.error(ErrorCode::ExpectedSomeValue)),
            };
            // A value is complete: add it to its container, closing containers that end here.
            loop {
                let Some(container) = open.last_mut() else {
                    return Ok(value);
                };
                self.skip_whitespace();
                match container {
                    Open::Array(items) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.at += 1;
                                self.skip_whitespace();
                                match self.peek() {
                                    Some(b']') => return Err(self.error(ErrorCode::TrailingComma)),
                                    None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
                                    Some(_) => continue 'value,
                                }
                            }
                            Some(b']') => {
                                self.at += 1;
                                value = Json::Array(std::mem::take(items));
                            }
                            None => return Err(self.error(ErrorCode::EofWhileParsingList)),
                            Some(_) => return Err(self.error(ErrorCode::ExpectedListCommaOrEnd)),
                        }
                    }
                    Open::Object(members, key) => {
                        members.push((std::mem::take(key), value));
                        match self.peek() {
                            Some(b',') => {
                                self.at += 1;
                                self.skip_whitespace();
                                match self.peek() {
                                    Some(b'"') => {
                                        *key = self.key()?;
                                        continue 'value;
                                    }
                                    Some(b'}') => return Err(self.error(ErrorCode::TrailingComma)),
                                    None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
                                    Some(_) => return Err(self.error(ErrorCode::KeyMustBeAString)),
                                }
                            }
                            Some(b'}') => {
                                self.at += 1;
                                value = Json::Object(Object { members: std::mem::take(members) });
                            }
                            None => return Err(self.error(ErrorCode::EofWhileParsingObject)),
                            Some(_) => return Err(self.error(ErrorCode::ExpectedObjectCommaOrEnd)),
                        }
                    }
                }
                open.pop();
            }
        }
    }

    /// A member's key at the cursor (a `"`) and the `:` after it.
    fn key(&mut self) -> Result<Cow<'a, str>, JsonError> {
        let key = self.string()?;
        self.skip_whitespace();
        match self.peek() {
            Some(b':') => {
                self.at += 1;
                Ok(key)
            }
            None => Err(self.error(ErrorCode::EofWhileParsingObject)),
            Some(_) => Err(self.error(ErrorCode::ExpectedColon)),
        }
    }

    fn literal(&mut self, word: &[u8], value: Json<'a>) -> Result<Json<'a>, JsonError> {
        for &expected in word {
            match self.peek() {
                None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
                Some(b) if b != expected => return Err(self.error(ErrorCode::ExpectedSomeIdent)),
                Some(_) => self.at += 1,
            }
        }
        Ok(value)
    }

    /// The index of the first byte at or after `at` that ends a run of plain string bytes, or
    /// the text's length.
    #[inline(always)]
    fn string_run_end(&self, mut at: usize) -> usize {
        let bytes = self.bytes;
        while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            let ends = string_run_ends(u64::from_le_bytes(*chunk));
            if ends != 0 {
                return at + (ends.trailing_zeros() / 8) as usize;
            }
            at += 8;
        }
        while at < bytes.len() && !ends_string_run(bytes[at]) {
            at += 1;
        }
        at
    }

    /// A string at the cursor (a `"`): borrowed when it has no escape.
    fn string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        let mut start = self.at + 1;
        let mut decoded: Option<String> = None;
        loop {
            let end = self.string_run_end(start);
            // Runs end at ASCII bytes, so they are whole UTF-8 sequences.
            let run = &self.text[start..end];
            match self.bytes.get(end) {
                Some(b'"') => {
                    self.at = end + 1;
                    return Ok(match decoded {
                        None => Cow::Borrowed(run),
                        Some(mut s) => {
                            s.push_str(run);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(b'\\') => {
                    let s = decoded.get_or_insert_with(String::new);
                    s.push_str(run);
                    self.at = end + 1;
                    self.escape(s)?;
                    start = self.at;
                }
                Some(_) => return Err(self.error_at(end, ErrorCode::ControlCharacterWhileParsingString)),
                None => return Err(self.error_at(end, ErrorCode::EofWhileParsingString)),
            }
        }
    }

    /// The escape after a `\` (the cursor is past it), appended to `out`.
    #[cold]
    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let Some(b) = self.peek() else {
            return Err(self.error(ErrorCode::EofWhileParsingString));
        };
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.at += 1;
                return self.unicode_escape(out);
            }
            _ => return Err(self.error(ErrorCode::InvalidEscape)),
        };
        self.at += 1;
        out.push(c);
        Ok(())
    }

    /// Four hex digits at the cursor.
    fn hex4(&mut self) -> Result<u16, JsonError> {
        let Some(digits) = self.bytes.get(self.at..self.at + 4) else {
            return Err(self.error_at(self.bytes.len(), ErrorCode::EofWhileParsingString));
        };
        let mut n = 0u16;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.error_at(self.at + 3, ErrorCode::InvalidEscape)),
            };
            n = n << 4 | v as u16;
        }
        self.at += 4;
        Ok(n)
    }

    /// A `\u` escape (the cursor past the `u`): a surrogate must be paired, as serde_json
    /// requires for text (a lone one is an error, not U+FFFD).
    fn unicode_escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let first = self.hex4()?;
        let code = match first {
            0xDC00..=0xDFFF => return Err(self.error_at(self.at - 1, ErrorCode::LoneLeadingSurrogateInHexEscape)),
            0xD800..=0xDBFF => {
                for expected in [b'\\', b'u'] {
                    match self.peek() {
                        None => return Err(self.error(ErrorCode::EofWhileParsingString)),
                        Some(b) if b != expected => return Err(self.error(ErrorCode::UnexpectedEndOfHexEscape)),
                        Some(_) => self.at += 1,
                    }
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error_at(self.at - 1, ErrorCode::LoneLeadingSurrogateInHexEscape));
                }
                0x1_0000 + ((u32::from(first) - 0xD800) << 10 | (u32::from(second) - 0xDC00))
            }
            _ => u32::from(first),
        };
        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
        Ok(())
    }

    /// A number at the cursor (a `-` or a digit), checked against JSON's grammar.
    fn number(&mut self) -> Result<Number<'a>, JsonError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.error(ErrorCode::InvalidNumber));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
            Some(_) => return Err(self.error(ErrorCode::InvalidNumber)),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            match self.peek() {
                Some(b'0'..=b'9') => self.digits(),
                None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
                Some(_) => return Err(self.error(ErrorCode::InvalidNumber)),
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            match self.peek() {
                Some(b'0'..=b'9') => self.digits(),
                None => return Err(self.error(ErrorCode::EofWhileParsingValue)),
                Some(_) => return Err(self.error(ErrorCode::InvalidNumber)),
            }
        }
        Ok(Number(Cow::Borrowed(&self.text[start..self.at])))
    }

    #[inline(always)]
    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }
}

impl<'a> Number<'a> {
    /// `text` as a number, if it is a JSON number (no sign but `-`, no leading zeros, no `NaN`).
    pub fn from_text(text: impl Into<Cow<'a, str>>) -> Option<Number<'a>> {
        let text = text.into();
        let mut reader = Reader { text: &text, bytes: text.as_bytes(), at: 0 };
        let whole =
            matches!(reader.peek(), Some(b'-' | b'0'..=b'9')) && reader.number().is_ok() && reader.at == text.len();
        whole.then_some(Number(text))
    }

    /// The number's text, as it was written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as a `u64`, if it is written as an integer (no fraction or exponent) that fits.
    pub fn as_u64(&self) -> Option<u64> {
        let mut n: u64 = 0;
        for &d in self.0.as_bytes() {
            if !d.is_ascii_digit() {
                return None;
            }
            n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        Some(n)
    }

    /// The number as an `i64`, if it is written as an integer (no fraction or exponent) that fits.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0.strip_prefix('-') {
            None => self.as_u64().and_then(|n| i64::try_from(n).ok()),
            Some(magnitude) => {
                let magnitude = Number(Cow::Borrowed(magnitude)).as_u64()?;
                0i64.checked_sub_unsigned(magnitude)
            }
        }
    }

    /// Whether the number is written as an integer (no fraction or exponent).
    pub fn is_integer(&self) -> bool {
        !self.0.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
    }

    pub fn into_owned(self) -> Number<'static> {
        Number(Cow::Owned(self.0.into_owned()))
    }
}

impl From<u64> for Number<'_> {
    fn from(n: u64) -> Self {
        Number(Cow::Owned(decimal(n, false)))
    }
}

impl From<i64> for Number<'_> {
    fn from(n: i64) -> Self {
        Number(Cow::Owned(decimal(n.unsigned_abs(), n < 0)))
    }
}

/// The decimal text of a whole number, without core::fmt.
fn decimal(n: u64, negative: bool) -> String {
    let mut text = String::with_capacity(21);
    if negative {
        text.push('-');
    }
    crate::write::push_u64(&mut text, n);
    text
}

static NULL: Json<'static> = Json::Null;

impl<'a> Json<'a> {
    /// An owned string value.
    pub fn string(s: impl Into<String>) -> Json<'static> {
        Json::String(Cow::Owned(s.into()))
    }

    /// `self[key]` for an object (the last member of that key), else `None`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object()?.get(key)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        self.as_object_mut()?.get_mut(key)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number<'a>> {
        match self {
            Json::Number(n) => Some(n),
            _ => None,
        }
    }

    /// See [`Number::as_u64`].
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number()?.as_u64()
    }

    /// See [`Number::as_i64`].
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number()?.as_i64()
    }

    pub fn as_array(&self) -> Option<&Vec<Json<'a>>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json<'a>>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Json::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Json::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Json::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// The same tree, owning all its text.
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Number(n) => Json::Number(n.into_owned()),
            Json::String(s) => Json::String(Cow::Owned(s.into_owned())),
            Json::Array(items) => Json::Array(items.into_iter().map(Json::into_owned).collect()),
            Json::Object(o) => Json::Object(o.into_owned()),
        }
    }
}

/// `value["key"]`: the member, or `Null` when there is none or `value` is no object.
impl<'a> Index<&str> for Json<'a> {
    type Output = Json<'a>;

    fn index(&self, key: &str) -> &Json<'a> {
        self.get(key).unwrap_or(&NULL)
    }
}

/// `value[i]`: the item, or `Null` when there is none or `value` is no array.
impl<'a> Index<usize> for Json<'a> {
    type Output = Json<'a>;

    fn index(&self, i: usize) -> &Json<'a> {
        self.as_array().and_then(|items| items.get(i)).unwrap_or(&NULL)
    }
}

impl From<bool> for Json<'_> {
    fn from(b: bool) -> Self {
        Json::Bool(b)
    }
}

impl From<u64> for Json<'_> {
    fn from(n: u64) -> Self {
        Json::Number(n.into())
    }
}

impl From<i64> for Json<'_> {
    fn from(n: i64) -> Self {
        Json::Number(n.into())
    }
}

impl<'a> From<Number<'a>> for Json<'a> {
    fn from(n: Number<'a>) -> Self {
        Json::Number(n)
    }
}

impl<'a> From<&'a str> for Json<'a> {
    fn from(s: &'a str) -> Self {
        Json::String(Cow::Borrowed(s))
    }
}

impl From<String> for Json<'_> {
    fn from(s: String) -> Self {
        Json::String(Cow::Owned(s))
    }
}

impl<'a> From<Cow<'a, str>> for Json<'a> {
    fn from(s: Cow<'a, str>) -> Self {
        Json::String(s)
    }
}

impl<'a> From<Vec<Json<'a>>> for Json<'a> {
    fn from(items: Vec<Json<'a>>) -> Self {
        Json::Array(items)
    }
}

impl<'a> From<Object<'a>> for Json<'a> {
    fn from(o: Object<'a>) -> Self {
        Json::Object(o)
    }
}

impl<'a> Object<'a> {
    pub fn new() -> Self {
        Object { members: Vec::new() }
    }

    pub fn with_capacity(n: usize) -> Self {
        Object { members: Vec::with_capacity(n) }
    }

    /// The value of the last member named `key`.
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        self.members.iter_mut().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.members.iter().any(|(k, _)| k == key)
    }

    /// Sets `key` to `value`: in place of the last member of that key (returning its value), or
    /// as a new last member.
    pub fn insert(&mut self, key: impl Into<Cow<'a, str>>, value: Json<'a>) -> Option<Json<'a>> {
        let key = key.into();
        match self.get_mut(&key) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => {
                self.members.push((key, value));
                None
            }
        }
    }

    /// Removes every member named `key`, returning the value `get` would have given.
    pub fn remove(&mut self, key: &str) -> Option<Json<'a>> {
        let mut removed = None;
        let mut kept = Vec::with_capacity(self.members.len());
        for (k, v) in self.members.drain(..) {
            if k == key {
                removed = Some(v);
            } else {
                kept.push((k, v));
            }
        }
        self.members = kept;
        removed
    }

    /// The members in order, duplicates included.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.members.iter().map(|(k, v)| (&**k, v))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&str, &mut Json<'a>)> {
        self.members.iter_mut().map(|(k, v)| (&**k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| &**k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Json<'a>> {
        self.members.iter().map(|(_, v)| v)
    }

    /// The number of members, duplicates included.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn into_owned(self) -> Object<'static> {
        let members = self.members.into_iter().map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()));
        Object { members: members.collect() }
    }
}

impl<'a> From<Vec<(Cow<'a, str>, Json<'a>)>> for Object<'a> {
    fn from(members: Vec<(Cow<'a, str>, Json<'a>)>) -> Self {
        Object { members }
    }
}

impl<'a, K: Into<Cow<'a, str>>> FromIterator<(K, Json<'a>)> for Object<'a> {
    fn from_iter<I: IntoIterator<Item = (K, Json<'a>)>>(iter: I) -> Self {
        Object { members: iter.into_iter().map(|(k, v)| (k.into(), v)).collect() }
    }
}

impl<'a> IntoIterator for Object<'a> {
    type Item = (Cow<'a, str>, Json<'a>);
    type IntoIter = std::vec::IntoIter<(Cow<'a, str>, Json<'a>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.members.into_iter()
    }
}
