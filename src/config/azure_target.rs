//! An Azure OpenAI target's own fields (`cloud: "azure"`): `deployment`, `apiVersion` and
//! `entraToken`, and its `baseUrl` as the resource's endpoint. Read here, beside the target they
//! belong to, so the Azure rules stay in one place ([`crate::format::azure`] says why they are so).

use serde_json::Value;

use super::target::read_key;
use crate::format::azure::Azure;
use crate::format::Format;
use crate::secret::Secret;
use crate::value::{child, wrong_value, FieldError, Obj};

/// The fields only an Azure target takes.
pub(super) const FIELDS: [&str; 3] = ["deployment", "apiVersion", "entraToken"];

/// The target's base URL under its resource, its Azure settings, and its Entra ID token if it
/// authenticates with one. `resource` is the checked `baseUrl`; `has_api_key` whether `apiKey`
/// was given: exactly one of `apiKey` and `entraToken` must be.
pub(super) fn read(
    o: &Obj,
    path: &str,
    format: Format,
    resource: &str,
    model: &str,
    has_api_key: bool,
) -> Result<(String, Azure, Option<Secret>), FieldError> {
    let resource_path = resource.split_once("://").map_or("", |(_, rest)| rest);
    let resource_path = resource_path.split(['?', '#']).next().unwrap_or("");
    if resource_path.split('/').skip(1).any(|segment| segment.eq_ignore_ascii_case("openai")) {
        return Err(FieldError::new(
            child(path, "baseUrl"),
            "must be the Azure resource's endpoint, without /openai/...: e.g. \"https://RESOURCE.openai.azure.com\" (llm-baton adds the path)",
        ));
    }
    let token = read_key(o, "entraToken", path, "give a Microsoft Entra ID access token, or use apiKey")?;
    match (has_api_key, &token) {
        (true, Some(_)) => {
            return Err(FieldError::new(
                child(path, "entraToken"),
                "cannot be given with apiKey: authenticate with a resource key (apiKey) or an Entra ID token (entraToken), not both",
            ))
        }
        (false, None) => {
            return Err(FieldError::new(
                child(path, "apiKey"),
                "is missing: an Azure OpenAI target needs apiKey (a resource key, sent as api-key) or entraToken (a Microsoft Entra ID token, sent as a bearer token)",
            ))
        }
        _ => {}
    }
    let api_version = match o.get("apiVersion") {
        None | Some(Value::Null) => None,
        Some(Value::String(v))
            if !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') =>
        {
            Some(v.clone())
        }
        Some(other) => {
            return Err(wrong_value(
                &child(path, "apiVersion"),
                "an Azure OpenAI API version such as \"2024-10-21\"; omit it for the v1 API",
                other,
            ))
        }
    };
    let deployment = match (o.get("deployment"), &api_version, format) {
        (None | Some(Value::Null), _, _) => None,
        (Some(_), None, _) => {
            return Err(FieldError::new(
                child(path, "deployment"),
                "is for the dated API: give apiVersion too, or name the deployment in model for the v1 API",
            ))
        }
        (Some(_), Some(_), Format::OpenaiResponses) => {
            return Err(FieldError::new(
                child(path, "deployment"),
                "is for Chat Completions: Azure's Responses API takes the deployment's name in model",
            ))
        }
        (Some(Value::String(d)), Some(_), _) if !d.is_empty() => Some(d.as_str()),
        (Some(other), Some(_), _) => {
            return Err(wrong_value(
                &child(path, "deployment"),
                "the name of a model deployment on the resource",
                other,
            ))
        }
    };
    // The dated Chat API names a deployment in its path; without one, the model's name, as
    // openai's AzureOpenAI client does.
    let deployment = match (format, &api_version) {
        (Format::OpenaiChat, Some(_)) => Some(deployment.unwrap_or(model)),
        _ => None,
    };
    let azure = Azure { api_version, key_header: has_api_key };
    Ok((azure.base_url(resource, deployment), azure, token))
}
