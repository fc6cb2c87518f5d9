//! Writing JSON text: every JSON llm-baton sends or hands out (request bodies, events, deltas,
//! summaries, errors, health views) is written here, byte for byte as serde_json wrote it.
//!
//! Why not serde: a `#[derive(Serialize)]` monomorphizes serializer code per field type and
//! inlines it into each caller, which made serialization the largest part of the wasm. Here a
//! type writes itself through a handful of small, shared functions ([`ToJson`]).
//!
//! The writer tracks one thing, whether a comma is due before the next value or key, so a
//! caller writes `{`, keys and values in order and skips a field by not writing it:
//!
//! ```
//! use llm_baton_wire::write::JsonWriter;
//! let mut w = JsonWriter::new();
//! w.begin_object();
//! w.field("model", "m");
//! w.opt_field("max_tokens", None::<&u32>);
//! w.key("stop");
//! w.begin_array();
//! w.string("\n");
//! w.end_array();
//! w.end_object();
//! assert_eq!(w.finish(), r#"{"model":"m","stop":["\n"]}"#);
//! ```

/// A JSON text being written.
///
/// Its writing functions are never inlined: each is a call of a few bytes where a request body
/// or an output writes a hundred fields, and writing is not on the per-byte path.
#[derive(Debug, Default)]
pub struct JsonWriter {
    out: String,
    /// A value or a closed container was just written: the next value or key needs a comma.
    comma_due: bool,
}

impl JsonWriter {
    pub fn new() -> Self {
        JsonWriter::default()
    }

    /// A writer that appends its JSON text to `out`, which [`JsonWriter::finish`] gives back:
    /// for a caller that surrounds the JSON with text of its own (an SSE frame's `data: `), so
    /// the JSON is not written to a text of its own and then copied.
    pub fn appending(out: String) -> Self {
        JsonWriter { out, comma_due: false }
    }

    /// The text written.
    pub fn finish(self) -> String {
        self.out
    }

    fn separate(&mut self) {
        if self.comma_due {
            self.out.push(',');
        }
        self.comma_due = true;
    }

    #[inline(never)]
    pub fn begin_object(&mut self) {
        self.separate();
        self.out.push('{');
        self.comma_due = false;
    }

    #[inline(never)]
    pub fn end_object(&mut self) {
        self.out.push('}');
        self.comma_due = true;
    }

    #[inline(never)]
    pub fn begin_array(&mut self) {
        self.separate();
        self.out.push('[');
        self.comma_due = false;
    }

    #[inline(never)]
    pub fn end_array(&mut self) {
        self.out.push(']');
        self.comma_due = true;
    }

    /// An object's key; its value is written next.
    #[inline(never)]
    pub fn key(&mut self, key: &str) {
        self.separate();
        escape_into(&mut self.out, key);
        self.out.push(':');
        self.comma_due = false;
    }

    /// A value already written as JSON text (or several, comma-separated, in an array).
    #[inline(never)]
    pub fn raw(&mut self, json: &str) {
        self.separate();
        self.out.push_str(json);
    }

    #[inline(never)]
    pub fn string(&mut self, s: &str) {
        self.separate();
        escape_into(&mut self.out, s);
    }

    #[inline(never)]
    pub fn u64(&mut self, n: u64) {
        self.separate();
        push_u64(&mut self.out, n);
    }

    #[inline(never)]
    pub fn i64(&mut self, n: i64) {
        self.separate();
        if n < 0 {
            self.out.push('-');
        }
        push_u64(&mut self.out, n.unsigned_abs());
    }

    /// The shortest text that reads back as `n` (as serde_json writes it: `1.0`, `0.7`,
    /// `1e+20`), and `null` for a NaN or an infinity, which JSON has no text for.
    #[inline(never)]
    pub fn f64(&mut self, n: f64) {
        self.separate();
        if n.is_finite() {
            self.out.push_str(zmij::Buffer::new().format_finite(n));
        } else {
            self.out.push_str("null");
        }
    }

