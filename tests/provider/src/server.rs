//! HTTP: one hyper connection per TCP connection, routing, CORS and the control API.
//!
//! Every answer says `connection: close` unless its step says `keepAlive`: each request has its own
//! connection, which the server closes after the response. So a connection closed early always
//! means that one request was abandoned, and `connectionsOpen` drops to 0 as soon as the answers
//! are out, with no idle pooled sockets left. A `keepAlive` step leaves its connection open for
//! the client's pool, so a later step can reset a connection the client reused (the request log
//! says each request's place on its connection: `onConnection`).

use std::convert::Infallible;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, CONNECTION, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use socket2::SockRef;
use tokio::net::TcpStream;
use tokio::sync::Notify;

use crate::scenario::{credentials_echo, is_valid_scenario_id, Registry, RequestInfo, ScenarioSpec};
use crate::script::{play, Ask, ScriptedBody};
use crate::wire::{reasoning, ErrorInfo, Format};

/// Request bodies larger than this are refused (413).
const MAX_BODY_BYTES: usize = 16 << 20;
/// Headers whose values are keys: the log says they were sent, never what they held.
const KEY_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];
const MODEL_WHEN_UNNAMED: &str = "scripted-model";

/// Serves one TCP connection until it closes, the client goes away, or a `reset` step cuts it.
pub async fn serve_connection(stream: TcpStream, registry: Arc<Registry>) {
    // Declared first, so dropped last: the connection counts as open until its socket is closed.
    let counted = registry.connection_accepted();
    // A second descriptor of the same socket: once hyper's is dropped, closing this one with
    // SO_LINGER 0 makes the kernel send an RST instead of a FIN.
    let socket = match stream.as_fd().try_clone_to_owned() {
        Ok(socket) => socket,
        Err(error) => return eprintln!("baton-provider: cannot duplicate a connection's socket: {error}"),
    };
    let reset = Notify::new();
    let (registry, reset, counted) = (&registry, &reset, &counted);
    let service = service_fn(move |mut request: Request<Incoming>| {
        let on_connection = counted.request_arrived();
        request.extensions_mut().insert(OnConnection(on_connection));
        async move { Ok::<_, Infallible>(handle(request, registry, reset).await) }
    });
    // hyper reads while it waits for the handler or the body, so it notices the client closing
    // at any point and drops them: that is what `RequestTracker` observes.
    let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    // Errors here are clients going away mid-answer, which is what the tests provoke.
    let reset_requested = tokio::select! {
        _ = connection => false,
        () = reset.notified() => true,
    };
    if reset_requested {
        if let Err(error) = SockRef::from(&socket).set_linger(Some(Duration::ZERO)) {
            eprintln!("baton-provider: cannot set SO_LINGER 0 for a reset: {error}");
        }
    }
}

/// A request's place on its connection: 1 for the first, 2 for the first one on a reused connection.
#[derive(Clone, Copy)]
struct OnConnection(u32);

/// Marks an answer whose connection stays open for the client's next request (a `keepAlive` step).
#[derive(Clone, Copy)]
pub struct KeepAlive;

