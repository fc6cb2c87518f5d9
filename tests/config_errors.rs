//! Config mistakes, and the exact message each one gets: the field by path, what was wrong,
//! what would be right.

use llm_baton::config::{Config, Cors};
use llm_baton::outcome::FailureClass;
use llm_baton::policy::{Jitter, ResumeMode, Strategy};

fn err(json: &str) -> (String, String) {
    let e = Config::from_json(json).expect_err("config should be rejected");
    (e.path, e.message)
}

const T: &str = r#""p": {"format": "openai_chat", "baseUrl": "https://api.openai.com/v1", "model": "gpt-4o-mini"}"#;

fn with_targets(extra_target: &str, routes: &str) -> String {
    format!(r#"{{"targets": {{{T}{extra_target}}}, "routes": {routes}}}"#)
}

#[test]
fn messages_are_exact() {
    let cases: Vec<(String, &str, &str)> = vec![
        (
            r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", "timeouts": {"totalMs": 0}}}}"#.into(),
            "targets.p.timeouts.totalMs",
            "targets.p.timeouts.totalMs must be a positive number of milliseconds (got 0); omit it for no limit",
        ),
        (
            r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", "timeouts": {"idleMs": -1}}}}"#.into(),
            "targets.p.timeouts.idleMs",
            "targets.p.timeouts.idleMs must be a positive number of milliseconds (got -1); omit it for no limit",
        ),
        (
            r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", "timeouts": {"firstTokenMs": "1s"}}}}"#.into(),
            "targets.p.timeouts.firstTokenMs",
            r#"targets.p.timeouts.firstTokenMs must be a positive number of milliseconds (got "1s"); omit it for no limit"#,
        ),
        (
            r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", "timeouts": {"totalMs": 3000000000}}}}"#.into(),
            "targets.p.timeouts.totalMs",
            "targets.p.timeouts.totalMs must be a positive number of milliseconds up to 2147483647, the longest a JS timer waits (got 3000000000); omit it for no limit",
        ),
        (
            r#"{"targets": {"p": {"format": "openai", "baseUrl": "https://x/v1", "model": "m"}}}"#.into(),
            "targets.p.format",
            r#"targets.p.format must be one of "openai_chat", "anthropic_messages", "openai_responses", "gemini", "bedrock_converse" (got "openai")"#,
        ),
        (
            r#"{"targets": {"p": {"format": "gemini", "model": "m"}}}"#.into(),
            "targets.p.baseUrl",
            r#"targets.p.baseUrl is missing; give an http(s) URL such as "https://api.openai.com/v1""#,
        ),
        (
            r#"{"targets": {"p": {"format": "gemini", "baseUrl": "ftp://x", "model": "m"}}}"#.into(),
            "targets.p.baseUrl",
            r#"targets.p.baseUrl must be an http:// or https:// URL (got "ftp://x")"#,
        ),
        (
            r#"{"targets": {"p": {"format": "gemini", "baseUrl": "https://x/v1beta?key=abc", "model": "m"}}}"#.into(),
            "targets.p.baseUrl",
            "targets.p.baseUrl must not carry credentials (found the query parameter key=); put the key in apiKey or a header",
        ),
        (
            r#"{"targets": {"p": {"format": "gemini", "baseUrl": "https://x", "model": "m", "timeout": {}}}}"#.into(),
            "targets.p.timeout",
            r#"targets.p.timeout is not a known field; did you mean "timeouts"?"#,
        ),
        (r#"{"routes": {}}"#.into(), "targets", r#"targets is missing; give at least one target, e.g. {"p": {"format": "openai_chat", "baseUrl": "https://api.openai.com/v1", "model": "gpt-4o-mini"}}"#),
        (r#"{"targets": {}}"#.into(), "targets", "targets must name at least one target (got {})"),
        (r#"[1]"#.into(), "config", "config must be the config (got a list)"),
        (
            with_targets("", r#"{"chat": {"fallback": ["p", "q"]}}"#),
            "routes.chat.fallback[1]",
            r#"routes.chat.fallback[1] names an unknown target or route "q" (known: p, chat)"#,
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p", "attempts": 0}}"#),
            "routes.chat.attempts",
            "routes.chat.attempts must be a whole number from 1 to 100 (got 0)",
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p"}}"#),
            "routes.chat.attempts",
            "routes.chat.attempts is missing; give the total number of attempts, at least 1 (e.g. 3)",
        ),
        (
            with_targets("", r#"{"chat": {"fallback": []}}"#),
            "routes.chat.fallback",
            "routes.chat.fallback must list at least one member (got []); a fallback of nothing can never answer",
        ),
        (
            with_targets("", r#"{"chat": {"roundRobin": ["p", "p"], "weights": [1]}}"#),
            "routes.chat.weights",
            "routes.chat.weights must have one weight per member: 2 members, 1 weights",
        ),
        (
            with_targets("", r#"{"a": {"fallback": ["p", "b"]}, "b": {"retry": "a", "attempts": 2}}"#),
            "routes.b.retry",
            "routes.b.retry is part of a route cycle (a -> b -> a); a route may not contain itself",
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p", "attempts": 2, "retryOn": ["timeouts"]}}"#),
            "routes.chat.retryOn[0]",
            r#"routes.chat.retryOn[0] must be "transport", "timeout", "protocol", "4xx", "5xx", a failure class ("context_length", "content_filter", "quota", "auth", "overloaded", "rate_limit") or an HTTP status from 100 to 599 (got "timeouts")"#,
        ),
        (
            with_targets("", r#"{"chat": {"fallback": ["p"], "fallbackOn": ["quota", "context_lenght"]}}"#),
            "routes.chat.fallbackOn[1]",
            r#"routes.chat.fallbackOn[1] must be "transport", "timeout", "protocol", "4xx", "5xx", a failure class ("context_length", "content_filter", "quota", "auth", "overloaded", "rate_limit") or an HTTP status from 100 to 599 (got "context_lenght")"#,
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p", "attempts": 2, "backoff": {"jitter": "half"}}}"#),
            "routes.chat.backoff.jitter",
            r#"routes.chat.backoff.jitter must be "equal", "full" or "none" (got "half")"#,
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p", "attempts": 2, "backoff": {"initialMs": 500, "maxMs": 100}}}"#),
            "routes.chat.backoff.maxMs",
            "routes.chat.backoff.maxMs must be at least initialMs (500) (got 100)",
        ),
        (
            with_targets("", r#"{"chat": {"sequence": ["p"]}}"#),
            "routes.chat",
            r#"routes.chat must be a target name or an object with one of "retry", "fallback", "roundRobin", "fastest""#,
        ),
        (
            with_targets("", r#"{"chat": {"fallback": ["p"], "attempts": 2}}"#),
            "routes.chat.attempts",
            "routes.chat.attempts is not a known field; known fields: fallback, fallbackOn, afterStart, hedge",
        ),
        (
            format!(r#"{{"targets": {{{T}}}, "deadline": 5}}"#),
            "deadline",
            r#"deadline is not a known field; did you mean "deadlineMs"?"#,
        ),
        (
            format!(r#"{{"targets": {{{T}}}, "gateway": {{"maxBodyBytes": 0}}}}"#),
            "gateway.maxBodyBytes",
            "gateway.maxBodyBytes must be a whole number of bytes from 1 to 1000000000 (got 0)",
        ),
        ("{".into(), "config", "config is not valid JSON: EOF while parsing an object at line 1 column 1"),
    ];
    for (json, path, message) in cases {
        let (p, m) = err(&json);
        assert_eq!(m, message, "for {json}");
        assert_eq!(p, path, "for {json}");
    }
}

#[test]
fn nested_strategies_are_inlined_with_their_settings() {
    let json = with_targets(
        r#", "q": {"format": "gemini", "baseUrl": "https://g/v1beta", "model": "gemini-2.5-flash", "apiKey": "k", "headers": {"X-Team": "a"}, "timeouts": {"totalMs": 1.5}}"#,
        r#"{"primary": {"retry": "p", "attempts": 4, "backoff": {"initialMs": 0, "jitter": "none"}, "retryOn": ["transport", 429, "5xx"]},
            "chat": {"fallback": ["primary", {"roundRobin": ["q", "p"], "weights": [3, 1]}], "fallbackOn": ["timeout", 503]}}"#,
    );
    let c = Config::from_json(&json).unwrap();
    assert_eq!(c.targets[1].timeouts.total_ms, Some(2), "fractions round up to whole ms");
    assert_eq!(c.targets[1].headers, vec![("x-team".to_string(), "a".to_string())]);
    let Strategy::Fallback { members, fallback_on, .. } = c.routes.get("chat").unwrap() else {
        panic!("fallback expected")
    };
    assert_eq!(fallback_on.as_deref().unwrap().statuses, vec![503]);
    let Strategy::Retry(p) = &members[0] else { panic!("retry inlined") };
    assert_eq!((p.attempts, p.backoff.initial_ms, p.backoff.jitter), (4, 0, Jitter::None));
    assert!(matches!(&members[1], Strategy::RoundRobin { weights, .. } if weights == &vec![3, 1]));
    assert_eq!(c.round_robin_nodes, 1);
    assert_eq!(c.gateway.cors, Cors::Off);
    assert_eq!(c.route_names(), vec!["chat", "primary", "p", "q"]);
}

#[test]
fn condition_lists_name_failure_classes() {
    let json = with_targets(
        "",
        r#"{"primary": {"retry": "p", "attempts": 3, "retryOn": ["overloaded", "rate_limit", "transport"]},
            "chat": {"fallback": ["primary", "p"], "fallbackOn": ["context_length", "content_filter", "quota", "auth", 500]}}"#,
    );
    let c = Config::from_json(&json).unwrap();
    let Strategy::Fallback { members, fallback_on, .. } = c.routes.get("chat").unwrap() else {
        panic!("fallback expected")
    };
    let fallback_on = fallback_on.as_deref().unwrap();
    use FailureClass::*;
    assert_eq!(fallback_on.classes, vec![ContextLength, ContentFilter, Quota, Auth]);
    assert_eq!(fallback_on.statuses, vec![500]);
    let Strategy::Retry(p) = &members[0] else { panic!("retry inlined") };
    let retry_on = p.retry_on.as_ref().unwrap();
    assert_eq!(retry_on.classes, vec![Overloaded, RateLimit]);
    assert!(retry_on.transport && !retry_on.timeout);
}

#[test]
fn hostile_documents_never_panic() {
    let docs = [
        "null", "0", "\"x\"", "{\"targets\": []}", "{\"targets\": {\"p\": null}}", "{\"targets\": {\"p\": {\"format\": 1}}}",
        "{\"targets\": {\"p\": {\"format\": \"gemini\", \"baseUrl\": \"https://x\", \"model\": \"m\", \"headers\": {\"bad header\": \"v\"}}}}",
        "{\"targets\": {\"p\": {\"format\": \"gemini\", \"baseUrl\": \"https://x\", \"model\": \"m\"}}, \"routes\": {\"r\": {\"retry\": {\"retry\": {\"fallback\": [1]}, \"attempts\": 1}, \"attempts\": 1}}}",
        "{\"targets\": {\"p\": {\"format\": \"gemini\", \"baseUrl\": \"https://x\", \"model\": \"m\"}}, \"routes\": {\"r\": \"r\"}}",
    ];
    for d in docs {
        assert!(Config::from_json(d).is_err(), "{d} should be rejected");
    }
}

/// A config whose one target `p` has these extra fields (JSON text, after a comma).
fn target_with(fields: &str) -> String {
    format!(r#"{{"targets": {{"p": {{"format": "openai_chat", "baseUrl": "https://x/v1", "model": "m", {fields}}}}}}}"#)
}

fn base_url(url: &str) -> String {
    format!(
        r#"{{"targets": {{"p": {{"format": "openai_chat", "baseUrl": {}, "model": "m"}}}}}}"#,
        serde_json::json!(url)
    )
}

#[test]
fn header_values_and_keys_follow_rfc_9110_and_are_never_echoed() {
    let cases = [
        (r#""headers": {"X-Team": "a\r\nb"}"#, "targets.p.headers.X-Team", "targets.p.headers.X-Team must be a valid HTTP header value, but it contains a line break (CR or LF) at position 1"),
        (r#""headers": {"x-team": "a\nb"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it contains a line break (CR or LF) at position 1"),
        (r#""headers": {"x-team": "a\u0000"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it contains a NUL character at position 1"),
        (r#""headers": {"x-team": "a\u0007b"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it contains a control character (U+0007 at position 1)"),
        (r#""headers": {"x-team": "a\u007f"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it contains a control character (U+007F at position 1)"),
        (r#""headers": {"x-team": "caf\u20ac"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it contains a character outside Latin-1 (U+20AC at position 3)"),
        (r#""headers": {"x-team": " a"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it starts or ends with a space or tab"),
        (r#""headers": {"x-team": "a\t"}"#, "targets.p.headers.x-team", "targets.p.headers.x-team must be a valid HTTP header value, but it starts or ends with a space or tab"),
        (r#""headers": {"X-Api-Key": "sk-\u20acSECRET"}"#, "targets.p.headers.X-Api-Key", "targets.p.headers.X-Api-Key must be a valid HTTP header value, but it contains a character outside Latin-1 (at position 3)"),
        (r#""headers": {"authorization": "Bearer SECRET\u0001"}"#, "targets.p.headers.authorization", "targets.p.headers.authorization must be a valid HTTP header value, but it contains a control character (at position 13)"),
        (r#""headers": {"x-api-key": 12345}"#, "targets.p.headers.x-api-key", "targets.p.headers.x-api-key must be a string (got a number)"),
        (r#""apiKey": "SECRET\n""#, "targets.p.apiKey", "targets.p.apiKey must be usable as an HTTP header value, but it contains a line break (CR or LF) at position 6 (the key is not shown)"),
        (r#""apiKey": "SECRET\u00ff\u0100""#, "targets.p.apiKey", "targets.p.apiKey must be usable as an HTTP header value, but it contains a character outside Latin-1 (at position 7) (the key is not shown)"),
        (r#""apiKey": " SECRET""#, "targets.p.apiKey", "targets.p.apiKey must be usable as an HTTP header value, but it starts or ends with a space or tab (the key is not shown)"),
        (r#""apiKey": 12345"#, "targets.p.apiKey", "targets.p.apiKey must be a non-empty string; omit it when the provider needs no key"),
    ];
    for (fields, path, message) in cases {
        let (p, m) = err(&target_with(fields));
        assert_eq!((p.as_str(), m.as_str()), (path, message), "for {fields}");
        assert!(!m.contains("SECRET") && !m.contains("12345"), "{m}");
    }
    let ok = Config::from_json(&target_with(r#""headers": {"X-Note": "tab\tinside, caf\u00e9"}, "apiKey": "sk-1""#));
    assert_eq!(ok.unwrap().targets[0].headers, vec![("x-note".to_string(), "tab\tinside, caf\u{e9}".to_string())]);
}

#[test]
fn framing_and_hop_by_hop_headers_are_refused_with_the_reason() {
    let framing = "cannot be configured: the HTTP client frames each request body itself; remove it";
    let hop = "cannot be configured: it is a hop-by-hop header, which only the HTTP client may set; remove it";
    let cases = [
        ("Content-Length", framing),
        ("transfer-encoding", framing),
        ("host", "cannot be configured: the HTTP client sets it from baseUrl; remove it"),
        ("Expect", "cannot be configured: fetch does not support 100-continue; remove it"),
        ("connection", hop),
        ("keep-alive", hop),
        ("TE", hop),
        ("trailer", hop),
        ("upgrade", hop),
        ("proxy-connection", hop),
    ];
    for (name, reason) in cases {
        let (p, m) = err(&target_with(&format!(r#""headers": {{"{name}": "1"}}"#)));
        assert_eq!(p, format!("targets.p.headers.{name}"));
        assert_eq!(m, format!("targets.p.headers.{name} {reason}"));
    }
}

#[test]
fn base_urls_need_http_a_host_and_no_credentials() {
    let no_creds = |found: &str| {
        format!("targets.p.baseUrl must not carry credentials (found {found}); put the key in apiKey or a header")
    };
    let mut cases: Vec<(&str, String)> = vec![
        ("http://", r#"targets.p.baseUrl must name a host, as in "https://api.openai.com/v1" (got "http://")"#.into()),
        (
            "https:///v1",
            r#"targets.p.baseUrl must name a host, as in "https://api.openai.com/v1" (got "https:///v1")"#.into(),
        ),
        (
            "http://:80",
            r#"targets.p.baseUrl must name a host, as in "https://api.openai.com/v1" (got "http://:80")"#.into(),
        ),
        (
            "https://x:99999/v1",
            r#"targets.p.baseUrl must have a port from 0 to 65535 after the host (got "https://x:99999/v1")"#.into(),
        ),
        (
            "https://x:8o/v1",
            r#"targets.p.baseUrl must have a port from 0 to 65535 after the host (got "https://x:8o/v1")"#.into(),
        ),
        (
            "https://x y/v1",
            r#"targets.p.baseUrl must be a URL without spaces or control characters (got "https://x y/v1")"#.into(),
        ),
        ("https:/x/v1", r#"targets.p.baseUrl must be an http:// or https:// URL (got "https:/x/v1")"#.into()),
        ("https://user:SECRET@x/v1", no_creds("user:password@ before the host")),
        ("https://x/v1?a=1&Access_Token=SECRET", no_creds("the query parameter access_token=")),
    ];
    let params = [
        "token",
        "access_token",
        "api-key",
        "api_key",
        "apikey",
        "key",
        "auth",
        "password",
        "secret",
        "sig",
        "signature",
    ];
    let urls: Vec<(String, String)> = params
        .iter()
        .map(|p| (format!("https://x/v1?{}=SECRET", p.to_uppercase()), no_creds(&format!("the query parameter {p}="))))
        .collect();
    cases.extend(urls.iter().map(|(u, m)| (u.as_str(), m.clone())));
    for (url, message) in cases {
        let (p, m) = err(&base_url(url));
        assert_eq!((p.as_str(), m.as_str()), ("targets.p.baseUrl", message.as_str()), "for {url}");
        assert!(!m.contains("SECRET"), "{m}");
    }
    for (url, stored) in [
        ("HTTPS://api.x/v1", "https://api.x/v1"),
        ("Http://localhost:8080", "http://localhost:8080"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("https://x/v1?keyword=a&tokens=2", "https://x/v1?keyword=a&tokens=2"),
    ] {
        assert_eq!(Config::from_json(&base_url(url)).expect(url).targets[0].base_url, stored);
    }
}

#[test]
fn cors_takes_exact_origins_or_a_star() {
    let gateway = |cors: &str| format!(r#"{{"targets": {{{T}}}, "gateway": {{"cors": {cors}}}}}"#);
    for (cors, want) in [
        (r#"["*"]"#, Cors::AnyOrigin),
        (r#"["https://a.example", "*"]"#, Cors::AnyOrigin),
        (r#"["HTTPS://A.example:8443"]"#, Cors::Origins(vec!["https://a.example:8443".into()])),
        ("true", Cors::AnyOrigin),
        ("[]", Cors::Origins(vec![])),
    ] {
        assert_eq!(Config::from_json(&gateway(cors)).expect(cors).gateway.cors, want, "for {cors}");
    }
    let cases = [
        (
            r#"["https://*.x.com"]"#,
            "gateway.cors[0]",
            r#"gateway.cors[0] is a pattern ("https://*.x.com"); only exact origins such as "https://app.example" or "*" for any origin are supported"#,
        ),
        (
            r#"["https://a.example", "https://a.example/"]"#,
            "gateway.cors[1]",
            r#"gateway.cors[1] must be an origin (scheme, host and optional port, no path) such as "https://app.example", or "*" for any origin (got "https://a.example/")"#,
        ),
        (
            r#"[1]"#,
            "gateway.cors[0]",
            r#"gateway.cors[0] must be an origin (scheme, host and optional port, no path) such as "https://app.example", or "*" for any origin (got 1)"#,
        ),
        (
            r#""*""#,
            "gateway.cors",
            r#"gateway.cors must be true (any origin), false, or a list of exact origins where "*" means any origin (got "*")"#,
        ),
    ];
    for (cors, path, message) in cases {
        let (p, m) = err(&gateway(cors));
        assert_eq!((p.as_str(), m.as_str()), (path, message), "for {cors}");
    }
}

#[test]
fn numbers_and_gateway_keys_are_read_strictly() {
    let route = |r: &str| with_targets("", &format!(r#"{{"chat": {r}}}"#));
    let cases = [
        (route(r#"{"retry": "p", "attempts": 2.5}"#), "routes.chat.attempts must be a whole number from 1 to 100 (got 2.5)"),
        (route(r#"{"retry": "p", "attempts": 101}"#), "routes.chat.attempts must be a whole number from 1 to 100 (got 101)"),
        (route(r#"{"roundRobin": ["p", "p"], "weights": [1.5, 1]}"#), "routes.chat.weights[0] must be a whole number from 1 to 1000000 (got 1.5)"),
        (route(r#"{"retry": "p", "attempts": 2, "backoff": {"multiplier": 0.5}}"#), "routes.chat.backoff.multiplier must be a number from 1 to 100 (got 0.5); 1 keeps every delay the same"),
        (route(r#"{"retry": "p", "attempts": 2, "backoff": {"initialMs": -1}}"#), "routes.chat.backoff.initialMs must be a number of milliseconds from 0 to 2147483647 (got -1)"),
        (route(r#"{"retry": "p", "attempts": 2, "backoff": {"maxMs": 1e10}}"#), "routes.chat.backoff.maxMs must be a positive number of milliseconds up to 2147483647, the longest a JS timer waits (got 10000000000.0); omit it for the default of 8000"),
        (route(r#"{"retry": "p", "attempts": 2, "maxRetryAfterMs": "60s"}"#), r#"routes.chat.maxRetryAfterMs must be a positive number of milliseconds (got "60s"); omit it for the default of 60000"#),
        (format!(r#"{{"targets": {{{T}}}, "deadlineMs": 1e10}}"#), "deadlineMs must be a positive number of milliseconds up to 2147483647, the longest a JS timer waits (got 10000000000.0); omit it for no deadline"),
        (format!(r#"{{"targets": {{{T}}}, "gateway": {{"maxBodyBytes": 1.5}}}}"#), "gateway.maxBodyBytes must be a whole number of bytes from 1 to 1000000000 (got 1.5)"),
        (format!(r#"{{"targets": {{{T}}}, "gateway": {{"apiKeys": [12345]}}}}"#), "gateway.apiKeys[0] must be a non-empty string (got a number)"),
        (format!(r#"{{"targets": {{{T}}}, "gateway": {{"apiKeys": ["k1", "SECRET\r"]}}}}"#), "gateway.apiKeys[1] must be usable as an HTTP header value, but it contains a line break (CR or LF) at position 6 (the key is not shown)"),
    ];
    for (json, message) in cases {
        assert_eq!(err(&json).1, message, "for {json}");
    }
}

#[test]
fn over_deep_documents_name_the_config() {
    let deep = format!(r#"{{"targets": {{{T}}}, "routes": {}1{}}}"#, "[".repeat(200), "]".repeat(200));
    assert_eq!(
        err(&deep),
        ("config".to_string(), "config is nested too deeply (more than 128 levels of objects and lists)".to_string())
    );
}

#[test]
fn jitter_names_and_the_equal_default() {
    let cases =
        [("", Jitter::Equal), (r#", "jitter": "equal""#, Jitter::Equal), (r#", "jitter": "full""#, Jitter::Full)];
    for (jitter, expected) in cases {
        let routes = format!(r#"{{"chat": {{"retry": "p", "attempts": 2, "backoff": {{"initialMs": 10{jitter}}}}}}}"#);
        let c = Config::from_json(&with_targets("", &routes)).unwrap();
        let Strategy::Retry(p) = c.routes.get("chat").unwrap() else { panic!("retry expected") };
        assert_eq!(p.backoff.jitter, expected, "{jitter}");
    }
}

#[test]
fn strict_frames_is_a_boolean_off_by_default() {
    let read = |fields: &str| Config::from_json(&target_with(fields)).map(|c| c.targets[0].strict_frames);
    assert_eq!(read(r#""headers": {}"#), Ok(false));
    assert_eq!(read(r#""strictFrames": null"#), Ok(false));
    assert_eq!(read(r#""strictFrames": false"#), Ok(false));
    assert_eq!(read(r#""strictFrames": true"#), Ok(true));
    for wrong in [r#""yes""#, "1", "[]"] {
        let (path, message) = err(&target_with(&format!(r#""strictFrames": {wrong}"#)));
        assert_eq!(path, "targets.p.strictFrames");
        assert_eq!(
            message,
            format!("targets.p.strictFrames must be true (a malformed stream frame fails the attempt) or false (it is skipped with a warning) (got {wrong})")
        );
    }
}

#[test]
fn prefill_is_a_boolean_off_by_default() {
    let read = |fields: &str| Config::from_json(&target_with(fields)).map(|c| c.targets[0].prefill);
    assert_eq!(read(r#""headers": {}"#), Ok(false));
    assert_eq!(read(r#""prefill": true"#), Ok(true));
    let (path, message) = err(&target_with(r#""prefill": "yes""#));
    assert_eq!(path, "targets.p.prefill");
    assert_eq!(
        message,
        r#"targets.p.prefill must be true (the model continues a final assistant message) or false (default) (got "yes")"#
    );
}

#[test]
fn hedge_is_read_with_its_defaults_and_mistakes_name_the_field() {
    let route = |hedge: &str| with_targets("", &format!(r#"{{"chat": {{"fallback": ["p"], "hedge": {hedge}}}}}"#));
    let read = |hedge: &str| {
        let c = Config::from_json(&route(hedge)).unwrap();
        let Strategy::Fallback { hedge: Some(h), .. } = c.routes.get("chat").unwrap() else { panic!("hedge expected") };
        **h
    };
    let h = read(r#"{"afterMs": 2000}"#);
    assert_eq!((h.after_ms, h.after_percentile, h.floor_ms, h.min_samples, h.max), (Some(2000), None, 100, 20, 1));
    let h = read(r#"{"afterPercentile": 95, "floorMs": 250, "minSamples": 50, "max": 2}"#);
    assert_eq!((h.after_ms, h.after_percentile, h.floor_ms, h.min_samples, h.max), (None, Some(95.0), 250, 50, 2));
    let cases = [
        (
            r#"{"max": 2}"#,
            "routes.chat.hedge",
            "routes.chat.hedge needs afterMs (a fixed threshold, e.g. 2000), afterPercentile (learned from the target's recent times to first token, e.g. 95), or both (afterMs until enough is learned)",
        ),
        (
            r#"{"afterPercentile": 100}"#,
            "routes.chat.hedge.afterPercentile",
            "routes.chat.hedge.afterPercentile must be a percentile from 1 to 99.9 (got 100); 95 hedges the slowest 5%",
        ),
        (
            r#"{"afterMs": 500, "max": 0}"#,
            "routes.chat.hedge.max",
            "routes.chat.hedge.max must be a whole number of hedges per call from 1 to 10 (got 0)",
        ),
        (
            r#"{"afterPercentile": 95, "minSamples": 65}"#,
            "routes.chat.hedge.minSamples",
            "routes.chat.hedge.minSamples must be a whole number of samples from 1 to 64 (got 65)",
        ),
        (
            r#"{"afterMS": 500}"#,
            "routes.chat.hedge.afterMS",
            r#"routes.chat.hedge.afterMS is not a known field; did you mean "afterMs"?"#,
        ),
    ];
    for (hedge, path, message) in cases {
        let (p, m) = err(&route(hedge));
        assert_eq!((p.as_str(), m.as_str()), (path, message), "for {hedge}");
    }
    let (p, m) = err(&with_targets("", r#"{"chat": {"fastest": []}}"#));
    assert_eq!(p, "routes.chat.fastest");
    assert_eq!(m, "routes.chat.fastest must list at least one member (got []); a fastest of nothing can never answer");
}

#[test]
fn after_start_is_read_with_its_defaults_and_mistakes_name_the_field() {
    let route = |after: &str| with_targets("", &format!(r#"{{"chat": {{"fallback": ["p"], "afterStart": {after}}}}}"#));
    let c = Config::from_json(&route(r#"{"mode": "continue"}"#)).unwrap();
    let Strategy::Fallback { after_start: Some(a), .. } = c.routes.get("chat").unwrap() else {
        panic!("afterStart expected")
    };
    assert_eq!((a.mode, a.attempts, a.min_remaining_ms), (ResumeMode::Continue, 1, 1000));
    let c = Config::from_json(&route(r#"{"mode": "restart", "attempts": 3, "minRemainingMs": 2500}"#)).unwrap();
    let Strategy::Fallback { after_start: Some(a), .. } = c.routes.get("chat").unwrap() else {
        panic!("afterStart expected")
    };
    assert_eq!((a.mode, a.attempts, a.min_remaining_ms), (ResumeMode::Restart, 3, 2500));
    let cases = [
        (
            r#"{"mode": "resume"}"#,
            "routes.chat.afterStart.mode",
            r#"routes.chat.afterStart.mode must be "continue" (the next member with prefill: true continues the text) or "restart" (the reader discards it and the next member answers afresh) (got "resume")"#,
        ),
        (
            r#"{}"#,
            "routes.chat.afterStart.mode",
            r#"routes.chat.afterStart.mode is missing; give "continue" (the next member with prefill: true continues the text) or "restart" (the reader discards it and the next member answers afresh)"#,
        ),
        (
            r#"{"mode": "continue", "attempts": 11}"#,
            "routes.chat.afterStart.attempts",
            "routes.chat.afterStart.attempts must be a whole number of resumes from 1 to 10 (got 11)",
        ),
        (
            r#"{"mode": "continue", "minRemainingMs": 0}"#,
            "routes.chat.afterStart.minRemainingMs",
            "routes.chat.afterStart.minRemainingMs must be a positive number of milliseconds (got 0); omit it for the default of 1000",
        ),
        (
            r#"{"mode": "continue", "atempts": 2}"#,
            "routes.chat.afterStart.atempts",
            r#"routes.chat.afterStart.atempts is not a known field; did you mean "attempts"?"#,
        ),
        (r#""continue""#, "routes.chat.afterStart", r#"routes.chat.afterStart must be an object (got "continue")"#),
    ];
    for (after, path, message) in cases {
        assert_eq!(err(&route(after)), (path.to_string(), message.to_string()), "for {after}");
    }
}

#[test]
fn health_is_on_by_default_off_with_false_and_mistakes_name_the_field() {
    let with_health = |health: &str| format!(r#"{{"targets": {{{T}}}, "health": {health}}}"#);
    let on = Config::from_json(&format!(r#"{{"targets": {{{T}}}}}"#)).unwrap();
    let p = on.health.expect("on by default");
    assert_eq!((p.failures, p.failure_ratio, p.window_ms, p.min_requests, p.cooldown_ms), (5, 0.5, 30_000, 10, 5_000));
    assert_eq!(p.retry_budget.map(|b| (b.ratio, b.min_per_second)), Some((0.2, 10.0)));
    assert_eq!(Config::from_json(&with_health("false")).unwrap().health, None);
    let set = Config::from_json(&with_health(r#"{"cooldownMs": 800, "retryBudget": false}"#)).unwrap().health.unwrap();
    assert_eq!((set.cooldown_ms, set.retry_budget), (800, None));
    let cases = [
        ("true", "health", "health must be an object such as {\"cooldownMs\": 5000}, or false to turn breakers and the retry budget off (got true)"),
        (r#"{"failures": 0}"#, "health.failures", "health.failures must be a whole number of consecutive failures from 1 to 1000 (got 0)"),
        (r#"{"failureRatio": 2}"#, "health.failureRatio", "health.failureRatio must be a share of failures from 0.01 to 1 (got 2)"),
        (r#"{"cooldownMs": -1}"#, "health.cooldownMs", "health.cooldownMs must be a positive number of milliseconds (got -1); omit it for the default of 5000"),
        (r#"{"coolDownMs": 1}"#, "health.coolDownMs", "health.coolDownMs is not a known field; did you mean \"cooldownMs\"?"),
        (r#"{"retryBudget": {"ratio": -1}}"#, "health.retryBudget.ratio", "health.retryBudget.ratio must be a share of successful calls from 0 to 10 (got -1)"),
        (r#"{"retryBudget": 5}"#, "health.retryBudget", "health.retryBudget must be an object such as {\"ratio\": 0.2, \"minPerSecond\": 10}, or false for no budget (got 5)"),
    ];
    for (health, path, message) in cases {
        assert_eq!(err(&with_health(health)), (path.to_string(), message.to_string()), "for {health}");
    }
}

#[test]
fn propagate_deadline_is_auto_by_default() {
    use llm_baton::config::PropagateDeadline;
    let read = |fields: &str| Config::from_json(&target_with(fields)).map(|c| c.targets[0].propagate_deadline);
    assert_eq!(read(r#""headers": {}"#), Ok(PropagateDeadline::Auto));
    assert_eq!(read(r#""propagateDeadline": "auto""#), Ok(PropagateDeadline::Auto));
    assert_eq!(read(r#""propagateDeadline": true"#), Ok(PropagateDeadline::Always));
    assert_eq!(read(r#""propagateDeadline": false"#), Ok(PropagateDeadline::Never));
    let (path, message) = err(&target_with(r#""propagateDeadline": "yes""#));
    assert_eq!(path, "targets.p.propagateDeadline");
    assert_eq!(
        message,
        r#"targets.p.propagateDeadline must be true (send the call's remaining budget in x-baton-deadline-ms), false, or "auto" (the default: once the target answered as an llm-baton gateway) (got "yes")"#
    );
}

/// A JS config's `undefined` (an unset `process.env.X`) is refused where the config holds a
/// secret, and read as an absent field anywhere else; the JS reader asks `undefined_secret`.
#[test]
fn undefined_is_refused_only_where_a_secret_goes() {
    use llm_baton::config::{undefined_secret, Step};
    // A list item is written as its index.
    let steps = |path: &[&'static str]| -> Vec<Step<'static>> {
        path.iter().map(|&s| if s.parse::<usize>().is_ok() { Step::Item } else { Step::Field(s) }).collect()
    };
    let cause = "is undefined: an environment variable that is not set? Set it, or";
    let refused = [
        (&["targets", "primary", "apiKey"][..], "targets.primary.apiKey", "leave the field out"),
        (&["targets", "my target", "apiKey"], "targets[\"my target\"].apiKey", "leave the field out"),
        (&["targets", "p", "headers", "x-api-key"], "targets.p.headers.x-api-key", "leave the header out"),
        (&["targets", "p", "headers", "x-trace"], "targets.p.headers.x-trace", "leave the header out"),
        (&["gateway", "apiKeys"], "gateway.apiKeys", "leave the field out for a gateway that any client may call"),
        (&["gateway", "apiKeys", "1"], "gateway.apiKeys[1]", "remove the entry"),
        (&["targets", "b", "aws", "sessionToken"], "targets.b.aws.sessionToken", "leave the field out"),
        (
            &["targets", "b", "aws", "secretAccessKey"],
            "targets.b.aws.secretAccessKey",
            "give a Bedrock API key as apiKey instead of aws",
        ),
    ];
    for (at, path, remedy) in refused {
        let e = undefined_secret(&steps(at), path).unwrap_or_else(|| panic!("{path} was read as absent"));
        assert_eq!((e.path.as_str(), e.message), (path, format!("{path} {cause} {remedy}")));
    }
    let absent = [
        &["targets", "p", "baseUrl"][..],
        &["targets", "p", "timeouts", "idleMs"],
        &["targets", "apiKey"],
        &["targets", "p", "headers"],
        &["targets", "p", "extraBody", "apiKey"],
        &["targets", "b", "aws", "region"],
        &["routes", "apiKey"],
        &["gateway", "cors"],
        &["apiKeys"],
        &["deadlineMs"],
    ];
    for at in absent {
        assert_eq!(undefined_secret(&steps(at), "x"), None, "{at:?}");
    }
}

#[test]
fn a_missing_config_says_what_one_looks_like() {
    for entry in ["new Baton", "createGateway"] {
        let e = llm_baton::config::missing(entry);
        assert_eq!(e.path, "config");
        assert_eq!(
            e.message,
            format!(
                "config is required: {entry}({{ targets, routes }}), e.g. {entry}({{ targets: {{ p: {{ format: \"openai_chat\", \
                 baseUrl: \"https://api.openai.com/v1\", model: \"gpt-4o-mini\" }} }}, routes: {{ chat: \"p\" }} }}) \
                 (routes may be left out: each target is a route of its own)"
            )
        );
    }
    // The example it gives is a config that works.
    let example = r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://api.openai.com/v1", "model": "gpt-4o-mini"}}, "routes": {"chat": "p"}}"#;
    assert!(Config::from_json(example).is_ok_and(|c| c.strategy("chat").is_some()));
}
