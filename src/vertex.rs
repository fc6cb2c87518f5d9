//! Google Vertex AI: where a `cloud: "vertex"` target's requests go, and the OAuth access token
//! they carry.
//!
//! A target has a token (`accessToken`, sent as it is) or a service account's JSON key, from
//! which llm-baton mints tokens itself, as Google's own libraries do (OAuth 2.0 for server to
//! server applications): a JWT naming the account, the `cloud-platform` scope and the token
//! endpoint, signed RS256 with the account's private key, exchanged at the token endpoint for a
//! token good for an hour. The JWT's bytes are built here and the token's answer read here, sans
//! I/O (the wall clock comes in); the RSA signature is the host's (WebCrypto, in every runtime),
//! which costs the wasm nothing (docs/vertex.md gives what RSA in Rust would cost). The driver
//! caches the tokens and sends the requests (src/driver/vertex.rs).
//!
//! The key is a secret like any other: no error, event or Debug output shows any of it. A key
//! that is not one is a config error naming the field that is wrong, never its value.

use std::fmt;

use llm_baton_wire::write::JsonWriter;
use serde_json::Value;

use crate::base64::{self, Alphabet};
use crate::outcome::{Failure, FailureClass};
use crate::secret::{Secret, REDACTED};
use crate::value::{child, kind, parse_value, FieldError};

/// The `anthropic_version` an Anthropic request body on Vertex names (there is no header).
pub const ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// The scope a minted token is asked for: all of Google Cloud, as Vertex's docs and SDKs ask.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// How long a minted JWT asks its token to last: Google's maximum, one hour.
const JWT_LIFETIME_S: u64 = 3600;

/// A token is minted again this long before it expires, so no request leaves with one that
/// expires in flight; a token that lives less than twice this is renewed at half its life.
const REFRESH_EARLY_MS: u64 = 5 * 60 * 1000;

/// The origin (scheme, host, `/v1`) of Vertex's endpoint in `region`: the global endpoint, a
/// multi-region one (`us`, `eu`), or the region's own, as Google's SDKs build it.
pub fn origin(region: &str) -> String {
    match region {
        "global" => "https://aiplatform.googleapis.com/v1".into(),
        "us" | "eu" => format!("https://aiplatform.{region}.rep.googleapis.com/v1"),
        _ => format!("https://{region}-aiplatform.googleapis.com/v1"),
    }
}

/// The base URL a format's path (`models/{model}:generateContent`, `models/{model}:rawPredict`)
/// joins: the publisher's models in `project` and `region`, under `origin` (Vertex's, or a
/// target's `baseUrl` standing in for it).
pub fn base_url(origin: &str, project: &str, region: &str, publisher: &str) -> String {
    let origin = origin.trim_end_matches('/');
    format!("{origin}/projects/{project}/locations/{region}/publishers/{publisher}")
}

/// How a Vertex target authenticates.
#[derive(Debug, Clone, PartialEq)]
pub enum VertexAuth {
    /// A token the caller obtained (`gcloud auth print-access-token`), sent as it is.
    AccessToken(Secret),
    /// A service account's key, from which tokens are minted.
    ServiceAccount(ServiceAccount),
}

impl VertexAuth {
    /// The configured secrets, for the redactor: the token, or the key as configured.
    pub fn secrets(&self) -> [&str; 1] {
        match self {
            VertexAuth::AccessToken(token) => [token.expose()],
            VertexAuth::ServiceAccount(account) => [account.private_key_pem.expose()],
        }
    }
}

/// What a token is minted from: a service account's JSON key, read.
#[derive(Clone, PartialEq)]
pub struct ServiceAccount {
    pub client_email: String,
    /// The key's id (`private_key_id`), named in the JWT's header as `kid` when given.
    pub private_key_id: Option<String>,
    /// Where the JWT is exchanged (`https://oauth2.googleapis.com/token` in every key Google issues).
    pub token_uri: String,
    /// The PEM as given, searched for by the redactor.
    private_key_pem: Secret,
    /// The PKCS#8 DER the PEM holds, which WebCrypto imports.
    private_key_der: Vec<u8>,
}

