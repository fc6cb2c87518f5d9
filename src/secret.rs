//! Credentials, and keeping them out of every string the library hands out.
//!
//! A key is sent to the provider and to nobody else. But providers and proxies echo requests in
//! their error bodies (`"… authorization=Bearer sk-… …"`), and runtimes repeat a header value in
//! their own errors, so a key can come back inside a message the library would pass on to a
//! caller, an event, a log or a gateway client. [`Secret`] never prints; [`Redactor`] finds the
//! configured secrets in a message, in the forms an echo takes (as sent, JSON-escaped,
//! percent-encoded, base64 of a `user:pass`), and replaces each with `<redacted>`. It runs once,
//! where a failure enters the core, so everything downstream holds the clean text.

use std::borrow::Cow;
use std::fmt;

use crate::base64::{self, Alphabet};
use crate::outcome::Failure;

/// What a secret is replaced with, everywhere.
pub const REDACTED: &str = "<redacted>";

/// Pieces derived from a secret (the token after `Bearer `, the `user:pass` inside `Basic …`)
/// shorter than this are not searched for: they are not what was configured, and a short
/// fragment would blank ordinary words. Configured values themselves are searched for whatever
/// their length (see [`Redactor::new`]).
const MIN_DERIVED_LEN: usize = 8;

/// A cut-off message (an excerpt of an error body) may end in the first bytes of a secret. A
/// tail that is the start of a secret form is redacted once it is this long.
const MIN_CUT_TAIL_LEN: usize = 4;

/// A credential. Its `Debug` never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The value, for building the request headers (and the [`Redactor`]) and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({REDACTED})")
    }
}

/// Headers that may carry credentials; their values never reach Debug output, errors or events.
/// Besides the well-known ones, any name mentioning a key, token, secret or auth is treated so.
pub fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(name.as_str(), "cookie" | "proxy-authorization")
        || ["auth", "key", "token", "secret", "signature"].iter().any(|w| name.contains(w))
}

/// Replaces every occurrence of the configured secrets in a text with `<redacted>`.
///
/// Matching is exact and case-sensitive: a secret split by other characters is not found (no
/// heuristics that would blank innocent text), except at the very end of a text, where a cut-off
/// excerpt may hold a secret's first bytes. Overlapping occurrences are merged into one
/// `<redacted>`, so no tail of a longer or overlapping secret survives.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Every searched form, longest first, no empty string.
    forms: Vec<String>,
    /// How many secrets were configured (for Debug).
    secrets: usize,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor").field("secrets", &self.secrets).finish()
    }
}

