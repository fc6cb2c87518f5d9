//! The JS API's request document read into a [`ChatRequest`], by hand rather than derived, so a
//! mistake names its field by path (`request.messages[1].content[0].mediaType`), what was wrong
//! and what would be right, as config mistakes do.

use serde_json::{Map, Value};

use super::{
    ChatRequest, Effort, Message, Opaque, Part, ReasoningKind, ReasoningPart, ReasoningRequest, ReasoningState,
    ResponseFormat, Role, Source, Tool, ToolCall, ToolChoice, UnmetChoice,
};
use crate::value::{
    child, index_path, parse_json, read_number, read_whole, show, show_kind, wrong, wrong_value, FieldError, Obj,
};

/// The largest whole number a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

impl ChatRequest {
    /// Reads the JS API's request document, with the config's kind of message for a mistake:
    /// the field by path (`request.messages[1].role`), what was wrong, what would be right.
    pub fn from_json(text: &str) -> Result<ChatRequest, FieldError> {
        ChatRequest::from_value(&parse_json(text, "request")?)
    }

    /// Reads the request document already parsed (or converted from a JS value).
    pub fn from_value(value: &Value) -> Result<ChatRequest, FieldError> {
        let o = Obj::new(
            value,
            "request",
            &[
                "messages",
                "maxTokens",
                "temperature",
                "topP",
                "seed",
                "stop",
                "tools",
                "toolChoice",
                "parallelToolCalls",
                "responseFormat",
                "reasoning",
            ],
        )?;
        let messages = match o.get("messages") {
            Some(Value::Array(list)) if !list.is_empty() => list
                .iter()
                .enumerate()
                .map(|(i, m)| read_message(m, &index_path("request.messages", i)))
                .collect::<Result<_, _>>()?,
            Some(Value::Array(_)) => return Err(FieldError::new("request.messages", "must hold at least one message")),
            None => {
                return Err(FieldError::new(
                    "request.messages",
                    r#"is missing; give a list such as [{"role": "user", "content": "Hello"}]"#,
                ))
            }
            Some(v) => return Err(wrong("request.messages", "a list of messages", v)),
        };
        let max_tokens = match o.get("maxTokens") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_whole(v, "request.maxTokens", "a whole number", 1, u32::MAX.into())? as u32),
        };
        let temperature = match o.get("temperature") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_number(v, "request.temperature", "a number", (0.0, 2.0), "")?),
        };
        let top_p = match o.get("topP") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_number(v, "request.topP", "a number", (0.0, 1.0), "")?),
        };
        let seed = match o.get("seed") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_seed(v)?),
        };
        let stop = match o.get("stop") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    s.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| wrong_value(&index_path("request.stop", i), "a string", s))
                })
                .collect::<Result<_, _>>()?,
            Some(v) => return Err(wrong("request.stop", "a string or a list of strings", v)),
        };
        let tools: Vec<Tool> = match o.get("tools") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .map(|(i, t)| read_tool(t, &index_path("request.tools", i)))
                .collect::<Result<_, _>>()?,
            Some(v) => return Err(wrong("request.tools", "a list of tools", v)),
        };
        let tool_choice = match o.get("toolChoice") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_tool_choice(v, &tools)?),
        };
        let parallel_tool_calls = match o.get("parallelToolCalls") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                return Err(wrong_value(
                    "request.parallelToolCalls",
                    "true (the model may call several tools at once) or false (at most one)",
                    other,
                ))
            }
        };
        let response_format = match o.get("responseFormat") {
            None | Some(Value::Null) => None,
            Some(v) => read_response_format(v)?,
        };
        let reasoning = match o.get("reasoning") {
            None | Some(Value::Null) => None,
            Some(v) => Some(read_reasoning(v)?),
        };
        Ok(ChatRequest {
            messages,
            max_tokens,
            temperature,
            top_p,
            seed,
            stop,
            tools,
            tool_choice,
            parallel_tool_calls,
            response_format,
            reasoning,
            passthrough: None,
        })
    }
}

