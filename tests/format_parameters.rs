//! docs/parameters.md kept honest: each client format's table against what its reader reads and
//! what reaches a member of each format, Gemini's against the body llm-baton writes, and the
//! counts each section states. Then what pass-through does beside a format's own fields and a
//! target's `extraBody`.

use std::collections::BTreeMap;

use llm_baton::chat::ChatRequest;
use llm_baton::config::Config;
use llm_baton::format::client::{parse_request, ClientFormat};
use llm_baton::format::{Endpoint, Format};
use serde_json::{json, Value};

const TABLE: &str = include_str!("../docs/parameters.md");

/// Passed-through Responses fields its reader checks are numbers (the response repeats them).
const NUMBERS: [&str; 3] = ["frequency_penalty", "presence_penalty", "top_logprobs"];

/// Each section's rows (field, handling) and its counts line, by the format its heading names.
fn sections() -> BTreeMap<String, (Vec<(String, String)>, String)> {
    let mut out: BTreeMap<String, (Vec<(String, String)>, String)> = BTreeMap::new();
    let mut current = None;
    for line in TABLE.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            let name = heading.split_whitespace().next().unwrap().to_string();
            current = Format::parse(&name).map(|_| name);
            continue;
        }
        let Some(name) = &current else { continue };
        let entry = out.entry(name.clone()).or_default();
        if let Some(counts) = line.strip_prefix("Counts: ") {
            entry.1 = counts.to_string();
        } else if let Some(row) = line.strip_prefix("| `") {
            let cells: Vec<&str> = row.split(" | ").collect();
            entry.0.push((cells[0].trim_end_matches('`').to_string(), cells[1].to_string()));
        }
    }
    out
}

/// `"16 mapped, 21 passed through, 0 refused (37 fields)."`, from the rows.
fn counts(rows: &[(String, String)], kinds: &[&str]) -> String {
    let parts: Vec<String> =
        kinds.iter().map(|k| format!("{} {k}", rows.iter().filter(|(_, h)| h == k).count())).collect();
    format!("{} ({} fields", parts.join(", "), rows.len())
}

fn endpoint(model: &str) -> Endpoint<'_> {
    Endpoint { base_url: "https://x.test/v1", model, cloud: None, api_key: None, headers: &[], extra_body: None }
}

fn body(format: Format, request: &ChatRequest) -> Value {
    serde_json::from_str(&format.build_request(endpoint("m"), request, false).body).unwrap()
}

/// A client format, the provider format a member of it speaks, and its smallest request.
fn clients() -> [(ClientFormat, Format, Value); 3] {
    [
        (
            ClientFormat::OpenaiChat,
            Format::OpenaiChat,
            json!({"model": "r", "messages": [{"role": "user", "content": "hi"}]}),
        ),
        (ClientFormat::OpenaiResponses, Format::OpenaiResponses, json!({"model": "r", "input": "hi"})),
        (
            ClientFormat::AnthropicMessages,
            Format::AnthropicMessages,
            json!({"model": "r", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}),
        ),
    ]
}

#[test]
fn each_client_tables_fields_are_read_passed_or_refused_as_it_says() {
    let sections = sections();
    for (client, own, minimal) in clients() {
        let (rows, stated) = &sections[own.as_str()];
        assert!(stated.starts_with(&counts(rows, &["mapped", "passed through", "refused"])), "{own:?}: {stated}");
        let read = client.read_fields();
        for field in read {
            assert!(
                rows.iter().any(|(f, h)| f == field && h != "passed through"),
                "{own:?}: {field} is read, not listed"
            );
        }
        for (field, handling) in rows {
            let mut sent = minimal.clone();
            // The Responses answer repeats these settings, so its reader checks they are numbers.
            let number = own == Format::OpenaiResponses && NUMBERS.contains(&field.as_str());
            let probe = if number { json!(7) } else { json!({"probe": field}) };
            sent[field.as_str()] = probe.clone();
            let parsed = parse_request(client, &sent.to_string());
            match handling.as_str() {
                "mapped" => assert!(read.contains(&field.as_str()), "{own:?}: {field} is mapped but not read"),
                "refused" => {
                    assert!(read.contains(&field.as_str()), "{own:?}: {field} is refused but not read");
                    let e = parsed.expect_err(field);
                    assert!(e.message.starts_with(field.as_str()), "{own:?}: {}", e.message);
                }
                "passed through" => {
                    let call = parsed.unwrap_or_else(|e| panic!("{own:?} {field}: {}", e.message));
                    let passed = call.request.passthrough.as_ref().expect(field);
                    assert_eq!((passed.format, passed.fields.len()), (own.as_str(), 1), "{own:?} {field}");
                    for member in Format::ALL {
                        let sent_on = body(member, &call.request).get(field.as_str()).cloned();
                        let warning = member.dropped_warning(&call.request, "t");
                        if member == own {
                            assert_eq!(sent_on.as_ref(), Some(&probe), "{field} reaches {member:?} unchanged");
                            assert_eq!(warning, None);
                        } else {
                            assert_eq!(sent_on, None, "{field} is not sent to {member:?}");
                            let expected = format!(
                                "dropped {field} for target \"t\": it speaks {}, which has no such field of {}",
                                member.as_str(),
                                own.as_str()
                            );
                            assert_eq!(warning.as_deref(), Some(expected.as_str()));
                        }
                    }
                }
                other => panic!("{own:?}: {field} is {other:?}"),
            }
        }
    }
}

