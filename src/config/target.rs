//! A config target read and checked: the provider's format, base URL, model, key, headers and
//! limits. Everything here reaches the provider on every request, so it is checked before
//! anything is sent: a base URL with credentials in it, a header the HTTP client owns, or a
//! value no HTTP header can carry is refused with the reason, never a value that may be a
//! secret.

use std::fmt;

use serde_json::{Map, Value};

use super::azure_target;
use crate::format::azure::Azure;
use crate::format::{bedrock_converse, Cloud, Endpoint, Format, HttpRequest};
use crate::secret::{is_secret_header, Secret, REDACTED};
use crate::sigv4::{self, AwsCredentials, Unsigned};
use crate::value::{as_object, child, kind, show, wrong, wrong_value, FieldError, Obj};
use crate::vertex::{self, VertexAuth};

/// A provider endpoint and model. Neither `api_key` nor a credential header ever prints.
#[derive(Clone, PartialEq)]
pub struct Target {
    pub name: String,
    pub format: Format,
    pub base_url: String,
    pub model: String,
    pub api_key: Option<Secret>,
    pub headers: Vec<(String, String)>,
    pub timeouts: Timeouts,
    /// A malformed stream frame fails the attempt instead of being skipped with a warning.
    pub strict_frames: bool,
    /// The model continues a final assistant message (a prefill), so a broken stream may be
    /// continued here (`afterStart`). A property of the model, not the format: default false.
    pub prefill: bool,
    /// Whether requests carry the call's remaining budget in `x-baton-deadline-ms`.
    pub propagate_deadline: PropagateDeadline,
    /// Provider fields set at the top level of every request body, over what llm-baton wrote.
    pub extra_body: Option<Map<String, Value>>,
    /// Where the format is reached when not on its own API (`cloud`); Bedrock for every
    /// `bedrock_converse` target.
    pub cloud: Option<Cloud>,
    /// The AWS region a Bedrock target's requests go to and are signed for.
    pub region: Option<String>,
    /// AWS access keys that sign each request (SigV4), instead of an `apiKey`.
    pub aws: Option<AwsCredentials>,
    /// An Azure OpenAI target's URL style and credential header (`cloud: "azure"`); its key or
    /// Entra ID token is `api_key`, and `base_url` already holds its path under the resource.
    pub azure: Option<Azure>,
    /// A Vertex target's token, or the service account that mints them.
    pub vertex: Option<VertexAuth>,
}

/// A target's `propagateDeadline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PropagateDeadline {
    /// Once the target has answered as an llm-baton gateway (an `x-baton-attempts` header).
    #[default]
    Auto,
    Always,
    Never,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), if is_secret_header(k) { REDACTED } else { v.as_str() }))
            .collect();
        f.debug_struct("Target")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("headers", &headers)
            .field("timeouts", &self.timeouts)
            .field("strict_frames", &self.strict_frames)
            .field("prefill", &self.prefill)
            .field("propagate_deadline", &self.propagate_deadline)
            .field("extra_body", &self.extra_body.as_ref().map(|fields| fields.keys().collect::<Vec<_>>()))
            .field("cloud", &self.cloud)
            .field("region", &self.region)
            .field("aws", &self.aws)
            .field("azure", &self.azure)
            .field("vertex", &self.vertex)
            .finish()
    }
}

impl Target {
    /// What a format needs to build this target's requests.
    pub fn endpoint(&self) -> Endpoint<'_> {
        Endpoint {
            base_url: &self.base_url,
            model: &self.model,
            cloud: self.cloud,
            api_key: self.api_key.as_ref(),
            headers: &self.headers,
            extra_body: self.extra_body.as_ref(),
            azure: self.azure.as_ref(),
        }
    }
}

impl Target {
    /// Signs `http` with the target's AWS keys at `now_epoch_ms` (the wall clock), when it has
    /// them: `content-type` and `host` are signed, with the `x-amz-date` and session token this
    /// adds. Called by the driver last, per attempt, since a signature is good for 5 minutes.
    pub fn sign(&self, http: &mut HttpRequest, now_epoch_ms: u64) {
        let (Some(aws), Some(region)) = (&self.aws, &self.region) else { return };
        let signed: Vec<(String, String)> = http.headers.iter().filter(|(k, _)| k == "content-type").cloned().collect();
        let unsigned = Unsigned { method: http.method, url: &http.url, headers: &signed, body: http.body.as_bytes() };
        let headers = sigv4::sign(&unsigned, aws, region, bedrock_converse::SIGNING_SERVICE, now_epoch_ms);
        http.headers.retain(|(k, _)| !headers.iter().any(|(name, _)| name == k));
        http.headers.extend(headers);
    }
}

