//! Typed reads from a parsed [`Value`], for the cold paths: whole answers and the stream events
//! that come once per stream. The hot stream deltas are read in [`super::frame`]; everything
//! else reads the `Value` the config's readers use too (parsed by the wire crate's reader),
//! instead of a derived deserializer per struct (each of which serde inlines whole into every
//! `Option` field).
//!
//! The reads check what a derived `Option<T>` field checks: absent or `null` is `None`, a value
//! of another type is an error naming the field, a [`FieldError`] as every document's reader
//! gives; its sentence is the one the stream frames' reader writes too (`invalid type: …`).

//!
//! Token counts are the exception: a provider's odd count (fractional, negative, beyond what JS
//! holds exactly, not a number, `1e400`) must not fail an answer whose text was already shown,
//! so counts are read leniently and an odd one is unknown.

use serde_json::Value;

use super::DecodeError;
use crate::chat::Answer;
use crate::value::FieldError;

pub(crate) type Read<T> = Result<T, FieldError>;

/// A whole body as a `Value`. JSON is UTF-8, so a body that is not is as malformed as one with a
/// syntax error. A number beyond `f64`'s range becomes the string of its digits
/// ([`crate::value::from_tree`]).
pub(crate) fn parse(body: &[u8]) -> Read<Value> {
    crate::value::parse_value(text(body)?).map_err(|e| FieldError::new("", e.to_string()))
}

/// A whole answer: `body` parsed and handed to `read`. A body that is not JSON, or whose fields
/// `read` finds of the wrong type, is a protocol error: the answer `is_not` what it should be.
pub(crate) fn answer(
    body: &[u8],
    read: fn(&Value) -> Read<Result<Answer, DecodeError>>,
    is_not: &str,
) -> Result<Answer, DecodeError> {
    parse(body).and_then(|v| read(&v)).unwrap_or_else(|e| Err(DecodeError::Protocol(format!("{is_not}: {e}"))))
}

/// The largest count reported as known: JavaScript numbers hold every integer up to here.
const MAX_COUNT: u64 = (1 << 53) - 1;

/// A token count from a JSON number, read as a whole number or else (`as_f64`) as a float: a
/// whole number from 0 to [`MAX_COUNT`] (`12.0` included), else unknown. Shared by the `Value`
/// readers here and the stream frames' reader ([`super::frame::count`]).
pub(crate) fn count_of_number(whole: Option<u64>, as_f64: impl FnOnce() -> Option<f64>) -> Option<u64> {
    match whole {
        Some(n) => Some(n).filter(|n| *n <= MAX_COUNT),
        None => as_f64().filter(|n| n.fract() == 0.0 && (0.0..=MAX_COUNT as f64).contains(n)).map(|n| n as u64),
    }
}

/// A token count from any value: a count (see [`count_of_number`]) or unknown, never an error.
pub(crate) fn count_of(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => count_of_number(n.as_u64(), || n.as_f64()),
        _ => None,
    }
}

/// A token count field: absent or `null` is `None`, present is `Some(count or unknown)`. Two
/// levels, because a later frame's odd count must overwrite an earlier one with "unknown".
pub(crate) fn count_field(v: &Value, key: &str) -> Option<Option<u64>> {
    field(v, key).map(count_of)
}

/// A body as text for `from_str`.
pub(crate) fn text(body: &[u8]) -> Read<&str> {
    std::str::from_utf8(body).map_err(|e| FieldError::new("", e.to_string()))
}

/// `v[key]`, with `null` read as absent.
pub(crate) fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

#[cold]
#[inline(never)]
pub(crate) fn invalid(key: &str, got: &Value, expected: &str) -> FieldError {
    let message = format!("invalid type: `{key}` is {}, expected {expected}", crate::value::kind(got));
    FieldError { path: key.to_string(), message }
}

/// A required field that is absent, in the object `within` names ("an output item").
#[cold]
#[inline(never)]
pub(crate) fn missing(key: &str, within: &str) -> FieldError {
    FieldError { path: key.to_string(), message: format!("missing field `{key}` in {within}") }
}

/// The document itself, which must be an object.
pub(crate) fn object<'a>(v: &'a Value, what: &str) -> Read<&'a Value> {
    if v.is_object() {
        Ok(v)
    } else {
        Err(invalid(what, v, "an object"))
    }
}

pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Read<Option<&'a str>> {
    match field(v, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(invalid(key, other, "a string")),
    }
}

pub(crate) fn string_field(v: &Value, key: &str) -> Read<Option<String>> {
    str_field(v, key).map(|s| s.map(str::to_string))
}

/// An object-valued field.
pub(crate) fn object_field<'a>(v: &'a Value, key: &str) -> Read<Option<&'a Value>> {
    match field(v, key) {
        None => Ok(None),
        Some(o) if o.is_object() => Ok(Some(o)),
        Some(other) => Err(invalid(key, other, "an object")),
    }
}

/// A list-of-objects field.
pub(crate) fn objects_field<'a>(v: &'a Value, key: &str) -> Read<Option<&'a [Value]>> {
    match field(v, key) {
        None => Ok(None),
        Some(Value::Array(items)) => match items.iter().find(|i| !i.is_object()) {
            Some(bad) => Err(invalid(key, bad, "a list of objects")),
            None => Ok(Some(items)),
        },
        Some(other) => Err(invalid(key, other, "a list")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_counts_are_unknown_never_errors() {
        let cases = [
            ("12", Some(12)),
            ("12.0", Some(12)),
            ("1e2", Some(100)),
            ("0", Some(0)),
            ("9007199254740991", Some(9_007_199_254_740_991)),
            ("9007199254740992", None),
            ("18446744073709551615", None),
            ("99999999999999999999", None),
            ("1.5", None),
            ("-1", None),
            ("-0.5", None),
            ("1e400", None),
            ("-1e400", None),
            ("\"12\"", None),
            ("true", None),
            ("[1]", None),
            ("{\"n\": 1}", None),
        ];
        for (text, expected) in cases {
            let doc = format!(r#"{{"n": {text}, "after": "kept"}}"#);
            let value = parse(doc.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(count_field(&value, "n"), Some(expected), "{text}");
            assert_eq!(value["after"], "kept");
        }
        assert_eq!(count_field(&serde_json::json!({"n": null}), "n"), None);
    }

    #[test]
    fn numbers_beyond_f64_become_their_digits_where_they_are() {
        let value = parse(br#"{"a":1e400,"b":"1e400","c":[-2E+999, 3],"d":1e300}"#).unwrap();
        assert_eq!(value, serde_json::json!({"a": "1e400", "b": "1e400", "c": ["-2E+999", 3], "d": 1e300}));
    }
}