impl fmt::Debug for ServiceAccount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceAccount")
            .field("client_email", &self.client_email)
            .field("private_key_id", &self.private_key_id)
            .field("token_uri", &self.token_uri)
            .field("private_key", &REDACTED)
            .finish()
    }
}

impl ServiceAccount {
    /// The private key as PKCS#8 DER, for the host's `crypto.subtle.importKey("pkcs8", …)`.
    pub fn private_key_pkcs8(&self) -> &[u8] {
        &self.private_key_der
    }

    /// What the private key signs (RS256) at `now_epoch_ms`: the JWT's base64url header (`alg`,
    /// `typ`, the key's `kid`) and claims (`iss`, `scope`, `aud`, `iat`, `exp`), joined by a dot.
    pub fn jwt_signing_input(&self, now_epoch_ms: u64) -> String {
        let mut header = JsonWriter::new();
        header.begin_object();
        header.field("alg", "RS256");
        header.field("typ", "JWT");
        header.opt_field("kid", self.private_key_id.as_ref());
        header.end_object();
        let header = base64::encode(header.finish().as_bytes(), Alphabet::Url, false);
        let iat = now_epoch_ms / 1000;
        let mut claims = JsonWriter::new();
        claims.begin_object();
        claims.field("iss", self.client_email.as_str());
        claims.field("scope", SCOPE);
        claims.field("aud", self.token_uri.as_str());
        claims.field("iat", &iat);
        claims.field("exp", &(iat + JWT_LIFETIME_S));
        claims.end_object();
        let claims = base64::encode(claims.finish().as_bytes(), Alphabet::Url, false);
        format!("{header}.{claims}")
    }
}

/// The token endpoint's form body for a JWT signed as `signature` (RFC 7523's JWT bearer grant).
/// base64url and dots need no percent-encoding in a form.
pub fn token_request_body(signing_input: &str, signature: &[u8]) -> String {
    let signature = base64::encode(signature, Alphabet::Url, false);
    format!("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion={signing_input}.{signature}")
}

/// A minted access token and when to mint the next (wall clock, epoch milliseconds).
#[derive(Clone, PartialEq)]
pub struct Token {
    pub value: Secret,
    pub renew_at_ms: u64,
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Token").field("value", &self.value).field("renew_at_ms", &self.renew_at_ms).finish()
    }
}

impl Token {
    /// Whether the token may still be sent at `now_epoch_ms`.
    pub fn fresh(&self, now_epoch_ms: u64) -> bool {
        now_epoch_ms < self.renew_at_ms
    }
}

/// The token endpoint's answer, received at `now_epoch_ms`: a token, or the failure of the
/// attempt that needed it. The endpoint's refusal is an auth failure naming its words (OAuth's
/// `error` and `error_description`); one for the JWT's times says the host's clock may be off.
pub fn read_token_answer(status: u16, body: &[u8], now_epoch_ms: u64) -> Result<Token, Failure> {
    let answer = std::str::from_utf8(body).ok().and_then(|text| parse_value(text).ok());
    let field = |name: &str| answer.as_ref().and_then(|a| a.get(name));
    if (200..300).contains(&status) {
        let value = field("access_token").and_then(Value::as_str).filter(|t| !t.is_empty());
        let lifetime_s = field("expires_in").and_then(Value::as_u64).unwrap_or(JWT_LIFETIME_S);
        return match value {
            Some(value) => {
                let lifetime_ms = lifetime_s.saturating_mul(1000);
                let early = REFRESH_EARLY_MS.min(lifetime_ms / 2);
                Ok(Token { value: Secret::new(value), renew_at_ms: now_epoch_ms + lifetime_ms - early })
            }
            None => Err(Failure::Protocol { message: "the token endpoint's answer has no access_token".into() }),
        };
    }
    let error = field("error").and_then(Value::as_str).filter(|e| !e.is_empty());
    let description = field("error_description").and_then(Value::as_str).unwrap_or("");
    let mut message = format!("the token endpoint refused the service account's JWT with HTTP {status}");
    for words in [error.unwrap_or(""), description].into_iter().filter(|w| !w.is_empty()) {
        message.push_str(": ");
        message.push_str(words);
    }
    // Google's words when iat or exp are off: "Invalid JWT: Token must be a short-lived token
    // (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
    if description.contains("iat") || description.contains("timeframe") {
        message.push_str(" (this host's clock may be off: the JWT's iat is its time now)");
    }
    let class = match status {
        400 | 401 | 403 => Some(FailureClass::Auth),
        _ => FailureClass::of_status(status),
    };
    Err(Failure::Http {
        status,
        message,
        code: error.map(str::to_string),
        class,
        retry_after_ms: None,
        should_retry: None,
        in_stream: false,
        content_filter: None,
    })
}

