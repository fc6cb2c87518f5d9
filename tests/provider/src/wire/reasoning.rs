//! A reasoning model's state, issued and checked as each provider does (`"reasoning": true` on a
//! step): the answer carries the format's reasoning state, and a request whose history holds
//! state this model did not issue, or lacks state the provider requires, is refused with the
//! provider's own 400.
//!
//! What each provider documents, made checkable: a state is a signature of what it covers and
//! of the model that issued it, so an altered thinking text, another model's signature and a
//! missing one are each told apart.
//! - Anthropic: a `thinking` block's `signature` covers its text; `redacted_thinking` its `data`.
//!   With `thinking` on, the last assistant turn of a tool loop must start with a thinking block.
//! - Gemini 3: the first `functionCall` part of each model turn must carry its `thoughtSignature`
//!   (Google's skip value `skip_thought_signature_validator` passes); a signature present must be
//!   valid. Gemini 2.5 checks nothing.
//! - Responses: a `reasoning` input item needs the `encrypted_content` this model issued for it
//!   (`store: false` keeps nothing on the server).
//! - Chat: reasoning text only, in `reasoning_content` and with nothing to check, unless a step
//!   names the style of a known server ([`ChatStyle`]): those that want a tool turn's reasoning
//!   back refuse a history without it, each in its own words.

use serde::Deserialize;
use serde_json::{json, Value};

use super::{Answer, Event, Format, Output, StreamEvents};

/// The thought every reasoning answer has.
const THOUGHT: &str = "The user wants this; a tool may help.";
const SKIP_SIGNATURE: &str = "skip_thought_signature_validator";

/// The signature `model` gives `content`: deterministic, so the same model's is recognized.
pub fn sign(model: &str, content: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in model.bytes().chain([0]).chain(content.bytes()) {
        hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("sig.{hash:016x}")
}

/// How a Chat Completions reasoning model writes its reasoning and what it wants back, as each
/// server documents it (`"chatReasoning"` on a step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChatStyle {
    /// DeepSeek's thinking mode: `reasoning_content`, and "for turns that do perform tool calls,
    /// the reasoning_content must be fully passed back to the API in all subsequent requests. If
    /// your code does not correctly pass back reasoning_content, the API will return a 400 error"
    /// (api-docs.deepseek.com/guides/thinking_mode, "Tool Calls"). The message is the one its API
    /// answers (quoted in sst/opencode#9397).
    Deepseek,
    /// Kimi K2 thinking (kimi-k2-thinking, kimi-k2.5): `reasoning_content`, which the docs say to
    /// keep in context for multi-step tool use (platform.moonshot.ai/docs/guide/
    /// use-kimi-k2-thinking-model); the API answers 400 without it (openai-agents-python#2669).
    Kimi,
    /// GLM (4.5 on, z.ai): `reasoning_content`; with interleaved thinking and tools it "must be
    /// explicitly preserved and returned together with the tool results", complete and unmodified
    /// (docs.z.ai/guides/capabilities/thinking-mode). z.ai documents no error for it, so this
    /// stand-in is strict: a tool turn whose `reasoning_content` is missing or is not what this
    /// model wrote is a 400, in words of its own.
    Glm,
    /// vLLM (0.11 on: "`reasoning` used to be called `reasoning_content`", docs.vllm.ai
    /// features/reasoning_outputs), OpenRouter and gpt-oss: `reasoning`, nothing checked.
    Reasoning,
}

/// The reasoning a Chat model of `style` writes: its model named, so whose it is shows.
fn chat_thought(model: &str) -> String {
    format!("{THOUGHT} ({model} thinking)")
}

/// The field a Chat answer's reasoning goes in.
fn chat_field(style: Option<ChatStyle>) -> &'static str {
    match style {
        Some(ChatStyle::Reasoning) => "reasoning",
        _ => "reasoning_content",
    }
}

