//! An agent loop across providers, through the engine with a fake clock: each member of a route
//! is sent the reasoning state it can verify and nothing another member issued, on every leg
//! (failover, retry, resume); the state an answer carries names the target that issued it; and
//! the request reader and config check say what is wrong with a reasoning field, and where.

use llm_baton::backoff::SplitMix64;
use llm_baton::chat::{
    Answer, ChatRequest, Delta, FinishReason, Message, Opaque, ReasoningKind, ReasoningState, Role, Usage,
};
use llm_baton::config::Config;
use llm_baton::engine::{Action, Baton, CallOptions, Served};
use llm_baton::format::Format;
use llm_baton::outcome::Failure;
use serde_json::{json, Value};

const CONFIG: &str = r#"{
  "targets": {
    "claude": {"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:1/v1", "model": "claude-sonnet-4-5"},
    "gemini": {"format": "gemini", "baseUrl": "http://127.0.0.1:1/v1beta", "model": "gemini-3-pro-preview"},
    "gpt": {"format": "openai_responses", "baseUrl": "http://127.0.0.1:1/v1", "model": "gpt-5"}
  },
  "routes": {
    "agent": {"fallback": [{"retry": "claude", "attempts": 2, "backoff": {"initialMs": 10, "jitter": "none"}}, "gemini", "gpt"]}
  }
}"#;

fn overloaded() -> Failure {
    Failure::Http {
        status: 529,
        message: "Overloaded".into(),
        code: Some("overloaded_error".into()),
        class: None,
        retry_after_ms: None,
        should_retry: None,
        in_stream: false,
        content_filter: None,
    }
}

/// Plays one whole call of `request` on route "agent": every member fails until `answering`,
/// which answers with `answer`. Returns each attempt's target and request body, and the call.
fn call(baton: &mut Baton, request: &ChatRequest, answering: &str, answer: &Answer) -> (Vec<(String, Value)>, Served) {
    let config = baton.shared_config();
    let mut call = baton.start("agent", CallOptions::default(), 0, Box::new(SplitMix64(7))).expect("route");
    let (mut now, mut sent) = (0, Vec::new());
    loop {
        while let Some(action) = call.poll() {
            match action {
                Action::Send { attempt, target, .. } => {
                    let t = &config.targets[target];
                    let body = t.format.build_request(t, request, false).body;
                    sent.push((t.name.clone(), serde_json::from_str(&body).expect("JSON")));
                    now += 5;
                    call.on_headers(attempt, now);
                    if t.name == answering {
                        call.on_answer(attempt, now, answer.clone());
                    } else {
                        call.on_failure(attempt, now, overloaded());
                    }
                }
                Action::Finish(outcome) => return (sent, outcome.expect("served")),
                _ => {}
            }
        }
        now = call.poll_timeout().expect("a timer");
        call.handle_timeout(now);
    }
}

/// An answer as `format` decodes it from its provider's whole body.
fn decoded(format: Format, body: Value) -> Answer {
    format.decode_answer(body.to_string().as_bytes()).expect("decodes")
}

fn claude_answer() -> Answer {
    decoded(
        Format::AnthropicMessages,
        json!({"type": "message", "model": "claude-sonnet-4-5-20250929", "stop_reason": "tool_use", "content": [
            {"type": "thinking", "thinking": "Paris first.", "signature": "sig-claude"},
            {"type": "redacted_thinking", "data": "red-claude"},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]}),
    )
}

fn gemini_answer() -> Answer {
    decoded(
        Format::Gemini,
        json!({"candidates": [{"finishReason": "STOP", "content": {"role": "model", "parts": [
            {"text": "Now Lyon.", "thought": true},
            {"functionCall": {"name": "get_weather", "args": {"city": "Lyon"}}, "thoughtSignature": "sig-gemini"}]}}],
            "modelVersion": "gemini-3-pro-preview"}),
    )
}

fn gpt_answer() -> Answer {
    decoded(
        Format::OpenaiResponses,
        json!({"status": "completed", "model": "gpt-5-2025-08-07", "output": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Both done."}], "encrypted_content": "enc-gpt"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sunny in both."}]}]}),
    )
}