/// A `seed`: a whole number a JS number holds exactly.
fn read_seed(v: &Value) -> Result<i64, FieldError> {
    let whole = match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|x| x.fract() == 0.0).map(|x| x as i64)),
        _ => None,
    };
    whole.filter(|n| n.abs() <= MAX_SAFE_INTEGER).ok_or_else(|| {
        FieldError::new(
            "request.seed",
            format!("must be a whole number from -{MAX_SAFE_INTEGER} to {MAX_SAFE_INTEGER} (got {})", show(v)),
        )
    })
}

fn read_tool_choice(v: &Value, tools: &[Tool]) -> Result<ToolChoice, FieldError> {
    const PATH: &str = "request.toolChoice";
    let choice = match v {
        Value::String(s) if s == "auto" => ToolChoice::Auto,
        Value::String(s) if s == "none" => ToolChoice::None,
        Value::String(s) if s == "required" => ToolChoice::Required,
        Value::Object(_) => {
            let o = Obj::new(v, PATH, &["name"])?;
            ToolChoice::Tool { name: o.required_str("name", "the name of one of request.tools")?.to_string() }
        }
        other => {
            return Err(FieldError::new(
                PATH,
                format!(r#"must be "auto", "none", "required" or {{"name": "<a tool's name>"}} (got {})"#, show(other)),
            ))
        }
    };
    match choice.unmet_by(tools) {
        Some(UnmetChoice::NoTools) => Err(FieldError::new(
            PATH,
            r#"is "required" but request.tools is empty; give the tools the model must choose from"#,
        )),
        Some(UnmetChoice::UnknownTool(name)) => {
            let known: Vec<String> = tools.iter().map(|t| show(&Value::from(t.name.as_str()))).collect();
            let hint = if known.is_empty() {
                "request.tools is empty; give the tool there too".to_string()
            } else {
                format!("give one of {}", known.join(", "))
            };
            Err(FieldError::new(
                format!("{PATH}.name"),
                format!("names no tool in request.tools (got {}); {hint}", show(&Value::from(name))),
            ))
        }
        None => Ok(choice),
    }
}

/// `responseFormat`; `{type: "text"}` is free text, `None`.
fn read_response_format(v: &Value) -> Result<Option<ResponseFormat>, FieldError> {
    const PATH: &str = "request.responseFormat";
    const KINDS: &str = r#"{"type": "json"}, {"type": "json", "schema": {...}} or {"type": "text"}"#;
    let kind = match v {
        Value::Object(map) => map.get("type"),
        other => return Err(wrong(PATH, KINDS, other)),
    };
    match kind.and_then(Value::as_str) {
        Some("text") => {
            Obj::new(v, PATH, &["type"])?;
            Ok(None)
        }
        Some("json") => {
            let o = Obj::new(v, PATH, &["type", "schema", "name", "description", "strict"])?;
            let schema = match o.get("schema") {
                None | Some(Value::Null) => None,
                Some(s @ Value::Object(_)) => Some(s.clone()),
                Some(other) => return Err(wrong(&o.path_of("schema"), "a JSON Schema object", other)),
            };
            let name = match o.get("name") {
                None | Some(Value::Null) => None,
                Some(Value::String(s))
                    if (1..=64).contains(&s.len())
                        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
                {
                    Some(s.clone())
                }
                Some(other) => return Err(wrong_value(&o.path_of("name"), "1 to 64 letters, digits, _ or -", other)),
            };
            let description = match o.get("description") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => return Err(wrong(&o.path_of("description"), "a string", other)),
            };
            let strict = match o.get("strict") {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(other) => {
                    return Err(wrong_value(&o.path_of("strict"), "true (enforce the schema exactly) or false", other))
                }
            };
            Ok(Some(ResponseFormat::Json { schema, name, description, strict }))
        }
        None if kind.is_none() => Err(FieldError::new(child(PATH, "type"), r#"is missing; give "json" or "text""#)),
        _ => Err(FieldError::new(
            child(PATH, "type"),
            format!(r#"must be "json" or "text" (got {})"#, show(kind.unwrap_or(&Value::Null))),
        )),
    }
}

fn read_message(v: &Value, path: &str) -> Result<Message, FieldError> {
    let o = Obj::new(v, path, &["role", "content", "toolCalls", "toolCallId"])?;
    const ROLES: &str = r#"one of "system", "user", "assistant", "tool""#;
    let role = match o.required_str("role", ROLES)? {
        "system" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => return Err(wrong_value(&child(path, "role"), ROLES, &Value::from(other))),
    };
    let mut reasoning = Vec::new();
    let content = match o.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) if s.is_empty() => Vec::new(),
        Some(Value::String(s)) => vec![Part::Text { text: s.clone() }],
        Some(Value::Array(parts)) => {
            let mut content = Vec::new();
            for (i, p) in parts.iter().enumerate() {
                let part_path = format!("{}[{i}]", child(path, "content"));
                if p.get("type").and_then(Value::as_str) == Some("reasoning") {
                    reasoning.push(read_reasoning_part(p, &part_path, role)?);
                } else {
                    content.push(read_part(p, &part_path, role)?);
                }
            }
            content
        }
        Some(other) => return Err(wrong(&child(path, "content"), "a string or a list of parts", other)),
    };
    let tool_calls = match o.get("toolCalls") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = format!("{}[{i}]", child(path, "toolCalls"));
                let c = Obj::new(c, &p, &["id", "name", "arguments", "state"])?;
                Ok(ToolCall {
                    id: c.required_str("id", "the call's id, as the model gave it")?.to_string(),
                    name: c.required_str("name", "the function's name")?.to_string(),
                    arguments: c.required_str("arguments", r#"the arguments as JSON text, e.g. "{}""#)?.to_string(),
                    state: read_opt_state(&c)?,
                })
            })
            .collect::<Result<_, FieldError>>()?,
        Some(other) => return Err(wrong(&child(path, "toolCalls"), "a list", other)),
    };
    let tool_call_id = match o.get("toolCallId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(other) => return Err(wrong_value(&child(path, "toolCallId"), "a non-empty string", other)),
    };
    if role == Role::Tool && tool_call_id.is_none() {
        return Err(FieldError::new(
            child(path, "toolCallId"),
            r#"is missing; a "tool" message answers one call: give its id"#,
        ));
    }
    Ok(Message { role, content, tool_calls, tool_call_id, reasoning })
}