/// A target's `serviceAccount`: the JSON key Google issues, as an object or its text. Only
/// `client_email`, `private_key` (PKCS#8 PEM) and `token_uri` are read; nothing of the key is
/// ever shown, only which field is wrong and how.
pub fn read_service_account(v: &Value, path: &str) -> Result<ServiceAccount, FieldError> {
    let parsed;
    let key = match v {
        Value::Object(_) => v,
        Value::String(text) => {
            parsed = parse_value(text).map_err(|_| {
                FieldError::new(path, "is a string but not JSON: give the service account's JSON key, as an object or its text (the value is not shown)")
            })?;
            &parsed
        }
        other => {
            return Err(FieldError::new(
                path,
                format!("must be the service account's JSON key, as an object or its text (got {})", kind(other)),
            ))
        }
    };
    let Value::Object(fields) = key else {
        return Err(FieldError::new(
            path,
            format!("must hold a JSON object, the service account's key (got {})", kind(key)),
        ));
    };
    let text = |name: &str, expected: &str| -> Result<&str, FieldError> {
        match fields.get(name) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            None | Some(Value::Null) => Err(FieldError::new(child(path, name), format!("is missing; give {expected}"))),
            Some(other) => Err(FieldError::new(child(path, name), format!("must be {expected} (got {})", kind(other)))),
        }
    };
    let client_email = text("client_email", "the service account's email, as in its JSON key")?;
    if !client_email.contains('@') {
        return Err(FieldError::new(
            child(path, "client_email"),
            "must be the service account's email, such as \"name@project.iam.gserviceaccount.com\"",
        ));
    }
    let token_uri = match fields.get("token_uri") {
        None | Some(Value::Null) => "https://oauth2.googleapis.com/token",
        Some(_) => text("token_uri", "the token endpoint, \"https://oauth2.googleapis.com/token\"")?,
    };
    if !(token_uri.starts_with("https://") || token_uri.starts_with("http://")) {
        return Err(FieldError::new(
            child(path, "token_uri"),
            "must be an http(s) URL, such as \"https://oauth2.googleapis.com/token\"",
        ));
    }
    let pem = text("private_key", "the PKCS#8 PEM key (\"-----BEGIN PRIVATE KEY-----…\") of the JSON key")?;
    let private_key_der = pkcs8_der(pem).map_err(|what| FieldError::new(child(path, "private_key"), what))?;
    // Not checked: it is written as a JSON string, and the token endpoint judges it.
    let private_key_id = fields.get("private_key_id").and_then(Value::as_str).map(str::to_string);
    Ok(ServiceAccount {
        client_email: client_email.to_string(),
        private_key_id,
        token_uri: token_uri.to_string(),
        private_key_pem: Secret::new(pem),
        private_key_der,
    })
}