async fn handle(request: Request<Incoming>, registry: &Arc<Registry>, reset: &Notify) -> Response<ScriptedBody> {
    let mut response = if request.method() == Method::OPTIONS {
        let mut preflight = Response::new(ScriptedBody::immediate(Bytes::new()));
        *preflight.status_mut() = StatusCode::NO_CONTENT;
        preflight
            .headers_mut()
            .insert(HeaderName::from_static("access-control-allow-private-network"), HeaderValue::from_static("true"));
        preflight
    } else {
        route(request, registry, reset).await
    };
    allow_any_origin(response.headers_mut());
    if response.extensions().get::<KeepAlive>().is_none() {
        response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A page on another origin calls the provider, so every answer allows it (a step's own
/// `headers` win, so a test can also break CORS on purpose). `*` in allow-headers does not cover
/// `authorization` in browsers, hence it is named too.
fn allow_any_origin(headers: &mut HeaderMap) {
    let cors = [
        ("access-control-allow-origin", "*"),
        ("access-control-allow-headers", "authorization, *"),
        ("access-control-allow-methods", "GET, POST, PUT, OPTIONS"),
        ("access-control-expose-headers", "*"),
    ];
    for (name, value) in cors {
        headers.entry(HeaderName::from_static(name)).or_insert(HeaderValue::from_static(value));
    }
}

async fn route(request: Request<Incoming>, registry: &Arc<Registry>, reset: &Notify) -> Response<ScriptedBody> {
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    if let Some(id) = path.strip_prefix("/_scenarios/") {
        if !is_valid_scenario_id(id) {
            return control_error(StatusCode::BAD_REQUEST, format!("scenario ids are [A-Za-z0-9_.-]+, got {id:?}"));
        }
        return match method {
            Method::GET => json_response(StatusCode::OK, &registry.report(id)),
            Method::PUT => define_scenario(request, registry, id).await,
            _ => control_error(StatusCode::METHOD_NOT_ALLOWED, "use GET or PUT on /_scenarios/{id}".into()),
        };
    }
    match (path.as_str(), method) {
        ("/_stats", Method::GET) => json_response(StatusCode::OK, &registry.stats()),
        ("/_reset", Method::POST) => {
            registry.forget_all();
            json_response(StatusCode::OK, &json!({"ok": true}))
        }
        ("/_stats", _) => control_error(StatusCode::METHOD_NOT_ALLOWED, "use GET on /_stats".into()),
        ("/_reset", _) => control_error(StatusCode::METHOD_NOT_ALLOWED, "use POST on /_reset".into()),
        _ => provider(request, registry, reset).await,
    }
}

async fn define_scenario(request: Request<Incoming>, registry: &Registry, id: &str) -> Response<ScriptedBody> {
    let body = match read_body(request.into_body()).await {
        Ok(body) => body,
        Err((status, message)) => return control_error(status, message),
    };
    let spec: ScenarioSpec = match serde_json::from_slice(&body) {
        Ok(spec) => spec,
        Err(error) => return control_error(StatusCode::BAD_REQUEST, format!("invalid scenario: {error}")),
    };
    let steps = spec.steps.len();
    match registry.define(id, spec.steps) {
        Ok(()) => json_response(StatusCode::OK, &json!({"ok": true, "steps": steps})),
        Err(message) => control_error(StatusCode::BAD_REQUEST, message),
    }
}

/// A provider endpoint, recognized by the end of the path after an optional `/s/{scenario}`.
struct Endpoint<'a> {
    scenario: &'a str,
    format: Format,
    /// Gemini names the model and whether to stream in the path.
    gemini: Option<GeminiCall<'a>>,
}

struct GeminiCall<'a> {
    model: &'a str,
    stream: bool,
}

impl<'a> Endpoint<'a> {
    fn parse(path: &'a str) -> Option<Self> {
        let (scenario, rest) = match path.strip_prefix("/s/") {
            Some(after) => after.split_at(after.find('/')?),
            None => ("default", path),
        };
        let endpoint = |format| Some(Endpoint { scenario, format, gemini: None });
        if rest.ends_with("/chat/completions") {
            return endpoint(Format::OpenAiChat);
        }
        if rest.ends_with("/messages") {
            return endpoint(Format::AnthropicMessages);
        }
        if rest.ends_with("/responses") {
            return endpoint(Format::OpenAiResponses);
        }
        let (models, call) = rest.rsplit_once('/')?;
        let (model, method) = call.split_once(':')?;
        let stream = match method {
            "generateContent" => false,
            "streamGenerateContent" => true,
            _ => return None,
        };
        (models.ends_with("/models") && !model.is_empty()).then_some(Endpoint {
            scenario,
            format: Format::Gemini,
            gemini: Some(GeminiCall { model, stream }),
        })
    }
}

async fn provider(request: Request<Incoming>, registry: &Arc<Registry>, reset: &Notify) -> Response<ScriptedBody> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path();
    let Some(endpoint) = Endpoint::parse(path) else {
        return control_error(
            StatusCode::NOT_FOUND,
            format!(
                "no scripted endpoint at {path}: expected …/chat/completions, …/messages, …/responses, \
                 …/models/{{model}}:generateContent or …/models/{{model}}:streamGenerateContent?alt=sse, \
                 optionally after /s/{{scenario}}"
            ),
        );
    };
    let format = endpoint.format;
    let query = parts.uri.query().unwrap_or("");
    if !is_valid_scenario_id(endpoint.scenario) {
        let message = format!("scenario ids are [A-Za-z0-9_.-]+, got {:?}", endpoint.scenario);
        return provider_error(format, StatusCode::BAD_REQUEST, message);
    }
    if parts.method != Method::POST {
        return provider_error(format, StatusCode::METHOD_NOT_ALLOWED, format!("use POST on {path}"));
    }
    if endpoint.gemini.as_ref().is_some_and(|call| call.stream) && query_value(query, "alt") != Some("sse") {
        let message = "this provider streams Gemini only as server-sent events: add ?alt=sse".to_owned();
        return provider_error(format, StatusCode::BAD_REQUEST, message);
    }
    let body = match read_body(body).await {
        Ok(body) => body,
        Err((status, message)) => return provider_error(format, status, message),
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(error) => {
            return provider_error(format, StatusCode::BAD_REQUEST, format!("the request body is not JSON: {error}"))
        }
    };

    let (stream, model) = match &endpoint.gemini {
        Some(call) => (call.stream, Some(call.model.to_owned())),
        None => (body["stream"] == true, body["model"].as_str().map(str::to_owned)),
    };
    let include_usage = body["stream_options"]["include_usage"] == true;
    let last_turn = format.last_turn(&body);
    let last_user_text = format.last_user_text(&body);
    let answered_model = model.clone().unwrap_or_else(|| MODEL_WHEN_UNNAMED.to_owned());
    let credentials = credentials_echo(&parts.headers, query_value(query, "key"));
    let history_refused = reasoning::refusal(format, &body, &answered_model);
    let encrypted_reasoning =
        body["include"].as_array().is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content"));
    let chat_messages = match format {
        Format::OpenAiChat => body["messages"].as_array().cloned().unwrap_or_default(),
        _ => Vec::new(),
    };
    let asked = match format {
        Format::OpenAiChat => body["logprobs"] == true,
        Format::OpenAiResponses => {
            body["include"].as_array().is_some_and(|i| i.iter().any(|v| v == "message.output_text.logprobs"))
        }
        Format::AnthropicMessages | Format::Gemini => false,
    };
    let top_logprobs = asked.then(|| body["top_logprobs"].as_u64().unwrap_or(0));
    let on_connection = parts.extensions.get::<OnConnection>().map_or(1, |n| n.0);
    let info = RequestInfo {
        path: path.to_owned(),
        format,
        stream,
        model,
        auth: auth_kind(&parts.headers),
        key_in_url: query_value(query, "key").is_some(),
        headers: recorded_headers(&parts.headers),
        body,
        on_connection,
    };
    let (step, serial, tracker) = registry.begin(endpoint.scenario, info);
    let reused_connection = on_connection > 1;
    let ask = Ask {
        format,
        stream,
        model: answered_model,
        include_usage,
        serial,
        credentials,
        last_turn,
        history_refused,
        encrypted_reasoning,
        chat_messages,
        top_logprobs,
        reused_connection,
        last_user_text,
    };
    play(step, ask, tracker, reset).await
}