impl Redactor {
    /// A redactor for these secret values. Each is searched for as given, JSON-escaped,
    /// percent-encoded and, when it is a `user:pass` credential, as base64; an auth header
    /// value (`Bearer <token>`, `Basic <base64>`) also yields its token and decoded `user:pass`.
    ///
    /// A configured value is redacted whatever its length: a 3-byte key is unusual, but it is
    /// still the key, and blanking a few innocent words is a smaller harm than showing it. Empty
    /// values are skipped (they would match everywhere).
    pub fn new<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) -> Redactor {
        let mut forms = Vec::new();
        let mut count = 0;
        for secret in secrets {
            let secret = secret.as_ref();
            if secret.is_empty() {
                continue;
            }
            count += 1;
            let trimmed = secret.trim();
            let mut values = vec![secret.to_string(), trimmed.to_string()];
            for derived in derived_values(trimmed) {
                if derived.len() >= MIN_DERIVED_LEN {
                    values.push(derived);
                }
            }
            for value in values.into_iter().filter(|v| !v.is_empty()) {
                echoed_forms(&value, &mut forms);
            }
        }
        // Longest first, then in byte order, each once: inserted in place rather than sorted,
        // so no sort code is linked for a few dozen strings.
        let mut searched: Vec<String> = Vec::with_capacity(forms.len());
        for form in forms.into_iter().filter(|f| !f.is_empty()) {
            let place = searched.binary_search_by(|s| form.len().cmp(&s.len()).then_with(|| s.cmp(&form)));
            if let Err(at) = place {
                searched.insert(at, form);
            }
        }
        Redactor { forms: searched, secrets: count }
    }

    /// The text with every secret form replaced by `<redacted>`; borrowed when there was none.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        // For each byte, the furthest end of the occurrences that start there (0: none), so
        // overlapping ones merge in one pass in text order, with no sort linked for it.
        let mut ends: Vec<usize> = Vec::new();
        let mut mark = |(start, end): (usize, usize)| {
            if ends.is_empty() {
                ends.resize(text.len(), 0);
            }
            ends[start] = ends[start].max(end);
        };
        for form in &self.forms {
            let first_char = form.chars().next().map_or(1, char::len_utf8);
            let mut from = 0;
            while let Some(at) = text[from..].find(form.as_str()) {
                let start = from + at;
                mark((start, start + form.len()));
                from = start + first_char;
            }
        }
        if let Some(span) = self.cut_tail(text) {
            mark(span);
        }
        if ends.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let (mut copied, mut at) = (0, 0);
        while at < ends.len() {
            let (start, mut end) = (at, ends[at]);
            at += 1;
            if end == 0 {
                continue;
            }
            while at < end {
                end = end.max(ends[at]);
                at += 1;
            }
            out.push_str(&text[copied..start]);
            out.push_str(REDACTED);
            copied = end;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    /// Where a cut-off secret starts, when the text (before a trailing ellipsis) ends with the
    /// first [`MIN_CUT_TAIL_LEN`] or more bytes of a secret form.
    fn cut_tail(&self, text: &str) -> Option<(usize, usize)> {
        let body = text.trim_end_matches(['…', '.']);
        let start = self
            .forms
            .iter()
            .filter_map(|form| {
                (MIN_CUT_TAIL_LEN..form.len().min(body.len() + 1))
                    .rev()
                    .filter(|&n| form.is_char_boundary(n))
                    .find(|&n| body.ends_with(&form[..n]))
                    .map(|n| body.len() - n)
            })
            .min()?;
        Some((start, body.len()))
    }

    /// The same failure with its message redacted (status, limits and flags unchanged).
    pub fn redact_failure(&self, failure: Failure) -> Failure {
        let clean = |message: String| match self.redact(&message) {
            Cow::Borrowed(_) => message,
            Cow::Owned(redacted) => redacted,
        };
        match failure {
            Failure::Transport { message } => Failure::Transport { message: clean(message) },
            Failure::Protocol { message } => Failure::Protocol { message: clean(message) },
            Failure::Http { status, message, code, class, retry_after_ms, should_retry, in_stream, content_filter } => {
                Failure::Http {
                    status,
                    message: clean(message),
                    code: code.map(clean),
                    class,
                    retry_after_ms,
                    should_retry,
                    in_stream,
                    content_filter,
                }
            }
            other @ (Failure::Timeout { .. } | Failure::Cancelled) => other,
        }
    }
}

/// Credentials found inside an auth header value: the token after a scheme (`Bearer x`), and
/// the `user:pass` a `Basic` token encodes.
fn derived_values(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((scheme, token)) = value.split_once(' ') {
        let token = token.trim();
        if !scheme.is_empty() && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            out.push(token.to_string());
            if scheme.eq_ignore_ascii_case("basic") {
                if let Some(pair) = base64::decode(token.trim_end_matches('='), Alphabet::Standard)
                    .and_then(|d| String::from_utf8(d.bytes).ok())
                {
                    out.push(pair);
                }
            }
        }
    }
    out
}