/// Why a Chat server of `style` refuses these `messages`: an assistant turn with tool calls
/// whose `reasoning_content` is missing (GLM: or not what `model` wrote).
pub fn chat_refusal(style: ChatStyle, messages: &[Value], model: &str) -> Option<String> {
    let own = chat_thought(model);
    let (i, turn) = messages.iter().enumerate().find(|(_, m)| {
        let reasoning = m.get("reasoning_content").and_then(Value::as_str);
        let calls = m["role"] == "assistant" && m["tool_calls"].as_array().is_some_and(|c| !c.is_empty());
        calls && (reasoning.is_none() || (style == ChatStyle::Glm && reasoning != Some(own.as_str())))
    })?;
    Some(match style {
        ChatStyle::Deepseek => format!(
            "Missing `reasoning_content` field in the assistant message at message index {i}. For more \
             information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
        ),
        ChatStyle::Kimi => {
            format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}")
        }
        ChatStyle::Glm => format!(
            "messages[{i}].reasoning_content: interleaved thinking with tools needs the reasoning_content this model \
             returned, complete and unmodified (got {})",
            turn.get("reasoning_content").map_or("none".to_owned(), Value::to_string)
        ),
        ChatStyle::Reasoning => return None,
    })
}

fn gemini_3(model: &str) -> bool {
    model.strip_prefix("gemini-").is_some_and(|v| v.bytes().next().is_some_and(|b| (b'3'..=b'9').contains(&b)))
}

/// Why the provider refuses this request's history, in its own words; `None` when it takes it.
pub fn refusal(format: Format, body: &Value, model: &str) -> Option<String> {
    let items = |key: &str| body.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    match format {
        Format::AnthropicMessages => anthropic_refusal(&items("messages"), body.get("thinking").is_some(), model),
        Format::Gemini => gemini_refusal(&items("contents"), model),
        Format::OpenAiResponses => responses_refusal(&items("input"), model),
        Format::OpenAiChat => None,
    }
}

fn anthropic_refusal(messages: &[Value], thinking: bool, model: &str) -> Option<String> {
    for (i, m) in messages.iter().enumerate() {
        let Some(blocks) = m.get("content").and_then(Value::as_array) else { continue };
        for (j, b) in blocks.iter().enumerate() {
            let covered = match b["type"].as_str() {
                Some("thinking") => (b["thinking"].as_str(), b["signature"].as_str()),
                Some("redacted_thinking") => (Some("redacted"), b["data"].as_str()),
                _ => continue,
            };
            if let (Some(text), signature) = covered {
                if signature != Some(&sign(model, text)) {
                    return Some(format!("messages.{i}.content.{j}: Invalid `signature` in `thinking` block"));
                }
            }
        }
    }
    // The last assistant turn, when only tool results follow it, is the tool loop's.
    let last = messages.iter().rposition(|m| m["role"] == "assistant")?;
    let blocks = messages[last]["content"].as_array()?;
    let calls = blocks.iter().any(|b| b["type"] == "tool_use");
    let first = blocks.first().and_then(|b| b["type"].as_str()).unwrap_or("text");
    if thinking && calls && !matches!(first, "thinking" | "redacted_thinking") {
        return Some(format!(
            "messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When \
             `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the \
             lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from \
             previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at \
             https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
        ));
    }
    None
}

fn gemini_refusal(contents: &[Value], model: &str) -> Option<String> {
    if !gemini_3(model) {
        return None;
    }
    for (i, c) in contents.iter().enumerate().filter(|(_, c)| c["role"] == "model") {
        let parts = c["parts"].as_array().cloned().unwrap_or_default();
        for (j, p) in parts.iter().enumerate() {
            let Some(signature) = p["thoughtSignature"].as_str() else { continue };
            let covered = p["functionCall"]["name"].as_str().unwrap_or("text");
            if signature != SKIP_SIGNATURE && signature != sign(model, covered) {
                return Some(format!("Thought signature is not valid (contents[{i}].parts[{j}])."));
            }
        }
        let first_call = parts.iter().position(|p| p.get("functionCall").is_some());
        if let Some(j) = first_call.filter(|j| parts[*j].get("thoughtSignature").is_none()) {
            let name = parts[j]["functionCall"]["name"].as_str().unwrap_or("");
            return Some(format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to \
                 work correctly, and missing thought_signature may lead to degraded model performance. Additional \
                 data, function call `default_api:{name}` , position {}. Please refer to \
                 https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                i + 1
            ));
        }
    }
    None
}