async fn read_body(body: Incoming) -> Result<Bytes, (StatusCode, String)> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<LengthLimitError>() => {
            Err((StatusCode::PAYLOAD_TOO_LARGE, format!("the request body is larger than {MAX_BODY_BYTES} bytes")))
        }
        Err(error) => Err((StatusCode::BAD_REQUEST, format!("cannot read the request body: {error}"))),
    }
}

/// The value of a query parameter (`Some("")` when present without a value); not percent-decoded.
fn query_value<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|pair| match pair.split_once('=') {
        Some((key, value)) => (key == name).then_some(value),
        None => (pair == name).then_some(""),
    })
}

/// Where the request carried its key, without looking at more of it than the scheme.
fn auth_kind(headers: &HeaderMap) -> Option<&'static str> {
    if let Some(authorization) = headers.get("authorization") {
        let bearer = authorization.as_bytes().get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case(b"bearer "));
        return Some(if bearer { "bearer" } else { "authorization" });
    }
    ["x-api-key", "x-goog-api-key"].into_iter().find(|name| headers.contains_key(*name))
}

fn recorded_headers(headers: &HeaderMap) -> Map<String, Value> {
    headers
        .keys()
        .map(|name| {
            let value = if KEY_HEADERS.contains(&name.as_str()) {
                "[redacted]".to_owned()
            } else {
                let values: Vec<_> =
                    headers.get_all(name).iter().map(|value| String::from_utf8_lossy(value.as_bytes())).collect();
                values.join(", ")
            };
            (name.as_str().to_owned(), Value::String(value))
        })
        .collect()
}