fn request(messages: &[Message]) -> ChatRequest {
    let value = json!({
        "messages": [{"role": "user", "content": "Weather in Paris and Lyon?"}],
        "tools": [{"name": "get_weather"}],
        "reasoning": {"effort": "low"},
    });
    let mut request = ChatRequest::from_value(&value).expect("request");
    request.messages.extend(messages.iter().cloned());
    request
}

fn tool_result(served: &Served) -> Message {
    Message { tool_call_id: Some(served.answer.tool_calls[0].id.clone()), ..Message::new(Role::Tool, "sunny") }
}

fn text(v: &Value) -> String {
    v.to_string()
}

#[test]
fn a_conversation_across_three_providers_sends_each_only_what_it_can_verify() {
    let mut baton = Baton::new(Config::from_json(CONFIG).expect("config"));

    // Turn 1: Claude answers. Its state names Claude's target, not the model the body named.
    let (sent, one) = call(&mut baton, &request(&[]), "claude", &claude_answer());
    assert_eq!(sent.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["claude"]);
    assert_eq!(sent[0].1["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    let states: Vec<&ReasoningState> = one.answer.reasoning_parts.iter().filter_map(|p| p.state.as_ref()).collect();
    assert_eq!(states.len(), 2, "{:?}", one.answer.reasoning_parts);
    assert!(states
        .iter()
        .all(|s| (s.format.as_str(), s.model.as_str()) == ("anthropic_messages", "claude-sonnet-4-5")));
    let mut history = vec![one.answer.message(), tool_result(&one)];

    // Turn 2: Claude is overloaded twice (its retry sends the same state again), Gemini answers.
    let (sent, two) = call(&mut baton, &request(&history), "gemini", &gemini_answer());
    assert_eq!(sent.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["claude", "claude", "gemini"]);
    for (_, retry) in &sent[..2] {
        let turn = &retry["messages"][1]["content"];
        assert_eq!(turn[0], json!({"type": "thinking", "thinking": "Paris first.", "signature": "sig-claude"}));
        assert_eq!(turn[1], json!({"type": "redacted_thinking", "data": "red-claude"}));
    }
    let to_gemini = &sent[2].1;
    assert!(!text(to_gemini).contains("sig-claude") && !text(to_gemini).contains("red-claude"), "{to_gemini}");
    assert!(!text(to_gemini).contains("Paris first."), "Claude's thinking text is not sent as text: {to_gemini}");
    assert_eq!(
        to_gemini["contents"][1]["parts"][0]["thoughtSignature"], "skip_thought_signature_validator",
        "Gemini 3 takes Google's skip value on a call another provider made: {to_gemini}"
    );
    assert_eq!(to_gemini["generationConfig"]["thinkingConfig"], json!({"thinkingLevel": "low"}));
    let call_state = two.answer.tool_calls[0].state.as_ref().expect("Gemini's call keeps its signature");
    assert_eq!((call_state.format.as_str(), call_state.model.as_str()), ("gemini", "gemini-3-pro-preview"));
    history.extend([two.answer.message(), tool_result(&two)]);

    // Turn 3: back at Claude, whose thinking must be off (the tool turn it continues is Gemini's);
    // then Claude fails over to Gemini again and on to GPT, each with what it issued only.
    let turn3 = request(&history);
    assert!(Format::AnthropicMessages.reasoning_warning(&turn3, "claude-sonnet-4-5").is_some());
    let (sent, three) = call(&mut baton, &turn3, "gpt", &gpt_answer());
    assert_eq!(sent.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["claude", "claude", "gemini", "gpt"]);
    let to_claude = &sent[0].1;
    assert_eq!(to_claude.get("thinking"), None, "{to_claude}");
    assert!(!text(to_claude).contains("sig-") && !text(to_claude).contains("red-claude"), "{to_claude}");
    let to_gemini = &sent[2].1;
    assert_eq!(to_gemini["contents"][1]["parts"][0]["thoughtSignature"], "skip_thought_signature_validator");
    assert_eq!(to_gemini["contents"][3]["parts"][0]["thoughtSignature"], "sig-gemini", "{to_gemini}");
    let to_gpt = text(&sent[3].1);
    assert!(!to_gpt.contains("sig-") && !to_gpt.contains("red-claude") && !to_gpt.contains("\"reasoning\",\"id\""));
    assert_eq!(three.answer.text, "Sunny in both.");

    // A fourth turn at GPT sends its reasoning item back, encrypted content and all.
    history.push(three.answer.message());
    history.push(Message::new(Role::User, "And tomorrow?"));
    let gpt = &baton.config().targets[2];
    let body: Value = serde_json::from_str(&gpt.format.build_request(gpt, &request(&history), false).body).unwrap();
    let item = body["input"].as_array().unwrap().iter().find(|i| i["type"] == "reasoning").expect("the reasoning item");
    assert_eq!(
        *item,
        json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Both done."}], "encrypted_content": "enc-gpt"})
    );
}

#[test]
fn streamed_state_names_the_target_that_issued_it() {
    let config = Config::from_json(CONFIG).expect("config");
    let mut baton = Baton::new(config);
    let options = CallOptions { stream: true, ..CallOptions::default() };
    let mut call = baton.start("gemini", options, 0, Box::new(SplitMix64(1))).expect("route");
    let attempt = std::iter::from_fn(|| call.poll())
        .find_map(|a| if let Action::Send { attempt, .. } = a { Some(attempt) } else { None })
        .expect("sent");
    let state = ReasoningState::new(Opaque::Signature("sig".into()));
    let deltas = [
        Delta::Reasoning { text: "hmm".into(), kind: ReasoningKind::Summary },
        Delta::ReasoningState { state: state.clone() },
        Delta::Text { text: "Hi".into() },
        Delta::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), model: None },
    ];
    call.on_deltas(attempt, 1, deltas);
    let mut named = state;
    named.issued_by("gemini", "gemini-3-pro-preview");
    let mut delivered = Vec::new();
    let mut served = None;
    while let Some(action) = call.poll() {
        match action {
            Action::Deliver(deltas) => delivered.extend(deltas),
            Action::Finish(outcome) => served = Some(outcome.expect("served")),
            _ => {}
        }
    }
    assert!(delivered.contains(&Delta::ReasoningState { state: named.clone() }), "{delivered:?}");
    let answer = served.expect("finished").answer;
    assert_eq!(answer.reasoning_parts.len(), 1);
    assert_eq!(
        (answer.reasoning_parts[0].text.as_str(), answer.reasoning_parts[0].state.as_ref()),
        ("hmm", Some(&named))
    );
}

