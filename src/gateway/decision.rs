//! The gateway's one decision about a request, made from its method, path and headers alone,
//! before any body is read: either a complete reply (a refusal, a CORS preflight, a `GET`'s
//! answer) or a [`Plan`] that says how much body to read and how to call. pkg/gateway.js hands
//! the head over, executes the outcome and decides nothing itself: the endpoint, CORS, the
//! gateway key, the content type, the body cap and the deadline are all decided here, once.
//!
//! Two steps, because the body cap comes from the config: [`decide`] on the head, then
//! [`Plan::body`] on what was read (at most one byte past the cap), which refuses a body that
//! is too large, unreadable or not UTF-8.

use crate::float::parse_f64;
use llm_baton_wire::json::{Cursor, Kind};
use llm_baton_wire::write::{JsonWriter, ToJson};

use super::access::{allow_origin, authorized, cors_origin, preflight};
use super::deadline::{requested_deadline, DEADLINE_HEADER, SDK_TIMEOUT_HEADER};
use super::{ClientFormat, GatewayError, Reply};
use crate::config::{Config, Cors};

/// Where the gateway serves: behind HTTP (a Worker, `Deno.serve`), where the gateway key, CORS
/// and the body cap apply, or in process as `baton.fetch`, whose caller is trusted and already
/// holds the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    Http,
    InProcess,
}

/// What the decision reads of a request.
pub struct Head<'a> {
    pub method: &'a str,
    /// The URL's path as the request has it; trailing slashes are ignored.
    pub path: &'a str,
    /// A request header by its lowercase name.
    pub header: &'a dyn Fn(&str) -> Option<String>,
}

/// What to do with a request.
#[derive(Debug, PartialEq)]
pub enum Decision {
    /// Answer with this and nothing else.
    Reply(Reply),
    /// Answer with a listing of the gateway's state, given headers by `caller`.
    Get(Listing, Caller),
    /// Read the body as the plan says, then call.
    Read(Plan),
}

/// The `GET` endpoints, answered from the engine's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// `GET /v1/models`, or `GET /v1/models/{id}` for one (`id` as the path has it, still
    /// percent-encoded: the host decodes it); in Anthropic's shape for a client that sends
    /// `anthropic-version`.
    Models { id: Option<String>, anthropic: bool },
    /// `GET /v1/health`.
    Health,
}

/// Who a request's replies go to, which decides the headers every one of them carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Over HTTP; `origin` is the `access-control-allow-origin` CORS allows, if any.
    Http { origin: Option<String> },
    /// `baton.fetch`: llm-baton has already retried and failed over, so an SDK retrying an error
    /// reply would run the whole route again; every error says `x-should-retry: false` (both
    /// official SDKs obey it before their own rules).
    InProcess,
}

impl Caller {
    /// `reply` with the headers this caller's replies carry.
    pub fn dressed(&self, mut reply: Reply) -> Reply {
        match self {
            Caller::Http { origin: Some(origin) } => allow_origin(&mut reply, origin),
            Caller::Http { origin: None } => {}
            Caller::InProcess if reply.status >= 400 => {
                reply.headers.insert("x-should-retry", "false".into());
            }
            Caller::InProcess => {}
        }
        reply
    }
}

/// How an admitted request is read and called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub format: ClientFormat,
    pub caller: Caller,
    /// The call's deadline from the headers; `None`: the config's `deadlineMs`.
    pub deadline_ms: Option<u64>,
    /// The most body bytes the gateway takes (`gateway.maxBodyBytes`); `None` in process.
    pub limit: Option<u64>,
}