#[test]
fn geminis_table_says_what_its_body_holds() {
    let (rows, stated) = &sections()["gemini"];
    assert!(stated.starts_with(&counts(rows, &["sent", "not sent"])), "{stated}");
    let request = ChatRequest::from_value(&json!({
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        "maxTokens": 9, "temperature": 0.5, "topP": 0.9, "seed": 7, "stop": ["END"],
        "tools": [{"name": "f", "parameters": {"type": "object"}}], "toolChoice": "auto",
        "responseFormat": {"type": "json", "schema": {"type": "object"}},
        "reasoning": {"effort": "high"}
    }))
    .unwrap();
    let sent = body(Format::Gemini, &request);
    for (field, handling) in rows {
        let found = field.split('.').try_fold(&sent, |v, key| v.get(key)).is_some();
        assert_eq!(found, handling == "sent", "gemini {field} is {handling}: {sent}");
    }
}

#[test]
fn a_passed_list_joins_the_formats_own_and_the_targets_extra_body_wins() {
    let client = json!({
        "model": "r", "input": "hi", "reasoning": {"effort": "low"},
        "include": ["message.output_text.logprobs", "reasoning.encrypted_content"],
        "service_tier": "priority", "top_logprobs": 2
    });
    let call = parse_request(ClientFormat::OpenaiResponses, &client.to_string()).unwrap();
    let extra = json!({"service_tier": "flex"});
    let target = Endpoint { extra_body: extra.as_object(), ..endpoint("m") };
    let sent: Value =
        serde_json::from_str(&Format::OpenaiResponses.build_request(target, &call.request, true).body).unwrap();
    assert_eq!(sent["include"], json!(["reasoning.encrypted_content", "message.output_text.logprobs"]));
    assert_eq!(sent["service_tier"], "flex", "the target's extraBody is the operator's word");
    assert_eq!(sent["top_logprobs"], 2);
    assert_eq!((&sent["stream"], &sent["store"]), (&json!(true), &json!(false)), "the format's own fields win");
}

#[test]
fn nulls_pass_nothing_and_the_warning_names_every_field() {
    let client = json!({
        "model": "r", "messages": [{"role": "user", "content": "hi"}],
        "logprobs": true, "top_logprobs": 3, "user": null
    });
    let call = parse_request(ClientFormat::OpenaiChat, &client.to_string()).unwrap();
    let passed = call.request.passthrough.as_ref().unwrap();
    assert_eq!(Value::Object(passed.fields.clone()), json!({"logprobs": true, "top_logprobs": 3}));
    assert_eq!(
        Format::Gemini.dropped_warning(&call.request, "g").unwrap(),
        "dropped logprobs, top_logprobs for target \"g\": it speaks gemini, which has no such fields of openai_chat"
    );
    let plain = parse_request(
        ClientFormat::OpenaiChat,
        &json!({"model": "r", "messages": [{"role": "user", "content": "hi"}], "user": null}).to_string(),
    )
    .unwrap();
    assert_eq!(plain.request.passthrough, None);
    assert_eq!(Format::Gemini.dropped_warning(&plain.request, "g"), None);
    let config = Config::from_json(
        r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://a.test/v1", "model": "m"}}}"#,
    )
    .unwrap();
    assert!(config.check_request("p", &call.request).is_ok(), "pass-through fields are no part to check");
}

#[test]
fn output_configs_other_members_join_the_format_llm_baton_writes() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    let client = json!({
        "model": "r", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
        "output_config": {"format": {"type": "json_schema", "schema": schema}, "effort": "high"}
    });
    let call = parse_request(ClientFormat::AnthropicMessages, &client.to_string()).unwrap();
    let sent = body(Format::AnthropicMessages, &call.request);
    assert_eq!(sent["output_config"], json!({"format": {"type": "json_schema", "schema": schema}, "effort": "high"}));
    assert_eq!(body(Format::OpenaiChat, &call.request).get("output_config"), None);
    let warning = Format::OpenaiChat.dropped_warning(&call.request, "c").unwrap();
    assert!(warning.starts_with("dropped output_config for target \"c\""), "{warning}");
    let plain = json!({"model": "r", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}],
        "output_config": {"format": {"type": "json_schema", "schema": schema}}});
    let call = parse_request(ClientFormat::AnthropicMessages, &plain.to_string()).unwrap();
    assert_eq!(call.request.passthrough, None, "the format alone is mapped");
}