impl<'a> From<&'a Target> for Endpoint<'a> {
    fn from(target: &'a Target) -> Self {
        target.endpoint()
    }
}

/// Per-attempt limits, in milliseconds; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timeouts {
    /// From dispatch to the last byte of the answer.
    pub total_ms: Option<u64>,
    /// From dispatch to response headers (fetch cannot observe the TCP connect on its own).
    pub headers_ms: Option<u64>,
    /// From dispatch to the first visible content delta (streams only).
    pub first_token_ms: Option<u64>,
    /// Between visible content deltas, after the first (streams only).
    pub idle_ms: Option<u64>,
}

pub(super) fn parse_target(name: &str, v: &Value, path: &str) -> Result<Target, FieldError> {
    const FIELDS: [&str; 19] = [
        "format",
        "baseUrl",
        "model",
        "apiKey",
        "headers",
        "timeouts",
        "strictFrames",
        "prefill",
        "propagateDeadline",
        "extraBody",
        "cloud",
        "region",
        "aws",
        "deployment",
        "apiVersion",
        "entraToken",
        "project",
        "accessToken",
        "serviceAccount",
    ];
    let o = Obj::new(v, path, &FIELDS)?;
    let format_name = o.required_str("format", FORMATS)?;
    let format = Format::parse(format_name)
        .ok_or_else(|| wrong_value(&child(path, "format"), FORMATS, &Value::String(format_name.into())))?;
    let cloud = read_cloud(&o, format, path)?;
    let region = read_region(&o, cloud, path)?;
    let given_base_url = match o.get("baseUrl") {
        None if region.is_some() => None,
        _ => Some(read_base_url(
            o.required_str("baseUrl", "an http(s) URL such as \"https://api.openai.com/v1\"")?,
            &child(path, "baseUrl"),
        )?),
    };
    let base_url = match (given_base_url, &region, cloud) {
        (origin, Some(region), Some(Cloud::Vertex)) => {
            let origin = origin.unwrap_or_else(|| vertex::origin(region));
            let project = read_project(&o, path)?;
            let publisher = if format == Format::Gemini { "google" } else { "anthropic" };
            vertex::base_url(&origin, project, region, publisher)
        }
        (Some(given), _, _) => given,
        (None, region, _) => format!("https://bedrock-runtime.{}.amazonaws.com", region.as_deref().unwrap_or("")),
    };
    let vertex = read_vertex_auth(&o, cloud, path)?;
    let model = o.required_str("model", "the provider's model name, e.g. \"gpt-4o-mini\"")?;
    let mut api_key = read_key(&o, "apiKey", path, "omit it when the provider needs no key")?;
    let (base_url, azure) = match cloud {
        Some(Cloud::Azure) => {
            let (base_url, azure, token) = azure_target::read(&o, path, format, &base_url, model, api_key.is_some())?;
            api_key = api_key.or(token);
            (base_url, Some(azure))
        }
        _ => (base_url, None),
    };
    let mut headers = Vec::new();
    if let Some(h) = o.get("headers") {
        let hp = child(path, "headers");
        for (k, hv) in as_object(h, &hp, "an object of header names to string values")? {
            let valid_name =
                !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !valid_name {
                return Err(FieldError::new(child(&hp, k), "is not a valid HTTP header name"));
            }
            let name = k.to_ascii_lowercase();
            if let Some(reason) = unconfigurable_header(&name) {
                return Err(FieldError::new(child(&hp, k), format!("cannot be configured: {reason}; remove it")));
            }
            // Header values are never echoed: any of them may be a credential.
            match hv {
                Value::String(s) => match header_value_problem(s, is_secret_header(&name)) {
                    None => headers.push((name, s.clone())),
                    Some(problem) => {
                        return Err(FieldError::new(
                            child(&hp, k),
                            format!("must be a valid HTTP header value, but it {problem}"),
                        ))
                    }
                },
                other => return Err(FieldError::new(child(&hp, k), format!("must be a string (got {})", kind(other)))),
            }
        }
    }
    let timeouts = match o.get("timeouts") {
        None => Timeouts::default(),
        Some(t) => {
            let tp = child(path, "timeouts");
            let to = Obj::new(t, &tp, &["totalMs", "headersMs", "firstTokenMs", "idleMs"])?;
            Timeouts {
                total_ms: to.opt_ms("totalMs", "omit it for no limit")?,
                headers_ms: to.opt_ms("headersMs", "omit it for no limit")?,
                first_token_ms: to.opt_ms("firstTokenMs", "omit it for no limit")?,
                idle_ms: to.opt_ms("idleMs", "omit it for no limit")?,
            }
        }
    };
    let strict_frames = match o.get("strictFrames") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(strict)) => *strict,
        Some(other) => {
            return Err(wrong_value(
                &child(path, "strictFrames"),
                "true (a malformed stream frame fails the attempt) or false (it is skipped with a warning)",
                other,
            ))
        }
    };
    let prefill = match o.get("prefill") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(prefill)) => *prefill,
        Some(other) => {
            return Err(wrong_value(
                &child(path, "prefill"),
                "true (the model continues a final assistant message) or false (default)",
                other,
            ))
        }
    };
    let propagate_deadline = match o.get("propagateDeadline") {
        None | Some(Value::Null) => PropagateDeadline::Auto,
        Some(Value::Bool(true)) => PropagateDeadline::Always,
        Some(Value::Bool(false)) => PropagateDeadline::Never,
        Some(Value::String(s)) if s == "auto" => PropagateDeadline::Auto,
        Some(other) => {
            return Err(wrong_value(
                &child(path, "propagateDeadline"),
                r#"true (send the call's remaining budget in x-baton-deadline-ms), false, or "auto" (the default: once the target answered as an llm-baton gateway)"#,
                other,
            ))
        }
    };
    let extra_body = match o.get("extraBody") {
        None | Some(Value::Null) => None,
        Some(Value::Object(fields)) => {
            if fields.contains_key("stream") {
                return Err(FieldError::new(
                    child(&child(path, "extraBody"), "stream"),
                    "cannot be set: each call decides whether it streams; remove it",
                ));
            }
            Some(fields.clone())
        }
        Some(other) => {
            return Err(wrong(
                &child(path, "extraBody"),
                r#"an object of fields to set in the provider's request body, e.g. {"top_k": 40}"#,
                other,
            ))
        }
    };
    let aws = match o.get("aws") {
        None | Some(Value::Null) => None,
        Some(v) => Some(read_aws(v, &child(path, "aws"), cloud)?),
    };
    if cloud == Some(Cloud::Vertex) && api_key.is_some() {
        return Err(FieldError::new(
            child(path, "apiKey"),
            "is not for Vertex, which takes a Google OAuth token: give accessToken or serviceAccount instead",
        ));
    }
    if aws.is_some() && api_key.is_some() {
        return Err(FieldError::new(
            child(path, "aws"),
            "cannot be given with apiKey: sign with AWS keys (aws) or send a Bedrock API key (apiKey), not both",
        ));
    }
    Ok(Target {
        name: name.to_string(),
        format,
        base_url,
        model: model.to_string(),
        api_key,
        headers,
        timeouts,
        strict_frames,
        prefill,
        propagate_deadline,
        extra_body,
        cloud,
        region,
        aws,
        azure,
        vertex,
    })
}

