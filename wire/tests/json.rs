//! The reader against serde_json: the same documents accepted, the same trees, the same error
//! messages and positions; a huge number is the one difference (kept, where serde_json refuses).

use llm_baton_wire::json::{
    parse, parse_with_depth, Cursor, ErrorCode, Json, JsonError, Kind, Number, Object, MAX_DEPTH,
};
use proptest::prelude::*;
use serde_json::Value;
use std::borrow::Cow;

/// The same tree. Numbers are compared as `f64`s, within an ulp or so: serde_json's float
/// reading (without its `float_roundtrip` feature) is not always the nearest, ours is. A
/// subnormal's ulp is far more than `EPSILON` of it, so one ulp apart is also the same.
fn same(ours: &Json, theirs: &Value) -> bool {
    match (ours, theirs) {
        (Json::Null, Value::Null) => true,
        (Json::Bool(a), Value::Bool(b)) => a == b,
        (Json::Number(a), Value::Number(b)) => match (a.as_u64(), a.as_i64()) {
            (Some(a), _) => b.as_u64() == Some(a) || (b.is_f64() && b.as_f64() == Some(a as f64)),
            (None, Some(a)) => b.as_i64() == Some(a) || (b.is_f64() && b.as_f64() == Some(a as f64)),
            _ => {
                let (a, b) = (a.as_str().parse::<f64>().unwrap(), b.as_f64().unwrap());
                let one_ulp_apart = a.signum() == b.signum() && a.to_bits().abs_diff(b.to_bits()) == 1;
                a == b || (a - b).abs() <= a.abs().max(b.abs()) * 4.0 * f64::EPSILON || one_ulp_apart
            }
        },
        (Json::String(a), Value::String(b)) => a == b,
        (Json::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b)),
        (Json::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&str> = a.keys().collect();
            keys.len() == b.len() && b.iter().all(|(k, v)| a.get(k).is_some_and(|a| same(a, v)))
        }
        _ => false,
    }
}

/// Both readers agree on `text`: the same tree, or the same error message.
fn agree(text: &str) {
    let ours = parse(text);
    match serde_json::from_str::<Value>(text) {
        Ok(theirs) => {
            let ours = ours.unwrap_or_else(|e| panic!("{text:?}: serde_json reads it, we said {e}"));
            assert!(same(&ours, &theirs), "{text:?}: {ours:?} is not {theirs:?}");
        }
        // serde_json stops at a number beyond f64's range; we read on (and may fail later).
        Err(e) if e.to_string().starts_with("number out of range") => {}
        Err(theirs) => {
            let ours = ours.map(|v| format!("{v:?}")).expect_err(text);
            assert_eq!(ours.to_string(), theirs.to_string(), "{text:?}");
            assert_eq!((ours.line(), ours.column()), (theirs.line(), theirs.column()), "{text:?}");
        }
    }
}

/// Walks the whole document with a cursor (containers entered, strings read, the rest skipped)
/// and counts what it saw.
fn walk(text: &str) -> Result<usize, JsonError> {
    fn value(c: &mut Cursor, seen: &mut usize) -> Result<(), JsonError> {
        *seen += 1;
        match c.peek()? {
            Kind::Object => {
                c.enter_object()?;
                while c.next_key()?.is_some() {
                    value(c, seen)?;
                }
            }
            Kind::Array => {
                c.enter_array()?;
                while c.next_item()? {
                    value(c, seen)?;
                }
            }
            Kind::String => drop(c.string()?),
            _ => c.skip()?,
        }
        Ok(())
    }
    let mut c = Cursor::new(text, MAX_DEPTH);
    let mut seen = 0;
    value(&mut c, &mut seen)?;
    c.finish()?;
    Ok(seen)
}

/// The cursor accepts what the tree reader accepts, and fails with the same error.
fn cursor_agrees(text: &str) {
    match (parse(text), walk(text)) {
        (Ok(_), Ok(_)) => {}
        (Err(tree), Err(cursor)) => assert_eq!(tree, cursor, "{text:?}"),
        (tree, cursor) => panic!("{text:?}: the tree reader says {tree:?}, the cursor {cursor:?}"),
    }
}