fn responses_refusal(input: &[Value], model: &str) -> Option<String> {
    for item in input.iter().filter(|item| item["type"] == "reasoning") {
        let id = item["id"].as_str().unwrap_or("");
        match item["encrypted_content"].as_str() {
            None => {
                return Some(format!(
                    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again \
                     with `store` set to true, or remove this item from your input."
                ))
            }
            Some(content) if content != sign(model, id) => {
                return Some(format!("The encrypted content for item {id} could not be verified."))
            }
            Some(_) => {}
        }
    }
    None
}

fn covered_by_gemini(answer: &Answer) -> &str {
    match &answer.output {
        Output::ToolCall { name, .. } => name,
        Output::Text { .. } => "text",
    }
}

fn responses_item(answer: &Answer, encrypted: bool) -> Value {
    let id = format!("rs_baton{:08}", answer.serial);
    let mut item = json!({
        "id": id, "type": "reasoning", "status": "completed",
        "summary": [{"type": "summary_text", "text": THOUGHT}],
    });
    if encrypted {
        item["encrypted_content"] = json!(sign(&answer.model, &id));
    }
    item
}

/// A whole answer with the format's reasoning added. `encrypted`: a Responses request asked for
/// `reasoning.encrypted_content`; `style`: a Chat server's.
pub fn whole(format: Format, answer: &Answer, mut body: Value, encrypted: bool, style: Option<ChatStyle>) -> Value {
    let model = answer.model.as_str();
    match format {
        Format::AnthropicMessages => {
            let thinking = json!({"type": "thinking", "thinking": THOUGHT, "signature": sign(model, THOUGHT)});
            let redacted = json!({"type": "redacted_thinking", "data": sign(model, "redacted")});
            prepend(&mut body["content"], [thinking, redacted]);
        }
        Format::Gemini => {
            let parts = &mut body["candidates"][0]["content"]["parts"];
            if let Some(last) = parts.as_array_mut().and_then(|p| p.last_mut()) {
                last["thoughtSignature"] = json!(sign(model, covered_by_gemini(answer)));
            }
            prepend(parts, [json!({"text": THOUGHT, "thought": true})]);
        }
        Format::OpenAiResponses => prepend(&mut body["output"], [responses_item(answer, encrypted)]),
        Format::OpenAiChat => body["choices"][0]["message"][chat_field(style)] = json!(chat_text(model, style)),
    }
    body
}

/// A Chat answer's reasoning: [`THOUGHT`], or a named style's own.
fn chat_text(model: &str, style: Option<ChatStyle>) -> String {
    style.map_or(THOUGHT.to_owned(), |_| chat_thought(model))
}

