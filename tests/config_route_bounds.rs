//! Routes naming routes: inlined, they could grow exponentially or recurse past a JavaScript
//! host's stack. A config doing that is refused with a message naming where, in bounded time.

use llm_baton::config::Config;

/// A config of target `p` and the given `"name": strategy` routes.
fn config(routes: &[(String, String)]) -> String {
    let routes: Vec<String> = routes.iter().map(|(name, strategy)| format!("\"{name}\": {strategy}")).collect();
    format!(
        r#"{{"targets": {{"p": {{"format": "gemini", "baseUrl": "https://x", "model": "m"}}}}, "routes": {{{}}}}}"#,
        routes.join(", ")
    )
}

/// `r0` is `p`; each next route names the one before `width` times.
fn chain(length: usize, width: usize) -> String {
    let mut routes = vec![("r0".to_string(), "\"p\"".to_string())];
    for i in 1..length {
        let members = vec![format!("\"r{}\"", i - 1); width].join(", ");
        let strategy = if width == 1 { members } else { format!(r#"{{"fallback": [{members}]}}"#) };
        routes.push((format!("r{i}"), strategy));
    }
    config(&routes)
}

/// One route of `levels` fallbacks inside each other, around `p`.
fn nested(levels: usize) -> String {
    let strategy = format!("{}\"p\"{}", r#"{"fallback": ["#.repeat(levels), "]}".repeat(levels));
    config(&[("r".to_string(), strategy)])
}

const TOO_DEEP: &str =
    "nests strategies more than 32 deep, each route it names counting as a level; a route needs only a few levels";
const TOO_BIG: &str = "makes the routes hold more than 10000 targets and strategies once the routes they name are written out; name routes inside each other less often";

#[test]
fn routes_are_bounded_in_size_and_depth() {
    // (case, config, the error's path and what it says after the path, if refused)
    type Case<'a> = (&'a str, String, Option<(String, &'a str)>);
    let cases: Vec<Case> = vec![
        ("32 levels of route names", chain(32, 1), None),
        ("33 levels of route names", chain(33, 1), Some(("routes.r32".into(), TOO_DEEP))),
        // Without the bound this overflowed the stack.
        ("20000 route names in a chain", chain(20_000, 1), Some(("routes.r68".into(), TOO_DEEP))),
        ("31 fallbacks inside each other", nested(31), None),
        (
            "32 fallbacks inside each other",
            nested(32),
            Some((format!("routes.r{}", ".fallback[0]".repeat(32)), TOO_DEEP)),
        ),
        ("routes naming the one before twice, 11 times over", chain(12, 2), None),
        // Without the bound this doubled to 2^30 targets: gigabytes, minutes.
        (
            "routes naming the one before twice, 30 times over",
            chain(30, 2),
            Some(("routes.r12.fallback[0]".into(), TOO_BIG)),
        ),
    ];
    for (name, json, expected) in cases {
        let got = Config::from_json(&json);
        match expected {
            None => assert!(got.is_ok(), "{name}: {got:?}"),
            Some((path, what)) => {
                let e = got.expect_err(name);
                assert_eq!(
                    (e.path.as_str(), e.message.as_str()),
                    (path.as_str(), format!("{path} {what}").as_str()),
                    "{name}"
                );
            }
        }
    }
}