/// Documents every JSON reader must accept (JSONTestSuite's y_ cases, written from its list).
const ACCEPTED: &[&str] = &[
    "[]",
    "{}",
    " [] ",
    "\t\r\n[\n]\r\n",
    "[[]   ]",
    "[\"\"]",
    // A subnormal serde_json reads one ulp off (5.64584103656778e-310): the same number.
    "5.6458410365678e-310",
    "[null]",
    "[1,null,null,null,2]",
    "[false]",
    "[true]",
    "[-0]",
    "[-0.0]",
    "[0e+1]",
    "[0e1]",
    "[ 4]",
    "[-0.000000000000000000000000000000000000000000000000000000000000000000000000000001]\n",
    "[20e1]",
    "[123e65]",
    "[-1]",
    "[-123]",
    "[1E22]",
    "[1E-2]",
    "[1E+2]",
    "[123e45]",
    "[123.456e78]",
    "[1e-2]",
    "[1e+2]",
    "[123]",
    "[123.456789]",
    "123",
    "-0",
    "0",
    "1.5",
    "[9223372036854775807]",
    "[-9223372036854775808]",
    "[18446744073709551615]",
    "[18446744073709551616]",
    "[100000000000000000000000000000000000000000000000000000000000000000000000000]",
    "{\"asd\":\"sdf\", \"dfg\":\"fgh\"}",
    "{\"asd\":\"sdf\"}",
    "{\"a\":\"b\",\"a\":\"c\"}",
    "{\"a\":\"b\",\"a\":\"b\"}",
    "{\"\":0}",
    "{\"foo\\u0000bar\": 42}",
    "{ \"min\": -1.0e+28, \"max\": 1.0e+28 }",
    "{\"x\":[{\"id\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}], \"id\": \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
    "{\"a\":[]}",
    "{\"title\":\"\\u041f\\u043e\\u043b\\u0442\\u043e\\u0440\\u0430 \\u0417\\u0435\\u043c\\u043b\\u0435\\u043a\\u043e\\u043f\\u0430\" }",
    "{\n\"a\": \"b\"\n}",
    "[\"\\u0060\\u012a\\u12AB\"]",
    "[\"\\uD801\\udc37\"]",
    "[\"\\ud83d\\ude39\\ud83d\\udc8d\"]",
    "[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"]",
    "[\"\\\\u0000\"]",
    "[\"\\\"\"]",
    "[\"a/*b*/c/*d//e\"]",
    "[\"\\\\a\"]",
    "[\"\\\\n\"]",
    "[\"\\u0012\"]",
    "[\"\\uFFFF\"]",
    "[\"asd\"]",
    "[ \"asd\"]",
    "[\"\\uDBFF\\uDFFF\"]",
    "[\"new\\u00A0line\"]",
    "[\"\u{10FFFF}\"]",
    "[\"\u{FFFF}\"]",
    "[\"\\u0000\"]",
    "[\"\\u002c\"]",
    "[\"π\"]",
    "[\"asd \"]",
    "\" \"",
    "[\"\\uD834\\uDd1e\"]",
    "[\"\\u0821\"]",
    "[\"\\u0123\"]",
    "[\"\u{2028}\"]",
    "[\"\u{2029}\"]",
    "[\"\\u0061\\u30af\\u30EA\\u30b9\"]",
    "[\"\\uA66D\"]",
    "[\"\\u005C\"]",
    "[\"\\u200B\"]",
    "[\"\\u2064\"]",
    "[\"\\uFDD0\"]",
    "[\"\\uFFFE\"]",
    "[\"\\u0022\"]",
    "[\"€𝄞\"]",
    "[\"aa\u{7f}\"]",
    "\"\"",
    "null",
    "true",
    "false",
    "[\"a\"]\n",
    "[true]",
    " [1] ",
    "[1\n]",
    "[\"a\",\n4\n,1,\n1]",
];