/// A stream with the format's reasoning events added before its content.
pub fn stream(
    format: Format,
    answer: &Answer,
    mut events: StreamEvents,
    encrypted: bool,
    style: Option<ChatStyle>,
) -> StreamEvents {
    let model = answer.model.as_str();
    match format {
        Format::AnthropicMessages => {
            for event in events.preamble.iter_mut().chain(&mut events.content).chain(&mut events.closing) {
                shift(event, "index", 2);
            }
            let start = |index: u32, block: Value| {
                Event::named(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": index, "content_block": block}),
                )
            };
            let delta = |delta: Value| {
                Event::named("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": delta}))
            };
            let stop =
                |index: u32| Event::named("content_block_stop", json!({"type": "content_block_stop", "index": index}));
            let thinking = [
                start(0, json!({"type": "thinking", "thinking": "", "signature": ""})),
                delta(json!({"type": "thinking_delta", "thinking": THOUGHT})),
                delta(json!({"type": "signature_delta", "signature": sign(model, THOUGHT)})),
                stop(0),
                start(1, json!({"type": "redacted_thinking", "data": sign(model, "redacted")})),
                stop(1),
            ];
            events.preamble.splice(1..1, thinking);
        }
        Format::Gemini => {
            let thought = json!({"text": THOUGHT, "thought": true});
            let mut first = events.marker[0].clone_json();
            first["candidates"][0]["content"]["parts"] = json!([thought]);
            if let Some(candidate) = first["candidates"][0].as_object_mut() {
                candidate.remove("finishReason");
            }
            events.preamble.push(Event::data(first));
            let signature = json!(sign(model, covered_by_gemini(answer)));
            match answer.output {
                Output::ToolCall { .. } => set_json(&mut events.content[0], |v| {
                    v["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = signature.clone()
                }),
                Output::Text { .. } => set_json(&mut events.marker[0], |v| {
                    v["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = signature.clone()
                }),
            }
        }
        Format::OpenAiResponses => {
            for event in events.preamble.iter_mut().chain(&mut events.content).chain(&mut events.closing) {
                shift(event, "output_index", 1);
            }
            let item = responses_item(answer, encrypted);
            let mut added = item.clone();
            added["status"] = json!("in_progress");
            added["summary"] = json!([]);
            if let Some(added) = added.as_object_mut() {
                added.remove("encrypted_content");
            }
            let id = item["id"].clone();
            let reasoning = [
                Event::named(
                    "response.output_item.added",
                    json!({"type": "response.output_item.added", "output_index": 0, "item": added}),
                ),
                Event::named(
                    "response.reasoning_summary_text.delta",
                    json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": 0, "summary_index": 0, "delta": THOUGHT}),
                ),
                Event::named(
                    "response.output_item.done",
                    json!({"type": "response.output_item.done", "output_index": 0, "item": item.clone()}),
                ),
            ];
            events.preamble.splice(2..2, reasoning);
            for event in &mut events.marker {
                set_json(event, |v| prepend(&mut v["response"]["output"], [item.clone()]));
            }
        }
        Format::OpenAiChat => {
            let mut chunk = events.preamble[0].clone_json();
            // In two deltas before anything else (the first with the role), as a server streams
            // it: the first chunk may open a tool call, which comes after the reasoning.
            let text = chat_text(model, style);
            let (first, rest) = text.split_at(text.len() / 2);
            let mut delta = |delta: Value| {
                chunk["choices"][0]["delta"] = delta;
                Event::data(chunk.clone())
            };
            let pieces = [
                delta(json!({"role": "assistant", chat_field(style): first})),
                delta(json!({ chat_field(style): rest })),
            ];
            events.preamble.splice(0..0, pieces);
        }
    }
    events
}

fn prepend<const N: usize>(list: &mut Value, items: [Value; N]) {
    if let Some(list) = list.as_array_mut() {
        list.splice(0..0, items);
    }
}

/// Moves an event's index `by` places on, for the reasoning now before it.
fn shift(event: &mut Event, key: &str, by: u64) {
    set_json(event, |v| {
        if let Some(i) = v[key].as_u64() {
            v[key] = json!(i + by);
        }
    });
}

fn set_json(event: &mut Event, edit: impl FnOnce(&mut Value)) {
    if let super::EventData::Json(value) = &mut event.data {
        edit(value);
    }
}

