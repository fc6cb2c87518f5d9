//! What the gateway answers instead of the route's answer: a refused request or a failed call,
//! with the status and error body each client SDK knows (OpenAI's and Anthropic's shapes).

use llm_baton_wire::write::{JsonWriter, ToJson};

use super::{ClientDialect, ClientFormat};
use crate::format::anthropic_messages::{self, AnthropicMessages};
use crate::format::openai_chat::{self, OpenaiChat};
use crate::format::openai_responses::OpenaiResponses;
use crate::outcome::{Failure, FailureClass};
use crate::value::FieldError;

/// An answer the gateway gives instead of the route's: a refused request or a failed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayError {
    pub status: u16,
    /// The error `type` in the body (`invalid_request_error`, `upstream_error`, …).
    pub kind: &'static str,
    /// OpenAI's `code` (`upstream_timeout`, `model_not_found`, …); Anthropic has no such field.
    pub code: Option<&'static str>,
    pub message: String,
    /// A provider's Retry-After, passed on to the client.
    pub retry_after_ms: Option<u64>,
    /// The upstream failure's class, which the body names in each client format's own words.
    pub class: Option<FailureClass>,
}

impl GatewayError {
    /// A client-side mistake: the status decides the type (400, 401, 404, 405, 413…).
    pub fn new(status: u16, message: impl Into<String>) -> GatewayError {
        let code = match status {
            401 => Some("invalid_api_key"),
            404 => Some("not_found"),
            413 => Some("request_too_large"),
            _ => None,
        };
        GatewayError {
            status,
            kind: anthropic_messages::type_for_status(status),
            code,
            message: message.into(),
            retry_after_ms: None,
            class: None,
        }
    }

    /// A 400 for a malformed body or a field; the message names the field.
    pub fn invalid(message: impl Into<String>) -> GatewayError {
        GatewayError::new(400, message)
    }

    /// A model the config does not know: 404, listing what it does know.
    pub fn unknown_model(model: &str, known: &[String]) -> GatewayError {
        let mut e = GatewayError::new(
            404,
            format!("model {} is not a route of this gateway (known: {})", model.to_json(), known.join(", ")),
        );
        e.code = Some("model_not_found");
        e
    }

    /// The call's failure once nothing is left to try, as the status and body a client expects:
    /// a timeout is a 504, a transport failure or an answer that could not be understood a 502,
    /// and an upstream HTTP error keeps its status and the provider's own message, except a 401
    /// or 403: those refused the gateway's provider key, not the client's gateway key, so they
    /// are a 502 `upstream_credentials_refused` (a client SDK would read a 401 as "your key"),
    /// as is any failure of class `auth` (Gemini's invalid key is a 400).
    ///
    /// A classed failure takes the status and codes each client SDK knows for it:
    ///
    /// | class | status | OpenAI `type` / `code` | Anthropic `type` |
    /// |---|---|---|---|
    /// | context_length | 400 | invalid_request_error / context_length_exceeded | invalid_request_error |
    /// | content_filter | 400 | invalid_request_error / content_filter | invalid_request_error |
    /// | quota | 429 | insufficient_quota / insufficient_quota | billing_error |
    /// | rate_limit | 429 | rate_limit_error / rate_limit_exceeded | rate_limit_error |
    /// | overloaded | 529 | overloaded_error / overloaded | overloaded_error |
    ///
    /// The first three also say `x-should-retry: false` ([`GatewayError::should_retry`]).
    /// `target`, when known, is named when its upstream credentials were refused.
    pub fn from_failure(failure: &Failure, target: Option<&str>) -> GatewayError {
        let upstream = |status, code, message: String| GatewayError {
            status,
            kind: "upstream_error",
            code: Some(code),
            message,
            retry_after_ms: None,
            class: None,
        };
        match failure {
            Failure::Timeout { .. } => upstream(504, "upstream_timeout", failure.to_string()),
            Failure::Transport { .. } => upstream(502, "upstream_unreachable", failure.to_string()),
            Failure::Protocol { .. } => upstream(502, "upstream_protocol_error", failure.to_string()),
            Failure::Http { status: 401 | 403, .. } | Failure::Http { class: Some(FailureClass::Auth), .. } => {
                let provider = match target {
                    Some(name) => format!("target {}", name.to_json()),
                    None => "its upstream provider".to_string(),
                };
                upstream(
                    502,
                    "upstream_credentials_refused",
                    format!(
                        "the gateway's credentials for {provider} were refused ({failure}); your gateway key was \
                         accepted: the gateway's operator must fix that target's apiKey or credential headers"
                    ),
                )
            }
            Failure::Http { status, message, retry_after_ms, class, .. } => {
                let message = crate::outcome::without_status_prefix(*status, message.clone());
                let message = if message.is_empty() { format!("upstream answered HTTP {status}") } else { message };
                let status = match class {
                    Some(FailureClass::ContextLength | FailureClass::ContentFilter) => 400,
                    Some(FailureClass::Quota | FailureClass::RateLimit) => 429,
                    Some(FailureClass::Overloaded) => 529,
                    Some(FailureClass::Auth) | None => *status,
                };
                let code = class.map(openai_chat::class_code);
                GatewayError {
                    status,
                    kind: anthropic_messages::type_for_status(status),
                    code,
                    message,
                    retry_after_ms: *retry_after_ms,
                    class: *class,
                }
            }
            // Nobody reads it: the client has gone. nginx's 499 says so in logs.
            Failure::Cancelled => GatewayError {
                status: 499,
                kind: "cancelled",
                code: Some("client_closed_request"),
                message: failure.to_string(),
                retry_after_ms: None,
                class: None,
            },
        }
    }

