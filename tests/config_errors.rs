//! Config mistakes, and the exact message each one gets: the field by path, what was wrong,
//! what would be right.

use llm_baton::config::{Config, Cors, Jitter, Strategy};

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
            "targets.p.timeouts.totalMs must be a positive number of milliseconds (got 3000000000); omit it for no limit",
        ),
        (
            r#"{"targets": {"p": {"format": "openai", "baseUrl": "https://x/v1", "model": "m"}}}"#.into(),
            "targets.p.format",
            r#"targets.p.format must be one of "openai_chat", "anthropic_messages", "openai_responses", "gemini" (got "openai")"#,
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
            "targets.p.baseUrl must not carry credentials (user:password@ or a key= query); put the key in apiKey",
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
            r#"routes.chat.retryOn[0] must be "transport", "timeout", "protocol", "4xx", "5xx" or an HTTP status from 100 to 599 (got "timeouts")"#,
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p", "attempts": 2, "backoff": {"jitter": "half"}}}"#),
            "routes.chat.backoff.jitter",
            r#"routes.chat.backoff.jitter must be "full" or "none" (got "half")"#,
        ),
        (
            with_targets("", r#"{"chat": {"retry": "p", "attempts": 2, "backoff": {"initialMs": 500, "maxMs": 100}}}"#),
            "routes.chat.backoff.maxMs",
            "routes.chat.backoff.maxMs must be at least initialMs (500) (got 100)",
        ),
        (
            with_targets("", r#"{"chat": {"sequence": ["p"]}}"#),
            "routes.chat",
            r#"routes.chat must be a target name or an object with one of "retry", "fallback", "roundRobin""#,
        ),
        (
            with_targets("", r#"{"chat": {"fallback": ["p"], "attempts": 2}}"#),
            "routes.chat.attempts",
            "routes.chat.attempts is not a known field; known fields: fallback, fallbackOn",
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
        ("{".into(), "", "config is not valid JSON: EOF while parsing an object at line 1 column 1"),
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
    let Strategy::Fallback { members, fallback_on } = &c.routes["chat"] else { panic!("fallback expected") };
    assert_eq!(fallback_on.as_ref().unwrap().statuses, vec![503]);
    let Strategy::Retry(p) = &members[0] else { panic!("retry inlined") };
    assert_eq!((p.attempts, p.backoff.initial_ms, p.backoff.jitter), (4, 0, Jitter::None));
    assert!(matches!(&members[1], Strategy::RoundRobin { weights, .. } if weights == &vec![3, 1]));
    assert_eq!(c.round_robin_nodes, 1);
    assert_eq!(c.gateway.cors, Cors::Off);
    assert_eq!(c.route_names(), vec!["chat", "primary", "p", "q"]);
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
