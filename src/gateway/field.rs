//! Field readers for client request bodies: every mistake names the field by its path.

use llm_baton_wire::write::ToJson;
use serde_json::{Map, Value};

use super::GatewayError;
use crate::chat::{Effort, ReasoningRequest};

/// "a list", "a number"…: what a value was, for messages.
pub(crate) fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.chars().count() > 40 => {
            format!("{}...", s.chars().take(37).collect::<String>().to_json())
        }
        Value::String(s) => s.to_json(),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

pub fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub fn wrong(path: &str, expected: &str, got: &Value) -> GatewayError {
    GatewayError::invalid(format!("{path} must be {expected} (got {})", kind_of(got)))
}

pub fn missing(path: &str, expected: &str) -> GatewayError {
    GatewayError::invalid(format!("{path} is missing; give {expected}"))
}

pub fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, GatewayError> {
    v.as_object().ok_or_else(|| wrong(path, "an object", v))
}

/// An optional field; JSON `null` counts as absent, as the SDKs send it.
pub fn opt<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    o.get(key).filter(|v| !v.is_null())
}

pub fn string<'a>(o: &'a Map<String, Value>, key: &str, path: &str, expected: &str) -> Result<&'a str, GatewayError> {
    let p = child(path, key);
    match opt(o, key) {
        None => Err(missing(&p, expected)),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(wrong(&p, expected, other)),
    }
}

pub fn opt_string<'a>(o: &'a Map<String, Value>, key: &str, path: &str) -> Result<Option<&'a str>, GatewayError> {
    match opt(o, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(wrong(&child(path, key), "a string", other)),
    }
}

pub fn opt_bool(o: &Map<String, Value>, key: &str, path: &str) -> Result<bool, GatewayError> {
    match opt(o, key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(wrong(&child(path, key), "true or false", other)),
    }
}

pub fn array<'a>(v: &'a Value, path: &str, expected: &str) -> Result<&'a [Value], GatewayError> {
    v.as_array().map(Vec::as_slice).ok_or_else(|| wrong(path, expected, v))
}

/// The optional list at `key` (a top-level field), each item read by `read` with its path
/// (`tools[2]`); absent is empty.
pub fn opt_list<T>(
    o: &Map<String, Value>,
    key: &str,
    expected: &str,
    read: impl Fn(&Value, &str) -> Result<T, GatewayError>,
) -> Result<Vec<T>, GatewayError> {
    let Some(v) = opt(o, key) else { return Ok(Vec::new()) };
    array(v, key, expected)?.iter().enumerate().map(|(i, item)| read(item, &format!("{key}[{i}]"))).collect()
}

pub fn opt_tokens(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u32>, GatewayError> {
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=u32::MAX as f64).contains(&n) => Ok(Some(n as u32)),
            _ => Err(wrong(&child(path, key), "a positive whole number of tokens", v)),
        },
    }
}

pub fn opt_temperature(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, GatewayError> {
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if (0.0..=2.0).contains(&n) => Ok(Some(n)),
            _ => Err(wrong(&child(path, key), "a number from 0 to 2", v)),
        },
    }
}

/// `top_p`: a probability mass from 0 to 1.
pub fn opt_top_p(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<f64>, GatewayError> {
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if (0.0..=1.0).contains(&n) => Ok(Some(n)),
            _ => Err(wrong(&child(path, key), "a number from 0 to 1", v)),
        },
    }
}

/// `seed`: a whole number a JavaScript number holds exactly.
pub fn opt_seed(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i64>, GatewayError> {
    const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
    match opt(o, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER => Ok(Some(n as i64)),
            _ => Err(wrong(&child(path, key), "a whole number (a JavaScript safe integer)", v)),
        },
    }
}

/// `parallel_tool_calls`: absent is the provider's default.
pub fn opt_flag(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<bool>, GatewayError> {
    match opt(o, key) {
        None => Ok(None),
        Some(_) => opt_bool(o, key, path).map(Some),
    }
}

/// `stop` / `stop_sequences`: one string or a list of strings.
pub fn opt_stop(o: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<String>, GatewayError> {
    let p = child(path, key);
    match opt(o, key) {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, s)| s.as_str().map(str::to_string).ok_or_else(|| wrong(&format!("{p}[{i}]"), "a string", s)))
            .collect(),
        Some(other) => Err(wrong(&p, "a string or a list of strings", other)),
    }
}

