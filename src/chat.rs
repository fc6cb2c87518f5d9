//! The normalized request, answer and stream deltas that every wire format translates to and from.
//!
//! A fallback chain may mix providers, so nothing above `format` ever sees a provider's own shape:
//! the caller writes one [`ChatRequest`], each format builds its provider's body from it, and every
//! provider's answer comes back as the same [`Answer`] or the same sequence of [`Delta`]s.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::value::{child, parse_json, read_number, read_whole, show, show_kind, ConfigError, Obj};

/// One chat turn, in the shape the JS API and the gateway accept.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of a tool call, answering `tool_call_id`.
    Tool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    /// Tool calls an assistant message made (to replay a conversation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `role: "tool"`: the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Message { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None }
    }
}

/// A function the model may call; `parameters` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub parameters: serde_json::Value,
}

impl ChatRequest {
    /// The non-empty system messages' texts, in order: the formats that carry the system prompt
    /// apart from the turns (Anthropic, Responses, Gemini) send these.
    pub fn system_prompts(&self) -> Vec<&str> {
        self.messages
            .iter()
            .filter(|m| m.role == Role::System && !m.content.is_empty())
            .map(|m| m.content.as_str())
            .collect()
    }

    /// This request with `text` as the start of the model's answer (a prefill), for a member to
    /// continue: appended to a final assistant message that made no tool calls, else a new final
    /// assistant message. Every format sends a final assistant message as its provider reads a
    /// prefill. Trailing whitespace is the caller's to trim (Anthropic refuses it).
    pub fn with_prefill(&self, text: &str) -> ChatRequest {
        let mut request = self.clone();
        match request.messages.last_mut() {
            Some(last) if last.role == Role::Assistant && last.tool_calls.is_empty() => last.content.push_str(text),
            _ => request.messages.push(Message::new(Role::Assistant, text)),
        }
        request
    }

    /// Reads the JS API's request document, with the config's kind of message for a mistake:
    /// the field by path (`request.messages[1].role`), what was wrong, what would be right.
    pub fn from_json(text: &str) -> Result<ChatRequest, ConfigError> {
        ChatRequest::from_value(&parse_json(text, "request")?)
    }

    /// Reads the request document already parsed (or converted from a JS value).
    pub fn from_value(value: &Value) -> Result<ChatRequest, ConfigError> {
        let o = Obj::new(value, "request", &["messages", "maxTokens", "temperature", "stop", "tools"])?;
        let messages = match o.get("messages") {
            Some(Value::Array(list)) if !list.is_empty() => list
                .iter()
                .enumerate()
                .map(|(i, m)| read_message(m, &format!("request.messages[{i}]")))
                .collect::<Result<_, _>>()?,
            Some(Value::Array(_)) => {
                return Err(ConfigError::new("request.messages", "must hold at least one message"))
            }
            None => {
                return Err(ConfigError::new(
                    "request.messages",
                    r#"is missing; give a list such as [{"role": "user", "content": "Hello"}]"#,
                ))
            }
            Some(v) => {
                return Err(ConfigError::new(
                    "request.messages",
                    format!("must be a list of messages (got {})", show_kind(v)),
                ))
            }
        };
        let max_tokens = match o.get("maxTokens") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_whole(v, "request.maxTokens", "a whole number", 1, u32::MAX.into())? as u32),
        };
        let temperature = match o.get("temperature") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_number(v, "request.temperature", "a number", (0.0, 2.0), "")?),
        };
        let stop = match o.get("stop") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    s.as_str().map(str::to_string).ok_or_else(|| {
                        ConfigError::new(format!("request.stop[{i}]"), format!("must be a string (got {})", show(s)))
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(ConfigError::new(
                    "request.stop",
                    format!("must be a string or a list of strings (got {})", show_kind(v)),
                ))
            }
        };
        let tools = match o.get("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, t)| read_tool(t, &format!("request.tools[{i}]")))
                .collect::<Result<_, _>>()?,
            Some(v) => {
                return Err(ConfigError::new(
                    "request.tools",
                    format!("must be a list of tools (got {})", show_kind(v)),
                ))
            }
        };
        Ok(ChatRequest { messages, max_tokens, temperature, stop, tools })
    }
}

