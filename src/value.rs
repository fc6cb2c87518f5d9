//! Reading JSON values, naming the field of every mistake by its path: the one reader.
//!
//! The config, the JS request, the call options, a gateway client's body and a provider's answer
//! are all read by hand from a `serde_json::Value` parsed with the wire crate's reader, so that a
//! mistake says where it is (`targets.p.timeouts.totalMs`, `messages[2].content`), what was
//! wrong and what would be right, as one [`FieldError`]. This is the ground floor those readers
//! share: it imports nothing from the crate. Numbers are read strictly, because the values may
//! come from JS, where a fraction, NaN or a huge number is one keystroke away: a fraction where a
//! whole number is meant, or a number out of range, is an error naming the path and the allowed
//! range, never a silent rounding, clamp or "omitted".

use std::fmt;

use crate::float::parse_f64;
use llm_baton_wire::json::{self, Json, JsonError};
use llm_baton_wire::write::{JsonWriter, ToJson};
use serde_json::{Map, Value};

/// The largest delay a JavaScript timer honours (2^31 - 1 ms); longer ones fire at once.
pub const MAX_MS: u64 = 2_147_483_647;

/// How deep `serde_json` lets JSON text nest before it gives up.
const JSON_TEXT_MAX_DEPTH: usize = 128;

/// A mistake in a JSON document (the config, a request, a gateway client's body, a provider's
/// answer): `path` names the field, `message` is the whole sentence (path included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FieldError {}

impl FieldError {
    pub fn new(path: impl Into<String>, what: impl Into<String>) -> Self {
        Self::joined(path.into(), what.into())
    }

    /// [`FieldError::new`]'s body, one copy for every pair of argument types.
    fn joined(path: String, what: String) -> Self {
        let message = if path.is_empty() { what } else { format!("{path} {what}") };
        FieldError { path, message }
    }
}

/// Parses JSON text into a `Value` with the wire crate's reader, the one JSON parser the wasm
/// links (serde_json's own is not): a number beyond `f64`'s range becomes the string of its digits.
pub(crate) fn parse_value(text: &str) -> Result<Value, JsonError> {
    json::parse(text).map(|tree| from_tree(&tree))
}

/// A parsed tree as a `Value`. A number beyond `f64`'s range becomes the string of its digits,
/// so only the field holding it sees a string: a token count reads it as unknown, a field that
/// must be a number reports its type.
pub(crate) fn from_tree(v: &Json) -> Value {
    match v {
        Json::Null => Value::Null,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Value::from(u),
            (None, Some(i)) => Value::from(i),
            _ => parse_f64(n.as_str())
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| Value::String(n.as_str().to_string()), Value::Number),
        },
        Json::String(s) => Value::String(s.to_string()),
        Json::Array(items) => Value::Array(items.iter().map(from_tree).collect()),
        Json::Object(o) => {
            // Inserted one by one (the last of a repeated key wins, as JSON.parse has it):
            // collecting would sort the members first, which links a sort into the wasm.
            let mut members = Map::new();
            for (k, v) in o.iter() {
                members.insert(k.to_string(), from_tree(v));
            }
            Value::Object(members)
        }
    }
}

/// Parses JSON text that is the document at `path` ("config", "request").
pub(crate) fn parse_json(text: &str, path: &str) -> Result<Value, FieldError> {
    parse_value(text).map_err(|e| {
        if e.to_string().starts_with("recursion limit exceeded") {
            FieldError::new(
                path,
                format!("is nested too deeply (more than {JSON_TEXT_MAX_DEPTH} levels of objects and lists)"),
            )
        } else {
            FieldError::new(path, format!("is not valid JSON: {e}"))
        }
    })
}

