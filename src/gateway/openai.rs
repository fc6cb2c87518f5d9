//! OpenAI Chat Completions as a gateway client speaks it: `POST /v1/chat/completions`.
//!
//! Requests accept what the official SDK sends: `content` as a string, null or a list of text
//! parts, `developer` as a system turn, `max_completion_tokens` as `max_tokens`, tools as
//! `{type: "function", function}`. Fields the gateway has no use for (`top_p`, `user`,
//! `tool_choice`…) are ignored rather than refused, as compatible servers do; what it cannot
//! honour (images, `n` > 1) is refused by name. A stream is chunks of `chat.completion.chunk`
//! (the first carries the role), a chunk with `finish_reason`, a usage-only chunk when the client
//! asked with `stream_options.include_usage`, then `data: [DONE]`.

use serde_json::{json, Map, Value};

use super::field::{self, child};
use super::{sse, ClientCall, GatewayError, Meta};
use crate::chat::{Answer, ChatRequest, Delta, FinishReason, Message, Role, Tool, ToolCall, Usage};
use crate::format::openai_chat::wire_finish_reason;

pub(crate) fn parse_request(body: &Value) -> Result<ClientCall, GatewayError> {
    let o = field::object(body, "body")?;
    let model = field::string(o, "model", "", "the name of a route, e.g. \"chat\"")?.to_string();
    let stream = field::opt_bool(o, "stream", "")?;
    let include_usage = match field::opt(o, "stream_options") {
        None => false,
        Some(v) => field::opt_bool(field::object(v, "stream_options")?, "include_usage", "stream_options")?,
    };
    if let Some(n) = field::opt(o, "n") {
        if n.as_f64() != Some(1.0) {
            return Err(field::wrong("n", "1 (the gateway answers with one choice)", n));
        }
    }
    let list = match field::opt(o, "messages") {
        None => return Err(field::missing("messages", "a list of at least one message")),
        Some(v) => field::array(v, "messages", "a list of messages")?,
    };
    if list.is_empty() {
        return Err(GatewayError::invalid("messages must hold at least one message (got [])"));
    }
    let messages =
        list.iter().enumerate().map(|(i, m)| message(m, &format!("messages[{i}]"))).collect::<Result<_, _>>()?;
    let tools = match field::opt(o, "tools") {
        None => Vec::new(),
        Some(v) => field::array(v, "tools", "a list of tools")?
            .iter()
            .enumerate()
            .map(|(i, t)| tool(t, &format!("tools[{i}]")))
            .collect::<Result<_, _>>()?,
    };
    let max_tokens = match field::opt_tokens(o, "max_completion_tokens", "")? {
        Some(n) => Some(n),
        None => field::opt_tokens(o, "max_tokens", "")?,
    };
    let request = ChatRequest {
        messages,
        max_tokens,
        temperature: field::opt_temperature(o, "temperature", "")?,
        stop: field::opt_stop(o, "stop", "")?,
        tools,
        ..ChatRequest::default()
    };
    Ok(ClientCall { model, stream, include_usage, request })
}

fn message(v: &Value, path: &str) -> Result<Message, GatewayError> {
    let o = field::object(v, path)?;
    let role = match field::one_of(o, "role", path, &["system", "developer", "user", "assistant", "tool"])? {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => Role::Tool,
    };
    let mut m = Message::new(role, content(o, path)?);
    if role == Role::Assistant {
        if let Some(calls) = field::opt(o, "tool_calls") {
            let p = child(path, "tool_calls");
            m.tool_calls = field::array(calls, &p, "a list of tool calls")?
                .iter()
                .enumerate()
                .map(|(i, c)| tool_call(c, &format!("{p}[{i}]")))
                .collect::<Result<_, _>>()?;
        }
    }
    if role == Role::Tool {
        m.tool_call_id =
            Some(field::string(o, "tool_call_id", path, "the id of the tool call this message answers")?.to_string());
    }
    Ok(m)
}

