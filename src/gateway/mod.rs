//! The edge gateway: every decision about a client's request, and the replies that carry them.
//!
//! A gateway serves clients that already speak OpenAI Chat Completions, OpenAI Responses or
//! Anthropic Messages (the official SDKs, curl, chat UIs, agent frameworks) from any route,
//! whatever format its targets speak. It translates twice, always through the normalized types
//! of [`crate::chat`], with the dialects' client halves ([`crate::format::client`]): a client's
//! request body becomes a [`crate::chat::ChatRequest`] ([`parse_request`]), and the normalized
//! answer, deltas and failures become the client's JSON body, SSE events and error shape
//! ([`StreamEncoder`], [`answer_body`], [`GatewayError::from_failure`]). Those halves sit in
//! the dialects' layer, below config, so each dialect's words are written once for both
//! directions; what is here needs the config: [`decide`] settles the endpoint, CORS, the gateway
//! key, the body cap and the deadline from the request's head, in one call.
//!
//! Like the rest of the core this is pure: no clock (ids and timestamps come in as [`Meta`]), no
//! I/O. The wasm driver and `pkg/gateway.js` only perform what is decided here: read the body,
//! run the call, hold the status until the route commits, build the `Response`.

mod access;
mod deadline;
mod decision;
mod models;
mod reply;

pub use crate::format::client::{
    answer_body, parse_request, ClientCall, ClientFormat, GatewayError, Meta, PartOrigin, StreamEncoder,
};
pub use access::{authorized, cors_origin};
pub use deadline::{parse_deadline_header, requested_deadline, DEADLINE_HEADER, SDK_TIMEOUT_HEADER};
pub use decision::{decide, requested_model, BodyRead, Caller, Decision, Head, Listing, Plan, Site};
pub use models::models_reply;
pub use reply::{Headers, Reply, SSE};

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_model_a_body_names_is_read_past_every_field_before_it() {
        let cases: [(&[u8], Option<&str>); 9] = [
            (br#"{"model": "chat", "messages": []}"#, Some("chat")),
            (br#"{"messages": [{"role": "user", "content": [{"type": "text", "text": "}\"model\": \"x\""}]}], "stream": true, "model": "chat"}"#, Some("chat")),
            ("\u{feff}{\"model\": \"caf\u{e9}\"}".as_bytes(), Some("caf\u{e9}")),
            (br#"{"model": "a\u0062c"}"#, Some("abc")),
            (br#"{"model": 5}"#, None),
            (br#"{"messages": []}"#, None),
            (br#"["model", "chat"]"#, None),
            (br#"{"messages": [}"#, None),
            (b"{\"model\": \"\xff\"}", None),
        ];
        for (body, model) in cases {
            assert_eq!(requested_model(body).as_deref(), model, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn a_part_no_target_can_carry_is_named_as_the_client_wrote_it() {
        let config = crate::config::Config::from_json(
            r#"{"targets": {
                "gemini": {"format": "gemini", "baseUrl": "https://g.example/v1beta", "model": "m", "apiKey": "k"},
                "chat": {"format": "openai_chat", "baseUrl": "https://o.example/v1", "model": "m", "apiKey": "k"}
            }}"#,
        )
        .unwrap();
        let image = json!({"type": "image_url", "image_url": {"url": "https://x.example/a.png"}});
        let cases = [
            (
                ClientFormat::OpenaiChat,
                "gemini",
                json!({"model": "gemini", "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "a"}, image]}]}),
                "messages[1].content[1]",
            ),
            (
                ClientFormat::AnthropicMessages,
                "gemini",
                json!({"model": "gemini", "max_tokens": 5, "system": "s", "messages": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": "r"},
                        {"type": "text", "text": "and this?"},
                        {"type": "image", "source": {"type": "url", "url": "https://x.example/a.png"}},
                    ]},
                ]}),
                "messages[2].content[2]",
            ),
            (
                ClientFormat::OpenaiResponses,
                "gemini",
                json!({"model": "gemini", "instructions": "s", "input": [{"role": "user", "content": [
                    {"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "https://x.example/a.png"},
                ]}]}),
                "input[0].content[1]",
            ),
            (
                ClientFormat::OpenaiResponses,
                "chat",
                json!({"model": "chat", "input": [{"role": "user", "content": [{"type": "input_file", "file_url": "https://x.example/a.pdf"}]}]}),
                "input[0].content[0]",
            ),
        ];
        for (format, route, body, path) in cases {
            let call = parse_request(format, &body.to_string()).unwrap();
            let e = config.check_request(route, &call.request).unwrap_err();
            let refusal = call.uncarried(&e);
            assert_eq!(refusal.status, 400);
            let what = e.message.strip_prefix(&e.path).unwrap();
            assert!(what.starts_with(" is "), "{}", e.message);
            assert_eq!(refusal.message, format!("{path}{what}"), "{format:?}");
        }
    }
}