/// What reading a request's body gave.
pub enum BodyRead<'a> {
    /// Its bytes, at most one past the plan's limit (a reader stops there).
    Bytes(&'a [u8]),
    /// The reader failed with this message.
    Failed(&'a str),
}

impl Plan {
    /// The body's text, or the refusal: 413 over the limit, 400 unreadable. Over HTTP a body
    /// that is not UTF-8 is refused; in process it is decoded as `Request.text()` would, with
    /// U+FFFD for each bad sequence. A leading byte order mark is dropped, as both decoders do.
    pub fn body(&self, read: BodyRead<'_>) -> Result<String, GatewayError> {
        let bytes = match read {
            BodyRead::Failed(message) => {
                return Err(GatewayError::invalid(format!("could not read the request body: {message}")))
            }
            BodyRead::Bytes(bytes) => bytes,
        };
        if let Some(limit) = self.limit.filter(|limit| bytes.len() as u64 > *limit) {
            return Err(too_large(limit));
        }
        let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
        match self.caller {
            Caller::InProcess => Ok(String::from_utf8_lossy(bytes).into_owned()),
            Caller::Http { .. } => String::from_utf8(bytes.to_vec())
                .map_err(|_| GatewayError::invalid("the request body is not valid UTF-8 JSON")),
        }
    }

    /// A refusal after the decision (a body, a model or a call that failed), as this caller gets it.
    pub fn refusal(&self, e: &GatewayError, target: &str, attempts: usize) -> Reply {
        self.caller.dressed(Reply::error(self.format, e, target, attempts))
    }
}

/// The `model` a request's body names, read without parsing the rest (every client format has it
/// at the top level): whose targets a health store is asked about before the request is served,
/// so a probe the store grants goes to a request that may take it. None for a body that is not a
/// JSON object naming its model as a string (`serve` refuses it, so nothing is asked).
pub fn requested_model(body: &[u8]) -> Option<String> {
    let body = body.strip_prefix("\u{feff}".as_bytes()).unwrap_or(body);
    let mut cursor = Cursor::new(std::str::from_utf8(body).ok()?, MODEL_SCAN_DEPTH);
    cursor.enter_object().ok()?;
    while let Some(key) = cursor.next_key().ok()? {
        if key == "model" {
            return match cursor.peek().ok()? {
                Kind::String => cursor.string().ok().map(|model| model.into_owned()),
                _ => None,
            };
        }
        cursor.skip().ok()?;
    }
    None
}

/// How deep the fields before `model` may nest for [`requested_model`] to read past them.
const MODEL_SCAN_DEPTH: usize = 128;

impl ToJson for Plan {
    /// `{format, deadlineMs?, origin?, limit?}`: what JavaScript carries from the decision to
    /// the call.
    fn write_json(&self, w: &mut JsonWriter) {
        w.begin_object();
        w.field("format", self.format.as_str());
        w.opt_field("deadlineMs", self.deadline_ms.as_ref());
        if let Caller::Http { origin: Some(origin) } = &self.caller {
            w.field("origin", origin);
        }
        w.opt_field("limit", self.limit.as_ref());
        w.end_object();
    }
}

struct Endpoint {
    path: &'static str,
    method: &'static str,
    format: ClientFormat,
    /// `None`: a call; else the listing a `GET` answers.
    listing: Option<Listing>,
}

const ENDPOINTS: [Endpoint; 5] = [
    Endpoint { path: "/v1/chat/completions", method: "POST", format: ClientFormat::OpenaiChat, listing: None },
    Endpoint { path: "/v1/messages", method: "POST", format: ClientFormat::AnthropicMessages, listing: None },
    Endpoint { path: "/v1/responses", method: "POST", format: ClientFormat::OpenaiResponses, listing: None },
    Endpoint {
        path: "/v1/models",
        method: "GET",
        format: ClientFormat::OpenaiChat,
        listing: Some(Listing::Models { id: None, anthropic: false }),
    },
    Endpoint { path: "/v1/health", method: "GET", format: ClientFormat::OpenaiChat, listing: Some(Listing::Health) },
];

/// What `baton.fetch` serves: the endpoints but health (that is `baton.health()`), matched on
/// the path's end, since an SDK's baseURL may be anything.
fn in_process(endpoint: &Endpoint) -> Option<&'static str> {
    (endpoint.listing != Some(Listing::Health)).then(|| &endpoint.path["/v1".len()..])
}

/// `GET /healthz`: a load balancer's liveness probe, answered without a key and saying nothing
/// but that the gateway is up (`/v1/health`, behind the key, tells the targets' health).
fn alive() -> Reply {
    let mut reply = Reply::bare(200);
    reply.headers.insert("content-type", "text/plain; charset=utf-8".into());
    reply.body = "ok\n".into();
    reply
}