/// A credential field (`apiKey`, `entraToken`): a non-empty string any HTTP header can carry,
/// never echoed.
pub(super) fn read_key(o: &Obj, key: &str, path: &str, omit_hint: &str) -> Result<Option<Secret>, FieldError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => match header_value_problem(s, true) {
            None => Ok(Some(Secret::new(s.clone()))),
            Some(problem) => Err(unusable_key(&child(path, key), &problem)),
        },
        Some(_) => Err(FieldError::new(child(path, key), format!("must be a non-empty string; {omit_hint}"))),
    }
}

const FORMATS: &str =
    "one of \"openai_chat\", \"anthropic_messages\", \"openai_responses\", \"gemini\", \"bedrock_converse\"";

/// A target's `cloud`: where its format is reached, when not on the format's own API (Azure
/// serves the OpenAI formats; Bedrock Anthropic Messages, through InvokeModel, and is implied for
/// `bedrock_converse`; Vertex Gemini and Anthropic Messages). The fields only Azure takes are
/// refused without it.
fn read_cloud(o: &Obj, format: Format, path: &str) -> Result<Option<Cloud>, FieldError> {
    let cloud = match o.get("cloud") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if Cloud::parse(s).is_some() => Cloud::parse(s),
        Some(other) => return Err(wrong_value(&child(path, "cloud"), Cloud::EXPECTED, other)),
    };
    if cloud != Some(Cloud::Azure) {
        if let Some(field) = azure_target::FIELDS.into_iter().find(|f| o.get(f).is_some()) {
            return Err(FieldError::new(
                child(path, field),
                "is only for Azure OpenAI targets: add cloud: \"azure\", or remove it",
            ));
        }
    }
    let wrong = |message: String| Err(FieldError::new(child(path, "cloud"), message));
    match (format, cloud) {
        (Format::BedrockConverse, None | Some(Cloud::Bedrock)) => Ok(Some(Cloud::Bedrock)),
        (Format::BedrockConverse, Some(_)) => wrong("bedrock_converse runs on Bedrock: set cloud to \"bedrock\", or remove it".into()),
        (_, None)
        | (Format::AnthropicMessages, Some(Cloud::Bedrock))
        | (Format::OpenaiChat | Format::OpenaiResponses, Some(Cloud::Azure))
        | (Format::Gemini | Format::AnthropicMessages, Some(Cloud::Vertex)) => Ok(cloud),
        (_, Some(Cloud::Azure)) => {
            wrong("\"azure\" serves the OpenAI formats only: set format to \"openai_chat\" or \"openai_responses\"".into())
        }
        (_, Some(Cloud::Bedrock)) => wrong(format!(
            "\"bedrock\" serves anthropic_messages and bedrock_converse targets, not {}; use format \"bedrock_converse\" for other models on Bedrock, or remove cloud",
            format.as_str()
        )),
        (_, Some(Cloud::Vertex)) => {
            wrong(format!("\"vertex\" serves the gemini and anthropic_messages formats, not {}", format.as_str()))
        }
    }
}

