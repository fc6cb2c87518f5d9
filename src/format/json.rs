//! Typed reads from a parsed [`Value`], for the cold paths: whole answers and the stream events
//! that come once per stream. The hot stream deltas keep small borrowed `Deserialize` structs;
//! everything else reuses the `Value` parser the config already links, instead of a derived
//! deserializer per struct (each of which serde inlines whole into every `Option` field).
//!
//! The reads check what a derived `Option<T>` field checks: absent or `null` is `None`, a value
//! of another type is an error naming the field.

use serde_json::Value;

pub(crate) type Read<T> = Result<T, String>;

/// A whole body as a `Value`. JSON is UTF-8, so a body that is not is as malformed as one with a
/// syntax error. `from_str` is the one serde_json reader the crate instantiates (the config and
/// the stream frames use it too); a `from_slice` would link a second copy of the parser.
pub(crate) fn parse(body: &[u8]) -> Read<Value> {
    serde_json::from_str(text(body)?).map_err(|e| e.to_string())
}

/// A body as text for `from_str`.
pub(crate) fn text(body: &[u8]) -> Read<&str> {
    std::str::from_utf8(body).map_err(|e| e.to_string())
}

/// `v[key]`, with `null` read as absent.
pub(crate) fn field<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

#[cold]
#[inline(never)]
pub(crate) fn invalid(key: &str, got: &Value, expected: &str) -> String {
    let got = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    format!("invalid type: `{key}` is {got}, expected {expected}")
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

pub(crate) fn u64_field(v: &Value, key: &str) -> Read<Option<u64>> {
    match field(v, key) {
        None => Ok(None),
        Some(n) => n.as_u64().map(Some).ok_or_else(|| invalid(key, n, "a whole number")),
    }
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