impl Event {
    fn clone_json(&self) -> Value {
        match &self.data {
            super::EventData::Json(value) => value.clone(),
            super::EventData::Literal(_) => Value::Null,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_provider_refuses_what_its_model_did_not_issue_with_its_own_message() {
        let model = "claude";
        let thinking =
            |text: &str, signature: &str| json!({"type": "thinking", "thinking": text, "signature": signature});
        let turn = |first: Value| {
            json!({"messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [first, {"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}],
                "thinking": {"type": "enabled", "budget_tokens": 1024}})
        };
        let refused = |body: &Value| refusal(Format::AnthropicMessages, body, model);
        assert_eq!(refused(&turn(thinking(THOUGHT, &sign(model, THOUGHT)))), None);
        let altered = refused(&turn(thinking("altered", &sign(model, THOUGHT))));
        assert_eq!(altered.as_deref(), Some("messages.1.content.0: Invalid `signature` in `thinking` block"));
        let foreign = refused(&turn(thinking(THOUGHT, &sign("other", THOUGHT))));
        assert_eq!(foreign.as_deref(), Some("messages.1.content.0: Invalid `signature` in `thinking` block"));
        let unsigned = refused(&turn(json!({"type": "text", "text": "hm"}))).expect("refused");
        assert!(unsigned
            .starts_with("messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`"));

        let gemini = |part: Value| json!({"contents": [{"role": "model", "parts": [part]}]});
        let call = json!({"functionCall": {"name": "f", "args": {}}});
        let g3 = "gemini-3-pro-preview";
        let missing = refusal(Format::Gemini, &gemini(call.clone()), g3).expect("refused");
        assert!(
            missing.starts_with("Function call is missing a thought_signature in functionCall parts."),
            "{missing}"
        );
        assert_eq!(refusal(Format::Gemini, &gemini(call.clone()), "gemini-2.5-flash"), None, "2.5 checks nothing");
        for (signature, ok) in
            [(sign(g3, "f"), true), (SKIP_SIGNATURE.into(), true), (sign("gemini-3-flash", "f"), false)]
        {
            let mut part = call.clone();
            part["thoughtSignature"] = json!(signature);
            assert_eq!(refusal(Format::Gemini, &gemini(part), g3).is_none(), ok, "{signature}");
        }

        let item = |encrypted: Option<String>| {
            let mut item = json!({"type": "reasoning", "id": "rs_1", "summary": []});
            if let Some(e) = encrypted {
                item["encrypted_content"] = json!(e);
            }
            json!({"input": [item]})
        };
        assert_eq!(refusal(Format::OpenAiResponses, &item(Some(sign("gpt-5", "rs_1"))), "gpt-5"), None);
        let other = refusal(Format::OpenAiResponses, &item(Some(sign("o3", "rs_1"))), "gpt-5");
        assert_eq!(other.as_deref(), Some("The encrypted content for item rs_1 could not be verified."));
        let stored = refusal(Format::OpenAiResponses, &item(None), "gpt-5").expect("refused");
        assert!(
            stored.starts_with("Item with id 'rs_1' not found. Items are not persisted when `store` is set to false.")
        );
    }

    #[test]
    fn chat_servers_that_want_reasoning_back_refuse_a_tool_turn_without_it() {
        let model = "deepseek-reasoner";
        let history = |reasoning: Option<&str>| {
            let mut turn = json!({"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
            if let Some(text) = reasoning {
                turn["reasoning_content"] = json!(text);
            }
            vec![
                json!({"role": "user", "content": "q"}),
                turn,
                json!({"role": "tool", "tool_call_id": "call_1", "content": "r"}),
            ]
        };
        let own = chat_thought(model);
        for style in [ChatStyle::Deepseek, ChatStyle::Kimi, ChatStyle::Glm] {
            assert_eq!(chat_refusal(style, &history(Some(&own)), model), None, "{style:?}");
            let missing = chat_refusal(style, &history(None), model).expect("refused");
            assert!(missing.contains("index 1") || missing.starts_with("messages[1]"), "{missing}");
        }
        let other = history(Some(&chat_thought("kimi-k2-thinking")));
        assert_eq!(chat_refusal(ChatStyle::Deepseek, &other, model), None, "DeepSeek checks presence only");
        assert!(chat_refusal(ChatStyle::Glm, &other, model).is_some(), "GLM wants its own, unmodified");
        assert_eq!(chat_refusal(ChatStyle::Reasoning, &history(None), model), None);
        assert_eq!(chat_refusal(ChatStyle::Deepseek, &history(None)[..1], model), None, "no tool turn");
    }
}