/// Documents every JSON reader must refuse (JSONTestSuite's n_ cases that are valid UTF-8).
const REFUSED: &[&str] = &[
    "[1 true]",
    "[a\u{e5}]",
    "[\"\": 1]",
    "[\"\"],",
    "[,1]",
    "[1,,2]",
    "[\"x\",,]",
    "[\"x\"]]",
    "[\"\",]",
    "[\"x\"",
    "[x",
    "[3[4]]",
    "[1:2]",
    "[,]",
    "[-]",
    "[   , \"\"]",
    "[\"a\",\n4\n,1,",
    "[1,]",
    "[1,,]",
    "[\"\u{b}a\"\\f]",
    "[*]",
    "[\"\"",
    "[1,",
    "[1,\n1\n,1",
    "[{}",
    "[fals]",
    "[nul]",
    "[tru]",
    "[++1234]",
    "[+1]",
    "[+Inf]",
    "[-01]",
    "[-1.0.]",
    "[-2.]",
    "[-NaN]",
    "[.-1]",
    "[.2e-3]",
    "[0.1.2]",
    "[0.3e+]",
    "[0.3e]",
    "[0.e1]",
    "[0E+]",
    "[0E]",
    "[0e+]",
    "[0e]",
    "[1.0e+]",
    "[1.0e-]",
    "[1.0e]",
    "[1 000.0]",
    "[1eE2]",
    "[2.e+3]",
    "[2.e-3]",
    "[2.e3]",
    "[9.e+]",
    "[Inf]",
    "[NaN]",
    "[\u{FF11}]",
    "[1+2]",
    "[0x1]",
    "[0x42]",
    "[Infinity]",
    "[0e+-1]",
    "[-123.123foo]",
    "[123\u{e5}]",
    "[1e1\u{e5}]",
    "[0\u{e5}]",
    "[-Infinity]",
    "[-foo]",
    "[- 1]",
    "[-012]",
    "[-.123]",
    "[-1x]",
    "[1ea]",
    "[1.]",
    "[.123]",
    "[012]",
    "[1.2a-3]",
    "[1.8011670033376514H-308]",
    "-",
    "-1.",
    "1e",
    "1e+",
    "00",
    "-00.0",
    "-00e0",
    "00.0",
    "00e0",
    "{[: \"x\"}\n",
    "{\"x\", null}",
    "{\"x\"::\"b\"}",
    "{🇨🇭}",
    "{\"a\":\"a\" 123}",
    "{key: 'value'}",
    "{\"a\" b}",
    "{:\"b\"}",
    "{\"a\" \"b\"}",
    "{\"a\":",
    "{\"a\"",
    "{1:1}",
    "{9999E9999:1}",
    "{null:null,null:null}",
    "{\"id\":0,,,,,}",
    "{'a':0}",
    "{\"id\":0,}",
    "{\"a\":\"b\"}/**/",
    "{\"a\":\"b\"}/**//",
    "{\"a\":\"b\"}//",
    "{\"a\":\"b\"}/",
    "{\"a\":\"b\",,\"c\":\"d\"}",
    "{a: \"b\"}",
    "{\"a\":\"a",
    "{ \"foo\" : \"bar\", \"a\" }",
    "{\"a\":\"b\"}#",
    " ",
    "[\"\\uD800\\\"]",
    "[\"\\uD800\\u\"]",
    "[\"\\uD800\\u1\"]",
    "[\"\\uD800\\u1x\"]",
    "[é]",
    "[\"\\x00\"]",
    "[\"\\\\\\\"]",
    "[\"\\\t\"]",
    "[\"\\🌀\"]",
    "[\"\\\"]",
    "[\"\\u00A\"]",
    "[\"\\uD834\\uDd\"]",
    "[\"\\uD800\\uD800\\x\"]",
    "[\"\\uqqqq\"]",
    "[\\u0020\"asd\"]",
    "[\\n]",
    "\"",
    "['single quote']",
    "abc",
    "[\"\\",
    "[\"new\nline\"]",
    "[\"\t\"]",
    "\"\\UA66D\"",
    "\"a\u{0}a\"",
    "\"\\u\"",
    "\"\\a\"",
    "\"\\017\"",
    "[\"a\u{0}a\"]",
    "",
    "<.>",
    "[<null>]",
    "[1]x",
    "[1]]",
    "[\"asd]",
    "a\u{e5}",
    "[True]",
    "1]",
    "{\"x\": true,",
    "[][]",
    "]",
    "[",
    "{",
    "[{",
    "[\"a\"",
    "[\"a",
    "{\"a\":[",
    "{\"a\":{",
    "[\"\\u{1F600}\"]",
    "nul",
    "n",
    "t",
    "trUe",
    "2 3",
    "{\"a\":1}\n{\"b\":2}",
    "\"\\uDC00\"",
    "\"\\uD800\"",
    "\"\\uD800x\"",
    "\"\\uD800\\n\"",
    "\"\\uD800\\uD800\"",
    "\"\\uD800\\u0041\"",
    "\"\\uDFFF\\uDC00\"",
    "{\"\\uDC00\":1}",
    "[\"\\uD800",
    "[\"\\uD800\\",
    "[\"\\uD800\\u",
    "[\"\\uD800\\uDC",
    "[\"\\u12",
    "[\n  1,\n  2\n  3\n]",
    "{\n\"a\": 1\n\"b\": 2}",
];

