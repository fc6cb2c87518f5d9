//! A `cloud: "vertex"` target's config and requests: the URL each region and format gets, the
//! Anthropic body Vertex takes (the version in it, the model in the URL), the mistakes each field
//! gets a message for (never with a credential in it), and how Vertex's own errors are read.

use llm_baton::chat::ChatRequest;
use llm_baton::config::Config;
use llm_baton::format::{FailureClass, Format};
use serde_json::{json, Value};

const TOKEN: &str = "ya29.a0AfB_byC-EXAMPLE-ACCESS-TOKEN";
/// The base64 of a DER SEQUENCE of 200 bytes: what the config reads of a PKCS#8 key.
const KEY_BODY: &str = "MIHFBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

fn pem() -> String {
    format!("-----BEGIN PRIVATE KEY-----\n{KEY_BODY}\n-----END PRIVATE KEY-----\n")
}

fn config(target: Value) -> Result<Config, String> {
    Config::from_json(&json!({"targets": {"v": target}}).to_string()).map_err(|e| {
        assert!(!e.message.contains(TOKEN) && !e.message.contains(&KEY_BODY[..20]), "{e}");
        e.to_string()
    })
}

fn vertex(format: &str, model: &str, more: Value) -> Value {
    let mut target = json!({"format": format, "cloud": "vertex", "project": "my-proj", "region": "us-east5", "model": model, "accessToken": TOKEN});
    for (k, v) in more.as_object().unwrap() {
        match v {
            Value::Null => target.as_object_mut().unwrap().remove(k),
            v => target.as_object_mut().unwrap().insert(k.clone(), v.clone()),
        };
    }
    target
}

fn ask() -> ChatRequest {
    ChatRequest::from_value(&json!({"messages": [{"role": "user", "content": "hi"}], "maxTokens": 50})).unwrap()
}

#[test]
fn each_region_and_format_has_vertex_s_url() {
    let cases = [
        (vertex("gemini", "gemini-2.5-flash", json!({})), false, "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent"),
        (vertex("gemini", "gemini-2.5-flash", json!({"region": "global"})), true, "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        (vertex("anthropic_messages", "claude-sonnet-4-5@20250929", json!({})), false, "https://us-east5-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"),
        (vertex("anthropic_messages", "claude-sonnet-4-5@20250929", json!({"region": "global"})), true, "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"),
        (vertex("anthropic_messages", "claude-opus-4-1@20250805", json!({"region": "eu"})), false, "https://aiplatform.eu.rep.googleapis.com/v1/projects/my-proj/locations/eu/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict"),
        (vertex("gemini", "g", json!({"baseUrl": "http://127.0.0.1:9/v1/"})), false, "http://127.0.0.1:9/v1/projects/my-proj/locations/us-east5/publishers/google/models/g:generateContent"),
    ];
    for (target, stream, url) in cases {
        let config = config(target).unwrap();
        let t = &config.targets[0];
        let http = t.format.build_request(t, &ask(), stream);
        assert_eq!(http.url, url);
        let names: Vec<&str> = http.headers.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["content-type"], "the token is the driver's to add, per attempt");
    }
}

#[test]
fn anthropic_on_vertex_names_the_version_in_the_body_and_the_model_in_the_url() {
    let config = config(vertex("anthropic_messages", "claude-sonnet-4-5@20250929", json!({}))).unwrap();
    let t = &config.targets[0];
    for stream in [false, true] {
        let body: Value = serde_json::from_str(&t.format.build_request(t, &ask(), stream).body).unwrap();
        assert_eq!(
            body,
            json!({"anthropic_version": "vertex-2023-10-16", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}], "stream": stream})
        );
    }
}

#[test]
fn credentials_stay_out_of_debug_output_and_are_redacted() {
    let with_token = config(vertex("gemini", "g", json!({}))).unwrap();
    assert!(!format!("{:?}", with_token.targets[0]).contains(TOKEN));
    assert!(with_token.secrets().contains(&TOKEN));
    let key = json!({"client_email": "sa@my-proj.iam.gserviceaccount.com", "private_key": pem(), "token_uri": "https://oauth2.googleapis.com/token"});
    for account in [key.clone(), Value::String(key.to_string())] {
        let with_key = config(vertex("gemini", "g", json!({"accessToken": null, "serviceAccount": account}))).unwrap();
        let shown = format!("{:?}", with_key.targets[0]);
        assert!(!shown.contains(KEY_BODY) && shown.contains("sa@my-proj"), "{shown}");
        assert!(with_key.secrets().contains(&pem().as_str()));
    }
}