/// `reasoning`: `{effort?, budgetTokens?, summary?}`.
fn read_reasoning(v: &Value) -> Result<ReasoningRequest, FieldError> {
    let o = Obj::new(v, "request.reasoning", &["effort", "budgetTokens", "summary"])?;
    let effort = match o.get("effort") {
        None | Some(Value::Null) => None,
        Some(v) => Some(Effort::ALL.into_iter().find(|e| v.as_str() == Some(e.as_str())).ok_or_else(|| {
            FieldError::new(
                o.path_of("effort"),
                format!(r#"must be "minimal", "low", "medium" or "high" (got {})"#, show(v)),
            )
        })?),
    };
    let budget_tokens = match o.get("budgetTokens") {
        None | Some(Value::Null) => None,
        Some(v) => {
            Some(read_whole(v, &o.path_of("budgetTokens"), "a whole number of tokens", 1, u32::MAX.into())? as u32)
        }
    };
    let summary = match o.get("summary") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => {
            return Err(wrong_value(
                &o.path_of("summary"),
                "true (ask for the reasoning's summary as text) or false",
                other,
            ))
        }
    };
    Ok(ReasoningRequest { effort, budget_tokens, summary })
}

/// A `{type: "reasoning", text, raw?, state?}` part, which only an assistant message holds.
fn read_reasoning_part(v: &Value, path: &str, role: Role) -> Result<ReasoningPart, FieldError> {
    let o = Obj::new(v, path, &["type", "text", "raw", "state"])?;
    if role != Role::Assistant {
        return Err(FieldError::new(
            path,
            format!("is reasoning, but only assistant messages carry it (this is {} message)", role.with_article()),
        ));
    }
    let text = match o.get("text") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => return Err(wrong(&o.path_of("text"), "a string", other)),
    };
    let kind = match o.get("raw") {
        None | Some(Value::Null | Value::Bool(false)) => ReasoningKind::Summary,
        Some(Value::Bool(true)) => ReasoningKind::Raw,
        Some(other) => {
            let expected = "true (the text is the model's raw reasoning) or false (a summary of it)";
            return Err(wrong(&o.path_of("raw"), expected, other));
        }
    };
    Ok(ReasoningPart { text, kind, state: read_opt_state(&o)? })
}