/// The DER inside a PKCS#8 PEM private key, or what is wrong with it, in words that show none of it.
fn pkcs8_der(pem: &str) -> Result<Vec<u8>, String> {
    const BEGIN: &str = "-----BEGIN PRIVATE KEY-----";
    const END: &str = "-----END PRIVATE KEY-----";
    if pem.contains("BEGIN RSA PRIVATE KEY") {
        return Err("is a PKCS#1 key (BEGIN RSA PRIVATE KEY); give the PKCS#8 key Google issues (BEGIN PRIVATE KEY), \
                    or convert it with `openssl pkcs8 -topk8 -nocrypt` (the key is not shown)"
            .into());
    }
    let body = pem
        .trim()
        .strip_prefix(BEGIN)
        .and_then(|rest| rest.strip_suffix(END))
        .ok_or("must be a PEM key from \"-----BEGIN PRIVATE KEY-----\" to \"-----END PRIVATE KEY-----\", as in the JSON key Google issues (the key is not shown)")?;
    let text: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    let der = base64::decode(text.trim_end_matches('='), Alphabet::Standard)
        .map(|decoded| decoded.bytes)
        .ok_or("must hold base64 between its BEGIN and END lines (the key is not shown)")?;
    // A DER SEQUENCE with a long-form length: every RSA key is longer than 127 bytes.
    if der.len() < 128 || der[0] != 0x30 || der[1] & 0x80 == 0 {
        return Err("does not hold a PKCS#8 private key (the key is not shown)".into());
    }
    Ok(der)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A PEM whose base64 body is 200 bytes of a DER SEQUENCE: enough for the reader, which
    /// leaves the RSA to WebCrypto (the e2e tests sign with a real key).
    fn pem() -> String {
        let mut der = vec![0x30, 0x81, 197];
        der.resize(200, 7);
        let b64 = base64::encode(&der, Alphabet::Standard, true);
        let lines: Vec<&str> = b64.as_bytes().chunks(64).map(|c| std::str::from_utf8(c).unwrap()).collect();
        format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n"))
    }

    fn key() -> Value {
        json!({
            "type": "service_account",
            "project_id": "p",
            "private_key_id": "abc",
            "private_key": pem(),
            "client_email": "runner@p.iam.gserviceaccount.com",
            "token_uri": "https://oauth2.googleapis.com/token",
        })
    }

    #[test]
    fn origins_and_base_urls() {
        assert_eq!(origin("us-east5"), "https://us-east5-aiplatform.googleapis.com/v1");
        assert_eq!(origin("global"), "https://aiplatform.googleapis.com/v1");
        assert_eq!(origin("eu"), "https://aiplatform.eu.rep.googleapis.com/v1");
        assert_eq!(
            base_url("https://aiplatform.googleapis.com/v1/", "my-proj", "global", "anthropic"),
            "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/anthropic"
        );
    }

    #[test]
    fn the_jwt_names_the_account_scope_endpoint_and_hour() {
        let account = read_service_account(&key(), "targets.v.serviceAccount").unwrap();
        let input = account.jwt_signing_input(1_700_000_000_999);
        let (header, claims) = input.split_once('.').unwrap();
        let decode = |part: &str| String::from_utf8(base64::decode(part, Alphabet::Url).unwrap().bytes).unwrap();
        assert_eq!(decode(header), r#"{"alg":"RS256","typ":"JWT","kid":"abc"}"#);
        assert_eq!(
            decode(claims),
            r#"{"iss":"runner@p.iam.gserviceaccount.com","scope":"https://www.googleapis.com/auth/cloud-platform","aud":"https://oauth2.googleapis.com/token","iat":1700000000,"exp":1700003600}"#
        );
        assert!(!input.contains('='), "base64url without padding");
        let mut without_id = key();
        without_id.as_object_mut().unwrap().remove("private_key_id");
        let input = read_service_account(&without_id, "k").unwrap().jwt_signing_input(0);
        assert_eq!(
            input.split('.').next(),
            Some("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9"),
            "{{\"alg\":\"RS256\",\"typ\":\"JWT\"}}"
        );
        assert_eq!(
            token_request_body("h.c", &[0xfb, 0xff]),
            "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=h.c.-_8"
        );
    }

    #[test]
    fn a_key_is_read_from_its_object_or_text() {
        let from_object = read_service_account(&key(), "k").unwrap();
        let from_text = read_service_account(&Value::String(key().to_string()), "k").unwrap();
        assert_eq!(from_object, from_text);
        assert_eq!(from_object.private_key_pkcs8()[..3], [0x30, 0x81, 197]);
        let mut without_uri = key();
        without_uri.as_object_mut().unwrap().remove("token_uri");
        assert_eq!(read_service_account(&without_uri, "k").unwrap().token_uri, "https://oauth2.googleapis.com/token");
    }

    #[test]
    fn a_malformed_key_names_its_field_and_shows_nothing_of_it() {
        let secret_bits = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ";
        let with = |field: &str, value: Value| {
            let mut k = key();
            k.as_object_mut().unwrap().insert(field.into(), value);
            read_service_account(&k, "targets.v.serviceAccount").unwrap_err()
        };
        let cases = [
            (
                with(
                    "private_key",
                    json!(format!("-----BEGIN RSA PRIVATE KEY-----\n{secret_bits}\n-----END RSA PRIVATE KEY-----")),
                ),
                "private_key",
                "PKCS#1",
            ),
            (with("private_key", json!(secret_bits)), "private_key", "PEM key"),
            (
                with(
                    "private_key",
                    json!(format!("-----BEGIN PRIVATE KEY-----\n{secret_bits}!\n-----END PRIVATE KEY-----")),
                ),
                "private_key",
                "base64",
            ),
            (
                with(
                    "private_key",
                    json!(format!("-----BEGIN PRIVATE KEY-----\n{secret_bits}\n-----END PRIVATE KEY-----")),
                ),
                "private_key",
                "PKCS#8",
            ),
            (with("private_key", json!(12)), "private_key", "a number"),
            (with("client_email", json!("not-an-email")), "client_email", "email"),
            (with("token_uri", json!("ftp://x")), "token_uri", "http(s)"),
        ];
        for (error, field, words) in cases {
            assert_eq!(error.path, format!("targets.v.serviceAccount.{field}"));
            assert!(error.message.contains(words), "{}", error.message);
            assert!(!error.message.contains("MIIE"), "{}", error.message);
        }
        let text = read_service_account(&json!(format!("{{\"private_key\": \"{secret_bits}")), "k").unwrap_err();
        assert!(text.message.contains("not JSON") && !text.message.contains("MIIE"), "{}", text.message);
        let missing = read_service_account(&json!({"client_email": "a@b"}), "k").unwrap_err();
        assert_eq!(missing.path, "k.private_key");
        let account = read_service_account(&key(), "k").unwrap();
        let shown = format!("{:?}", VertexAuth::ServiceAccount(account));
        assert!(!shown.contains("BEGIN") && !shown.contains("MIIE") && shown.contains(REDACTED), "{shown}");
    }

    #[test]
    fn a_token_is_renewed_five_minutes_early_or_at_half_a_short_life() {
        let hour =
            read_token_answer(200, br#"{"access_token":"ya29.t","expires_in":3599,"token_type":"Bearer"}"#, 1000)
                .unwrap();
        assert_eq!(hour.value.expose(), "ya29.t");
        assert_eq!(hour.renew_at_ms, 1000 + 3_599_000 - 300_000);
        assert!(hour.fresh(hour.renew_at_ms - 1) && !hour.fresh(hour.renew_at_ms));
        let short = read_token_answer(200, br#"{"access_token":"ya29.s","expires_in":4}"#, 1000).unwrap();
        assert_eq!(short.renew_at_ms, 3000);
        assert!(!format!("{short:?}").contains("ya29"));
        let empty = read_token_answer(200, br#"{"access_token":""}"#, 0).unwrap_err();
        assert!(matches!(empty, Failure::Protocol { .. }), "{empty:?}");
    }

    #[test]
    fn a_refusal_is_an_auth_failure_that_says_when_the_clock_is_off() {
        let skew = br#"{"error":"invalid_grant","error_description":"Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."}"#;
        let failure = read_token_answer(400, skew, 0).unwrap_err();
        assert_eq!(failure.class(), Some(FailureClass::Auth));
        assert_eq!(failure.code(), Some("invalid_grant"));
        assert!(failure.to_string().contains("clock may be off"), "{failure}");
        let signature =
            read_token_answer(400, br#"{"error":"invalid_grant","error_description":"Invalid JWT Signature."}"#, 0)
                .unwrap_err();
        assert!(!signature.to_string().contains("clock"), "{signature}");
        let busy = read_token_answer(503, b"upstream down", 0).unwrap_err();
        assert_eq!((busy.status(), busy.class()), (Some(503), None));
    }
}
