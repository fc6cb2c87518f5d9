//! An Azure OpenAI target's config (`cloud: "azure"`): the URL each style and format builds,
//! the credential header (a resource key as `api-key`, an Entra ID token as a bearer), and the
//! mistakes each gets a message for, never with a credential in it; and how Azure's errors read:
//! a 429's `retry-after-ms` over its `retry-after`, the content filter's 400 as a `content_filter`
//! failure carrying the filter's results.

use llm_baton::chat::ChatRequest;
use llm_baton::config::Config;
use llm_baton::format::{FailureClass, Format};
use llm_baton::outcome::{Failure, FailureInfo};
use llm_baton_wire::write::ToJson;

const KEY: &str = "azure-resource-key-0123456789";
const TOKEN: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra";

fn target(format: &str, fields: &str) -> String {
    format!(
        r#"{{"targets": {{"a": {{"format": "{format}", "cloud": "azure", "baseUrl": "https://res.openai.azure.com", "model": "gpt-4o"{fields}}}}}}}"#
    )
}

fn sent(json: &str) -> (String, Vec<(String, String)>) {
    let config = Config::from_json(json).unwrap_or_else(|e| panic!("{e}"));
    let t = &config.targets[0];
    let http = t.format.build_request(t, &ChatRequest::default(), true);
    (http.url, http.headers)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

#[test]
fn each_style_and_format_builds_its_url() {
    let key = format!(r#", "apiKey": "{KEY}""#);
    let cases = [
        ("openai_chat", key.clone(), "https://res.openai.azure.com/openai/v1/chat/completions"),
        ("openai_responses", key.clone(), "https://res.openai.azure.com/openai/v1/responses"),
        (
            "openai_chat",
            format!(r#"{key}, "apiVersion": "2024-10-21", "deployment": "chat-prod""#),
            "https://res.openai.azure.com/openai/deployments/chat-prod/chat/completions?api-version=2024-10-21",
        ),
        (
            "openai_chat",
            format!(r#"{key}, "apiVersion": "2024-10-21""#),
            "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        ),
        (
            "openai_responses",
            format!(r#"{key}, "apiVersion": "2025-04-01-preview""#),
            "https://res.openai.azure.com/openai/responses?api-version=2025-04-01-preview",
        ),
    ];
    for (format, fields, url) in cases {
        assert_eq!(sent(&target(format, &fields)).0, url, "{format} {fields}");
    }
}

#[test]
fn a_key_goes_as_api_key_a_token_as_a_bearer_and_neither_prints() {
    let (_, headers) = sent(&target("openai_chat", &format!(r#", "apiKey": "{KEY}""#)));
    assert_eq!((header(&headers, "api-key"), header(&headers, "authorization")), (Some(KEY), None));
    let bearer = format!("Bearer {TOKEN}");
    let (_, headers) = sent(&target("openai_responses", &format!(r#", "entraToken": "{TOKEN}""#)));
    assert_eq!((header(&headers, "api-key"), header(&headers, "authorization")), (None, Some(bearer.as_str())));
    for fields in [format!(r#", "apiKey": "{KEY}""#), format!(r#", "entraToken": "{TOKEN}""#)] {
        let config = Config::from_json(&target("openai_chat", &fields)).unwrap();
        let shown = format!("{:?}", config.targets[0]);
        assert!(!shown.contains(KEY) && !shown.contains(TOKEN), "{shown}");
        assert!(config.secrets().iter().any(|s| *s == KEY || *s == TOKEN), "the credential is redacted from errors");
    }
}

#[test]
fn mistakes_name_their_field_and_never_the_credential() {
    let key = format!(r#", "apiKey": "{KEY}""#);
    let cases = [
        (
            target("openai_chat", ""),
            "targets.a.apiKey is missing: an Azure OpenAI target needs apiKey (a resource key, sent as api-key) or entraToken (a Microsoft Entra ID token, sent as a bearer token)".to_string(),
        ),
        (
            target("openai_chat", &format!(r#"{key}, "entraToken": "{TOKEN}""#)),
            "targets.a.entraToken cannot be given with apiKey: authenticate with a resource key (apiKey) or an Entra ID token (entraToken), not both".into(),
        ),
        (
            target("openai_chat", &format!(r#", "entraToken": "{TOKEN}\n""#)),
            "targets.a.entraToken must be usable as an HTTP header value, but it contains a line break (CR or LF) at position 42 (the key is not shown)".into(),
        ),
        (
            target("openai_chat", r#", "entraToken": 7"#),
            "targets.a.entraToken must be a non-empty string; give a Microsoft Entra ID access token, or use apiKey".into(),
        ),
        (
            target("openai_chat", &format!(r#"{key}, "deployment": "d""#)),
            "targets.a.deployment is for the dated API: give apiVersion too, or name the deployment in model for the v1 API".into(),
        ),
        (
            target("openai_responses", &format!(r#"{key}, "deployment": "d", "apiVersion": "2024-10-21""#)),
            "targets.a.deployment is for Chat Completions: Azure's Responses API takes the deployment's name in model".into(),
        ),
        (
            target("openai_chat", &format!(r#"{key}, "apiVersion": "2024 10 21""#)),
            r#"targets.a.apiVersion must be an Azure OpenAI API version such as "2024-10-21"; omit it for the v1 API (got "2024 10 21")"#.into(),
        ),
        (
            target("anthropic_messages", &key),
            r#"targets.a.cloud "azure" serves the OpenAI formats only: set format to "openai_chat" or "openai_responses""#.into(),
        ),
        (
            target("openai_chat", &key).replace(r#""azure""#, r#""azur""#),
            r#"targets.a.cloud must be "azure", "bedrock" or "vertex", or omit it (got "azur")"#.into(),
        ),
        (
            target("openai_chat", &key).replace("openai.azure.com", "openai.azure.com/openai/v1"),
            r#"targets.a.baseUrl must be the Azure resource's endpoint, without /openai/...: e.g. "https://RESOURCE.openai.azure.com" (llm-baton adds the path)"#.into(),
        ),
        (
            r#"{"targets": {"o": {"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", "apiVersion": "2024-10-21"}}}"#.into(),
            r#"targets.o.apiVersion is only for Azure OpenAI targets: add cloud: "azure", or remove it"#.into(),
        ),
    ];
    for (json, expected) in cases {
        let e = Config::from_json(&json).expect_err("config should be rejected");
        assert!(!e.message.contains(KEY) && !e.message.contains(TOKEN), "{e}");
        assert_eq!(e.to_string(), expected);
    }
}

#[test]
fn a_local_server_stands_in_for_the_resource() {
    let json = target("openai_chat", &format!(r#", "apiKey": "{KEY}""#))
        .replace("https://res.openai.azure.com", "http://127.0.0.1:8080");
    assert_eq!(sent(&json).0, "http://127.0.0.1:8080/openai/v1/chat/completions");
}

#[test]
fn azure_errors_steer_the_gate() {
    let headers = [("retry-after".to_string(), "1".to_string()), ("retry-after-ms".to_string(), "300".to_string())];
    let body = br#"{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation have exceeded token rate limit. Please retry after 1 second."}}"#;
    let busy = Failure::from_http(429, &headers, Format::OpenaiChat.error_body(429, body), 0);
    assert_eq!((busy.class(), busy.retry_after_ms()), (Some(FailureClass::RateLimit), Some(300)));

    let body = br#"{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}"#;
    for format in [Format::OpenaiChat, Format::OpenaiResponses] {
        let refused = Failure::from_http(400, &[], format.error_body(400, body), 0);
        assert_eq!(refused.class(), Some(FailureClass::ContentFilter));
        let shown = FailureInfo(refused).to_json();
        assert!(
            shown.contains(r#""contentFilter":{"contentFilterResults":{"hate":{"filtered":true,"severity":"high"}}}"#),
            "{shown}"
        );
    }
}