    /// `Some(false)` for a class a client's retry cannot help, sent as `x-should-retry: false`:
    /// the OpenAI and Anthropic SDKs obey that header before their status rule, and would
    /// otherwise retry a spent quota's 429.
    pub fn should_retry(&self) -> Option<bool> {
        match self.class? {
            FailureClass::ContextLength | FailureClass::ContentFilter | FailureClass::Quota => Some(false),
            FailureClass::Auth | FailureClass::Overloaded | FailureClass::RateLimit => None,
        }
    }

    /// The error body in the client's format: OpenAI's (Chat Completions and Responses alike)
    /// `{"error":{"message","type","param","code"}}`, Anthropic's
    /// `{"type":"error","error":{"type","message"}}`, keys in their API references' order.
    pub fn body(&self, format: ClientFormat) -> String {
        let mut w = JsonWriter::new();
        self.write_body(&mut w, format);
        w.finish()
    }

    /// [`GatewayError::body`], written as the next value of `w` (a stream's error event).
    pub(crate) fn write_body(&self, w: &mut JsonWriter, format: ClientFormat) {
        match format {
            ClientFormat::OpenaiChat => OpenaiChat::write_error(self, w),
            ClientFormat::AnthropicMessages => AnthropicMessages::write_error(self, w),
            ClientFormat::OpenaiResponses => OpenaiResponses::write_error(self, w),
        }
    }
}