/// One of `allowed`, quoted in the message when it is not.
pub fn one_of<'a>(o: &'a Map<String, Value>, key: &str, path: &str, allowed: &[&str]) -> Result<&'a str, GatewayError> {
    let listed: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
    let expected = format!("one of {}", listed.join(", "));
    let s = string(o, key, path, &expected)?;
    if allowed.contains(&s) {
        Ok(s)
    } else {
        Err(wrong(&child(path, key), &expected, &Value::String(s.to_string())))
    }
}

// ---- a client's own reasoning fields, as the request's `reasoning` ----

/// A client's effort (`reasoning_effort`, Responses' `reasoning.effort`): `"none"` is reasoning
/// off (`None`), the four efforts every format maps are reasoning on.
fn effort(o: &Map<String, Value>, key: &str, path: &str) -> Result<Option<Option<Effort>>, GatewayError> {
    if opt(o, key).is_none() {
        return Ok(Some(None));
    }
    let named = one_of(o, key, path, &["none", "minimal", "low", "medium", "high"])?;
    Ok(Effort::ALL.into_iter().find(|e| e.as_str() == named).map(Some))
}

/// Chat Completions' `reasoning_effort`.
pub fn chat_reasoning(o: &Map<String, Value>) -> Result<Option<ReasoningRequest>, GatewayError> {
    if opt(o, "reasoning_effort").is_none() {
        return Ok(None);
    }
    Ok(effort(o, "reasoning_effort", "")?.map(|effort| ReasoningRequest { effort, ..Default::default() }))
}

/// Responses' `reasoning: {effort?, summary?}`; a summary other than `"none"` asks for one.
pub fn responses_reasoning(o: &Map<String, Value>) -> Result<Option<ReasoningRequest>, GatewayError> {
    let Some(v) = opt(o, "reasoning") else { return Ok(None) };
    let r = object(v, "reasoning")?;
    let summary = opt_string(r, "summary", "reasoning")?.map(|s| s != "none");
    Ok(effort(r, "effort", "reasoning")?.map(|effort| ReasoningRequest { effort, summary, budget_tokens: None }))
}

/// Anthropic's `thinking: {type: "enabled", budget_tokens}` (or `"disabled"`).
pub fn anthropic_thinking(o: &Map<String, Value>) -> Result<Option<ReasoningRequest>, GatewayError> {
    let Some(v) = opt(o, "thinking") else { return Ok(None) };
    let t = object(v, "thinking")?;
    Ok(match one_of(t, "type", "thinking", &["enabled", "disabled"])? {
        "enabled" => {
            Some(ReasoningRequest { budget_tokens: opt_tokens(t, "budget_tokens", "thinking")?, ..Default::default() })
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("an object")
    }

    #[test]
    fn each_clients_reasoning_fields_become_the_requests_reasoning() {
        let on = |effort, budget_tokens, summary| Some(ReasoningRequest { effort, budget_tokens, summary });
        assert_eq!(chat_reasoning(&map(json!({"reasoning_effort": "low"}))), Ok(on(Some(Effort::Low), None, None)));
        assert_eq!(chat_reasoning(&map(json!({"reasoning_effort": "none"}))), Ok(None));
        assert_eq!(chat_reasoning(&map(json!({}))), Ok(None));
        let wrong = chat_reasoning(&map(json!({"reasoning_effort": "max"}))).unwrap_err();
        assert!(format!("{wrong:?}").contains(r#"reasoning_effort must be one of \"none\", \"minimal\""#), "{wrong:?}");
        let responses = map(json!({"reasoning": {"effort": "high", "summary": "auto"}}));
        assert_eq!(responses_reasoning(&responses), Ok(on(Some(Effort::High), None, Some(true))));
        assert_eq!(
            responses_reasoning(&map(json!({"reasoning": {"summary": "none"}}))),
            Ok(on(None, None, Some(false)))
        );
        assert_eq!(responses_reasoning(&map(json!({"reasoning": {"effort": "none"}}))), Ok(None));
        let thinking = map(json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}));
        assert_eq!(anthropic_thinking(&thinking), Ok(on(None, Some(2048), None)));
        assert_eq!(anthropic_thinking(&map(json!({"thinking": {"type": "disabled"}}))), Ok(None));
    }
}