    #[inline(never)]
    pub fn bool(&mut self, b: bool) {
        self.separate();
        self.out.push_str(if b { "true" } else { "false" });
    }

    #[inline(never)]
    pub fn null(&mut self) {
        self.separate();
        self.out.push_str("null");
    }

    /// `value` as the next value.
    pub fn value<T: ToJson + ?Sized>(&mut self, value: &T) {
        value.write_json(self);
    }

    /// `"key":value`.
    pub fn field<T: ToJson + ?Sized>(&mut self, key: &str, value: &T) {
        self.key(key);
        value.write_json(self);
    }

    /// `"key":value`, or nothing for `None`.
    pub fn opt_field<T: ToJson + ?Sized>(&mut self, key: &str, value: Option<&T>) {
        if let Some(value) = value {
            self.field(key, value);
        }
    }

    /// `"key":"text"`, or nothing for an empty text.
    pub fn text_field(&mut self, key: &str, text: &str) {
        if !text.is_empty() {
            self.field(key, text);
        }
    }

    /// `"key":[items]`, or nothing for no items.
    pub fn list_field<T: ToJson>(&mut self, key: &str, items: &[T]) {
        if !items.is_empty() {
            self.field(key, items);
        }
    }
}

/// A value that writes itself as JSON.
pub trait ToJson {
    fn write_json(&self, w: &mut JsonWriter);

    /// This value as JSON text.
    fn to_json(&self) -> String {
        let mut w = JsonWriter::new();
        self.write_json(&mut w);
        w.finish()
    }
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn write_json(&self, w: &mut JsonWriter) {
        (**self).write_json(w)
    }
}

impl ToJson for str {
    fn write_json(&self, w: &mut JsonWriter) {
        w.string(self)
    }
}

impl ToJson for String {
    fn write_json(&self, w: &mut JsonWriter) {
        w.string(self)
    }
}

impl ToJson for bool {
    fn write_json(&self, w: &mut JsonWriter) {
        w.bool(*self)
    }
}

impl ToJson for f64 {
    fn write_json(&self, w: &mut JsonWriter) {
        w.f64(*self)
    }
}

impl ToJson for i64 {
    fn write_json(&self, w: &mut JsonWriter) {
        w.i64(*self)
    }
}

macro_rules! unsigned_to_json {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn write_json(&self, w: &mut JsonWriter) {
                w.u64(*self as u64)
            }
        }
    )*};
}
unsigned_to_json!(u16, u32, u64, usize);

impl<T: ToJson> ToJson for [T] {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_array();
        for item in self {
            item.write_json(w);
        }
        w.end_array();
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn write_json(&self, w: &mut JsonWriter) {
        self.as_slice().write_json(w)
    }
}

/// A JSON value as serde_json writes it: an object's keys in its map's order.
impl ToJson for serde_json::Value {
    fn write_json(&self, w: &mut JsonWriter) {
        use serde_json::Value;
        match self {
            Value::Null => w.null(),
            Value::Bool(b) => w.bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => w.u64(u),
                (None, Some(i)) => w.i64(i),
                (None, None) => w.f64(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => w.string(s),
            Value::Array(items) => items.write_json(w),
            Value::Object(fields) => fields.write_json(w),
        }
    }
}

impl ToJson for serde_json::Map<String, serde_json::Value> {
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        for (key, value) in self {
            w.field(key, value);
        }
        w.end_object();
    }
}