/// A mistake in a client's body is a 400 with the field error's sentence.
impl From<FieldError> for GatewayError {
    fn from(e: FieldError) -> GatewayError {
        GatewayError::invalid(e.message)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn body(e: &GatewayError, format: ClientFormat) -> Value {
        serde_json::from_str(&e.body(format)).unwrap()
    }

    #[test]
    fn failures_map_to_statuses_and_types() {
        let timeout = GatewayError::from_failure(
            &Failure::Timeout { limit: crate::outcome::Limit::Deadline, limit_ms: 1500 },
            None,
        );
        assert_eq!((timeout.status, timeout.kind, timeout.code), (504, "upstream_error", Some("upstream_timeout")));
        assert_eq!(timeout.message, "response did not finish within 1500 ms, retries included");
        let transport = GatewayError::from_failure(&Failure::Transport { message: "connection refused".into() }, None);
        assert_eq!((transport.status, transport.kind), (502, "upstream_error"));
        let http = GatewayError::from_failure(
            &Failure::Http {
                status: 429,
                message: "slow down".into(),
                code: None,
                class: None,
                retry_after_ms: Some(2000),
                should_retry: None,
                in_stream: false,
                content_filter: None,
            },
            None,
        );
        assert_eq!((http.status, http.kind, http.message.as_str()), (429, "rate_limit_error", "slow down"));
        assert_eq!(http.retry_after_ms, Some(2000));
        assert_eq!(
            body(&timeout, ClientFormat::OpenaiChat),
            json!({"error": {"message": timeout.message, "type": "upstream_error", "code": "upstream_timeout", "param": null}})
        );
        assert_eq!(
            body(&http, ClientFormat::AnthropicMessages),
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
        );
    }

    #[test]
    fn refused_upstream_credentials_are_a_502_not_the_clients_401() {
        for (status, in_stream) in [(401, false), (403, false), (401, true)] {
            let failure = Failure::Http {
                status,
                message: "Incorrect API key provided.".into(),
                code: None,
                class: None,
                retry_after_ms: Some(1000),
                should_retry: None,
                in_stream,
                content_filter: None,
            };
            let e = GatewayError::from_failure(&failure, Some("openai"));
            assert_eq!((e.status, e.kind, e.code), (502, "upstream_error", Some("upstream_credentials_refused")));
            assert_eq!(e.retry_after_ms, None);
            let place = if in_stream { " in stream" } else { "" };
            assert_eq!(
                e.message,
                format!(
                    "the gateway's credentials for target \"openai\" were refused (HTTP {status}{place}: Incorrect API \
                     key provided.); your gateway key was accepted: the gateway's operator must fix that target's \
                     apiKey or credential headers"
                )
            );
            let anonymous = GatewayError::from_failure(&failure, None);
            assert!(anonymous.message.starts_with("the gateway's credentials for its upstream provider were refused"));
            assert_eq!(body(&anonymous, ClientFormat::AnthropicMessages)["error"]["type"], "upstream_error");
        }
    }

    #[test]
    fn failure_classes_take_each_client_formats_own_codes() {
        use FailureClass::*;
        let cases = [
            (ContextLength, 400, 400, "invalid_request_error", "context_length_exceeded", "invalid_request_error"),
            (ContentFilter, 400, 400, "invalid_request_error", "content_filter", "invalid_request_error"),
            (Quota, 429, 429, "insufficient_quota", "insufficient_quota", "billing_error"),
            (Quota, 402, 429, "insufficient_quota", "insufficient_quota", "billing_error"),
            (RateLimit, 429, 429, "rate_limit_error", "rate_limit_exceeded", "rate_limit_error"),
            (Overloaded, 503, 529, "overloaded_error", "overloaded", "overloaded_error"),
            (Overloaded, 529, 529, "overloaded_error", "overloaded", "overloaded_error"),
        ];
        for (class, upstream, status, openai_type, openai_code, anthropic_type) in cases {
            for in_stream in [false, true] {
                let failure = Failure::Http {
                    status: upstream,
                    message: "the provider's reason".into(),
                    code: Some("theirs".into()),
                    class: Some(class),
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream,
                    content_filter: None,
                };
                let e = GatewayError::from_failure(&failure, None);
                assert_eq!((e.status, e.message.as_str()), (status, "the provider's reason"), "{class:?}");
                let final_for_clients = matches!(class, ContextLength | ContentFilter | Quota);
                assert_eq!(e.should_retry(), final_for_clients.then_some(false), "{class:?}");
                assert_eq!(
                    body(&e, ClientFormat::OpenaiChat),
                    json!({"error": {"message": "the provider's reason", "type": openai_type, "code": openai_code, "param": null}}),
                    "{class:?}"
                );
                assert_eq!(
                    body(&e, ClientFormat::AnthropicMessages),
                    json!({"type": "error", "error": {"type": anthropic_type, "message": "the provider's reason"}}),
                    "{class:?}"
                );
            }
        }
        // Gemini's invalid key is a 400 of class auth: the gateway's credentials, not the client's.
        let key = Failure::Http {
            status: 400,
            message: "API key not valid. Please pass a valid API key.".into(),
            code: Some("INVALID_ARGUMENT".into()),
            class: Some(Auth),
            retry_after_ms: None,
            should_retry: None,
            in_stream: false,
            content_filter: None,
        };
        let e = GatewayError::from_failure(&key, Some("gemini"));
        assert_eq!((e.status, e.code), (502, Some("upstream_credentials_refused")));
    }

    #[test]
    fn no_message_repeats_its_prefix() {
        let cases = [
            (Failure::Transport { message: "transport error: reset".into() }, "transport error: reset"),
            (Failure::Protocol { message: "protocol error: bad JSON".into() }, "protocol error: bad JSON"),
            (
                Failure::Http {
                    status: 599,
                    message: "HTTP 599: HTTP 599: odd".into(),
                    code: None,
                    class: None,
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream: false,
                    content_filter: None,
                },
                "odd",
            ),
            (
                Failure::Http {
                    status: 500,
                    message: "HTTP 500".into(),
                    code: None,
                    class: None,
                    retry_after_ms: None,
                    should_retry: None,
                    in_stream: false,
                    content_filter: None,
                },
                "upstream answered HTTP 500",
            ),
        ];
        for (failure, message) in cases {
            assert_eq!(GatewayError::from_failure(&failure, None).message, message, "{failure:?}");
        }
    }
}