/// DeepSeek's thinking mode, Kimi K2 thinking and GLM want a tool turn's `reasoning_content`
/// back; it is the text, so only its issuer gets it: not another Chat model, not Claude.
#[test]
fn a_chat_members_reasoning_goes_back_to_it_alone() {
    let config = r#"{
      "targets": {
        "deepseek": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "deepseek-reasoner"},
        "kimi": {"format": "openai_chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "kimi-k2-thinking"},
        "claude": {"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:1/v1", "model": "claude-sonnet-4-5"}
      },
      "routes": {"agent": {"fallback": ["deepseek", "kimi", "claude"]}}
    }"#;
    let mut baton = Baton::new(Config::from_json(config).expect("config"));
    let deepseek = decoded(
        Format::OpenaiChat,
        json!({"model": "deepseek-reasoner", "choices": [{"finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "reasoning_content": "Paris first.",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]}}]}),
    );
    let (_, one) = call(&mut baton, &request(&[]), "deepseek", &deepseek);
    let state = one.answer.reasoning_parts[0].state.clone().expect("Chat reasoning names its issuer");
    assert_eq!(
        state,
        ReasoningState { format: "openai_chat".into(), model: "deepseek-reasoner".into(), opaque: Opaque::Plain }
    );
    let history = vec![one.answer.message(), tool_result(&one)];
    // As a library caller keeps it: `{type: "reasoning", text, raw: true, state: {format, model}}`.
    let kept = json!({"messages": [{"role": "assistant", "content": [{"type": "reasoning", "text": "Paris first.",
        "raw": true, "state": {"format": "openai_chat", "model": "deepseek-reasoner"}}]}]});
    assert_eq!(ChatRequest::from_value(&kept).expect("reads").messages[0].reasoning, one.answer.reasoning_parts);

    let (sent, _) = call(&mut baton, &request(&history), "claude", &claude_answer());
    assert_eq!(sent.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["deepseek", "kimi", "claude"]);
    assert_eq!(sent[0].1["messages"][1]["reasoning_content"], "Paris first.", "{}", sent[0].1);
    for (target, body) in &sent[1..] {
        assert!(!text(body).contains("Paris first."), "{target} is sent no reasoning it did not issue: {body}");
    }
}

#[test]
fn reasoning_fields_that_are_wrong_say_where_and_what_would_be_right() {
    let message = |value: Value| ChatRequest::from_value(&value).expect_err("refused").to_string();
    let user_reasoning = json!({"messages": [{"role": "user", "content": [{"type": "reasoning", "text": "x"}]}]});
    assert!(
        message(user_reasoning).contains("request.messages[0].content[0] is reasoning, but only assistant messages")
    );
    let effort = json!({"messages": [{"role": "user", "content": "x"}], "reasoning": {"effort": "max"}});
    assert!(message(effort).contains(r#"request.reasoning.effort must be "minimal", "low", "medium" or "high""#));
    let two_kinds = json!({"messages": [{"role": "assistant", "content": [{"type": "reasoning", "text": "",
        "state": {"format": "gemini", "model": "g", "signature": "s", "id": "rs"}}]}]});
    assert!(message(two_kinds).contains("request.messages[0].content[0].state give the state as the answer gave it"));

    let config = Config::from_json(CONFIG).expect("config");
    let check = |value: Value| {
        config.check_request("agent", &ChatRequest::from_value(&value).unwrap()).map_err(|e| e.to_string())
    };
    let budget =
        json!({"messages": [{"role": "user", "content": "x"}], "maxTokens": 2000, "reasoning": {"budgetTokens": 4000}});
    let refused = check(budget).expect_err("a budget over maxTokens");
    assert!(
        refused.contains("request.maxTokens is 2000, but Anthropic needs it above reasoning.budgetTokens (4000)"),
        "{refused}"
    );
    assert!(refused.contains(r#"target "claude""#), "{refused}");
    let small = json!({"messages": [{"role": "user", "content": "x"}], "reasoning": {"budgetTokens": 100}});
    assert!(check(small).expect_err("under 1024").contains("request.reasoning.budgetTokens is 100, under the 1024"));
    assert_eq!(
        check(json!({"messages": [{"role": "user", "content": "x"}], "maxTokens": 900, "reasoning": {}}))
            .map_err(|e| e.contains("request.maxTokens is 900")),
        Err(true)
    );
}

#[test]
fn claude_s_thinking_goes_to_the_same_model_on_vertex_and_bedrock_but_not_to_another() {
    let config = r#"{
      "targets": {
        "claude": {"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:1/v1", "model": "claude-sonnet-4-5-20250929"},
        "vertex": {"format": "anthropic_messages", "cloud": "vertex", "project": "p", "region": "us-east5",
                   "baseUrl": "http://127.0.0.1:1/v1", "model": "claude-sonnet-4-5@20250929", "accessToken": "ya29.t"},
        "bedrock": {"format": "anthropic_messages", "baseUrl": "http://127.0.0.1:1/v1", "model": "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
        "opus": {"format": "anthropic_messages", "cloud": "vertex", "project": "p", "region": "us-east5",
                 "baseUrl": "http://127.0.0.1:1/v1", "model": "claude-opus-4-1@20250805", "accessToken": "ya29.t"}
      },
      "routes": {"agent": {"fallback": ["claude", "vertex", "bedrock", "opus"]}}
    }"#;
    let mut baton = Baton::new(Config::from_json(config).expect("config"));
    let (_, one) = call(&mut baton, &request(&[]), "claude", &claude_answer());
    let history = vec![one.answer.message(), tool_result(&one)];
    let (sent, _) = call(&mut baton, &request(&history), "opus", &claude_answer());
    assert_eq!(sent.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["claude", "vertex", "bedrock", "opus"]);
    for (target, body) in &sent[..3] {
        let turn = &body["messages"][1]["content"];
        assert_eq!(
            turn[0],
            json!({"type": "thinking", "thinking": "Paris first.", "signature": "sig-claude"}),
            "{target}"
        );
        assert_eq!(turn[1], json!({"type": "redacted_thinking", "data": "red-claude"}), "{target}");
        assert_eq!(body["thinking"]["type"], "enabled", "{target}: the tool turn is this model's, thinking stays on");
    }
    let to_opus = &sent[3].1;
    assert!(!text(to_opus).contains("sig-claude") && to_opus.get("thinking").is_none(), "{to_opus}");
}