/// `content`: a string, null, or a list of `{type: "text", text}` parts (joined).
fn content(o: &Map<String, Value>, path: &str) -> Result<String, GatewayError> {
    let p = child(path, "content");
    match field::opt(o, "content") {
        None => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for (i, part) in parts.iter().enumerate() {
                let pp = format!("{p}[{i}]");
                let po = field::object(part, &pp)?;
                let kind = field::string(po, "type", &pp, "\"text\"")?;
                if kind != "text" {
                    return Err(GatewayError::invalid(format!(
                        "{pp}.type must be \"text\" (got {}); the gateway forwards text only",
                        json!(kind)
                    )));
                }
                text.push_str(field::string(po, "text", &pp, "the part's text")?);
            }
            Ok(text)
        }
        Some(other) => Err(field::wrong(&p, "a string, null or a list of text parts", other)),
    }
}

fn tool_call(v: &Value, path: &str) -> Result<ToolCall, GatewayError> {
    let o = field::object(v, path)?;
    let id = field::string(o, "id", path, "the tool call's id")?.to_string();
    let fp = child(path, "function");
    let f = match field::opt(o, "function") {
        None => return Err(field::missing(&fp, "{name, arguments}")),
        Some(f) => field::object(f, &fp)?,
    };
    let name = field::string(f, "name", &fp, "the function's name")?.to_string();
    let arguments = field::opt_string(f, "arguments", &fp)?.unwrap_or("").to_string();
    Ok(ToolCall { id, name, arguments })
}

fn tool(v: &Value, path: &str) -> Result<Tool, GatewayError> {
    let o = field::object(v, path)?;
    field::one_of(o, "type", path, &["function"])?;
    let fp = child(path, "function");
    let f = match field::opt(o, "function") {
        None => return Err(field::missing(&fp, "{name, description?, parameters?}")),
        Some(f) => field::object(f, &fp)?,
    };
    Ok(Tool {
        name: field::string(f, "name", &fp, "the function's name")?.to_string(),
        description: field::opt_string(f, "description", &fp)?.map(str::to_string),
        parameters: schema(field::opt(f, "parameters"), &child(&fp, "parameters"))?,
    })
}

/// A tool's JSON Schema; omitted means an object with no properties.
pub(crate) fn schema(v: Option<&Value>, path: &str) -> Result<Value, GatewayError> {
    match v {
        None => Ok(json!({ "type": "object", "properties": {} })),
        Some(s @ Value::Object(_)) => Ok(s.clone()),
        Some(other) => Err(field::wrong(path, "a JSON Schema object", other)),
    }
}

fn usage(u: Usage) -> Value {
    let (input, output) = super::token_counts(u);
    json!({
        "prompt_tokens": input,
        "completion_tokens": output,
        "total_tokens": input.saturating_add(output),
    })
}

/// A tool call's id as given, or one made up when the provider gave none (Gemini).
fn call_id(meta: &Meta, index: u32, id: &str) -> String {
    if id.is_empty() {
        format!("call_{}_{index}", meta.id.trim_start_matches("chatcmpl-"))
    } else {
        id.to_string()
    }
}

pub(crate) fn answer_body(meta: &Meta, answer: &Answer) -> String {
    let mut message = json!({
        "role": "assistant",
        "content": if answer.text.is_empty() && !answer.tool_calls.is_empty() { Value::Null } else { json!(answer.text) },
        "refusal": null,
    });
    if !answer.reasoning.is_empty() {
        message["reasoning_content"] = json!(answer.reasoning);
    }
    if !answer.tool_calls.is_empty() {
        let calls: Vec<Value> = answer
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({
                    "id": call_id(meta, i as u32, &c.id),
                    "type": "function",
                    "function": { "name": c.name, "arguments": c.arguments },
                })
            })
            .collect();
        message["tool_calls"] = json!(calls);
    }
    json!({
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [{ "index": 0, "message": message, "logprobs": null, "finish_reason": wire_finish_reason(&answer.finish_reason) }],
        "usage": usage(answer.usage),
    })
    .to_string()
}

#[derive(Debug)]
pub struct StreamEncoder {
    pub(crate) meta: Meta,
    include_usage: bool,
    started: bool,
    /// Tool-call indices whose opening fragment (id, name) was sent.
    opened_calls: Vec<u32>,
}

impl StreamEncoder {
    pub fn new(meta: Meta, include_usage: bool) -> StreamEncoder {
        StreamEncoder { meta, include_usage, started: false, opened_calls: Vec::new() }
    }