/// Why a preflight from `origin` is refused, and the `gateway.cors` that would let it in.
fn refused_origin(cors: &Cors, origin: &str) -> String {
    let origin = origin.to_json();
    match cors {
        Cors::Origins(list) => {
            format!(
                "the origin {origin} is not in gateway.cors ({}): add it there to let its pages call this gateway",
                list.to_json()
            )
        }
        _ => format!(
            "gateway.cors is not set, so no page may call this gateway: set it to a list of origins, e.g. [{origin}]"
        ),
    }
}

/// Decides what to do with a request from its head (see the module doc).
pub fn decide(config: &Config, site: Site, head: &Head<'_>) -> Decision {
    let path = head.path.trim_end_matches('/');
    let find = |path: &str| match site {
        Site::Http => ENDPOINTS.iter().find(|e| e.path == path),
        Site::InProcess => ENDPOINTS.iter().find(|e| in_process(e).is_some_and(|end| path.ends_with(end))),
    };
    let model = find(path).is_none().then(|| one_model(site, path)).flatten();
    let endpoint = find(model.as_ref().map_or(path, |(models, _)| models));
    let caller = match site {
        Site::Http => Caller::Http { origin: cors_origin(&config.gateway, (head.header)("origin").as_deref()) },
        Site::InProcess => Caller::InProcess,
    };
    let format = endpoint.map_or_else(
        || if path.ends_with("/messages") { ClientFormat::AnthropicMessages } else { ClientFormat::OpenaiChat },
        |e| e.format,
    );
    let refusal = |e: GatewayError| caller.dressed(Reply::error(format, &e, "", 0));
    let refuse = |status: u16, message: String| Decision::Reply(refusal(GatewayError::new(status, message)));
    if site == Site::Http && path == "/healthz" && matches!(head.method, "GET" | "HEAD") {
        return Decision::Reply(alive());
    }
    if let Caller::Http { origin } = &caller {
        match (origin, head.method) {
            (Some(origin), "OPTIONS") => return Decision::Reply(preflight(origin)),
            // A browser's preflight from an origin CORS leaves out: the page only sees "Failed to
            // fetch", so the refusal (in its network panel, and logged by pkg/gateway.js) says why.
            (None, "OPTIONS") if (head.header)("access-control-request-method").is_some() => {
                let from = (head.header)("origin").unwrap_or_default();
                return refuse(403, refused_origin(&config.gateway.cors, &from));
            }
            _ => {}
        }
    }
    let Some(endpoint) = endpoint else {
        return refuse(404, no_endpoint(site, head));
    };
    if head.method != endpoint.method {
        let message = format!("{} takes {}, not {}", head.path, endpoint.method, head.method);
        let mut reply = refusal(GatewayError::new(405, message));
        reply.headers.insert("allow", endpoint.method.into());
        return Decision::Reply(reply);
    }
    if site == Site::Http {
        let authorization = (head.header)("authorization");
        let x_api_key = (head.header)("x-api-key");
        if !authorized(&config.gateway, authorization.as_deref(), x_api_key.as_deref()) {
            let message = if authorization.is_some_and(|a| !a.is_empty()) || x_api_key.is_some() {
                "the gateway key is not valid"
            } else {
                "a gateway key is required: send Authorization: Bearer <key> or x-api-key: <key>"
            };
            return refuse(401, message.into());
        }
    }
    if let Some(listing) = &endpoint.listing {
        let listing = match listing {
            Listing::Models { .. } => {
                Listing::Models { id: model.map(|(_, id)| id), anthropic: (head.header)("anthropic-version").is_some() }
            }
            Listing::Health => Listing::Health,
        };
        return Decision::Get(listing, caller);
    }
    let limit = match site {
        Site::Http => {
            if let Some(problem) = content_type_problem((head.header)("content-type").as_deref()) {
                return refuse(415, format!("{} {path} {problem}", head.method));
            }
            let limit = config.gateway.max_body_bytes;
            let declared = (head.header)("content-length").and_then(|n| parse_f64(n.trim()));
            if declared.is_some_and(|n| n > limit as f64) {
                return Decision::Reply(refusal(too_large(limit)));
            }
            Some(limit)
        }
        Site::InProcess => None,
    };
    let own = (head.header)(DEADLINE_HEADER);
    let sdk = (head.header)(SDK_TIMEOUT_HEADER);
    match requested_deadline(own.as_deref(), sdk.as_deref(), config.deadline_ms) {
        Ok(deadline_ms) => Decision::Read(Plan { format, caller, deadline_ms, limit }),
        Err(e) => Decision::Reply(refusal(e)),
    }
}