/// A target's `region` (required where it names the endpoint: on Bedrock, where it also scopes
/// the signature, and on Vertex), which no other target takes.
fn read_region(o: &Obj, cloud: Option<Cloud>, path: &str) -> Result<Option<String>, FieldError> {
    let (expected, give) = match cloud {
        Some(Cloud::Vertex) => (
            "a Google Cloud region such as \"us-east5\", or \"global\"",
            "the Google Cloud region of the model, e.g. \"us-east5\", or \"global\"",
        ),
        Some(Cloud::Bedrock) => {
            ("an AWS region such as \"us-east-1\"", "the AWS region of the model, e.g. \"us-east-1\"")
        }
        _ => {
            return match o.get("region") {
                None => Ok(None),
                Some(_) => Err(FieldError::new(child(path, "region"), ONLY_REGIONAL)),
            }
        }
    };
    match o.get("region") {
        None => Err(FieldError::new(child(path, "region"), format!("is missing; give {give}"))),
        Some(Value::String(r))
            if !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') =>
        {
            Ok(Some(r.clone()))
        }
        Some(other) => Err(wrong_value(&child(path, "region"), expected, other)),
    }
}

/// A Vertex target's `project`: the Google Cloud project id the model is served in.
fn read_project<'a>(o: &Obj<'a>, path: &str) -> Result<&'a str, FieldError> {
    let expected = "the Google Cloud project id, such as \"my-project-123\"";
    let project = o.required_str("project", expected)?;
    if !project.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-.:".contains(&b)) {
        return Err(wrong_value(&child(path, "project"), expected, &Value::String(project.into())));
    }
    Ok(project)
}