/// A JSON object being read, which refuses keys it does not know.
pub(crate) struct Obj<'a> {
    path: String,
    map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    pub(crate) fn new(v: &'a Value, path: &str, known: &[&str]) -> Result<Obj<'a>, FieldError> {
        let what = if path.is_empty() { "the config" } else { "an object" };
        let map = match v {
            Value::Object(map) => map,
            other => {
                let name = if path.is_empty() { "config" } else { path };
                return Err(wrong(name, what, other));
            }
        };
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                let hint = match closest(key, known) {
                    Some(k) => format!("did you mean \"{k}\"?"),
                    None => format!("known fields: {}", known.join(", ")),
                };
                return Err(FieldError::new(child(path, key), format!("is not a known field; {hint}")));
            }
        }
        Ok(Obj { path: path.to_string(), map })
    }

    pub(crate) fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    /// The path of one of this object's fields.
    pub(crate) fn path_of(&self, key: &str) -> String {
        child(&self.path, key)
    }

    pub(crate) fn required_str(&self, key: &str, expected: &str) -> Result<&'a str, FieldError> {
        match self.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            None => Err(missing(&self.path_of(key), expected)),
            Some(other) => Err(wrong_value(&self.path_of(key), expected, other)),
        }
    }

    /// An optional positive millisecond count; `null` counts as omitted.
    pub(crate) fn opt_ms(&self, key: &str, omit_hint: &str) -> Result<Option<u64>, FieldError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => read_ms(v, &self.path_of(key), omit_hint).map(Some),
        }
    }

    /// [`Obj::opt_ms`] with its default, which the hint names ("omit it for the default of …").
    pub(crate) fn opt_ms_or(&self, key: &str, default: u64) -> Result<u64, FieldError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => read_ms(v, &self.path_of(key), &format!("omit it for the default of {default}")),
        }
    }
}

/// A positive number of milliseconds no longer than a timer can wait, rounded up to whole ms.
pub fn parse_ms(v: &Value) -> Option<u64> {
    match v.as_f64() {
        Some(n) if n.is_finite() && n > 0.0 && n <= MAX_MS as f64 => Some(n.ceil() as u64),
        _ => None,
    }
}

/// [`parse_ms`] with the error for `path`; `hint` ends the message (e.g. "omit it for no limit").
pub(crate) fn read_ms(v: &Value, path: &str, hint: &str) -> Result<u64, FieldError> {
    parse_ms(v).ok_or_else(|| {
        let too_long = v.as_f64().is_some_and(|n| n > MAX_MS as f64);
        let range = if too_long { format!(" up to {MAX_MS}, the longest a JS timer waits") } else { String::new() };
        FieldError::new(path, format!("must be a positive number of milliseconds{range} (got {}); {hint}", show(v)))
    })
}

/// A whole number from `min` to `max`. `what` names the kind ("a whole number of bytes").
pub(crate) fn read_whole(v: &Value, path: &str, what: &str, min: u64, max: u64) -> Result<u64, FieldError> {
    let whole = match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|x| x.is_finite() && x.fract() == 0.0 && *x >= 0.0 && *x <= u64::MAX as f64)
                .map(|x| x as u64)
        }),
        _ => None,
    };
    whole
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| FieldError::new(path, format!("must be {what} from {min} to {max} (got {})", show(v))))
}

/// A finite number from `min` to `max`. `what` names the kind ("a number of milliseconds");
/// `hint`, when not empty, ends the message.
pub(crate) fn read_number(
    v: &Value,
    path: &str,
    what: &str,
    (min, max): (f64, f64),
    hint: &str,
) -> Result<f64, FieldError> {
    match v.as_f64() {
        Some(n) if n.is_finite() && (min..=max).contains(&n) => Ok(n),
        _ => {
            let hint = if hint.is_empty() { String::new() } else { format!("; {hint}") };
            let (min, max) = (plain_f64(min), plain_f64(max));
            Err(FieldError::new(path, format!("must be {what} from {min} to {max} (got {}){hint}", show(v))))
        }
    }
}

/// `n` as `format!("{n}")` writes it (`2`, `0.7`, `0.0000001`, `NaN`), without core::fmt's
/// float code, which is 20 KB of wasm for a few numbers in messages.
pub(crate) fn plain_f64(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "inf" } else { "-inf" }.into();
    }
    let mut writer = JsonWriter::new();
    writer.f64(n.abs());
    let short = writer.finish();
    let (mantissa, exponent) = match short.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (short.as_str(), 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = [whole, fraction].concat();
    // The significant digits, and where the decimal point goes among them (it may be left of or
    // past all of them).
    let significant = digits.trim_start_matches('0');
    let point = whole.len() as i32 + exponent - (digits.len() - significant.len()) as i32;
    let significant = display_digits(n.abs(), significant.trim_end_matches('0'), point);
    let mut out = String::new();
    if n.is_sign_negative() {
        out.push('-');
    }
    if significant.is_empty() {
        out.push('0');
    } else if point <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
        out.push_str(&significant);
    } else if point as usize >= significant.len() {
        out.push_str(&significant);
        out.extend(std::iter::repeat_n('0', point as usize - significant.len()));
    } else {
        out.push_str(&significant[..point as usize]);
        out.push('.');
        out.push_str(&significant[point as usize..]);
    }
    out
}

