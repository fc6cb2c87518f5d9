//! Anthropic Messages on Amazon Bedrock: InvokeModel (`POST {baseUrl}/model/{modelId}/invoke`)
//! and InvokeModelWithResponseStream (`.../invoke-with-response-stream`), for a target
//! `{format: "anthropic_messages", cloud: "bedrock"}`.
//!
//! Not a dialect of its own: the body is Anthropic's Messages body, written by its writer, with
//! `anthropic_version: "bedrock-2023-05-31"` in place of `model` (which goes in the path,
//! percent-encoded as for Converse) and without `stream` (the path says it), as Bedrock's "Anthropic
//! Claude Messages API" page gives it and @anthropic-ai/bedrock-sdk sends it. A whole answer is
//! Anthropic's message, read by Anthropic's reader. A stream is AWS's event stream: each `chunk`
//! message carries `{"bytes": base64}` of one Anthropic event's JSON, which goes to Anthropic's
//! stream reader as that event; an exception message fails the stream as Converse's do
//! ([`bedrock_converse::exception_error`]). Signing and the API key are Bedrock's, as for Converse.
//!
//! Errors come in either shape: Anthropic's `{"type": "error", "error": {...}}` when the model's
//! own answer was an error, else Bedrock's `{"message"}` with its type in `x-amzn-ErrorType`.

use llm_baton_wire::write::JsonWriter;

use crate::base64::{self, Alphabet};
use crate::chat::{ChatRequest, Delta, Usage};
use crate::format::anthropic_messages::{self, AnthropicMessages, BodyHead};
use crate::format::bedrock_converse::{self, BedrockConverse};
use crate::format::{DecodeError, Endpoint, HttpRequest, ProviderDialect, ProviderSaid, StreamDecoding};
use crate::sigv4::uri_encode;
use crate::sse::SseEvent;

/// The API version Bedrock's Anthropic models take, in the body.
const BEDROCK_VERSION: &str = "bedrock-2023-05-31";

pub(crate) fn build_request(endpoint: &Endpoint, request: &ChatRequest, stream: bool) -> HttpRequest {
    let action = if stream { "invoke-with-response-stream" } else { "invoke" };
    let path = format!("model/{}/{action}", uri_encode(endpoint.model));
    let mut body = JsonWriter::new();
    let head = BodyHead::Cloud { anthropic_version: BEDROCK_VERSION, stream: None };
    anthropic_messages::write_body(&mut body, endpoint.model, request, head);
    endpoint.post(&path, endpoint.bearer(), &[], body.finish())
}

/// Anthropic's error shape first (the model's own error, e.g. `overloaded_error`), then Bedrock's.
pub(crate) fn error_body(status: u16, body: &[u8]) -> Option<ProviderSaid> {
    AnthropicMessages::error_body(status, body).or_else(|| BedrockConverse::error_body(status, body))
}

/// Reads InvokeModelWithResponseStream's messages (as [`bedrock_converse::event_of`] names them)
/// with Anthropic's stream reader.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    messages: anthropic_messages::StreamDecoder,
}

impl StreamDecoding for StreamDecoder {
    fn decode_event(&mut self, sse: &SseEvent, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        match sse.event.as_str() {
            "chunk" => match chunk_event(&sse.data) {
                Some(event) => self.messages.decode_event(&event, out),
                None => Err(DecodeError::Protocol(
                    "anthropic_messages on bedrock: a chunk's bytes are not base64 of UTF-8 text".into(),
                )),
            },
            name if name.ends_with("Exception") => Err(bedrock_converse::exception_error(sse)),
            _ => Ok(()),
        }
    }

    fn usage(&self) -> Usage {
        self.messages.usage()
    }

    fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        self.messages.finish(out)
    }
}