/// A Vertex target's credential: `accessToken` or `serviceAccount`, exactly one; neither is
/// taken by any other target. Neither value is ever shown.
fn read_vertex_auth(o: &Obj, cloud: Option<Cloud>, path: &str) -> Result<Option<VertexAuth>, FieldError> {
    let given = |key: &str| o.get(key).filter(|v| !v.is_null());
    let (token, account) = (given("accessToken"), given("serviceAccount"));
    if cloud != Some(Cloud::Vertex) {
        for key in ["project", "accessToken", "serviceAccount"] {
            if given(key).is_some() {
                return Err(FieldError::new(child(path, key), "is only for cloud: \"vertex\" targets; remove it"));
            }
        }
        return Ok(None);
    }
    match (token, account) {
        (Some(Value::String(t)), None) if !t.is_empty() => match header_value_problem(t, true) {
            None => Ok(Some(VertexAuth::AccessToken(Secret::new(t.clone())))),
            Some(problem) => Err(unusable_key(&child(path, "accessToken"), &problem)),
        },
        (Some(_), None) => Err(FieldError::new(
            child(path, "accessToken"),
            "must be a non-empty string, a Google OAuth access token (the value is not shown)",
        )),
        (None, Some(account)) => {
            vertex::read_service_account(account, &child(path, "serviceAccount")).map(|a| Some(VertexAuth::ServiceAccount(a)))
        }
        (Some(_), Some(_)) => Err(FieldError::new(
            child(path, "serviceAccount"),
            "cannot be given with accessToken: give one, the token or the service account's key that mints them",
        )),
        (None, None) => Err(FieldError::new(
            path,
            "has cloud: \"vertex\" but no credential: give accessToken (e.g. from `gcloud auth print-access-token`) or serviceAccount (the service account's JSON key)",
        )),
    }
}

const ONLY_BEDROCK: &str =
    "is only for Bedrock targets (bedrock_converse, or anthropic_messages with cloud: \"bedrock\"); remove it";
const ONLY_REGIONAL: &str =
    "is only for Bedrock and Vertex targets (bedrock_converse, or cloud: \"bedrock\" or \"vertex\"); remove it";

/// `aws: {accessKeyId, secretAccessKey, sessionToken?}`. No value is ever echoed: a wrong one is
/// named by its field and what is wrong with it.
fn read_aws(v: &Value, path: &str, cloud: Option<Cloud>) -> Result<AwsCredentials, FieldError> {
    if cloud != Some(Cloud::Bedrock) {
        return Err(FieldError::new(path, ONLY_BEDROCK));
    }
    let o = Obj::new(v, path, &["accessKeyId", "secretAccessKey", "sessionToken"])?;
    let secret = |key: &str, required: bool, expected: &str| -> Result<Option<Secret>, FieldError> {
        match o.get(key) {
            None | Some(Value::Null) if !required => Ok(None),
            None | Some(Value::Null) => Err(FieldError::new(child(path, key), format!("is missing; give {expected}"))),
            Some(Value::String(s)) if !s.is_empty() => match header_value_problem(s, true) {
                None => Ok(Some(Secret::new(s.clone()))),
                Some(problem) => Err(unusable_key(&child(path, key), &problem)),
            },
            Some(_) => Err(FieldError::new(
                child(path, key),
                format!("must be a non-empty string: {expected} (the value is not shown)"),
            )),
        }
    };
    let access_key_id = secret("accessKeyId", true, "the access key id, e.g. from AWS_ACCESS_KEY_ID")?
        .unwrap_or_else(|| Secret::new(""));
    if !access_key_id.expose().bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(FieldError::new(
            child(path, "accessKeyId"),
            "must be letters and digits only, as AWS access key ids are (the value is not shown)",
        ));
    }
    Ok(AwsCredentials {
        access_key_id,
        secret_access_key: secret("secretAccessKey", true, "the secret access key, e.g. from AWS_SECRET_ACCESS_KEY")?
            .unwrap_or_else(|| Secret::new("")),
        session_token: secret("sessionToken", false, "the session token of temporary credentials")?,
    })
}

/// Headers the HTTP client owns: set per request, or meaningful for one connection only. A
/// configured one fails or hangs every call at send time, so it is refused here with the reason.
fn unconfigurable_header(name: &str) -> Option<&'static str> {
    match name {
        "content-length" | "transfer-encoding" => Some("the HTTP client frames each request body itself"),
        "host" => Some("the HTTP client sets it from baseUrl"),
        "expect" => Some("fetch does not support 100-continue"),
        "connection" | "keep-alive" | "te" | "trailer" | "upgrade" | "proxy-connection" => {
            Some("it is a hop-by-hop header, which only the HTTP client may set")
        }
        _ => None,
    }
}