#[test]
fn accepted_documents_read_as_serde_json_reads_them() {
    for text in ACCEPTED {
        assert!(serde_json::from_str::<Value>(text).is_ok(), "the case itself: {text:?}");
        agree(text);
        cursor_agrees(text);
    }
}

#[test]
fn refused_documents_fail_with_serde_json_words_and_positions() {
    for text in REFUSED {
        assert!(parse(text).is_err(), "{text:?}");
        agree(text);
        cursor_agrees(text);
    }
}

#[test]
fn numbers_keep_their_text() {
    let v = parse(r#"{"seed": 18446744073709551615, "big": 1e400, "small": 0.1, "neg": -9223372036854775808, "huge": 123456789012345678901234567890}"#)
        .unwrap();
    assert_eq!(v["seed"].as_u64(), Some(u64::MAX));
    assert_eq!(v["seed"].as_i64(), None);
    assert_eq!(v["big"].as_number().map(Number::as_str), Some("1e400"));
    assert_eq!(v["big"].as_number().map(|n| n.as_str().parse()), Some(Ok(f64::INFINITY)));
    assert_eq!(v["big"].as_u64(), None);
    assert_eq!(v["small"].as_number().map(|n| n.as_str().parse()), Some(Ok(0.1)));
    assert_eq!(v["small"].as_number().map(Number::as_str), Some("0.1"));
    assert_eq!(v["neg"].as_i64(), Some(i64::MIN));
    assert_eq!(v["neg"].as_u64(), None);
    assert_eq!(v["huge"].as_u64(), None);
    assert_eq!(v["huge"].as_number().map(Number::as_str), Some("123456789012345678901234567890"));
    assert_eq!(parse("12.0").unwrap().as_u64(), None);
    assert_eq!(parse("-0").unwrap().as_i64(), Some(0));
    for (text, valid) in [
        ("12", true),
        ("-1.5e-3", true),
        ("+1", false),
        ("01", false),
        ("1.", false),
        ("NaN", false),
        ("", false),
        ("1 ", false),
    ] {
        assert_eq!(Number::from_text(text).is_some(), valid, "{text:?}");
    }
    assert_eq!(Number::from(u64::MAX).as_str(), "18446744073709551615");
    assert_eq!(Number::from(i64::MIN).as_str(), "-9223372036854775808");
    assert_eq!(Number::from(0u64).as_str(), "0");
    assert_eq!(Number::from(-7i64).as_i64(), Some(-7));
}

#[test]
fn strings_borrow_unless_escaped() {
    let v = parse(r#"["plain", "esc\naped", "\u00e9t\u00E9", "\ud83d\ude00"]"#).unwrap();
    let items = v.as_array().unwrap();
    assert!(matches!(&items[0], Json::String(Cow::Borrowed("plain"))));
    assert!(matches!(&items[1], Json::String(Cow::Owned(s)) if s == "esc\naped"));
    assert_eq!(items[2].as_str(), Some("été"));
    assert_eq!(items[3].as_str(), Some("😀"));
}

#[test]
fn objects_keep_order_and_the_last_duplicate_wins() {
    let v = parse(r#"{"b": 1, "a": 2, "b": 3}"#).unwrap();
    let o = v.as_object().unwrap();
    assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "a", "b"]);
    assert_eq!(o.len(), 3);
    assert_eq!(v["b"].as_u64(), Some(3));
    assert!(o.contains_key("a") && !o.contains_key("c"));
    assert!(v["c"].is_null() && v["b"]["x"].is_null() && v[0].is_null());
    assert_eq!(serde_json::from_str::<Value>(r#"{"b": 1, "a": 2, "b": 3}"#).unwrap()["b"], 3);
}

#[test]
fn owned_trees_are_easy_to_build() {
    let mut o = Object::new();
    assert_eq!(o.insert("model", Json::string("gpt".to_string())), None);
    o.insert("n", Json::from(2u64));
    o.insert(String::from("stop"), Json::from(vec![Json::from("a"), Json::Null]));
    assert_eq!(o.insert("n", Json::from(-3i64)).and_then(|v| v.as_u64()), Some(2));
    let built: Json<'static> = Json::Object(o).into_owned();
    let text = r#"{"model":"gpt","n":-3,"stop":["a",null]}"#;
    assert_eq!(built, parse(text).unwrap());
    let owned: Json<'static> = {
        let copy = text.to_string();
        parse(&copy).unwrap().into_owned()
    };
    assert_eq!(owned, built);
    let mut o = owned.as_object().unwrap().clone();
    assert_eq!(o.remove("n").and_then(|n| n.as_i64()), Some(-3));
    assert_eq!(o.keys().collect::<Vec<_>>(), ["model", "stop"]);
    let collected: Object = [("k", Json::Bool(true))].into_iter().collect();
    assert_eq!(collected.get("k").and_then(Json::as_bool), Some(true));
}

#[test]
fn depth_is_limited_without_recursion() {
    let nested = |n: usize| "[".repeat(n) + &"]".repeat(n);
    agree(&nested(MAX_DEPTH - 1));
    agree(&nested(MAX_DEPTH));
    agree(&format!("{}1{}", "[".repeat(200), "]".repeat(200)));
    agree(&"{\"a\":".repeat(200));
    cursor_agrees(&nested(MAX_DEPTH - 1));
    cursor_agrees(&nested(MAX_DEPTH));
    let deep = "[".repeat(1_000_000);
    let e = parse_with_depth(&deep, usize::MAX).unwrap_err();
    assert_eq!(e.code(), ErrorCode::EofWhileParsingList);
    let e = parse(&deep).unwrap_err();
    assert_eq!(e.code(), ErrorCode::RecursionLimitExceeded);
    assert_eq!(e.offset(), MAX_DEPTH - 1);
    assert!(parse_with_depth(&nested(1000), 1001).is_ok());
    assert!(parse_with_depth(&nested(1000), 1000).is_err());
}

#[test]
fn errors_say_what_and_where() {
    let e = parse("{\n  \"a\": 1,\n  \"b\" 2\n}").unwrap_err();
    assert_eq!(e.to_string(), "expected `:` at line 3 column 7");
    assert_eq!((e.line(), e.column(), e.offset()), (3, 7, 18));
    assert_eq!(parse("{").unwrap_err().to_string(), "EOF while parsing an object at line 1 column 1");
    assert_eq!(parse(r#"{"a":1 "b":2}"#).unwrap_err().to_string(), "expected `,` or `}` at line 1 column 8");
}

/// serde_json's values, with numbers both readers hold the same way.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\\u{0}-\u{1f}\u{e9}\u{1F600}]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((any::<String>(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Text made of JSON's own characters, to reach every error path.
fn jsonish() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", " ", "\n", "\"", "\\", "u", "D800", "DC00", "00e9", "0", "1", "-", "+", ".",
            "e", "E", "true", "null", "fals", "\"a\"", "\t", "\u{1}", "é", "x", "1e400",
        ]),
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn reads_what_serde_json_writes(value in any_value()) {
        let compact = serde_json::to_string(&value).unwrap();
        let ours = parse(&compact).unwrap();
        prop_assert!(same(&ours, &value), "{:?} is not {:?}", ours, value);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        prop_assert!(same(&parse(&pretty).unwrap(), &value));
    }

    #[test]
    fn agrees_with_serde_json_on_jsonish_text(text in jsonish()) {
        agree(&text);
        cursor_agrees(&text);
    }

    #[test]
    fn never_panics_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
        let _ = parse_with_depth(&text, 3);
    }

    #[test]
    fn never_panics_on_damaged_json(value in any_value(), cut in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = serde_json::to_string(&value).unwrap().into_bytes();
        if !bytes.is_empty() {
            let at = cut.index(bytes.len());
            bytes[at] = byte;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            agree(&text);
            cursor_agrees(&text);
            let half = (0..=text.len() / 2).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
            agree(&text[..half]);
        }
    }
}
