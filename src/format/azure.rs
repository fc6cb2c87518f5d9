//! Azure OpenAI (`cloud: "azure"`): where an `openai_chat` or `openai_responses` target's
//! requests go on an Azure resource, and how they are authorized. The bodies, answers, streams
//! and errors are OpenAI's, read by those formats; Azure changes only the URL and the credential,
//! so this is an adjustment of what the two formats build, not a dialect of its own.
//!
//! Microsoft documents two URL styles (learn.microsoft.com/azure/ai-foundry/openai/
//! api-version-lifecycle, reference):
//! - the v1 API, Microsoft's recommendation since August 2025: `{resource}/openai/v1/chat/completions`
//!   and `/openai/v1/responses`, no `api-version`, the deployment's name as the body's `model`.
//!   The default here.
//! - the dated API, for resources or features only it serves: `{resource}/openai/deployments/
//!   {deployment}/chat/completions?api-version=...` and `{resource}/openai/responses?api-version=...`
//!   (the deployment in the body's `model`), chosen by giving `apiVersion`. A Chat deployment
//!   defaults to the model's name, as openai's `AzureOpenAI` client does.
//!
//! The credential is a resource key in the `api-key` header, or a Microsoft Entra ID token as
//! `authorization: Bearer`.

/// A target's Azure settings, read once from its config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Azure {
    /// The dated API's `api-version` (letters, digits, `-` and `.`, as the config checks: it
    /// needs no encoding in a query); `None` is the v1 API.
    pub api_version: Option<String>,
    /// Whether the target's `apiKey` is a resource key, sent as `api-key`, rather than an
    /// Entra ID token, sent as `authorization: Bearer`.
    pub key_header: bool,
}

impl Azure {
    /// The base URL the target's format joins its path (`chat/completions`, `responses`) to:
    /// `resource` is the configured endpoint, `deployment` the Chat deployment of the dated API.
    pub fn base_url(&self, resource: &str, deployment: Option<&str>) -> String {
        let mut url = resource.trim_end_matches('/').to_string();
        match (&self.api_version, deployment) {
            (None, _) => url.push_str("/openai/v1"),
            (Some(_), Some(deployment)) => {
                url.push_str("/openai/deployments/");
                push_percent_encoded(&mut url, deployment);
            }
            (Some(_), None) => url.push_str("/openai"),
        }
        url
    }

    /// `url` with the dated API's `api-version`, if the target has one.
    pub(crate) fn url(&self, mut url: String) -> String {
        if let Some(version) = &self.api_version {
            url.push_str("?api-version=");
            url.push_str(version);
        }
        url
    }
}

/// Appends `s` with every byte but RFC 3986's unreserved ones percent-encoded: a deployment name
/// stays one path segment whatever it holds.
fn push_percent_encoded(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.extend(['%', HEX[usize::from(b >> 4)] as char, HEX[usize::from(b & 15)] as char]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatRequest;
    use crate::format::{test_endpoint, Format};
    use crate::secret::Secret;

    fn built(format: Format, azure: &Azure, deployment: Option<&str>) -> (String, Vec<(String, String)>) {
        let key: &'static Secret = Box::leak(Box::new(Secret::new("k-123")));
        let base = Box::leak(azure.base_url("https://res.openai.azure.com/", deployment).into_boxed_str());
        let azure: &'static Azure = Box::leak(Box::new(azure.clone()));
        let endpoint = crate::format::Endpoint {
            api_key: Some(key),
            azure: Some(azure),
            ..test_endpoint(base, "gpt-4o", None, &[("x-ms-client-request-id", "r1")])
        };
        let http = format.build_request(endpoint, &ChatRequest::default(), false);
        (http.url, http.headers)
    }

    #[test]
    fn v1_urls_carry_no_api_version() {
        let v1 = Azure { api_version: None, key_header: true };
        assert_eq!(built(Format::OpenaiChat, &v1, None).0, "https://res.openai.azure.com/openai/v1/chat/completions");
        assert_eq!(built(Format::OpenaiResponses, &v1, None).0, "https://res.openai.azure.com/openai/v1/responses");
    }

    #[test]
    fn dated_urls_name_the_deployment_and_the_api_version() {
        let dated = Azure { api_version: Some("2024-10-21".into()), key_header: true };
        assert_eq!(
            built(Format::OpenaiChat, &dated, Some("my gpt/4o")).0,
            "https://res.openai.azure.com/openai/deployments/my%20gpt%2F4o/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(
            built(Format::OpenaiResponses, &dated, None).0,
            "https://res.openai.azure.com/openai/responses?api-version=2024-10-21"
        );
    }

    #[test]
    fn a_resource_key_goes_as_api_key_and_an_entra_token_as_a_bearer() {
        let header = |headers: &[(String, String)], name: &str| {
            headers.iter().filter(|(k, _)| k == name).map(|(_, v)| v.clone()).collect::<Vec<_>>()
        };
        for format in [Format::OpenaiChat, Format::OpenaiResponses] {
            let (_, keyed) = built(format, &Azure { api_version: None, key_header: true }, None);
            assert_eq!(header(&keyed, "api-key"), ["k-123"]);
            assert!(header(&keyed, "authorization").is_empty());
            assert_eq!(header(&keyed, "x-ms-client-request-id"), ["r1"]);
            let (_, entra) = built(format, &Azure { api_version: None, key_header: false }, None);
            assert_eq!(header(&entra, "authorization"), ["Bearer k-123"]);
            assert!(header(&entra, "api-key").is_empty());
        }
    }
}