/// The forms in which `value` may come back: as sent, JSON-escaped (with `\/` and `\uXXXX`
/// variants), percent-encoded (either hex case, `+` for space) and, for `user:pass`, base64.
fn echoed_forms(value: &str, forms: &mut Vec<String>) {
    forms.push(value.to_string());
    let escaped = json_escape(value, false);
    forms.push(json_escape(value, true));
    forms.push(escaped.replace('/', "\\/"));
    forms.push(escaped);
    let percent = percent_encode(value);
    forms.push(lower_hex(&percent));
    forms.push(percent.replace("%20", "+"));
    forms.push(percent);
    if value.contains(':') {
        let padded = base64::encode(value.as_bytes(), Alphabet::Standard, true);
        forms.push(padded.trim_end_matches('=').to_string());
        forms.push(padded);
    }
}

/// A JSON string body (no quotes); `ascii` escapes every non-ASCII character as `\uXXXX`, as
/// Python's `json.dumps` does by default.
fn json_escape(value: &str, ascii: bool) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (ascii && !c.is_ascii()) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// RFC 3986 percent-encoding of everything but the unreserved characters, upper-case hex.
fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The same percent-encoding with lower-case hex digits (`%2f`), as some encoders write.
fn lower_hex(percent: &str) -> String {
    let mut out = String::with_capacity(percent.len());
    let mut rest = percent;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        out.push_str(&escape.to_ascii_lowercase());
        rest = &rest[at + escape.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::FailureClass;

    const KEY: &str = "sk-test-1234567890abcdef";

    #[test]
    fn every_echoed_form_is_redacted() {
        let r = Redactor::new(["sk-Ab/c+d é=1"]);
        let cases = [
            ("as sent", "key sk-Ab/c+d é=1 refused"),
            ("json", r#"{"k":"sk-Ab\/c+d é=1"}"#),
            ("json ascii", r#"{"k":"sk-Ab/c+d \u00e9=1"}"#),
            ("percent", "GET /x?key=sk-Ab%2Fc%2Bd%20%C3%A9%3D1&x=1"),
            ("percent lower hex", "GET /x?key=sk-Ab%2fc%2bd%20%c3%a9%3d1&x=1"),
            ("form", "key=sk-Ab%2Fc%2Bd+%C3%A9%3D1"),
        ];
        for (form, text) in cases {
            let out = r.redact(text);
            assert!(out.contains(REDACTED), "{form}: {out}");
            assert!(!out.contains("sk-Ab"), "{form}: {out}");
        }
    }

    #[test]
    fn auth_header_values_and_basic_credentials() {
        let pair = "alice:wonderland-42";
        let basic = format!("Basic {}", base64::encode(pair.as_bytes(), Alphabet::Standard, true));
        let r = Redactor::new([basic.as_str(), "Bearer tok-1234567890"]);
        let cases = [
            format!("sent {basic} upstream"),
            format!("auth={}", base64::encode(pair.as_bytes(), Alphabet::Standard, true)),
            format!("user {pair} denied"),
            "token tok-1234567890 expired".to_string(),
            "authorization=Bearer tok-1234567890,".to_string(),
        ];
        for text in &cases {
            assert_eq!(r.redact(text).matches(REDACTED).count(), 1, "{text}: {}", r.redact(text));
        }
        let r = Redactor::new([pair]);
        let echoed = format!("Authorization: Basic {}", base64::encode(pair.as_bytes(), Alphabet::Standard, true));
        assert_eq!(r.redact(&echoed), format!("Authorization: Basic {REDACTED}"));
    }

    #[test]
    fn overlapping_and_nested_secrets_leave_no_tail() {
        let r = Redactor::new(["abcdef12", "cdef1234", "def1"]);
        assert_eq!(r.redact("x abcdef1234 y"), format!("x {REDACTED} y"));
        let r = Redactor::new(["aaaa"]);
        assert_eq!(r.redact("aaaaa!"), format!("{REDACTED}!"));
        let r = Redactor::new(["sk-long-secret-value", "sk-long"]);
        assert_eq!(r.redact("sk-long-secret-value and sk-long."), format!("{REDACTED} and {REDACTED}."));
    }

    #[test]
    fn exact_matches_only() {
        let r = Redactor::new([KEY]);
        for text in ["sk-test-12345\n67890abcdef tail", "SK-TEST-1234567890ABCDEF tail", "nothing here"] {
            assert!(matches!(r.redact(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn a_cut_off_secret_at_the_end_is_redacted() {
        let r = Redactor::new([KEY]);
        assert_eq!(r.redact("echo: Bearer sk-test-12"), format!("echo: Bearer {REDACTED}"));
        assert_eq!(r.redact("echo: Bearer sk-test-12…"), format!("echo: Bearer {REDACTED}…"));
        assert_eq!(r.redact("ends in sk-"), "ends in sk-", "shorter than the minimum tail");
    }

    #[test]
    fn non_ascii_around_a_secret() {
        let r = Redactor::new([KEY]);
        let text = format!("é{KEY}日本🙂{KEY}ü");
        assert_eq!(r.redact(&text), format!("é{REDACTED}日本🙂{REDACTED}ü"));
        let r = Redactor::new(["ключ-секрет"]);
        assert_eq!(r.redact("«ключ-секрет»"), format!("«{REDACTED}»"));
    }

    #[test]
    fn short_and_empty_secrets() {
        let r = Redactor::new(["", "k1"]);
        assert_eq!(r.redact("key k1 ok"), format!("key {REDACTED} ok"));
        let empty = Redactor::new([""]);
        assert_eq!(format!("{empty:?}"), "Redactor { secrets: 0 }");
        assert!(matches!(empty.redact("anything"), Cow::Borrowed("anything")));
        // A derived piece shorter than MIN_DERIVED_LEN is not searched for on its own.
        let r = Redactor::new(["Bearer ab"]);
        assert_eq!(r.redact("ab cd"), "ab cd");
        assert_eq!(r.redact("x Bearer ab y"), format!("x {REDACTED} y"));
    }

    #[test]
    fn failures_keep_everything_but_the_secret() {
        let r = Redactor::new([KEY]);
        let cases = [
            (
                Failure::Http {
                    status: 401,
                    message: format!("bad key {KEY}"),
                    code: Some(format!("code {KEY}")),
                    class: Some(FailureClass::Auth),
                    retry_after_ms: Some(5),
                    should_retry: Some(false),
                    in_stream: true,
                    content_filter: None,
                },
                Failure::Http {
                    status: 401,
                    message: format!("bad key {REDACTED}"),
                    code: Some(format!("code {REDACTED}")),
                    class: Some(FailureClass::Auth),
                    retry_after_ms: Some(5),
                    should_retry: Some(false),
                    in_stream: true,
                    content_filter: None,
                },
            ),
            (
                Failure::Transport { message: format!("header value {KEY:?} invalid") },
                Failure::Transport { message: format!("header value \"{REDACTED}\" invalid") },
            ),
            (Failure::Protocol { message: KEY.into() }, Failure::Protocol { message: REDACTED.into() }),
            (Failure::Cancelled, Failure::Cancelled),
        ];
        for (failure, expected) in cases {
            assert_eq!(r.redact_failure(failure), expected);
        }
    }

    proptest::proptest! {
        /// Whatever surrounds them, no configured secret survives and nothing panics.
        #[test]
        fn no_secret_survives(
            secrets in proptest::collection::vec("[A-Za-z0-9_-]{1,24}", 1..4),
            pieces in proptest::collection::vec(".{0,12}", 0..5),
        ) {
            let r = Redactor::new(&secrets);
            let mut text = String::new();
            for (i, piece) in pieces.iter().enumerate() {
                text.push_str(piece);
                text.push_str(&secrets[i % secrets.len()]);
            }
            let out = r.redact(&text);
            // A short secret may be part of the word "<redacted>" itself: look between them.
            for piece in out.split(REDACTED) {
                for secret in &secrets {
                    proptest::prop_assert!(!piece.contains(secret.as_str()), "{secret} in {out}");
                }
            }
        }
    }
}
