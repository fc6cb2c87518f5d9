//! The documents a user or a gateway client writes: the config and the chat request.

use llm_baton::backoff::SplitMix64;
use llm_baton::chat::ChatRequest;
use llm_baton::config::Config;
use llm_baton::engine::{Action, Baton, CallOptions};
use llm_baton::format::is_secret_header;
use llm_baton::gateway::{parse_request, ClientFormat};
use llm_baton::health::{read_report, read_view, Health};
use serde_json::Value;

use super::alloc_meter::bounded_by_input;

/// Config JSON text: no panic. When it is valid, every route name it offers starts a call whose
/// first action is a `Send` to one of its targets; and its Debug output (or its error) never
/// shows a secret (an `apiKey`, a gateway key, a credential header's value).
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    health_messages(&text);
    let parsed = bounded_by_input(data.len(), || Config::from_json(&text));
    secrets_stay_hidden(&text, &parsed);

    let Ok(config) = parsed else { return };
    let targets = config.targets.len();
    let mut baton = Baton::new(config);
    for route in baton.config().route_names() {
        let mut call = baton
            .start(&route, CallOptions::default(), 0, Box::new(SplitMix64(1)))
            .unwrap_or_else(|e| panic!("route {route:?} is offered but cannot start: {e}"));
        match call.poll() {
            Some(Action::Send { target, .. }) => assert!(target < targets, "route {route:?} sent to target {target}"),
            other => panic!("route {route:?} started with {other:?}, not a Send"),
        }
    }
}

/// What a health store sends (views) and receives (leg events) is outside data too: reading it
/// never panics, and a health state fed whatever it could read still answers.
fn health_messages(text: &str) {
    let Ok(v) = serde_json::from_str::<Value>(text) else { return };
    let mut health = Health::new(Some(Default::default()));
    if let Ok(view) = read_view(&v) {
        health.absorb(&view, 1);
    }
    let reports: Vec<&Value> = match &v {
        Value::Array(list) => list.iter().collect(),
        other => vec![other],
    };
    for report in reports {
        if let Ok(r) = read_report(report) {
            health.report(&r.target, &r.outcome, 2);
            health.count_in_budget(r.attempt, &r.outcome, 2);
        }
    }
    let targets = health.known_targets();
    let _ = health.view(&targets, 3);
    let _ = health.snapshot(&targets, 3);
}

/// The outcome for `text` must not depend on its secrets' values: a twin document whose every
/// secret has each letter and digit shifted (so any check on the value's characters judges it
/// alike) must print the same wherever a secret would show.
fn secrets_stay_hidden(text: &str, parsed: &Result<Config, llm_baton::config::FieldError>) {
    let Ok(mut twin) = serde_json::from_str::<Value>(text) else { return };
    let secrets = shift_secrets(&mut twin);
    if secrets.is_empty() {
        return;
    }
    let twin_parsed = Config::from_json(&twin.to_string());
    let comparable = match (parsed, &twin_parsed) {
        (Ok(_), Ok(_)) => true,
        (Err(a), Err(b)) => a.path == b.path,
        _ => false,
    };
    if !comparable {
        return;
    }
    let shown = format!("{parsed:?}");
    let twin_shown = format!("{twin_parsed:?}");
    for secret in &secrets {
        assert!(
            !shown.contains(secret.as_str()) || twin_shown.contains(secret.as_str()),
            "a secret's value shows in the config's Debug output or error: {shown}"
        );
    }
}

/// Replaces every secret string in a config document by its shifted twin; returns the originals.
fn shift_secrets(doc: &mut Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut shift = |v: &mut Value| {
        if let Value::String(s) = v {
            if !s.is_empty() {
                found.push(std::mem::replace(s, s.chars().map(shifted).collect()));
            }
        }
    };
    if let Some(Value::Object(targets)) = doc.get_mut("targets") {
        for target in targets.values_mut() {
            if let Some(key) = target.get_mut("apiKey") {
                shift(key);
            }
            if let Some(Value::Object(headers)) = target.get_mut("headers") {
                for (name, value) in headers.iter_mut() {
                    if is_secret_header(name) {
                        shift(value);
                    }
                }
            }
        }
    }
    if let Some(Value::Array(keys)) = doc.get_mut("gateway").and_then(|g| g.get_mut("apiKeys")) {
        keys.iter_mut().for_each(&mut shift);
    }
    found
}

fn shifted(c: char) -> char {
    match c {
        'a'..='y' | 'A'..='Y' | '0'..='8' => char::from(c as u8 + 1),
        'z' => 'a',
        'Z' => 'A',
        '9' => '0',
        other => other,
    }
}

/// A target of each format, to build requests with.
const EVERY_FORMAT: &str = r#"{"targets": {
    "chat": {"format": "openai_chat", "baseUrl": "https://api.openai.com/v1", "model": "m", "apiKey": "sk-1",
        "extraBody": {"top_k": 40, "model": "n"}},
    "messages": {"format": "anthropic_messages", "baseUrl": "https://api.anthropic.com/v1", "model": "m", "apiKey": "sk-2"},
    "responses": {"format": "openai_responses", "baseUrl": "https://api.openai.com/v1", "model": "m", "apiKey": "sk-3"},
    "gemini": {"format": "gemini", "baseUrl": "https://generativelanguage.googleapis.com/v1beta", "model": "m", "apiKey": "k-4"}
}}"#;

/// Chat request JSON text, as the JS API reads it and as a gateway client sends it (OpenAI Chat,
/// OpenAI Responses and Anthropic shapes): no panic. Every request read from it is checked against
/// every target, and builds, in every format, streamed or not, a body that is JSON (one target's
/// `extraBody` merged).
pub fn request(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut requests = Vec::new();
    requests.extend(bounded_by_input(data.len(), || ChatRequest::from_json(&text)).ok());
    for client in [ClientFormat::OpenaiChat, ClientFormat::AnthropicMessages, ClientFormat::OpenaiResponses] {
        requests.extend(bounded_by_input(data.len(), || parse_request(client, &text)).ok().map(|c| c.request));
    }
    if requests.is_empty() {
        return;
    }
    let config = Config::from_json(EVERY_FORMAT).expect("the fixed config is valid");
    for request in &requests {
        for target in &config.targets {
            let _ = bounded_by_input(data.len(), || config.check_request(&target.name, request));
            for stream in [false, true] {
                let http = bounded_by_input(data.len(), || target.format.build_request(target, request, stream));
                if let Err(e) = serde_json::from_str::<Value>(&http.body) {
                    panic!("{:?} built a body that is not JSON ({e}): {}", target.format, http.body);
                }
            }
        }
    }
}