/// Display's significant digits of `n` (positive), given the shortest ones the JSON writer chose
/// and their decimal point. They differ only where `n`'s exact value lies halfway between the
/// two shortest candidates: the writer then takes the even one, Display the upper.
fn display_digits(n: f64, shortest: &str, point: i32) -> String {
    // n = mantissa * 2^exponent, the mantissa odd.
    let bits = n.to_bits();
    let (mut mantissa, biased) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i32);
    let mut exponent = if biased == 0 { -1074 } else { biased - 1075 };
    if biased != 0 {
        mantissa |= 1 << 52;
    }
    while mantissa != 0 && mantissa & 1 == 0 {
        mantissa >>= 1;
        exponent += 1;
    }
    // A whole number's exact digits never end in the 5 of a halfway case.
    if mantissa == 0 || exponent >= 0 {
        return shortest.to_string();
    }
    // n = mantissa * 5^k / 10^k exactly: its digits, which end in 5. Past u128 they are far more
    // than one digit longer than the shortest.
    let k = exponent.unsigned_abs();
    let Some(exact) = 5u128.checked_pow(k).and_then(|p| p.checked_mul(u128::from(mantissa))) else {
        return shortest.to_string();
    };
    let exact = decimal_digits(exact);
    if exact.len() != shortest.len() + 1 {
        return shortest.to_string();
    }
    let upper = plus_one(&exact[..shortest.len()]);
    // The upper candidate must be as short and read back as `n` (a power of two's lower
    // neighbour is closer than its upper one).
    let reads_back = parse_f64(&format!("0.{upper}e{point}")) == Some(n);
    if upper.len() == shortest.len() && reads_back {
        upper.trim_end_matches('0').to_string()
    } else {
        shortest.to_string()
    }
}

/// `n`'s decimal digits (u128's Display, without core::fmt's 128-bit code).
fn decimal_digits(mut n: u128) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().map(|&d| char::from(d)).collect()
}

/// The decimal digits `digits` plus one (`"129"` -> `"130"`, `"99"` -> `"100"`).
fn plus_one(digits: &str) -> String {
    let mut out = digits.as_bytes().to_vec();
    let carried = out.iter_mut().rev().all(|d| {
        let nine = *d == b'9';
        *d = if nine { b'0' } else { *d + 1 };
        nine
    });
    let lead = if carried { "1" } else { "" };
    lead.chars().chain(out.iter().map(|&d| char::from(d))).collect()
}

/// One step of a path from a document's root: a field by name, or a list item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    Field(&'a str),
    Item,
}

/// The path of `key` inside `path`: `a.b` for plain keys, `a["odd key"]` for others.
pub(crate) fn child(path: &str, key: &str) -> String {
    let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (path.is_empty(), plain) {
        (true, true) => key.to_string(),
        (true, false) => format!("[{}]", key.to_json()),
        (false, true) => format!("{path}.{key}"),
        (false, false) => format!("{path}[{}]", key.to_json()),
    }
}

/// The path of item `i` of the list at `path`: `a[3]`.
pub(crate) fn index_path(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A value as the user wrote it, shortened.
pub(crate) fn show(v: &Value) -> String {
    let s = v.to_json();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(37).collect::<String>())
    } else {
        s
    }
}

/// Like [`show`], but objects and lists by their kind only.
pub(crate) fn show_kind(v: &Value) -> String {
    match v {
        Value::Object(_) => "an object".into(),
        Value::Array(_) => "a list".into(),
        other => show(other),
    }
}

