//! What a target on a cloud needs besides its format (built with the `clouds` feature only): its
//! `cloud` checked against the format, the region, the keys (AWS's, an Entra ID token, Google's
//! tokens or service account), Azure's URL style, and each request signed for Bedrock. Kept
//! apart from `target` so a build without the clouds carries none of it.

use serde_json::Value;

use super::azure_target;
use super::target::{header_value_problem, read_base_url_field, unusable_key, Target};
use crate::format::azure::Azure;
use crate::format::{bedrock_converse, Cloud, Format, HttpRequest};
use crate::secret::Secret;
use crate::sigv4::{self, AwsCredentials, Unsigned};
use crate::value::{child, wrong_value, FieldError, Obj};
use crate::vertex::{self, VertexAuth};

/// A cloud target's settings besides its URL and key. Debug shows no key or token.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reach {
    /// The AWS region a Bedrock target's requests go to and are signed for, or a Vertex target's.
    pub region: Option<String>,
    /// AWS access keys that sign each request (SigV4), instead of an `apiKey`.
    pub aws: Option<AwsCredentials>,
    /// An Azure OpenAI target's URL style and credential header (`cloud: "azure"`); its key or
    /// Entra ID token is the target's `api_key`, and its `base_url` holds its path under the
    /// resource.
    pub azure: Option<Azure>,
    /// A Vertex target's token, or the service account that mints them.
    pub vertex: Option<VertexAuth>,
}

impl Reach {
    /// The keys and tokens in it, for the redactor.
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        let aws = self.aws.iter().flat_map(|aws| {
            [Some(&aws.access_key_id), Some(&aws.secret_access_key), aws.session_token.as_ref()].into_iter().flatten()
        });
        aws.map(Secret::expose).chain(self.vertex.iter().flat_map(|auth| auth.secrets()))
    }
}

/// A target's cloud fields: its `cloud`, its base URL (a cloud may build it from the region),
/// its key (Azure's Entra ID token is one) and its [`Reach`].
pub(super) fn read(
    o: &Obj,
    format: Format,
    model: &str,
    api_key: Option<Secret>,
    path: &str,
) -> Result<(Option<Cloud>, String, Option<Secret>, Reach), FieldError> {
    let cloud = read_cloud(o, format, path)?;
    let region = read_region(o, cloud, path)?;
    let given_base_url = match o.get("baseUrl") {
        None if region.is_some() => None,
        _ => Some(read_base_url_field(o, path)?),
    };
    let base_url = match (given_base_url, &region, cloud) {
        (origin, Some(region), Some(Cloud::Vertex)) => {
            let origin = origin.unwrap_or_else(|| vertex::origin(region));
            let project = read_project(o, path)?;
            let publisher = if format == Format::Gemini { "google" } else { "anthropic" };
            vertex::base_url(&origin, project, region, publisher)
        }
        (Some(given), _, _) => given,
        (None, region, _) => format!("https://bedrock-runtime.{}.amazonaws.com", region.as_deref().unwrap_or("")),
    };
    let vertex = read_vertex_auth(o, cloud, path)?;
    let (base_url, api_key, azure) = match cloud {
        Some(Cloud::Azure) => {
            let (base_url, azure, token) = azure_target::read(o, path, format, &base_url, model, api_key.is_some())?;
            (base_url, api_key.or(token), Some(azure))
        }
        _ => (base_url, api_key, None),
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
    Ok((cloud, base_url, api_key, Reach { region, aws, azure, vertex }))
}

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

impl Target {
    /// Signs `http` with the target's AWS keys at `now_epoch_ms` (the wall clock), when it has
    /// them: `content-type` and `host` are signed, with the `x-amz-date` and session token this
    /// adds. Called by the driver last, per attempt, since a signature is good for 5 minutes.
    pub fn sign(&self, http: &mut HttpRequest, now_epoch_ms: u64) {
        let (Some(aws), Some(region)) = (&self.reach.aws, &self.reach.region) else { return };
        let signed: Vec<(String, String)> = http.headers.iter().filter(|(k, _)| k == "content-type").cloned().collect();
        let unsigned = Unsigned { method: http.method, url: &http.url, headers: &signed, body: http.body.as_bytes() };
        let headers = sigv4::sign(&unsigned, aws, region, bedrock_converse::SIGNING_SERVICE, now_epoch_ms);
        http.headers.retain(|(k, _)| !headers.iter().any(|(name, _)| name == k));
        http.headers.extend(headers);
    }
}