/// A path naming one model, `/v1/models/{id}` (in process `…/models/{id}`): the models
/// endpoint's path and the id.
fn one_model(site: Site, path: &str) -> Option<(&str, String)> {
    let at = match site {
        Site::Http => path.starts_with("/v1/models/").then_some(3)?,
        Site::InProcess => path.find("/models/")?,
    };
    let (models, id) = path.split_at(at + "/models".len());
    let id = &id[1..];
    (!id.is_empty()).then(|| (models, id.to_string()))
}

/// What the gateway serves, for a 404 (the endpoints above, as a test checks).
const SERVED_HTTP: &str =
    "POST /v1/chat/completions, POST /v1/messages, POST /v1/responses, GET /v1/models, GET /v1/models/{id}, GET /v1/health";
const SERVED_IN_PROCESS: &str =
    "POST …/chat/completions, POST …/messages, POST …/responses, GET …/models, GET …/models/{id} (matched on the path's end, any host)";

fn no_endpoint(site: Site, head: &Head<'_>) -> String {
    let (method, path) = (head.method, head.path);
    match site {
        Site::Http => format!("no endpoint {method} {path}; the gateway serves {SERVED_HTTP}"),
        Site::InProcess => format!("baton.fetch has no endpoint {method} {path}; it serves {SERVED_IN_PROCESS}"),
    }
}

fn too_large(limit: u64) -> GatewayError {
    GatewayError::new(
        413,
        format!("the request body is larger than the gateway's limit of {limit} bytes (gateway.maxBodyBytes)"),
    )
}