fn read_message(v: &Value, path: &str) -> Result<Message, ConfigError> {
    let o = Obj::new(v, path, &["role", "content", "toolCalls", "toolCallId"])?;
    const ROLES: &str = r#"one of "system", "user", "assistant", "tool""#;
    let role = match o.required_str("role", ROLES)? {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(ConfigError::new(
                child(path, "role"),
                format!("must be {ROLES} (got {})", show(&Value::from(other))),
            ))
        }
    };
    let content = match o.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "content"),
                format!("must be a string (got {})", show_kind(other)),
            ))
        }
    };
    let tool_calls = match o.get("toolCalls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = format!("{}[{i}]", child(path, "toolCalls"));
                let c = Obj::new(c, &p, &["id", "name", "arguments"])?;
                Ok(ToolCall {
                    id: c.required_str("id", "the call's id, as the model gave it")?.to_string(),
                    name: c.required_str("name", "the function's name")?.to_string(),
                    arguments: c.required_str("arguments", r#"the arguments as JSON text, e.g. "{}""#)?.to_string(),
                })
            })
            .collect::<Result<_, ConfigError>>()?,
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "toolCalls"),
                format!("must be a list (got {})", show_kind(other)),
            ))
        }
    };
    let tool_call_id = match o.get("toolCallId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "toolCallId"),
                format!("must be a non-empty string (got {})", show(other)),
            ))
        }
    };
    if role == Role::Tool && tool_call_id.is_none() {
        return Err(ConfigError::new(
            child(path, "toolCallId"),
            r#"is missing; a "tool" message answers one call: give its id"#,
        ));
    }
    Ok(Message { role, content, tool_calls, tool_call_id })
}

fn read_tool(v: &Value, path: &str) -> Result<Tool, ConfigError> {
    let o = Obj::new(v, path, &["name", "description", "parameters"])?;
    let name = o.required_str("name", "the function's name")?.to_string();
    let description = match o.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "description"),
                format!("must be a string (got {})", show_kind(other)),
            ))
        }
    };
    let parameters = match o.get("parameters") {
        None | Some(Value::Null) => serde_json::json!({ "type": "object", "properties": {} }),
        Some(p @ Value::Object(_)) => p.clone(),
        Some(other) => {
            return Err(ConfigError::new(
                child(path, "parameters"),
                format!("must be a JSON Schema object (got {})", show_kind(other)),
            ))
        }
    };
    Ok(Tool { name, description, parameters })
}

/// A complete tool call: `arguments` is the JSON text the model produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// Token counts as the provider reported them. A count it did not report, or reported as no
/// count (fractional, negative, beyond 2^53 - 1, not a number), is unknown: `None`, omitted from
/// the JSON, so an odd usage frame never fails an answer whose text was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
}

/// Why the model stopped, normalized across providers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
    ContentFilter,
    /// A provider reason with no normalized equivalent, kept verbatim.
    #[serde(untagged)]
    Other(String),
}

/// A whole, non-streamed answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub text: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub usage: Usage,
    /// The model the provider says answered, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// One normalized piece of a streamed answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    Text {
        text: String,
    },
    Reasoning {
        text: String,
    },
    /// A fragment of a tool call; `index` groups the fragments of one call.
    #[serde(rename_all = "camelCase")]
    ToolCall {
        index: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        arguments: String,
    },
    /// The stream's successful end, carrying what the provider reported: why it stopped, the
    /// token counts, and the model that answered when the stream named it.
    #[serde(rename_all = "camelCase")]
    Done {
        finish_reason: FinishReason,
        usage: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// A malformed frame the decoder skipped; `reason` says what was wrong with it. Not part of
    /// the answer: the engine turns it into a `warning` event, or fails the attempt when the
    /// target sets `strictFrames` or too many frames were skipped. Never delivered.
    Skipped {
        reason: String,
    },
    /// The token counts the provider reported before the end, as a cumulative snapshot (each
    /// emitted only when it changed). Never delivered to a reader: the engine keeps it on the
    /// attempt's leg, so a stream cut before its end still records what it was billed.
    Usage {
        usage: Usage,
    },
}