/// `{path} must be usable as an HTTP header value, but it {problem}`: an API key no header can
/// carry, not shown.
pub(super) fn unusable_key(path: &str, problem: &str) -> FieldError {
    FieldError::new(path, format!("must be usable as an HTTP header value, but it {problem} (the key is not shown)"))
}

/// Why `value` cannot be an HTTP field value (RFC 9110 field-value, as fetch's Latin-1
/// `Headers` take it), or `None` when it can. The answer never holds the value; for a `secret`
/// one not even the offending character, only its position (counted in characters from 0).
pub(super) fn header_value_problem(value: &str, secret: bool) -> Option<String> {
    if value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']) {
        return Some("starts or ends with a space or tab".into());
    }
    value.chars().enumerate().find_map(|(i, c)| {
        let which = if secret { format!("at position {i}") } else { format!("U+{:04X} at position {i}", c as u32) };
        match c {
            '\r' | '\n' => Some(format!("contains a line break (CR or LF) at position {i}")),
            '\0' => Some(format!("contains a NUL character at position {i}")),
            '\t' => None,
            c if c.is_ascii_control() => Some(format!("contains a control character ({which})")),
            c if u32::from(c) > 0xFF => Some(format!("contains a character outside Latin-1 ({which})")),
            _ => None,
        }
    })
}

/// Query parameters that carry a credential; compared in any letter case.
const CREDENTIAL_PARAMS: [&str; 11] =
    ["token", "access_token", "api-key", "api_key", "apikey", "key", "auth", "password", "secret", "sig", "signature"];

/// Checks a target's `baseUrl`: http or https in any letter case, a host, a port if any, and no
/// credentials. Returns it with the scheme in lower case. Messages show it without its query.
fn read_base_url(url: &str, path: &str) -> Result<String, FieldError> {
    let bad = |what: &str| FieldError::new(path, format!("{what} (got {})", show(&Value::String(redact_url(url)))));
    let (scheme, rest) = url
        .split_once("://")
        .map(|(scheme, rest)| (scheme.to_ascii_lowercase(), rest))
        .filter(|(scheme, _)| scheme == "http" || scheme == "https")
        .ok_or_else(|| bad("must be an http:// or https:// URL"))?;
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("must be a URL without spaces or control characters"));
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let query = rest.split_once('?').map(|(_, q)| q.split('#').next().unwrap_or("")).unwrap_or("");
    let credential = if authority.contains('@') {
        Some("user:password@ before the host".to_string())
    } else {
        query.split('&').find_map(|param| {
            let name = param.split('=').next().unwrap_or("").to_ascii_lowercase();
            CREDENTIAL_PARAMS.contains(&name.as_str()).then(|| format!("the query parameter {name}="))
        })
    };
    if let Some(found) = credential {
        return Err(FieldError::new(
            path,
            format!("must not carry credentials (found {found}); put the key in apiKey or a header"),
        ));
    }
    let (host, port) = match authority.strip_prefix('[') {
        Some(ipv6) => match ipv6.split_once(']') {
            Some((address, after)) => (address, after.strip_prefix(':').or((!after.is_empty()).then_some(after))),
            None => ("", None),
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    if host.is_empty() {
        return Err(bad("must name a host, as in \"https://api.openai.com/v1\""));
    }
    if let Some(port) = port.filter(|p| !p.is_empty()) {
        if !port.bytes().all(|b| b.is_ascii_digit()) || port.parse::<u32>().map_or(true, |p| p > 65_535) {
            return Err(bad("must have a port from 0 to 65535 after the host"));
        }
    }
    Ok(format!("{scheme}://{rest}"))
}

/// A URL safe to show: no user info, no query.
pub fn redact_url(url: &str) -> String {
    let base = url.split(['?', '#']).next().unwrap_or("");
    match base.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) if !userinfo.contains('/') => {
                format!("{scheme}://<redacted>@{host}")
            }
            _ => base.to_string(),
        },
        None => base.to_string(),
    }
}