/// Why a POST's content-type is refused, or `None` when it is JSON. Requiring
/// `application/json` makes every cross-site browser POST a CORS preflight, which the gateway
/// answers only for configured origins: a web page can no longer send a `text/plain` "simple
/// request" to a gateway on localhost and spend its keys.
fn content_type_problem(value: Option<&str>) -> Option<String> {
    let value = value.unwrap_or("");
    let kind = value.split(';').next().unwrap_or("").trim();
    if kind.eq_ignore_ascii_case("application/json") {
        return None;
    }
    let got = if value.is_empty() {
        "none".to_string()
    } else if value.chars().count() > 60 {
        format!("{}...", value.chars().take(57).collect::<String>()).to_json()
    } else {
        value.to_json()
    };
    Some(format!("needs the header content-type: application/json (got {got}); send the body as JSON with that header"))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::Value;

    use super::*;

    fn config(gateway: &str) -> Config {
        Config::from_json(&format!(
            r#"{{"targets": {{"t": {{"format": "openai_chat", "baseUrl": "https://o.example/v1", "model": "m"}}}},
                "deadlineMs": 30000, "gateway": {gateway}}}"#
        ))
        .unwrap()
    }

    fn decide_on(config: &Config, site: Site, method: &str, path: &str, headers: &[(&str, &str)]) -> Decision {
        let headers: HashMap<String, String> = headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let header = |name: &str| headers.get(name).cloned();
        decide(config, site, &Head { method, path, header: &header })
    }

    /// A refusal's status, error message and headers.
    fn refused(decision: Decision) -> (u16, String, crate::gateway::Headers) {
        let Decision::Reply(reply) = decision else { panic!("not a reply: {decision:?}") };
        let body: Value = serde_json::from_str(&reply.body).unwrap_or(Value::Null);
        let message = body["error"]["message"].as_str().unwrap_or("").to_string();
        (reply.status, message, reply.headers)
    }

    const JSON: (&str, &str) = ("content-type", "application/json");

    #[test]
    fn an_admitted_post_is_a_plan() {
        let open = config("{}");
        for path in ["/v1/chat/completions", "/v1/chat/completions/", "/v1/messages", "/v1/responses"] {
            let Decision::Read(plan) = decide_on(&open, Site::Http, "POST", path, &[JSON]) else { panic!("{path}") };
            assert_eq!(
                (plan.deadline_ms, plan.limit, &plan.caller),
                (None, Some(1 << 20), &Caller::Http { origin: None })
            );
        }
        let Decision::Read(plan) = decide_on(&open, Site::Http, "POST", "/v1/messages", &[JSON]) else { panic!() };
        assert_eq!(plan.format, ClientFormat::AnthropicMessages);
        let headers = [("content-type", "Application/JSON; charset=utf-8"), ("x-baton-deadline-ms", "1500")];
        let Decision::Read(plan) = decide_on(&open, Site::Http, "POST", "/v1/responses", &headers) else { panic!() };
        assert_eq!((plan.format, plan.deadline_ms), (ClientFormat::OpenaiResponses, Some(1500)));
        assert_eq!(plan.to_json(), r#"{"format":"responses","deadlineMs":1500,"limit":1048576}"#);
    }

    #[test]
    fn refusals_before_the_body() {
        let keyed = config(r#"{"apiKeys": ["gw-key"], "maxBodyBytes": 100}"#);
        let key = ("authorization", "Bearer gw-key");
        let cases = [
            ("POST", "/v2/chat", vec![key, JSON], 404, "no endpoint POST /v2/chat; the gateway serves POST /v1/chat/completions, POST /v1/messages, POST /v1/responses, GET /v1/models, GET /v1/models/{id}, GET /v1/health"),
            ("GET", "/v1/chat/completions/", vec![key], 405, "/v1/chat/completions/ takes POST, not GET"),
            ("POST", "/v1/models", vec![key, JSON], 405, "/v1/models takes GET, not POST"),
            ("POST", "/v1/chat/completions", vec![JSON], 401, "a gateway key is required: send Authorization: Bearer <key> or x-api-key: <key>"),
            ("POST", "/v1/chat/completions", vec![("x-api-key", ""), JSON], 401, "the gateway key is not valid"),
            ("GET", "/v1/models", vec![("authorization", "Bearer gw-ke")], 401, "the gateway key is not valid"),
            ("POST", "/v1/chat/completions/", vec![key, ("content-type", "text/plain")], 415, "POST /v1/chat/completions needs the header content-type: application/json (got \"text/plain\"); send the body as JSON with that header"),
            ("POST", "/v1/messages", vec![("x-api-key", "gw-key"), JSON, ("content-length", "101")], 413, "the request body is larger than the gateway's limit of 100 bytes (gateway.maxBodyBytes)"),
            ("POST", "/v1/messages", vec![key, JSON, ("x-baton-deadline-ms", "soon")], 400, "x-baton-deadline-ms must be a positive number of milliseconds up to 2147483647 (got \"soon\"); omit it to use the gateway's deadlineMs"),
        ];
        for (method, path, headers, status, message) in cases {
            let (got_status, got_message, got_headers) = refused(decide_on(&keyed, Site::Http, method, path, &headers));
            assert_eq!((got_status, got_message.as_str()), (status, message), "{method} {path}");
            let allow = (status == 405).then_some(if method == "GET" { "POST" } else { "GET" });
            assert_eq!(got_headers.get("allow").map(String::as_str), allow, "{method} {path}");
            assert!(got_headers.get("access-control-allow-origin").is_none(), "no CORS configured");
        }
        let (_, message, _) = refused(decide_on(&keyed, Site::Http, "POST", "/v1/chat/completions", &[key]));
        assert!(message.contains("(got none)"), "{message}");
        let long = format!("text/{}", "x".repeat(80));
        let (_, message, _) =
            refused(decide_on(&keyed, Site::Http, "POST", "/v1/chat/completions", &[key, ("content-type", &long)]));
        assert!(message.contains(&format!("(got \"text/{}...\")", "x".repeat(52))), "{message}");
        // The anthropic shape for a path that looks like Messages.
        let Decision::Reply(reply) = decide_on(&keyed, Site::Http, "POST", "/x/messages", &[key]) else { panic!() };
        assert!(reply.body.starts_with(r#"{"type":"error""#), "{}", reply.body);
    }

    #[test]
    fn healthz_answers_anyone_and_tells_nothing() {
        let keyed = config(r#"{"apiKeys": ["k"], "cors": ["https://app.example"]}"#);
        for method in ["GET", "HEAD"] {
            let Decision::Reply(reply) = decide_on(&keyed, Site::Http, method, "/healthz", &[("origin", "https://x")])
            else {
                panic!("{method} /healthz is not a reply")
            };
            assert_eq!((reply.status, reply.body.as_str()), (200, "ok\n"));
            assert_eq!(reply.headers.to_json(), r#"{"content-type":"text/plain; charset=utf-8"}"#);
        }
        let (status, _, _) = refused(decide_on(&keyed, Site::Http, "POST", "/healthz", &[]));
        assert_eq!(status, 404);
        let (status, _, _) = refused(decide_on(&keyed, Site::InProcess, "GET", "/healthz", &[]));
        assert_eq!(status, 404, "baton.fetch serves no probe");
    }

    #[test]
    fn cors_dresses_every_reply_and_answers_preflights() {
        let cors = config(r#"{"cors": ["https://app.example"], "apiKeys": ["k"]}"#);
        let page = ("origin", "https://app.example");
        let Decision::Reply(preflight) = decide_on(&cors, Site::Http, "OPTIONS", "/v1/anything", &[page]) else {
            panic!()
        };
        assert_eq!((preflight.status, preflight.to_json().contains(r#""body":null"#)), (204, true));
        assert_eq!(preflight.headers["access-control-allow-origin"], "https://app.example");
        assert_eq!(preflight.headers["access-control-allow-methods"], "GET, POST, OPTIONS");
        assert!(
            preflight.headers["access-control-allow-headers"].contains("x-baton-deadline-ms, traceparent, tracestate")
        );
        let (status, _, headers) = refused(decide_on(&cors, Site::Http, "POST", "/v1/chat/completions", &[page, JSON]));
        assert_eq!((status, headers["vary"].as_str()), (401, "origin"));
        assert_eq!(
            headers["access-control-expose-headers"],
            "x-baton-target, x-baton-attempts, x-baton-warning, retry-after"
        );
        // Another origin gets no CORS headers, and no preflight.
        let other = ("origin", "https://evil.example");
        let (status, _, headers) = refused(decide_on(&cors, Site::Http, "OPTIONS", "/v1/chat/completions", &[other]));
        assert_eq!((status, headers.get("access-control-allow-origin").is_some()), (405, false));
        // A browser's preflight from it is refused saying which origin and which field would let it in.
        let asks = ("access-control-request-method", "POST");
        let (status, body, headers) =
            refused(decide_on(&cors, Site::Http, "OPTIONS", "/v1/chat/completions", &[other, asks]));
        assert_eq!((status, headers.get("access-control-allow-origin").is_some()), (403, false));
        assert!(
            body.starts_with(
                r#"the origin "https://evil.example" is not in gateway.cors (["https://app.example"]): add it"#
            ),
            "{body}"
        );
        let closed = config(r#"{"apiKeys": ["k"]}"#);
        let (status, body, _) = refused(decide_on(&closed, Site::Http, "OPTIONS", "/v1/messages", &[other, asks]));
        assert_eq!(status, 403);
        let fix = r#"gateway.cors is not set, so no page may call this gateway: set it to a list of origins, e.g. ["https://evil.example"]"#;
        assert_eq!(body, fix);
        let Decision::Get(Listing::Models { .. }, caller) =
            decide_on(&cors, Site::Http, "GET", "/v1/models", &[page, ("x-api-key", "k")])
        else {
            panic!()
        };
        assert_eq!(caller, Caller::Http { origin: Some("https://app.example".into()) });
    }

    #[test]
    fn in_process_matches_the_paths_end_and_never_asks_for_a_key() {
        let keyed = config(r#"{"apiKeys": ["k"], "maxBodyBytes": 10}"#);
        let Decision::Read(plan) = decide_on(&keyed, Site::InProcess, "POST", "/api/v1/chat/completions", &[]) else {
            panic!()
        };
        assert_eq!((plan.format, plan.limit, plan.caller.clone()), (ClientFormat::OpenaiChat, None, Caller::InProcess));
        assert!(matches!(
            decide_on(&keyed, Site::InProcess, "GET", "/models", &[]),
            Decision::Get(Listing::Models { .. }, _)
        ));
        let (status, message, headers) = refused(decide_on(&keyed, Site::InProcess, "GET", "/v1/health", &[]));
        assert_eq!(
            (status, message.as_str()),
            (404, "baton.fetch has no endpoint GET /v1/health; it serves POST …/chat/completions, POST …/messages, POST …/responses, GET …/models, GET …/models/{id} (matched on the path's end, any host)")
        );
        assert_eq!(headers["x-should-retry"], "false");
        let (status, _, headers) = refused(decide_on(&keyed, Site::InProcess, "GET", "/v1/messages", &[]));
        assert_eq!((status, headers["allow"].as_str(), headers["x-should-retry"].as_str()), (405, "POST", "false"));
        let sdk = [("x-stainless-timeout", "2")];
        let Decision::Read(plan) = decide_on(&keyed, Site::InProcess, "POST", "/responses", &sdk) else { panic!() };
        assert_eq!(plan.deadline_ms, Some(2000));
    }

    #[test]
    fn a_models_path_with_an_id_asks_for_one_model_in_the_clients_shape() {
        let open = config("{}");
        // (site, path, the id asked for, whether the client sends anthropic-version)
        let cases = [
            (Site::Http, "/v1/models", None, false),
            (Site::Http, "/v1/models/chat/", Some("chat"), false),
            (Site::Http, "/v1/models/openai%2Fgpt-4o", Some("openai%2Fgpt-4o"), true),
            (Site::InProcess, "/api/v1/models/fast", Some("fast"), true),
            (Site::InProcess, "/models/v1/models", None, false),
        ];
        for (site, path, id, anthropic) in cases {
            let headers: &[(&str, &str)] = if anthropic { &[("anthropic-version", "2023-06-01")] } else { &[] };
            let decision = decide_on(&open, site, "GET", path, headers);
            let expected = Listing::Models { id: id.map(str::to_string), anthropic };
            assert!(matches!(&decision, Decision::Get(listing, _) if *listing == expected), "{path}: {decision:?}");
        }
        // A call's path that holds "/models/" is still the call, in process.
        let decision = decide_on(&open, Site::InProcess, "POST", "/models/v1/chat/completions", &[]);
        assert!(matches!(decision, Decision::Read(_)), "{decision:?}");
        let (status, _, headers) = refused(decide_on(&open, Site::Http, "POST", "/v1/models/chat", &[JSON]));
        assert_eq!((status, headers["allow"].as_str()), (405, "GET"));
    }

    #[test]
    fn the_404_lists_the_endpoints() {
        // The models endpoint serves one model too, at `{path}/{id}`.
        let served = |e: &Endpoint, path: &str| match e.listing {
            Some(Listing::Models { .. }) => format!("{0} {path}, {0} {path}/{{id}}", e.method),
            _ => format!("{} {path}", e.method),
        };
        let http: Vec<String> = ENDPOINTS.iter().map(|e| served(e, e.path)).collect();
        assert_eq!(SERVED_HTTP, http.join(", "));
        let in_process: Vec<String> =
            ENDPOINTS.iter().filter_map(|e| Some(served(e, &format!("…{}", in_process(e)?)))).collect();
        assert_eq!(SERVED_IN_PROCESS, format!("{} (matched on the path's end, any host)", in_process.join(", ")));
    }

    #[test]
    fn the_body_as_read() {
        let http = Plan {
            format: ClientFormat::OpenaiChat,
            caller: Caller::Http { origin: None },
            deadline_ms: None,
            limit: Some(5),
        };
        let in_process = Plan { caller: Caller::InProcess, limit: None, ..http.clone() };
        assert_eq!(http.body(BodyRead::Bytes(b"{}")), Ok("{}".to_string()));
        assert_eq!(http.body(BodyRead::Bytes(b"\xef\xbb\xbf{}")), Ok("{}".to_string()));
        assert_eq!(http.body(BodyRead::Bytes(b"{\"a\":1}")).unwrap_err().status, 413);
        let bad = http.body(BodyRead::Bytes(b"\"\xff\"")).unwrap_err();
        assert_eq!((bad.status, bad.message.as_str()), (400, "the request body is not valid UTF-8 JSON"));
        assert_eq!(in_process.body(BodyRead::Bytes(b"\"\xff\"")), Ok("\"\u{fffd}\"".to_string()));
        let failed = in_process.body(BodyRead::Failed("reset")).unwrap_err();
        assert_eq!((failed.status, failed.message.as_str()), (400, "could not read the request body: reset"));
        assert_eq!(in_process.refusal(&failed, "", 0).headers["x-should-retry"], "false");
    }
}