impl Delta {
    /// Visible content ends the first-token wait, resets the idle timer and commits the stream:
    /// a non-empty text, reasoning or tool-argument fragment. Role-only chunks, pings and
    /// usage reports are not content.
    pub fn is_visible(&self) -> bool {
        match self {
            Delta::Text { text } | Delta::Reasoning { text } => !text.is_empty(),
            Delta::ToolCall { arguments, .. } => !arguments.is_empty(),
            Delta::Done { .. } | Delta::Skipped { .. } | Delta::Usage { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_js_request_shape() {
        let r = ChatRequest::from_json(
            r#"{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                 {"role": "assistant", "toolCalls": [{"id": "c1", "name": "f", "arguments": "{}"}]},
                 {"role": "tool", "toolCallId": "c1", "content": "42"}],
                "maxTokens": 32, "temperature": 0.2, "stop": "END", "tools": [{"name": "f"}]}"#,
        )
        .unwrap();
        assert_eq!(r.messages.len(), 4);
        assert_eq!(r.messages[2].tool_calls[0].name, "f");
        assert_eq!((r.max_tokens, r.temperature, r.stop.clone()), (Some(32), Some(0.2), vec!["END".to_string()]));
        assert_eq!(r.tools[0].parameters, serde_json::json!({"type": "object", "properties": {}}));
    }

    #[test]
    fn mistakes_name_their_field() {
        let cases = [
            (r#"{}"#, r#"request.messages is missing; give a list such as [{"role": "user", "content": "Hello"}]"#),
            (r#"{"messages": []}"#, "request.messages must hold at least one message"),
            (
                r#"{"messages": [{"role": "user", "content": "a"}, {"role": "robot"}]}"#,
                r#"request.messages[1].role must be one of "system", "user", "assistant", "tool" (got "robot")"#,
            ),
            (
                r#"{"messages": [{"role": "user", "content": 5}]}"#,
                "request.messages[0].content must be a string (got 5)",
            ),
            (
                r#"{"messages": [{"role": "tool", "content": "x"}]}"#,
                r#"request.messages[0].toolCallId is missing; a "tool" message answers one call: give its id"#,
            ),
            (
                r#"{"messages": [{"role": "user"}], "max_tokens": 5}"#,
                r#"request.max_tokens is not a known field; did you mean "maxTokens"?"#,
            ),
            (
                r#"{"messages": [{"role": "user"}], "maxTokens": 0}"#,
                "request.maxTokens must be a whole number from 1 to 4294967295 (got 0)",
            ),
            (
                r#"{"messages": [{"role": "user"}], "temperature": 3}"#,
                "request.temperature must be a number from 0 to 2 (got 3)",
            ),
            (
                r#"{"messages": [{"role": "user"}], "maxTokens": 1.5}"#,
                "request.maxTokens must be a whole number from 1 to 4294967295 (got 1.5)",
            ),
            (
                r#"{"messages": [{"role": "user"}], "maxTokens": 4294967296}"#,
                "request.maxTokens must be a whole number from 1 to 4294967295 (got 4294967296)",
            ),
            (
                r#"{"messages": [{"role": "user"}], "temperature": "hot"}"#,
                r#"request.temperature must be a number from 0 to 2 (got "hot")"#,
            ),
            (r#"{"messages": [{"role": "user"}], "stop": [1]}"#, "request.stop[0] must be a string (got 1)"),
            (
                r#"{"messages": [{"role": "user"}], "tools": [{"name": "f", "parameters": []}]}"#,
                "request.tools[0].parameters must be a JSON Schema object (got a list)",
            ),
        ];
        for (json, message) in cases {
            assert_eq!(ChatRequest::from_json(json).unwrap_err().message, message, "for {json}");
        }
    }

    #[test]
    fn over_deep_text_names_the_request() {
        let deep = format!(r#"{{"messages": [{{"role": "user"}}], "tools": {}{}}}"#, "[".repeat(200), "]".repeat(200));
        let e = ChatRequest::from_json(&deep).unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.message.as_str()),
            ("request", "request is nested too deeply (more than 128 levels of objects and lists)")
        );
    }

    #[test]
    fn a_prefill_ends_the_request_as_an_assistant_message() {
        let user = Message::new(Role::User, "Hi");
        let assistant = Message::new(Role::Assistant, "Sure: ");
        let call = ToolCall { id: "c1".into(), name: "f".into(), arguments: "{}".into() };
        let calling = Message { tool_calls: vec![call], ..Message::new(Role::Assistant, "Let me look.") };
        let tool = Message { tool_call_id: Some("c1".into()), ..Message::new(Role::Tool, "42") };
        let prefill = Message::new(Role::Assistant, "The answer is");
        let cases = [
            ("after a user turn", vec![user.clone()], vec![user.clone(), prefill.clone()]),
            (
                "after an assistant turn: appended",
                vec![user.clone(), assistant.clone()],
                vec![user.clone(), Message::new(Role::Assistant, "Sure: The answer is")],
            ),
            (
                "after tool calls: a turn of its own",
                vec![user.clone(), calling.clone()],
                vec![user.clone(), calling.clone(), prefill.clone()],
            ),
            (
                "after a tool result",
                vec![user.clone(), calling.clone(), tool.clone()],
                vec![user.clone(), calling.clone(), tool.clone(), prefill.clone()],
            ),
            ("of an empty request", vec![], vec![prefill.clone()]),
        ];
        for (case, messages, expected) in cases {
            let request = ChatRequest { messages, max_tokens: Some(9), stop: vec!["END".into()], ..Default::default() };
            let prefilled = request.with_prefill("The answer is");
            assert_eq!(prefilled.messages, expected, "{case}");
            assert_eq!((prefilled.max_tokens, &prefilled.stop), (Some(9), &request.stop), "{case}: the rest is kept");
        }
    }

    #[test]
    fn reads_a_parsed_value_as_it_reads_text() {
        let value = serde_json::json!({"messages": [{"role": "user", "content": "Hi"}], "maxTokens": 8});
        let request = ChatRequest::from_value(&value).unwrap();
        assert_eq!(request, ChatRequest::from_json(&value.to_string()).unwrap());
        assert_eq!(request.max_tokens, Some(8));
        let e = ChatRequest::from_value(&serde_json::json!([])).unwrap_err();
        assert_eq!(e.message, "request must be an object (got a list)");
    }
}