/// The Anthropic event a `chunk` payload (`{"bytes": base64}`) carries, named `chunk` (Anthropic's
/// reader goes by the event's `type`).
fn chunk_event(payload: &str) -> Option<SseEvent> {
    let tree = llm_baton_wire::json::parse(payload).ok()?;
    let bytes = tree.get("bytes")?.as_str()?;
    let decoded = base64::decode(bytes.trim_end_matches('='), Alphabet::Standard)?;
    let data = String::from_utf8(decoded.bytes).ok()?;
    Some(SseEvent { event: "chunk".into(), data, id: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::FinishReason;
    use crate::format::{provider, test_endpoint, Cloud, FailureClass, Format};
    use crate::outcome::Failure;
    use llm_baton_wire::event_stream::{encode, EventStreamDecoder};
    use serde_json::{json, Value};

    const MODEL: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

    fn ask() -> ChatRequest {
        let messages = json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]);
        ChatRequest::from_value(&json!({"messages": messages, "maxTokens": 50})).unwrap()
    }

    #[test]
    fn a_request_is_anthropics_body_with_bedrocks_version_at_the_models_path() {
        let endpoint =
            Endpoint { cloud: Some(Cloud::Bedrock), ..test_endpoint("https://bedrock.test", MODEL, Some("ABSK"), &[]) };
        for (stream, action) in [(false, "invoke"), (true, "invoke-with-response-stream")] {
            let http = Format::AnthropicMessages.build_request(endpoint, &ask(), stream);
            assert_eq!(
                http.url,
                format!("https://bedrock.test/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/{action}")
            );
            let body: Value = serde_json::from_str(&http.body).unwrap();
            assert_eq!(
                body,
                json!({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 50, "system": "Be brief.",
                       "messages": [{"role": "user", "content": "Hi"}]})
            );
            let names: Vec<&str> = http.headers.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(names, ["content-type", "authorization"], "no anthropic-version or x-api-key header");
        }
    }

    #[test]
    fn errors_read_in_anthropics_shape_or_bedrocks() {
        let overloaded = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let said = Format::AnthropicMessages.error_body_on(Some(Cloud::Bedrock), 529, overloaded);
        assert_eq!((said.code.as_deref(), said.class), (Some("overloaded_error"), Some(FailureClass::Overloaded)));
        let unavailable = br#"{"message":"Bedrock is unable to process your request."}"#;
        let said = Format::AnthropicMessages.error_body_on(Some(Cloud::Bedrock), 503, unavailable);
        assert_eq!(
            (said.message.as_str(), said.class),
            ("Bedrock is unable to process your request.", Some(FailureClass::Overloaded))
        );
        let failure = Failure::from_http(
            429,
            &[("x-amzn-errortype".into(), "ThrottlingException:http://x".into())],
            Format::AnthropicMessages.error_body_on(Some(Cloud::Bedrock), 429, br#"{"message":"slow down"}"#),
            0,
        );
        assert_eq!(
            (failure.class(), failure.to_string()),
            (Some(FailureClass::RateLimit), "HTTP 429: slow down".to_string())
        );
    }

    fn chunk(event: Value) -> Vec<u8> {
        let bytes = base64::encode(event.to_string().as_bytes(), Alphabet::Standard, true);
        let payload = json!({"bytes": bytes, "p": "abcd"}).to_string();
        encode(
            &[(":event-type", "chunk"), (":content-type", "application/json"), (":message-type", "event")],
            payload.as_bytes(),
        )
    }

    /// The deltas of a stream of event-stream messages fed byte by byte, and how it ended.
    fn stream(messages: &[Vec<u8>]) -> (Vec<Delta>, Result<(), DecodeError>) {
        let mut frames = EventStreamDecoder::new();
        let mut decoder = Format::AnthropicMessages.stream_decoder_on(Some(Cloud::Bedrock));
        let (mut out, mut result) = (Vec::new(), Ok(()));
        for byte in messages.concat() {
            frames
                .feed_each(&[byte], &mut |m| {
                    if result.is_ok() {
                        result = decoder.on_event(&bedrock_converse::event_of(m), &mut out);
                    }
                })
                .unwrap();
        }
        if result.is_ok() {
            result = decoder.finish(&mut out);
        }
        (out, result)
    }

    #[test]
    fn chunks_carry_anthropics_events_to_its_reader() {
        let (out, result) = stream(&[
            chunk(
                json!({"type": "message_start", "message": {"model": MODEL, "usage": {"input_tokens": 9, "output_tokens": 1}}}),
            ),
            chunk(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            chunk(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hel"}})),
            chunk(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "lo"}})),
            chunk(json!({"type": "content_block_stop", "index": 0})),
            chunk(
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
            ),
            chunk(json!({"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 9}})),
        ]);
        result.unwrap();
        let text: String =
            out.iter().filter_map(|d| if let Delta::Text { text } = d { Some(text.as_str()) } else { None }).collect();
        assert_eq!(text, "Hello");
        let Some(Delta::Done { finish_reason, usage, .. }) = out.last() else { panic!("{out:?}") };
        assert_eq!((finish_reason, usage.input_tokens, usage.output_tokens), (&FinishReason::Stop, Some(9), Some(4)));
    }

    #[test]
    fn exceptions_errors_and_bad_chunks_fail_the_stream() {
        let start = chunk(json!({"type": "message_start", "message": {"usage": {"input_tokens": 9}}}));
        let throttled = encode(
            &[
                (":exception-type", "throttlingException"),
                (":content-type", "application/json"),
                (":message-type", "exception"),
            ],
            br#"{"message":"Too many tokens"}"#,
        );
        let (_, result) = stream(&[start.clone(), throttled]);
        assert_eq!(
            result,
            Err(provider(429, "Too many tokens", Some("ThrottlingException"), Some(FailureClass::RateLimit)))
        );
        let overloaded =
            chunk(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}));
        let (_, result) = stream(&[start.clone(), overloaded]);
        assert_eq!(result, Err(provider(529, "Overloaded", Some("overloaded_error"), Some(FailureClass::Overloaded))));
        let bad = encode(&[(":event-type", "chunk"), (":message-type", "event")], br#"{"bytes":"not base64!"}"#);
        let (_, result) = stream(&[start.clone(), bad]);
        assert!(matches!(result, Err(DecodeError::Protocol(m)) if m.contains("not base64")));
        let (_, result) = stream(&[start]);
        assert!(matches!(result, Err(DecodeError::Protocol(m)) if m.contains("ended without")));
    }
}
