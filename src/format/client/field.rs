//! Field readers for client request bodies, on [`crate::value`]'s paths and errors: every
//! mistake is a [`FieldError`] naming the field by its path, which the gateway answers as a 400.
//! Unlike the config's readers these ignore fields they do not know and read JSON `null` as
//! absent, as the SDKs send them.

use serde_json::{Map, Value};

use crate::chat::{Effort, Passthrough};

pub(crate) use crate::value::{child, missing, wrong};
use crate::value::{index_path, FieldError};

pub fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, FieldError> {
    v.as_object().ok_or_else(|| wrong(path, "an object", v))
}

/// An optional field; JSON `null` counts as absent, as the SDKs send it.
pub fn opt<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

pub fn string<'a>(o: &'a Map<String, Value>, key: &str, path: &str, expected: &str) -> Result<&'a str, FieldError> {
    let p = child(path, key);
    match opt(o, key) {
        None => Err(missing(&p, expected)),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(wrong(&p, expected, other)),
    }
}

pub fn opt_string<'a>(o: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>, FieldError> {
    match opt(o, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(wrong(&child(path, key), "a string", other)),
    }
}

pub fn opt_bool(o: &Map<String, Value>, key: &str, path: &str) -> Result<bool, FieldError> {
    match opt(o, key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(wrong(&child(path, key), "true or false", other)),
    }
}

pub fn array<'a>(v: &'a Value, path: &str, expected: &str) -> Result<&'a [Value], FieldError> {
    v.as_array().map(Vec::as_slice).ok_or_else(|| wrong(path, expected, v))
}

/// The optional list at `key` (a top-level field), each item read by `read` with its path
/// (`tools[2]`); absent is empty.
pub fn opt_list<T>(
    o: &Map<String, Value>,
    key: &str,
    expected: &str,
    read: impl Fn(&Value, &str) -> Result<T, FieldError>,
) -> Result<Vec<T>, FieldError> {
    let Some(v) = opt(o, key) else { return Ok(Vec::new()) };
    array(v, key, expected)?.iter().enumerate().map(|(i, item)| read(item, &index_path(key, i))).collect()
}

pub fn opt_tokens(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u32>, FieldError> {
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=u32::MAX as f64).contains(&n) => Ok(Some(n as u32)),
            _ => Err(wrong(&child(path, key), "a positive whole number of tokens", v)),
        },
    }
}

pub fn opt_temperature(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, FieldError> {
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if (0.0..=2.0).contains(&n) => Ok(Some(n)),
            _ => Err(wrong(&child(path, key), "a number from 0 to 2", v)),
        },
    }
}

/// `top_p`: a probability mass from 0 to 1.
pub fn opt_top_p(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, FieldError> {
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if (0.0..=1.0).contains(&n) => Ok(Some(n)),
            _ => Err(wrong(&child(path, key), "a number from 0 to 1", v)),
        },
    }
}

/// `seed`: a whole number a JavaScript number holds exactly.
pub fn opt_seed(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>, FieldError> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER => Ok(Some(n as i64)),
            _ => Err(wrong(&child(path, key), "a whole number (a JavaScript safe integer)", v)),
        },
    }
}

/// `parallel_tool_calls`: absent is the provider's default.
pub fn opt_flag(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>, FieldError> {
    match opt(o, key) {
        None => Ok(None),
        Some(_) => opt_bool(o, key, path).map(Some),
    }
}

/// `stop` / `stop_sequences`: one string or a list of strings.
pub fn opt_stop(o: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<String>, FieldError> {
    let p = child(path, key);
    match opt(o, key) {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, s)| s.as_str().map(str::to_string).ok_or_else(|| wrong(&index_path(&p, i), "a string", s)))
            .collect(),
        Some(other) => Err(wrong(&p, "a string or a list of strings", other)),
    }
}

/// One of `allowed`, quoted in the message when it is not.
pub fn one_of<'a>(o: &'a Map<String, Value>, key: &str, path: &str, allowed: &[&str]) -> Result<&'a str, FieldError> {
    let listed: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
    let expected = format!("one of {}", listed.join(", "));
    let s = string(o, key, path, &expected)?;
    if allowed.contains(&s) {
        Ok(s)
    } else {
        Err(wrong(&child(path, key), &expected, &Value::String(s.to_string())))
    }
}

/// A client's effort (`reasoning_effort`, Responses' `reasoning.effort`): `"none"` is reasoning
/// off (`None`), the four efforts every format maps are reasoning on.
pub fn effort(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<Option<Effort>>, FieldError> {
    if opt(o, key).is_none() {
        return Ok(Some(None));
    }
    let named = one_of(o, key, path, &["none", "minimal", "low", "medium", "high"])?;
    Ok(Effort::ALL.into_iter().find(|e| e.as_str() == named).map(Some))
}

/// The body's fields a dialect does not read (`read`: every top-level name its parser reads,
/// maps or refuses), kept for a member of the client's `format` (docs/parameters.md). A null is
/// absent, as everywhere here.
pub fn passthrough(o: &Map<String, Value>, read: &[&str], format: &'static str) -> Option<Passthrough> {
    let mut fields = Map::new();
    for (key, value) in o.iter().filter(|(k, v)| !v.is_null() && !read.contains(&k.as_str())) {
        fields.insert(key.clone(), value.clone());
    }
    (!fields.is_empty()).then_some(Passthrough { format, fields })
}