#[test]
fn mistakes_name_their_field_and_never_the_credential() {
    let key = json!({"client_email": "sa@p.iam.gserviceaccount.com", "private_key": pem()});
    let cases = [
        (vertex("gemini", "g", json!({"project": null})), "targets.v.project is missing; give the Google Cloud project id, such as \"my-project-123\""),
        (vertex("gemini", "g", json!({"project": "My Project"})), "targets.v.project must be the Google Cloud project id, such as \"my-project-123\" (got \"My Project\")"),
        (vertex("gemini", "g", json!({"region": null})), "targets.v.region is missing; give the Google Cloud region of the model, e.g. \"us-east5\", or \"global\""),
        (vertex("openai_chat", "g", json!({})), "targets.v.cloud \"vertex\" serves the gemini and anthropic_messages formats, not openai_chat"),
        (vertex("gemini", "g", json!({"cloud": "gcp"})), "targets.v.cloud must be \"azure\", \"bedrock\" or \"vertex\", or omit it (got \"gcp\")"),
        (vertex("gemini", "g", json!({"accessToken": null})), "targets.v has cloud: \"vertex\" but no credential: give accessToken (e.g. from `gcloud auth print-access-token`) or serviceAccount (the service account's JSON key)"),
        (vertex("gemini", "g", json!({"serviceAccount": key})), "targets.v.serviceAccount cannot be given with accessToken: give one, the token or the service account's key that mints them"),
        (vertex("gemini", "g", json!({"apiKey": TOKEN})), "targets.v.apiKey is not for Vertex, which takes a Google OAuth token: give accessToken or serviceAccount instead"),
        (vertex("gemini", "g", json!({"accessToken": format!("{TOKEN}\n")})), "targets.v.accessToken must be usable as an HTTP header value, but it contains a line break (CR or LF) at position 35 (the key is not shown)"),
        (vertex("gemini", "g", json!({"accessToken": null, "serviceAccount": {"client_email": "sa@p", "private_key": KEY_BODY}})), "targets.v.serviceAccount.private_key must be a PEM key from \"-----BEGIN PRIVATE KEY-----\" to \"-----END PRIVATE KEY-----\", as in the JSON key Google issues (the key is not shown)"),
        (json!({"format": "gemini", "baseUrl": "https://x/v1", "model": "g", "project": "p"}), "targets.v.project is only for cloud: \"vertex\" targets; remove it"),
        (json!({"format": "gemini", "baseUrl": "https://x/v1", "model": "g", "accessToken": TOKEN}), "targets.v.accessToken is only for cloud: \"vertex\" targets; remove it"),
    ];
    for (target, expected) in cases {
        assert_eq!(config(target).unwrap_err(), expected);
    }
}

#[test]
fn vertex_s_own_errors_before_claude_answered_steer_the_gate() {
    let exhausted = br#"{"error":{"code":429,"message":"Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model","status":"RESOURCE_EXHAUSTED"}}"#;
    let unauthenticated = br#"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#;
    for format in [Format::AnthropicMessages, Format::Gemini] {
        let said = format.error_body(429, exhausted);
        assert_eq!(
            (said.code.as_deref(), said.class),
            (Some("RESOURCE_EXHAUSTED"), Some(FailureClass::RateLimit)),
            "{format:?}"
        );
        let said = format.error_body(401, unauthenticated);
        assert_eq!(
            (said.code.as_deref(), said.class),
            (Some("UNAUTHENTICATED"), Some(FailureClass::Auth)),
            "{format:?}"
        );
    }
    // Claude's own overload, as Vertex passes it on.
    let overloaded = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    assert_eq!(Format::AnthropicMessages.error_body(529, overloaded).class, Some(FailureClass::Overloaded));
}
