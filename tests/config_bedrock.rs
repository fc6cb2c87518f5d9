//! A Bedrock target's config (`bedrock_converse`, or `anthropic_messages` with `cloud:
//! "bedrock"`): its region, its credentials (AWS keys or a Bedrock API key), the mistakes each
//! gets a message for (never with a credential in it), and the signature a target adds to each
//! attempt.

use llm_baton::chat::ChatRequest;
use llm_baton::config::Config;
use llm_baton::format::Cloud;

const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const TOKEN: &str = "IQoJb3JpZ2luX2VjEXAMPLETOKEN";

fn target(fields: &str) -> String {
    format!(
        r#"{{"targets": {{"b": {{"format": "bedrock_converse", "model": "anthropic.claude-3-haiku-20240307-v1:0"{fields}}}}}}}"#
    )
}

/// An Anthropic Messages target, on Bedrock when `fields` say `cloud: "bedrock"`.
fn claude(fields: &str) -> String {
    format!(
        r#"{{"targets": {{"c": {{"format": "anthropic_messages", "model": "anthropic.claude-sonnet-4-5-20250929-v1:0"{fields}}}}}}}"#
    )
}

fn err(json: &str) -> String {
    let e = Config::from_json(json).expect_err("config should be rejected");
    assert!(!e.message.contains(SECRET) && !e.message.contains("AKIA"), "{e}");
    e.to_string()
}

#[test]
fn the_region_names_the_endpoint_and_keys_stay_out_of_debug_output() {
    let aws = format!(
        r#", "region": "eu-west-3", "aws": {{"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": "{SECRET}", "sessionToken": "{TOKEN}"}}"#
    );
    let config = Config::from_json(&target(&aws)).unwrap();
    let t = &config.targets[0];
    assert_eq!(t.base_url, "https://bedrock-runtime.eu-west-3.amazonaws.com");
    let shown = format!("{t:?}");
    assert!(!shown.contains(SECRET) && !shown.contains(TOKEN) && !shown.contains("AKIAEXAMPLE"), "{shown}");
    for secret in ["AKIAEXAMPLE", SECRET, TOKEN] {
        assert!(config.secrets().contains(&secret), "{secret} is redacted from errors");
    }
    let local = Config::from_json(&target(
        r#", "region": "us-east-1", "baseUrl": "http://127.0.0.1:9", "apiKey": "bedrock-api-key""#,
    ))
    .unwrap();
    assert_eq!(local.targets[0].base_url, "http://127.0.0.1:9");
}