    fn chunk(&self, delta: Value, finish: Option<&str>, out: &mut String) {
        let mut chunk = json!({
            "id": self.meta.id,
            "object": "chat.completion.chunk",
            "created": self.meta.created,
            "model": self.meta.model,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        if self.include_usage {
            chunk["usage"] = Value::Null;
        }
        sse(out, None, &chunk);
    }

    /// The first chunk carries the role, as OpenAI's do.
    fn start(&mut self, out: &mut String) {
        if !self.started {
            self.started = true;
            self.chunk(json!({ "role": "assistant", "content": "" }), None, out);
        }
    }

    pub fn delta(&mut self, delta: &Delta, out: &mut String) {
        self.start(out);
        match delta {
            Delta::Text { text } => self.chunk(json!({ "content": text }), None, out),
            Delta::Reasoning { text } => self.chunk(json!({ "reasoning_content": text }), None, out),
            Delta::ToolCall { index, id, name, arguments } => {
                let mut call = json!({ "index": index, "function": { "arguments": arguments } });
                if !self.opened_calls.contains(index) {
                    self.opened_calls.push(*index);
                    call["id"] = json!(call_id(&self.meta, *index, id.as_deref().unwrap_or("")));
                    call["type"] = json!("function");
                    call["function"]["name"] = json!(name.as_deref().unwrap_or(""));
                }
                self.chunk(json!({ "tool_calls": [call] }), None, out);
            }
            Delta::Done { finish_reason, usage, .. } => self.finish(finish_reason, *usage, out),
            // The engine never delivers a skipped frame (it becomes a warning event) nor a usage
            // report (it stays on the attempt's leg).
            Delta::Skipped { .. } | Delta::Usage { .. } => {}
        }
    }

    pub fn finish(&mut self, finish: &FinishReason, u: Usage, out: &mut String) {
        self.start(out);
        self.chunk(json!({}), Some(wire_finish_reason(finish)), out);
        if self.include_usage {
            let chunk = json!({
                "id": self.meta.id,
                "object": "chat.completion.chunk",
                "created": self.meta.created,
                "model": self.meta.model,
                "choices": [],
                "usage": usage(u),
            });
            sse(out, None, &chunk);
        }
        out.push_str("data: [DONE]\n\n");
    }

    /// An error chunk (the SDK throws on a chunk with `error`), and no `[DONE]`.
    pub fn fail(&mut self, error: &GatewayError, out: &mut String) {
        sse(out, None, &error.body(super::ClientFormat::OpenAi));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::{parse_request as parse, ClientFormat};

    fn meta() -> Meta {
        Meta { id: "chatcmpl-1".into(), created: 9, model: "m".into() }
    }

    fn err(body: Value) -> String {
        parse(ClientFormat::OpenAi, &body.to_string()).unwrap_err().message
    }

    #[test]
    fn parses_what_the_sdk_sends() {
        let body = json!({
            "model": "chat", "stream": true, "stream_options": {"include_usage": true},
            "max_completion_tokens": 64, "temperature": 0.5, "stop": "END", "top_p": 1, "user": "u",
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "42"},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        });
        let call = parse(ClientFormat::OpenAi, &body.to_string()).unwrap();
        assert_eq!((call.model.as_str(), call.stream, call.include_usage), ("chat", true, true));
        let r = &call.request;
        assert_eq!((r.max_tokens, r.temperature, r.stop.clone()), (Some(64), Some(0.5), vec!["END".to_string()]));
        assert_eq!(r.messages[0], Message::new(Role::System, "be brief"));
        assert_eq!(r.messages[1].text(), "ab");
        assert_eq!(
            r.messages[2].tool_calls,
            vec![ToolCall { id: "call_1".into(), name: "f".into(), arguments: "{}".into() }]
        );
        assert_eq!(r.messages[3].tool_call_id.as_deref(), Some("call_1"));
        assert_eq!(r.tools[0].name, "f");
    }

    #[test]
    fn names_the_field_in_400s() {
        let user = json!({"role": "user", "content": "hi"});
        assert_eq!(err(json!({"messages": [user]})), "model is missing; give the name of a route, e.g. \"chat\"");
        assert_eq!(
            err(json!({"model": 3, "messages": [user]})),
            "model must be the name of a route, e.g. \"chat\" (got 3)"
        );
        assert_eq!(err(json!({"model": "m"})), "messages is missing; give a list of at least one message");
        assert_eq!(err(json!({"model": "m", "messages": []})), "messages must hold at least one message (got [])");
        assert_eq!(
            err(json!({"model": "m", "messages": [user, user, {"role": "robot", "content": "x"}]})),
            "messages[2].role must be one of \"system\", \"developer\", \"user\", \"assistant\", \"tool\" (got \"robot\")"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [{"role": "tool", "content": "x"}]})),
            "messages[0].tool_call_id is missing; give the id of the tool call this message answers"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]})),
            "messages[0].content[0].type must be \"text\" (got \"image_url\"); the gateway forwards text only"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "max_tokens": 0})),
            "max_tokens must be a positive whole number of tokens (got 0)"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "stream": "yes"})),
            "stream must be true or false (got \"yes\")"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "tools": [{"type": "function"}]})),
            "tools[0].function is missing; give {name, description?, parameters?}"
        );
        assert_eq!(
            err(json!({"model": "m", "messages": [user], "n": 2})),
            "n must be 1 (the gateway answers with one choice) (got 2)"
        );
    }

    #[test]
    fn whole_answer() {
        let answer = Answer {
            text: String::new(),
            reasoning: String::new(),
            tool_calls: vec![ToolCall { id: String::new(), name: "f".into(), arguments: "{\"a\":1}".into() }],
            finish_reason: FinishReason::ToolCalls,
            usage: Usage { input_tokens: Some(3), output_tokens: Some(4) },
            model: None,
        };
        let body: Value = serde_json::from_str(&answer_body(&meta(), &answer)).unwrap();
        assert_eq!(body["object"], "chat.completion");
        assert_eq!(body["choices"][0]["message"]["content"], Value::Null);
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["id"], "call_1_0");
        assert_eq!(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
        assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(body["usage"], json!({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}));
    }

    fn frames(out: &str) -> Vec<String> {
        out.split("\n\n").filter(|f| !f.is_empty()).map(|f| f.trim_start_matches("data: ").to_string()).collect()
    }

    #[test]
    fn stream_with_role_tool_calls_usage_and_done() {
        let mut e = StreamEncoder::new(meta(), true);
        let mut out = String::new();
        e.delta(&Delta::Text { text: "Hi".into() }, &mut out);
        e.delta(
            &Delta::ToolCall { index: 0, id: Some("toolu_1".into()), name: Some("f".into()), arguments: String::new() },
            &mut out,
        );
        e.delta(&Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() }, &mut out);
        e.finish(&FinishReason::ToolCalls, Usage { input_tokens: Some(1), output_tokens: Some(2) }, &mut out);
        let f = frames(&out);
        let chunk = |i: usize| serde_json::from_str::<Value>(&f[i]).unwrap();
        assert_eq!(chunk(0)["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
        assert_eq!(chunk(1)["choices"][0]["delta"], json!({"content": "Hi"}));
        assert_eq!(
            chunk(2)["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "id": "toolu_1", "type": "function", "function": {"name": "f", "arguments": ""}})
        );
        assert_eq!(
            chunk(3)["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "function": {"arguments": "{}"}})
        );
        assert_eq!(chunk(4)["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(chunk(5)["choices"], json!([]));
        assert_eq!(chunk(5)["usage"]["total_tokens"], 3);
        assert_eq!(f[6], "[DONE]");
        assert_eq!(f.len(), 7);
    }

    #[test]
    fn failed_stream_has_an_error_and_no_done() {
        let mut e = StreamEncoder::new(meta(), false);
        let mut out = String::new();
        e.delta(&Delta::Text { text: "partial".into() }, &mut out);
        e.fail(&GatewayError::new(502, "broken"), &mut out);
        let f = frames(&out);
        let last: Value = serde_json::from_str(f.last().unwrap()).unwrap();
        assert_eq!(last["error"]["message"], "broken");
        assert!(!out.contains("[DONE]"));
        assert!(!out.contains("\"usage\""));
    }
}