fn json_response(status: StatusCode, value: &Value) -> Response<ScriptedBody> {
    let mut response = Response::new(ScriptedBody::immediate(value.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn control_error(status: StatusCode, message: String) -> Response<ScriptedBody> {
    json_response(status, &json!({"error": message}))
}

/// An error the provider itself would give (bad request, wrong method), in its own error format.
fn provider_error(format: Format, status: StatusCode, message: String) -> Response<ScriptedBody> {
    json_response(status, &format.error_body(&ErrorInfo { status, kind: None, message }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_recognized_by_suffix() {
        let parse = |path| Endpoint::parse(path).map(|endpoint| (endpoint.scenario, endpoint.format));
        assert_eq!(parse("/v1/chat/completions"), Some(("default", Format::OpenAiChat)));
        assert_eq!(parse("/s/a-1.b_2/v1/messages"), Some(("a-1.b_2", Format::AnthropicMessages)));
        assert_eq!(parse("/s/x/openai/v1/responses"), Some(("x", Format::OpenAiResponses)));
        assert_eq!(parse("/v1/models"), None);
        assert_eq!(parse("/s/only-a-scenario"), None);
        let gemini = Endpoint::parse("/s/g/v1beta/models/gemini-2.5-flash:streamGenerateContent").unwrap();
        assert_eq!((gemini.scenario, gemini.format), ("g", Format::Gemini));
        assert!(gemini.gemini.is_some_and(|call| call.stream && call.model == "gemini-2.5-flash"));
        assert!(Endpoint::parse("/v1beta/models/m:countTokens").is_none());
    }

    #[test]
    fn keys_are_reported_by_place_never_by_value() {
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", HeaderValue::from_static("sk-secret"));
        headers.insert("anthropic-version", HeaderValue::from_static("2023-06-01"));
        assert_eq!(auth_kind(&headers), Some("x-api-key"));
        let recorded = Value::Object(recorded_headers(&headers));
        assert_eq!(recorded, json!({"x-api-key": "[redacted]", "anthropic-version": "2023-06-01"}));
        headers.insert("authorization", HeaderValue::from_static("Bearer sk-secret"));
        assert_eq!(auth_kind(&headers), Some("bearer"));
        assert_eq!(query_value("alt=sse&key=abc", "key"), Some("abc"));
        assert_eq!(query_value("alt=sse", "key"), None);
    }
}