#[test]
fn mistakes_name_their_field_and_never_the_credential() {
    let cases = [
        (target(""), "targets.b.region is missing; give the AWS region of the model, e.g. \"us-east-1\""),
        (target(r#", "region": "US East""#), "targets.b.region must be an AWS region such as \"us-east-1\" (got \"US East\")"),
        (
            target(&format!(r#", "region": "us-east-1", "aws": {{"secretAccessKey": "{SECRET}"}}"#)),
            "targets.b.aws.accessKeyId is missing; give the access key id, e.g. from AWS_ACCESS_KEY_ID",
        ),
        (
            target(r#", "region": "us-east-1", "aws": {"accessKeyId": "AKIA EXAMPLE", "secretAccessKey": "s"}"#),
            "targets.b.aws.accessKeyId must be letters and digits only, as AWS access key ids are (the value is not shown)",
        ),
        (
            target(&format!(r#", "region": "us-east-1", "aws": {{"accessKeyId": "AKIAX", "secretAccessKey": "{SECRET}\n"}}"#)),
            "targets.b.aws.secretAccessKey must be usable as an HTTP header value, but it contains a line break (CR or LF) at position 40 (the key is not shown)",
        ),
        (
            target(&format!(r#", "region": "us-east-1", "apiKey": "k", "aws": {{"accessKeyId": "AKIAX", "secretAccessKey": "{SECRET}"}}"#)),
            "targets.b.aws cannot be given with apiKey: sign with AWS keys (aws) or send a Bedrock API key (apiKey), not both",
        ),
        (
            claude(r#", "cloud": "bedrock""#),
            "targets.c.region is missing; give the AWS region of the model, e.g. \"us-east-1\"",
        ),
        (
            claude(r#", "cloud": "aws", "region": "us-east-1""#),
            "targets.c.cloud must be \"azure\", \"bedrock\" or \"vertex\", or omit it (got \"aws\")",
        ),
        (
            claude(r#", "baseUrl": "https://api.anthropic.com/v1", "aws": {"accessKeyId": "AKIAX", "secretAccessKey": "s"}"#),
            "targets.c.aws is only for Bedrock targets (bedrock_converse, or anthropic_messages with cloud: \"bedrock\"); remove it",
        ),
        (
            r#"{"targets": {"o": {"format": "openai_chat", "cloud": "bedrock", "region": "us-east-1", "model": "m"}}}"#.into(),
            "targets.o.cloud \"bedrock\" serves anthropic_messages and bedrock_converse targets, not openai_chat; use format \"bedrock_converse\" for other models on Bedrock, or remove cloud",
        ),
        (
            r#"{"targets": {"o": {"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", "region": "us-east-1"}}}"#.into(),
            "targets.o.region is only for Bedrock and Vertex targets (bedrock_converse, or cloud: \"bedrock\" or \"vertex\"); remove it",
        ),
    ];
    for (json, expected) in cases {
        assert_eq!(err(&json), expected);
    }
}

/// The signature is checked against AWS's own signer end to end (tests/e2e/bedrock.test.mjs);
/// here, that a target signs what it sends and only when it has keys.
#[test]
fn a_target_with_keys_signs_each_attempt_at_the_time_given() {
    let aws = format!(
        r#", "region": "us-east-1", "baseUrl": "http://127.0.0.1:8080", "aws": {{"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": "{SECRET}"}}"#
    );
    let config = Config::from_json(&target(&aws)).unwrap();
    let t = &config.targets[0];
    let request = ChatRequest::from_json(r#"{"messages": [{"role": "user", "content": "hi"}]}"#).unwrap();
    let mut http = t.format.build_request(t, &request, false);
    t.sign(&mut http, 1_440_938_160_000);
    let header = |name: &str| http.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    assert_eq!(header("x-amz-date"), Some("20150830T123600Z"));
    let authorization = header("authorization").unwrap();
    assert!(
        authorization.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20150830/us-east-1/bedrock/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, Signature="
        ),
        "{authorization}"
    );
    assert!(!format!("{http:?}").contains("Signature="), "the Debug output hides the authorization");
    let keyed = Config::from_json(&target(r#", "region": "us-east-1", "apiKey": "bedrock-api-key""#)).unwrap();
    let k = &keyed.targets[0];
    let mut http = k.format.build_request(k, &request, false);
    let before = http.clone();
    k.sign(&mut http, 1_440_938_160_000);
    assert_eq!(http, before, "a Bedrock API key is a bearer token: nothing to sign");
}

/// Anthropic on Bedrock is Bedrock's endpoint and signature with Anthropic's body; a
/// `bedrock_converse` target is on Bedrock whether it says so or not.
#[test]
fn anthropic_on_bedrock_signs_for_bedrock_at_the_invoke_path() {
    let aws = format!(
        r#", "cloud": "bedrock", "region": "eu-central-1", "aws": {{"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": "{SECRET}"}}"#
    );
    let config = Config::from_json(&claude(&aws)).unwrap();
    let t = &config.targets[0];
    assert_eq!(
        (t.cloud, t.base_url.as_str()),
        (Some(Cloud::Bedrock), "https://bedrock-runtime.eu-central-1.amazonaws.com")
    );
    let request = ChatRequest::from_json(r#"{"messages": [{"role": "user", "content": "hi"}]}"#).unwrap();
    let mut http = t.format.build_request(t, &request, true);
    t.sign(&mut http, 1_440_938_160_000);
    assert_eq!(
        http.url,
        "https://bedrock-runtime.eu-central-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream"
    );
    let authorization = http.headers.iter().find(|(k, _)| k == "authorization").map(|(_, v)| v.as_str()).unwrap();
    assert!(
        authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20150830/eu-central-1/bedrock/aws4_request")
    );
    assert!(!format!("{t:?}").contains(SECRET));
    for converse in [target(r#", "region": "us-east-1""#), target(r#", "region": "us-east-1", "cloud": "bedrock""#)] {
        assert_eq!(Config::from_json(&converse).unwrap().targets[0].cloud, Some(Cloud::Bedrock));
    }
    let anthropic = Config::from_json(&claude(r#", "baseUrl": "https://api.anthropic.com/v1""#)).unwrap();
    assert_eq!(anthropic.targets[0].cloud, None);
}