/// `s` as a JSON string: `"` and `\` escaped, the control characters below U+0020 as `\b`, `\t`,
/// `\n`, `\f`, `\r` or `\u00XX`; everything else (U+007F, non-ASCII) as it is.
fn escape_into(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'\n' => 'n',
            b'\r' => 'r',
            b'\t' => 't',
            0x08 => 'b',
            0x0c => 'f',
            0..=0x1f => 'u',
            _ => continue,
        };
        // `i` is at an ASCII byte, so both slices end on character boundaries.
        out.push_str(&s[start..i]);
        out.push('\\');
        out.push(short);
        if short == 'u' {
            out.push_str("00");
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// `n` in decimal, without core::fmt.
pub(crate) fn push_u64(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(d as char);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn written(write: impl FnOnce(&mut JsonWriter)) -> String {
        let mut w = JsonWriter::new();
        write(&mut w);
        w.finish()
    }

    #[test]
    fn escapes_as_serde_json_does() {
        let all_ascii: String = (0u8..=0x7f).map(char::from).collect();
        for s in ["", "plain", "a\"b\\c", "\u{7f}\u{80}é漢🦀", "\u{2028}\u{2029}", "</script>", &all_ascii] {
            assert_eq!(written(|w| w.string(s)), serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn numbers_as_serde_json_writes_them() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u32::MAX as u64, u64::MAX] {
            assert_eq!(written(|w| w.u64(n)), serde_json::to_string(&n).unwrap());
        }
        for n in [0, -1, 7, i64::MIN, i64::MAX, -9_007_199_254_740_991] {
            assert_eq!(written(|w| w.i64(n)), serde_json::to_string(&n).unwrap());
        }
        for x in [0.0, -0.0, 0.7, 1.0, 2.0, 0.1 + 0.2, 1e20, 1e-7, 5e-324, f64::MAX, f64::NAN, f64::INFINITY] {
            assert_eq!(written(|w| w.f64(x)), serde_json::to_string(&x).unwrap(), "{x}");
        }
    }

    #[test]
    fn commas_between_values_and_fields() {
        let text = written(|w| {
            w.begin_object();
            w.field("a", &[1u32, 2][..]);
            w.opt_field("skipped", None::<&str>);
            w.key("b");
            w.begin_object();
            w.end_object();
            w.text_field("empty", "");
            w.list_field::<u32>("none", &[]);
            w.key("c");
            w.begin_array();
            w.null();
            w.begin_array();
            w.end_array();
            w.bool(true);
            w.end_array();
            w.field("d", "x");
            w.end_object();
        });
        assert_eq!(text, r#"{"a":[1,2],"b":{},"c":[null,[],true],"d":"x"}"#);
    }

    #[test]
    fn appends_to_a_text_given() {
        let mut w = JsonWriter::appending("data: ".to_string());
        w.begin_object();
        w.field("a", "b");
        w.end_object();
        assert_eq!(w.finish(), r#"data: {"a":"b"}"#);
        let mut w = JsonWriter::appending("[1,".to_string());
        w.u64(2);
        assert_eq!(w.finish(), "[1,2", "no comma before the first value written");
    }

    #[test]
    fn values_as_serde_json_writes_them() {
        let value = serde_json::json!({
            "z": [1, -2, 0.5, 1e300, null, true, false, "s\n"],
            "a": {"nested": {}, "list": []},
            "n": u64::MAX,
            "m": i64::MIN,
        });
        assert_eq!(value.to_json(), serde_json::to_string(&value).unwrap());
    }

    proptest! {
        #[test]
        fn any_string_escapes_as_serde_json(s in any::<String>()) {
            prop_assert_eq!(written(|w| w.string(&s)), serde_json::to_string(&s).unwrap());
            prop_assert_eq!(written(|w| { w.begin_object(); w.field(&s, &s); w.end_object() }),
                serde_json::to_string(&serde_json::json!({ &s: &s })).unwrap());
        }

        #[test]
        fn any_number_as_serde_json(u in any::<u64>(), i in any::<i64>(), x in any::<f64>()) {
            prop_assert_eq!(written(|w| w.u64(u)), serde_json::to_string(&u).unwrap());
            prop_assert_eq!(written(|w| w.i64(i)), serde_json::to_string(&i).unwrap());
            prop_assert_eq!(written(|w| w.f64(x)), serde_json::to_string(&x).unwrap());
        }
    }
}