/// `{path} must be {expected} (got …)`: a field of the wrong type or value.
pub(crate) fn wrong(path: &str, expected: &str, got: &Value) -> FieldError {
    FieldError::new(path, format!("must be {expected} (got {})", show_kind(got)))
}

/// Like [`wrong`], but the value is shown whatever its kind: a field with a fixed set of values.
pub(crate) fn wrong_value(path: &str, expected: &str, got: &Value) -> FieldError {
    FieldError::new(path, format!("must be {expected} (got {})", show(got)))
}

/// `{path} is missing; give {expected}`.
pub(crate) fn missing(path: &str, expected: &str) -> FieldError {
    FieldError::new(path, format!("is missing; give {expected}"))
}

/// The kind of a value and nothing of its content, for values that may be secrets.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn as_object<'a>(v: &'a Value, path: &str, expected: &str) -> Result<&'a Map<String, Value>, FieldError> {
    v.as_object().ok_or_else(|| wrong(path, expected, v))
}

/// The known name within two edits of `key`, for "did you mean".
pub(crate) fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .copied()
        .map(|k| (edit_distance(&key.to_ascii_lowercase(), &k.to_ascii_lowercase()), k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn decimal_digits_and_plus_one() {
        assert_eq!(decimal_digits(0), "0");
        assert_eq!(decimal_digits(u128::MAX), u128::MAX.to_string());
        for (digits, next) in [("0", "1"), ("129", "130"), ("199", "200"), ("99", "100"), ("9", "10"), ("", "1")] {
            assert_eq!(plus_one(digits), next, "{digits}");
        }
    }

    #[test]
    fn floats_as_display_writes_them() {
        for x in [
            0.0,
            -0.0,
            0.7,
            2.0,
            100.0,
            1e6,
            1e20,
            1e-7,
            -1.5,
            0.1 + 0.2,
            5e-324,
            f64::MAX,
            f64::NAN,
            f64::NEG_INFINITY,
            // Exactly halfway between two shortest candidates: Display takes the upper one.
            -(539_055_462_072_833.0 / 16.0),
        ] {
            assert_eq!(plain_f64(x), format!("{x}"));
        }
    }

    /// Numbers whose exact value is an odd mantissa over a power of two: every halfway case
    /// between two shortest candidates is one of these, and random floats seldom hit one.
    #[test]
    fn halfway_floats_as_display_writes_them() {
        let mut checked = 0;
        for k in 1..=60 {
            for step in 0..2000u64 {
                let mantissa = ((1u64 << 52) + step.wrapping_mul(0x9e37_79b9_7f4a_7c15) % (1 << 52)) | 1;
                let x = mantissa as f64 / (1u64 << k.min(62)) as f64;
                assert_eq!(plain_f64(x), format!("{x}"), "{mantissa} / 2^{k}");
                checked += 1;
            }
        }
        assert_eq!(checked, 120_000);
    }

    proptest! {
        #[test]
        fn any_float_as_display_writes_it(x in any::<f64>()) {
            prop_assert_eq!(plain_f64(x), format!("{x}"));
        }

    }

    #[test]
    fn milliseconds_are_positive_bounded_and_rounded_up() {
        let cases = [
            (json!(1), Ok(1)),
            (json!(0.2), Ok(1)),
            (json!(1.5), Ok(2)),
            (json!(MAX_MS), Ok(MAX_MS)),
            (json!(0), Err("t must be a positive number of milliseconds (got 0); omit it")),
            (json!(-0.0), Err("t must be a positive number of milliseconds (got -0.0); omit it")),
            (json!(-5), Err("t must be a positive number of milliseconds (got -5); omit it")),
            (json!("10"), Err(r#"t must be a positive number of milliseconds (got "10"); omit it"#)),
            (json!(null), Err("t must be a positive number of milliseconds (got null); omit it")),
            (
                json!(MAX_MS + 1),
                Err("t must be a positive number of milliseconds up to 2147483647, the longest a JS timer waits (got 2147483648); omit it"),
            ),
            (
                json!(1e300),
                Err("t must be a positive number of milliseconds up to 2147483647, the longest a JS timer waits (got 1e+300); omit it"),
            ),
        ];
        for (v, want) in cases {
            let got = read_ms(&v, "t", "omit it").map_err(|e| e.message);
            assert_eq!(got, want.map_err(str::to_string), "for {v}");
        }
    }

    #[test]
    fn whole_numbers_refuse_fractions_and_the_out_of_range() {
        let cases = [
            (json!(1), Ok(1)),
            (json!(100), Ok(100)),
            (json!(3.0), Ok(3)),
            (json!(0), Err("n must be a whole number from 1 to 100 (got 0)")),
            (json!(101), Err("n must be a whole number from 1 to 100 (got 101)")),
            (json!(2.5), Err("n must be a whole number from 1 to 100 (got 2.5)")),
            (json!(-1), Err("n must be a whole number from 1 to 100 (got -1)")),
            (json!(u64::MAX), Err("n must be a whole number from 1 to 100 (got 18446744073709551615)")),
            (json!(1e20), Err("n must be a whole number from 1 to 100 (got 1e+20)")),
            (json!("3"), Err(r#"n must be a whole number from 1 to 100 (got "3")"#)),
            (json!(true), Err("n must be a whole number from 1 to 100 (got true)")),
        ];
        for (v, want) in cases {
            let got = read_whole(&v, "n", "a whole number", 1, 100).map_err(|e| e.message);
            assert_eq!(got, want.map_err(str::to_string), "for {v}");
        }
    }

    #[test]
    fn numbers_stay_in_their_range() {
        let cases = [
            (json!(0), "", Ok(0.0)),
            (json!(2), "", Ok(2.0)),
            (json!(0.7), "", Ok(0.7)),
            (json!(2.01), "", Err("x must be a number from 0 to 2 (got 2.01)")),
            (json!(-0.5), "", Err("x must be a number from 0 to 2 (got -0.5)")),
            (json!([1]), "", Err("x must be a number from 0 to 2 (got [1])")),
            (json!(3), "lower it", Err("x must be a number from 0 to 2 (got 3); lower it")),
        ];
        for (v, hint, want) in cases {
            let got = read_number(&v, "x", "a number", (0.0, 2.0), hint).map_err(|e| e.message);
            assert_eq!(got, want.map_err(str::to_string), "for {v}");
        }
    }

    #[test]
    fn paths_quote_keys_that_are_not_plain() {
        let cases = [
            ("", "a", "a"),
            ("", "a b", r#"["a b"]"#),
            ("targets", "p-1_x", "targets.p-1_x"),
            ("targets", "my.target", r#"targets["my.target"]"#),
            ("targets", "", r#"targets[""]"#),
            ("h", "quote\"d", r#"h["quote\"d"]"#),
        ];
        for (path, key, want) in cases {
            assert_eq!(child(path, key), want);
        }
    }

    #[test]
    fn unknown_fields_get_the_nearest_known_name() {
        let v = json!({"deadline": 1});
        let e = Obj::new(&v, "", &["deadlineMs", "targets"]).err().unwrap();
        assert_eq!(e.message, r#"deadline is not a known field; did you mean "deadlineMs"?"#);
        let v = json!({"zzz": 1});
        let e = Obj::new(&v, "o", &["deadlineMs", "targets"]).err().unwrap();
        assert_eq!(e.message, "o.zzz is not a known field; known fields: deadlineMs, targets");
        assert_eq!(closest("TIMEOUTS", &["timeouts"]), Some("timeouts"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn json_text_mistakes_name_the_document() {
        let deep = "[".repeat(200) + &"]".repeat(200);
        let cases = [
            ("{", "config", "config is not valid JSON: EOF while parsing an object at line 1 column 1"),
            (deep.as_str(), "request", "request is nested too deeply (more than 128 levels of objects and lists)"),
        ];
        for (text, path, want) in cases {
            let e = parse_json(text, path).unwrap_err();
            assert_eq!((e.path.as_str(), e.message.as_str()), (path, want));
        }
        assert_eq!(parse_json(&("[".repeat(100) + &"]".repeat(100)), "config").map(|_| ()), Ok(()));
    }

    #[test]
    fn shown_values_are_shortened() {
        assert_eq!(show(&json!("x".repeat(50))), format!("\"{}...", "x".repeat(36)));
        assert_eq!(show_kind(&json!({"a": 1})), "an object");
        assert_eq!(show_kind(&json!([1])), "a list");
    }
}