/// The `state` of a reasoning part or a tool call, as an answer gave it: `{format, model}` and
/// one of `signature`, `redactedData`, or `id` with `encryptedContent?`; or `{format, model}`
/// alone (Chat Completions reasoning, whose text is all there is).
fn read_opt_state(o: &Obj) -> Result<Option<ReasoningState>, FieldError> {
    const KINDS: &str = r#"give the state as the answer gave it: {format, model} alone or with "signature", "redactedData", or "id" (and "encryptedContent")"#;
    let v = match o.get("state") {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    let path = o.path_of("state");
    let s = Obj::new(v, &path, &["format", "model", "signature", "redactedData", "id", "encryptedContent"])?;
    let format = s.required_str("format", "the format of the target that issued it")?.to_string();
    let model = s.required_str("model", "the model of the target that issued it")?.to_string();
    // Present but not a string is as wrong as the wrong keys: the same message says what is right.
    let string = |key: &str| s.get(key).map(|v| v.as_str().map(str::to_string));
    let opaque = match (string("signature"), string("redactedData"), string("id"), string("encryptedContent")) {
        (Some(Some(signature)), None, None, None) => Opaque::Signature(signature),
        (None, Some(Some(data)), None, None) => Opaque::Redacted(data),
        (None, None, Some(Some(id)), None) => Opaque::Item { id, encrypted_content: None },
        (None, None, Some(Some(id)), Some(Some(content))) => Opaque::Item { id, encrypted_content: Some(content) },
        (None, None, None, None) => Opaque::Plain,
        _ => return Err(FieldError::new(path, KINDS)),
    };
    Ok(Some(ReasoningState { format, model, opaque }))
}

/// What a tool call's id carries through a gateway client (src/format/client/state_id.rs):
/// `{id, state?, reasoning?}`, read as strictly as a history's own state.
pub(crate) fn read_carried(v: &Value) -> Result<(String, Option<ReasoningState>, Vec<ReasoningPart>), FieldError> {
    let o = Obj::new(v, "id", &["id", "state", "reasoning"])?;
    let id = o.required_str("id", "the call's id")?.to_string();
    let reasoning = match o.get("reasoning") {
        None => Vec::new(),
        Some(Value::Array(parts)) => parts
            .iter()
            .enumerate()
            .map(|(i, p)| read_reasoning_part(p, &index_path("id.reasoning", i), Role::Assistant))
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(wrong(&o.path_of("reasoning"), "a list", other)),
    };
    Ok((id, read_opt_state(&o)?, reasoning))
}

/// One content part at `path` of a message of `role`.
fn read_part(v: &Value, path: &str, role: Role) -> Result<Part, FieldError> {
    const KINDS: &str = r#"one of "text", "image", "file""#;
    let kind = match v {
        Value::Object(map) => map.get("type"),
        other => {
            return Err(FieldError::new(
                path,
                format!(r#"must be a part such as {{"type": "text", "text": "Hello"}} (got {})"#, show_kind(other)),
            ))
        }
    };
    let part = match kind.and_then(Value::as_str) {
        Some("text") => {
            let o = Obj::new(v, path, &["type", "text"])?;
            match o.get("text") {
                Some(Value::String(text)) => Part::Text { text: text.clone() },
                None => return Err(FieldError::new(o.path_of("text"), "is missing; give the part's text")),
                Some(other) => return Err(wrong(&o.path_of("text"), "a string", other)),
            }
        }
        Some("image") => {
            let o = Obj::new(v, path, &["type", "url", "data", "mediaType"])?;
            let source = read_source(&o, path, "image")?;
            match source.media_type() {
                Some(mt) if !mt.starts_with("image/") => {
                    return Err(FieldError::new(
                        o.path_of("mediaType"),
                        format!(
                            r#"must be an image media type such as "image/png" (got {}); send other files as {{"type": "file"}}"#,
                            show(&Value::from(mt))
                        ),
                    ))
                }
                _ => Part::Image { source },
            }
        }
        Some("file") => {
            let o = Obj::new(v, path, &["type", "url", "data", "mediaType", "filename"])?;
            let source = read_source(&o, path, "file")?;
            let filename = match o.get("filename") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                Some(other) => {
                    return Err(FieldError::new(
                        o.path_of("filename"),
                        format!(r#"must be a non-empty string such as "report.pdf" (got {})"#, show(other)),
                    ))
                }
            };
            Part::File { source, filename }
        }
        None if kind.is_none() => {
            return Err(FieldError::new(child(path, "type"), format!("is missing; give {KINDS}")))
        }
        _ => return Err(wrong_value(&child(path, "type"), KINDS, kind.unwrap_or(&Value::Null))),
    };
    match part.misplaced_in(role) {
        Some(why) => Err(FieldError::new(path, why)),
        None => Ok(part),
    }
}

/// An image's or file's `url` or `data` (exactly one) and `mediaType`. A `data:` URL is read as
/// its data and media type. A file always needs its media type; an image only with data.
fn read_source(o: &Obj, path: &str, kind: &str) -> Result<Source, FieldError> {
    let media_type = match o.get("mediaType") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if is_media_type(s) => Some(s.clone()),
        Some(other) => {
            return Err(FieldError::new(
                o.path_of("mediaType"),
                format!(r#"must be a media type such as "image/png" or "application/pdf" (got {})"#, show(other)),
            ))
        }
    };
    let missing_media_type = || {
        let example = if kind == "image" { "image/png" } else { "application/pdf" };
        FieldError::new(
            o.path_of("mediaType"),
            format!(r#"is missing; give the {kind}'s media type, e.g. "{example}""#),
        )
    };
    let source = match (o.get("url"), o.get("data")) {
        (Some(_), Some(_)) => {
            return Err(FieldError::new(path, format!("has both url and data; give the {kind} by one of them")))
        }
        (None, None) => {
            return Err(FieldError::new(
                path,
                format!(
                    r#"has neither url nor data; give the {kind} as "data" (base64) with its "mediaType", or its "url""#
                ),
            ))
        }
        (Some(url), None) => match url {
            Value::String(url) if url.starts_with("data:") => {
                let (url_type, data) = read_data_url(url).ok_or_else(|| {
                    FieldError::new(
                        o.path_of("url"),
                        "is a data: URL but not a base64 one; give it as data:<media type>;base64,<data>",
                    )
                })?;
                let media_type = match (url_type, media_type) {
                    (Some(a), Some(b)) if !a.eq_ignore_ascii_case(&b) => {
                        return Err(FieldError::new(
                            o.path_of("mediaType"),
                            format!(
                                "is {} but the data: URL says {}; drop one",
                                show(&Value::from(b)),
                                show(&Value::from(a))
                            ),
                        ))
                    }
                    (Some(a), _) => a,
                    (None, Some(b)) => b,
                    (None, None) => return Err(missing_media_type()),
                };
                Source::Data { data: data.to_string(), media_type }
            }
            Value::String(url) if !url.is_empty() => Source::Url { url: url.clone(), media_type },
            other => return Err(wrong_value(&o.path_of("url"), "a URL or a data: URL", other)),
        },
        (None, Some(data)) => match data {
            Value::String(data) if !data.is_empty() => {
                Source::Data { data: data.clone(), media_type: media_type.ok_or_else(missing_media_type)? }
            }
            other => {
                return Err(FieldError::new(
                    o.path_of("data"),
                    format!("must be the {kind}'s bytes as a non-empty base64 string (got {})", show_kind(other)),
                ))
            }
        },
    };
    if kind == "file" && source.media_type().is_none() {
        return Err(missing_media_type());
    }
    Ok(source)
}

impl Source {
    /// `url` as a source, for readers of other request shapes (the gateway's clients): a base64
    /// `data:` URL is read as its data and the media type it names (else `media_type`); any other
    /// URL stays a URL. `None` for a `data:` URL that is not base64, or whose media type neither
    /// it nor `media_type` gives.
    pub fn from_url(url: &str, media_type: Option<String>) -> Option<Source> {
        if !url.starts_with("data:") {
            return Some(Source::Url { url: url.to_string(), media_type });
        }
        let (named, data) = read_data_url(url)?;
        Some(Source::Data { data: data.to_string(), media_type: named.or(media_type)? })
    }
}

/// `type/subtype`, without parameters.
pub(crate) fn is_media_type(s: &str) -> bool {
    let token = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
    s.split_once('/').is_some_and(|(t, sub)| token(t) && token(sub))
}

/// A base64 `data:` URL's media type (when it names one) and data.
fn read_data_url(url: &str) -> Option<(Option<String>, &str)> {
    let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
    let mut params = head.split(';');
    let media_type = params.next().filter(|t| !t.is_empty());
    let base64 = params.any(|p| p.eq_ignore_ascii_case("base64"));
    (base64 && !data.is_empty() && media_type.is_none_or(is_media_type))
        .then(|| (media_type.map(str::to_ascii_lowercase), data))
}

fn read_tool(v: &Value, path: &str) -> Result<Tool, FieldError> {
    let o = Obj::new(v, path, &["name", "description", "parameters"])?;
    let name = o.required_str("name", "the function's name")?.to_string();
    let description = match o.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => return Err(wrong(&child(path, "description"), "a string", other)),
    };
    let parameters = match o.get("parameters") {
        None | Some(Value::Null) => {
            // Built by hand: json! serializes each literal through serde (to_value), which
            // links serde_json's Serializer into the wasm for this one schema.
            let mut schema = Map::new();
            schema.insert("type".into(), Value::from("object"));
            schema.insert("properties".into(), Value::Object(Map::new()));
            Value::Object(schema)
        }
        Some(p @ Value::Object(_)) => p.clone(),
        Some(other) => return Err(wrong(&child(path, "parameters"), "a JSON Schema object", other)),
    };
    Ok(Tool { name, description, parameters })
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
                "request.messages[0].content must be a string or a list of parts (got 5)",
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
    fn reads_parts_and_the_sampling_and_tool_fields() {
        let r = ChatRequest::from_json(
            r#"{"messages": [{"role": "user", "content": [
                    {"type": "text", "text": "What is in "},
                    {"type": "text", "text": "these?"},
                    {"type": "image", "url": "https://x.test/a.png"},
                    {"type": "image", "data": "iVBORw0K", "mediaType": "image/png"},
                    {"type": "image", "url": "data:image/jpeg;base64,/9j/4AAQ"},
                    {"type": "file", "data": "JVBERi0x", "mediaType": "application/pdf", "filename": "a.pdf"},
                    {"type": "file", "url": "https://x.test/b.pdf", "mediaType": "application/pdf"},
                    {"type": "file", "url": "data:;base64,JVBERi0x", "mediaType": "application/pdf"}]},
                 {"role": "assistant", "content": [{"type": "text", "text": "Two "}, {"type": "text", "text": "cats."}]}],
                "topP": 0.9, "seed": -42, "tools": [{"name": "f"}], "toolChoice": {"name": "f"},
                "parallelToolCalls": false,
                "responseFormat": {"type": "json", "schema": {"type": "object"}, "name": "cats", "strict": true}}"#,
        )
        .unwrap();
        let url = |url: &str, media_type: Option<&str>| Source::Url {
            url: url.into(),
            media_type: media_type.map(Into::into),
        };
        let data = |data: &str, media_type: &str| Source::Data { data: data.into(), media_type: media_type.into() };
        assert_eq!(
            r.messages[0].content[2..],
            [
                Part::Image { source: url("https://x.test/a.png", None) },
                Part::Image { source: data("iVBORw0K", "image/png") },
                Part::Image { source: data("/9j/4AAQ", "image/jpeg") },
                Part::File { source: data("JVBERi0x", "application/pdf"), filename: Some("a.pdf".into()) },
                Part::File { source: url("https://x.test/b.pdf", Some("application/pdf")), filename: None },
                Part::File { source: data("JVBERi0x", "application/pdf"), filename: None },
            ]
        );
        assert_eq!((r.messages[0].text(), r.messages[0].is_text_only()), ("What is in these?".into(), false));
        assert_eq!((r.messages[1].text(), r.messages[1].is_text_only()), ("Two cats.".into(), true));
        assert_eq!((r.top_p, r.seed, r.parallel_tool_calls), (Some(0.9), Some(-42), Some(false)));
        assert_eq!(r.tool_choice, Some(ToolChoice::Tool { name: "f".into() }));
        assert_eq!(
            r.response_format,
            Some(ResponseFormat::Json {
                schema: Some(serde_json::json!({"type": "object"})),
                name: Some("cats".into()),
                description: None,
                strict: Some(true)
            })
        );
        let modes = [("auto", ToolChoice::Auto), ("none", ToolChoice::None), ("required", ToolChoice::Required)];
        for (mode, choice) in modes {
            let r = ChatRequest::from_json(&format!(
                r#"{{"messages": [{{"role": "user"}}], "tools": [{{"name": "f"}}], "toolChoice": "{mode}",
                     "responseFormat": {{"type": "text"}}}}"#
            ))
            .unwrap();
            assert_eq!((r.tool_choice, r.response_format), (Some(choice), None), "{mode}");
        }
    }

    #[test]
    fn a_url_is_read_as_data_when_it_is_a_base64_data_url() {
        let png = || Some("image/png".to_string());
        let cases = [
            ("https://x.test/a.png", None, Some(Source::Url { url: "https://x.test/a.png".into(), media_type: None })),
            (
                "https://x.test/a.png",
                png(),
                Some(Source::Url { url: "https://x.test/a.png".into(), media_type: png() }),
            ),
            (
                "data:image/png;base64,AA==",
                None,
                Some(Source::Data { data: "AA==".into(), media_type: "image/png".into() }),
            ),
            ("data:;base64,AA==", png(), Some(Source::Data { data: "AA==".into(), media_type: "image/png".into() })),
            ("data:;base64,AA==", None, None),
            ("data:image/png,rawbytes", None, None),
        ];
        for (url, media_type, expected) in cases {
            assert_eq!(Source::from_url(url, media_type), expected, "{url}");
        }
    }

    #[test]
    fn part_and_parameter_mistakes_name_their_field() {
        let user = |content: &str| format!(r#"{{"messages": [{{"role": "user", "content": [{content}]}}]}}"#);
        let cases = [
            (user("5"), r#"request.messages[0].content[0] must be a part such as {"type": "text", "text": "Hello"} (got 5)"#.to_string()),
            (user("{}"), r#"request.messages[0].content[0].type is missing; give one of "text", "image", "file""#.into()),
            (
                user(r#"{"type": "audio"}"#),
                r#"request.messages[0].content[0].type must be one of "text", "image", "file" (got "audio")"#.into(),
            ),
            (user(r#"{"type": "text"}"#), "request.messages[0].content[0].text is missing; give the part's text".into()),
            (
                user(r#"{"type": "text", "text": "a", "url": "x"}"#),
                r#"request.messages[0].content[0].url is not a known field; known fields: type, text"#.into(),
            ),
            (
                user(r#"{"type": "image", "data": "AA=="}"#),
                r#"request.messages[0].content[0].mediaType is missing; give the image's media type, e.g. "image/png""#.into(),
            ),
            (
                user(r#"{"type": "image"}"#),
                r#"request.messages[0].content[0] has neither url nor data; give the image as "data" (base64) with its "mediaType", or its "url""#.into(),
            ),
            (
                user(r#"{"type": "image", "url": "https://x.test/a.png", "data": "AA=="}"#),
                "request.messages[0].content[0] has both url and data; give the image by one of them".into(),
            ),
            (
                user(r#"{"type": "image", "data": "AA==", "mediaType": "application/pdf"}"#),
                r#"request.messages[0].content[0].mediaType must be an image media type such as "image/png" (got "application/pdf"); send other files as {"type": "file"}"#.into(),
            ),
            (
                user(r#"{"type": "image", "data": "AA==", "mediaType": "png"}"#),
                r#"request.messages[0].content[0].mediaType must be a media type such as "image/png" or "application/pdf" (got "png")"#.into(),
            ),
            (
                user(r#"{"type": "image", "url": "data:image/png,rawbytes"}"#),
                "request.messages[0].content[0].url is a data: URL but not a base64 one; give it as data:<media type>;base64,<data>".into(),
            ),
            (
                user(r#"{"type": "image", "url": "data:image/png;base64,AA==", "mediaType": "image/gif"}"#),
                r#"request.messages[0].content[0].mediaType is "image/gif" but the data: URL says "image/png"; drop one"#.into(),
            ),
            (
                user(r#"{"type": "image", "url": ""}"#),
                r#"request.messages[0].content[0].url must be a URL or a data: URL (got "")"#.into(),
            ),
            (
                user(r#"{"type": "image", "data": 5, "mediaType": "image/png"}"#),
                "request.messages[0].content[0].data must be the image's bytes as a non-empty base64 string (got 5)".into(),
            ),
            (
                user(r#"{"type": "file", "url": "https://x.test/a"}"#),
                r#"request.messages[0].content[0].mediaType is missing; give the file's media type, e.g. "application/pdf""#.into(),
            ),
            (
                user(r#"{"type": "file", "data": "AA==", "mediaType": "application/pdf", "filename": ""}"#),
                r#"request.messages[0].content[0].filename must be a non-empty string such as "report.pdf" (got "")"#.into(),
            ),
            (
                r#"{"messages": [{"role": "system", "content": [{"type": "image", "url": "https://x.test/a.png"}]}]}"#.into(),
                "request.messages[0].content[0] is an image, but only user messages carry images and files (this is a system message)".into(),
            ),
            (
                r#"{"messages": [{"role": "assistant", "content": [{"type": "file", "data": "AA==", "mediaType": "application/pdf"}]}]}"#.into(),
                "request.messages[0].content[0] is a file, but only user messages carry images and files (this is an assistant message)".into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "topP": 1.5}"#.into(),
                "request.topP must be a number from 0 to 1 (got 1.5)".into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "seed": 1.5}"#.into(),
                "request.seed must be a whole number from -9007199254740991 to 9007199254740991 (got 1.5)".into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "seed": 9007199254740992}"#.into(),
                "request.seed must be a whole number from -9007199254740991 to 9007199254740991 (got 9007199254740992)".into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "toolChoice": "any"}"#.into(),
                r#"request.toolChoice must be "auto", "none", "required" or {"name": "<a tool's name>"} (got "any")"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "toolChoice": "required"}"#.into(),
                r#"request.toolChoice is "required" but request.tools is empty; give the tools the model must choose from"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "tools": [{"name": "f"}, {"name": "g"}], "toolChoice": {"name": "h"}}"#.into(),
                r#"request.toolChoice.name names no tool in request.tools (got "h"); give one of "f", "g""#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "toolChoice": {"name": "h"}}"#.into(),
                r#"request.toolChoice.name names no tool in request.tools (got "h"); request.tools is empty; give the tool there too"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "tools": [{"name": "f"}], "toolChoice": {"type": "tool", "name": "f"}}"#.into(),
                r#"request.toolChoice.type is not a known field; known fields: name"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "parallelToolCalls": "no"}"#.into(),
                r#"request.parallelToolCalls must be true (the model may call several tools at once) or false (at most one) (got "no")"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": "json"}"#.into(),
                r#"request.responseFormat must be {"type": "json"}, {"type": "json", "schema": {...}} or {"type": "text"} (got "json")"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": {"type": "json_schema"}}"#.into(),
                r#"request.responseFormat.type must be "json" or "text" (got "json_schema")"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": {"schema": {}}}"#.into(),
                r#"request.responseFormat.type is missing; give "json" or "text""#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": {"type": "text", "schema": {}}}"#.into(),
                r#"request.responseFormat.schema is not a known field; known fields: type"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": {"type": "json", "schema": []}}"#.into(),
                "request.responseFormat.schema must be a JSON Schema object (got a list)".into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": {"type": "json", "name": "a b"}}"#.into(),
                r#"request.responseFormat.name must be 1 to 64 letters, digits, _ or - (got "a b")"#.into(),
            ),
            (
                r#"{"messages": [{"role": "user"}], "responseFormat": {"type": "json", "strict": 1}}"#.into(),
                "request.responseFormat.strict must be true (enforce the schema exactly) or false (got 1)".into(),
            ),
        ];
        for (json, message) in cases {
            assert_eq!(ChatRequest::from_json(&json).unwrap_err().message, message, "for {json}");
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
    fn reads_a_parsed_value_as_it_reads_text() {
        let value = serde_json::json!({"messages": [{"role": "user", "content": "Hi"}], "maxTokens": 8});
        let request = ChatRequest::from_value(&value).unwrap();
        assert_eq!(request, ChatRequest::from_json(&value.to_string()).unwrap());
        assert_eq!(request.max_tokens, Some(8));
        let e = ChatRequest::from_value(&serde_json::json!([])).unwrap_err();
        assert_eq!(e.message, "request must be an object (got a list)");
    }
}
