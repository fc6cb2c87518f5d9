//! Images, files and the request parameters in each provider's body; the parts a format cannot
//! carry, refused before anything is sent; and a target's `extraBody`. Every case builds the real
//! body through `Format::build_request` from a request read as the JS API reads it.

use llm_baton::chat::{ChatRequest, Message, Part, Role};
use llm_baton::config::Config;
use llm_baton::format::Format;
use serde_json::{json, Value};

/// One target per format (named by its format), and routes over them.
const CONFIG: &str = r#"{
    "targets": {
        "openai_chat": {"format": "openai_chat", "baseUrl": "https://a.test/v1", "model": "gpt"},
        "anthropic_messages": {"format": "anthropic_messages", "baseUrl": "https://b.test/v1", "model": "claude"},
        "openai_responses": {"format": "openai_responses", "baseUrl": "https://c.test/v1", "model": "gpt"},
        "gemini": {"format": "gemini", "baseUrl": "https://d.test/v1beta", "model": "gemini"},
        "bedrock_converse": {"format": "bedrock_converse", "region": "us-east-1", "model": "claude"}
    },
    "routes": {
        "everywhere": {"fallback": ["openai_chat", "anthropic_messages", "openai_responses", "gemini"]},
        "no_chat": {"fallback": ["gemini", {"retry": "openai_responses", "attempts": 2}, "anthropic_messages"]},
        "google_then_openai": {"fallback": ["gemini", "openai_responses"]}
    }
}"#;

fn config() -> Config {
    Config::from_json(CONFIG).unwrap()
}

fn body(config: &Config, format: Format, request: &ChatRequest) -> Value {
    let target = config.targets.iter().find(|t| t.format == format).unwrap();
    serde_json::from_str(&format.build_request(target, request, false).body).unwrap()
}

fn request(json: Value) -> ChatRequest {
    ChatRequest::from_value(&json).unwrap()
}

/// The JSON pointer of the first user message's content in each format's body.
fn user_content(format: Format) -> &'static str {
    match format {
        Format::OpenaiChat | Format::AnthropicMessages => "/messages/0/content",
        Format::OpenaiResponses => "/input/0/content",
        Format::Gemini => "/contents/0/parts",
        Format::BedrockConverse => "/messages/0/content",
    }
}

#[test]
fn each_part_kind_in_each_format() {
    let pdf = json!({"type": "file", "data": "JVBERi0x", "mediaType": "application/pdf", "filename": "a.pdf"});
    // (case, the part after a text part, [openai_chat, anthropic_messages, openai_responses, gemini]:
    // what the part becomes in the user content, after the text's own part).
    let cases: Vec<(&str, Value, [Value; 4])> = vec![
        (
            "image by URL",
            json!({"type": "image", "url": "https://x.test/cat.png", "mediaType": "image/png"}),
            [
                json!({"type": "image_url", "image_url": {"url": "https://x.test/cat.png"}}),
                json!({"type": "image", "source": {"type": "url", "url": "https://x.test/cat.png"}}),
                json!({"type": "input_image", "image_url": "https://x.test/cat.png", "detail": "auto"}),
                json!({"fileData": {"mimeType": "image/png", "fileUri": "https://x.test/cat.png"}}),
            ],
        ),
        (
            "image by data",
            json!({"type": "image", "data": "iVBORw0K", "mediaType": "image/png"}),
            [
                json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}}),
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}),
                json!({"type": "input_image", "image_url": "data:image/png;base64,iVBORw0K", "detail": "auto"}),
                json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}}),
            ],
        ),
        (
            "image by data: URL, read as data",
            json!({"type": "image", "url": "data:image/jpeg;base64,/9j/4AAQ"}),
            [
                json!({"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}}),
                json!({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}}),
                json!({"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "auto"}),
                json!({"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQ"}}),
            ],
        ),
        (
            "PDF by data, named",
            pdf.clone(),
            [
                json!({"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}}),
                json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}, "title": "a.pdf"}),
                json!({"type": "input_file", "filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}),
                json!({"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}}),
            ],
        ),
        (
            "PDF by data, unnamed",
            json!({"type": "file", "data": "JVBERi0x", "mediaType": "application/pdf"}),
            [
                json!({"type": "file", "file": {"filename": "document.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}}),
                json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"}}),
                json!({"type": "input_file", "filename": "document.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}),
                json!({"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}}),
            ],
        ),
        (
            "PDF by URL (not for openai_chat: checked before sending)",
            json!({"type": "file", "url": "https://x.test/a.pdf", "mediaType": "application/pdf"}),
            [
                json!({"type": "file", "file": {"filename": "document.pdf", "file_url": "https://x.test/a.pdf"}}),
                json!({"type": "document", "source": {"type": "url", "url": "https://x.test/a.pdf"}}),
                json!({"type": "input_file", "file_url": "https://x.test/a.pdf"}),
                json!({"fileData": {"mimeType": "application/pdf", "fileUri": "https://x.test/a.pdf"}}),
            ],
        ),
    ];
    let config = config();
    for (case, part, expected) in cases {
        let r = request(json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "Look:"}, part]}]}));
        for (format, expected) in Format::ALL.into_iter().zip(expected) {
            let body = body(&config, format, &r);
            let content = body.pointer(user_content(format)).unwrap_or_else(|| panic!("{case}: {format:?} {body}"));
            let text = match format {
                Format::OpenaiChat | Format::AnthropicMessages => json!({"type": "text", "text": "Look:"}),
                Format::OpenaiResponses => json!({"type": "input_text", "text": "Look:"}),
                Format::Gemini | Format::BedrockConverse => json!({"text": "Look:"}),
            };
            assert_eq!(content, &json!([text, expected]), "{case}: {format:?}");
        }
    }
}

#[test]
fn all_text_messages_are_sent_as_before() {
    let config = config();
    let joined = request(json!({"messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hello there"},
        {"role": "assistant", "content": "Hi"},
    ]}));
    let in_parts = request(json!({"messages": [
        {"role": "system", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hi"}]},
    ]}));
    for format in Format::ALL {
        assert_eq!(body(&config, format, &in_parts), body(&config, format, &joined), "{format:?}");
        let only_user = request(json!({"messages": [{"role": "user", "content": "Hello there"}]}));
        let user = body(&config, format, &only_user).pointer(user_content(format)).cloned().unwrap();
        let expected = match format {
            Format::Gemini | Format::BedrockConverse => json!([{"text": "Hello there"}]),
            _ => json!("Hello there"),
        };
        assert_eq!(user, expected, "{format:?}: one string, as today");
    }
    let built = ChatRequest { messages: vec![Message::new(Role::User, "Hello there")], ..Default::default() };
    assert_eq!(built.messages[0].content, vec![Part::Text { text: "Hello there".into() }]);
}

#[test]
fn each_parameter_in_each_format() {
    let tools = json!([{"name": "f"}, {"name": "g"}]);
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    // (case, request fields, [openai_chat, anthropic_messages, openai_responses, gemini]: the
    // body's fields by JSON pointer, `null` where the field must be absent).
    type Expected = [Vec<(&'static str, Value)>; 4];
    let cases: Vec<(&str, Value, Expected)> = vec![
        (
            "topP",
            json!({"topP": 0.5}),
            [
                vec![("/top_p", json!(0.5))],
                vec![("/top_p", json!(0.5))],
                vec![("/top_p", json!(0.5))],
                vec![("/generationConfig/topP", json!(0.5))],
            ],
        ),
        (
            "seed: no field for it at Anthropic and Responses",
            json!({"seed": 42}),
            [
                vec![("/seed", json!(42))],
                vec![("/seed", Value::Null)],
                vec![("/seed", Value::Null)],
                vec![("/generationConfig/seed", json!(42))],
            ],
        ),
        (
            "stop",
            json!({"stop": ["END"]}),
            [
                vec![("/stop", json!(["END"]))],
                vec![("/stop_sequences", json!(["END"]))],
                vec![("/stop", Value::Null)],
                vec![("/generationConfig/stopSequences", json!(["END"]))],
            ],
        ),
        (
            "toolChoice auto",
            json!({"tools": tools, "toolChoice": "auto"}),
            [
                vec![("/tool_choice", json!("auto"))],
                vec![("/tool_choice", json!({"type": "auto"}))],
                vec![("/tool_choice", json!("auto"))],
                vec![("/toolConfig", json!({"functionCallingConfig": {"mode": "AUTO"}}))],
            ],
        ),
        (
            "toolChoice none",
            json!({"tools": tools, "toolChoice": "none"}),
            [
                vec![("/tool_choice", json!("none"))],
                vec![("/tool_choice", json!({"type": "none"}))],
                vec![("/tool_choice", json!("none"))],
                vec![("/toolConfig", json!({"functionCallingConfig": {"mode": "NONE"}}))],
            ],
        ),
        (
            "toolChoice required",
            json!({"tools": tools, "toolChoice": "required"}),
            [
                vec![("/tool_choice", json!("required"))],
                vec![("/tool_choice", json!({"type": "any"}))],
                vec![("/tool_choice", json!("required"))],
                vec![("/toolConfig", json!({"functionCallingConfig": {"mode": "ANY"}}))],
            ],
        ),
        (
            "toolChoice names a tool",
            json!({"tools": tools, "toolChoice": {"name": "g"}}),
            [
                vec![("/tool_choice", json!({"type": "function", "function": {"name": "g"}}))],
                vec![("/tool_choice", json!({"type": "tool", "name": "g"}))],
                vec![("/tool_choice", json!({"type": "function", "name": "g"}))],
                vec![("/toolConfig", json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["g"]}}))],
            ],
        ),
        (
            "toolChoice without tools: nothing to choose, nothing sent",
            json!({"toolChoice": "none", "parallelToolCalls": false}),
            [
                vec![("/tool_choice", Value::Null), ("/parallel_tool_calls", Value::Null)],
                vec![("/tool_choice", Value::Null)],
                vec![("/tool_choice", Value::Null), ("/parallel_tool_calls", Value::Null)],
                vec![("/toolConfig", Value::Null)],
            ],
        ),
        (
            "parallelToolCalls false",
            json!({"tools": tools, "parallelToolCalls": false}),
            [
                vec![("/parallel_tool_calls", json!(false)), ("/tool_choice", Value::Null)],
                vec![("/tool_choice", json!({"type": "auto", "disable_parallel_tool_use": true}))],
                vec![("/parallel_tool_calls", json!(false)), ("/tool_choice", Value::Null)],
                vec![("/toolConfig", Value::Null)],
            ],
        ),
        (
            "parallelToolCalls false with a required tool",
            json!({"tools": tools, "toolChoice": "required", "parallelToolCalls": false}),
            [
                vec![("/parallel_tool_calls", json!(false)), ("/tool_choice", json!("required"))],
                vec![("/tool_choice", json!({"type": "any", "disable_parallel_tool_use": true}))],
                vec![("/parallel_tool_calls", json!(false)), ("/tool_choice", json!("required"))],
                vec![("/toolConfig", json!({"functionCallingConfig": {"mode": "ANY"}}))],
            ],
        ),
        (
            "parallelToolCalls true",
            json!({"tools": tools, "parallelToolCalls": true}),
            [
                vec![("/parallel_tool_calls", json!(true))],
                vec![("/tool_choice", Value::Null)],
                vec![("/parallel_tool_calls", json!(true))],
                vec![("/toolConfig", Value::Null)],
            ],
        ),
        (
            "responseFormat json: no mode for it at Anthropic",
            json!({"responseFormat": {"type": "json"}}),
            [
                vec![("/response_format", json!({"type": "json_object"}))],
                vec![("/output_config", Value::Null)],
                vec![("/text", json!({"format": {"type": "json_object"}}))],
                vec![
                    ("/generationConfig/responseMimeType", json!("application/json")),
                    ("/generationConfig/responseJsonSchema", Value::Null),
                ],
            ],
        ),
        (
            "responseFormat with a schema, unnamed",
            json!({"responseFormat": {"type": "json", "schema": schema}}),
            [
                vec![(
                    "/response_format",
                    json!({"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}),
                )],
                vec![("/output_config", json!({"format": {"type": "json_schema", "schema": schema}}))],
                vec![("/text", json!({"format": {"type": "json_schema", "name": "response", "schema": schema}}))],
                vec![
                    ("/generationConfig/responseMimeType", json!("application/json")),
                    ("/generationConfig/responseJsonSchema", schema.clone()),
                ],
            ],
        ),
        (
            "responseFormat with a named, described, strict schema",
            json!({"responseFormat": {"type": "json", "schema": schema, "name": "pet", "description": "A pet.", "strict": true}}),
            [
                vec![(
                    "/response_format",
                    json!({"type": "json_schema", "json_schema": {"name": "pet", "description": "A pet.", "schema": schema, "strict": true}}),
                )],
                vec![("/output_config", json!({"format": {"type": "json_schema", "schema": schema}}))],
                vec![(
                    "/text",
                    json!({"format": {"type": "json_schema", "name": "pet", "description": "A pet.", "schema": schema, "strict": true}}),
                )],
                vec![("/generationConfig/responseJsonSchema", schema.clone())],
            ],
        ),
        (
            "responseFormat text is no response format",
            json!({"responseFormat": {"type": "text"}}),
            [
                vec![("/response_format", Value::Null)],
                vec![("/output_config", Value::Null)],
                vec![("/text", Value::Null)],
                vec![("/generationConfig", Value::Null)],
            ],
        ),
    ];
    let config = config();
    for (case, fields, expected) in cases {
        let mut json = json!({"messages": [{"role": "user", "content": "Hi"}]});
        json.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        let r = request(json);
        for (format, expected) in Format::ALL.into_iter().zip(expected) {
            let body = body(&config, format, &r);
            for (pointer, value) in expected {
                let found = body.pointer(pointer).cloned().unwrap_or(Value::Null);
                assert_eq!(found, value, "{case}: {format:?} {pointer} in {body}");
            }
        }
    }
}

#[test]
fn a_part_some_target_of_the_route_cannot_carry_is_refused_before_sending() {
    let user = |part: Value| {
        request(json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Read this:"}, part]},
        ]}))
    };
    let pdf_url = user(json!({"type": "file", "url": "https://x.test/a.pdf", "mediaType": "application/pdf"}));
    let text_file = user(json!({"type": "file", "data": "aGVsbG8=", "mediaType": "text/plain"}));
    let bare_image_url = user(json!({"type": "image", "url": "https://x.test/cat.png"}));
    let pdf_data = user(json!({"type": "file", "data": "JVBERi0x", "mediaType": "application/pdf"}));
    let cases: Vec<(&str, &ChatRequest, Result<(), &str>)> = vec![
        (
            "everywhere",
            &pdf_url,
            Err(
                r#"request.messages[1].content[1] is a file by URL, which target "openai_chat" (openai_chat) cannot carry; send its data (base64) instead, or route to an anthropic_messages, openai_responses or gemini target"#,
            ),
        ),
        ("no_chat", &pdf_url, Ok(())),
        ("openai_responses", &pdf_url, Ok(())),
        (
            "no_chat",
            &text_file,
            Err(
                r#"request.messages[1].content[1] is a file of type "text/plain", which target "anthropic_messages" (anthropic_messages) cannot carry; send PDF files only there, or a text file's contents as a text part, or route to an openai_responses, gemini or bedrock_converse target"#,
            ),
        ),
        (
            "openai_chat",
            &text_file,
            Err(
                r#"request.messages[1].content[1] is a file of type "text/plain", which target "openai_chat" (openai_chat) cannot carry; send PDF files only there, or a text file's contents as a text part, or route to an openai_responses, gemini or bedrock_converse target"#,
            ),
        ),
        ("google_then_openai", &text_file, Ok(())),
        (
            "google_then_openai",
            &bare_image_url,
            Err(
                r#"request.messages[1].content[1] is an image by URL without a mediaType, which target "gemini" (gemini) cannot carry; give its mediaType (Gemini needs one with a URL), or route to an openai_chat, anthropic_messages or openai_responses target"#,
            ),
        ),
        ("everywhere", &pdf_data, Ok(())),
        ("a route this config does not have: starting the call says so", &pdf_url, Ok(())),
    ];
    let config = config();
    for (route, request, expected) in cases {
        let checked = config.check_request(route, request);
        if let Err(e) = &checked {
            assert_eq!(e.path, "request.messages[1].content[1]", "{route}");
        }
        assert_eq!(checked.map_err(|e| e.message), expected.map_err(str::to_string), "{route}");
    }
}

#[test]
fn extra_body_fields_go_at_the_top_level_over_llm_batons_own() {
    let config = Config::from_json(
        r#"{"targets": {
            "openai_chat": {"format": "openai_chat", "baseUrl": "https://a.test/v1", "model": "gpt",
                "extraBody": {"top_k": 40, "temperature": 0.1, "continue_final_message": true}},
            "anthropic_messages": {"format": "anthropic_messages", "baseUrl": "https://b.test/v1", "model": "claude",
                "extraBody": {"top_k": 40, "temperature": 0.1, "metadata": {"user_id": "u1"}}},
            "openai_responses": {"format": "openai_responses", "baseUrl": "https://c.test/v1", "model": "gpt",
                "extraBody": {"top_k": 40, "temperature": 0.1, "store": false}},
            "gemini": {"format": "gemini", "baseUrl": "https://d.test/v1beta", "model": "gemini",
                "extraBody": {"top_k": 40, "temperature": 0.1, "safetySettings": []}},
            "bedrock_converse": {"format": "bedrock_converse", "region": "us-east-1", "model": "claude",
                "extraBody": {"top_k": 40, "temperature": 0.1, "performanceConfig": {"latency": "optimized"}}}
        }}"#,
    )
    .unwrap();
    let plain = Config::from_json(CONFIG).unwrap();
    let r = request(json!({"messages": [{"role": "user", "content": "Hi"}], "temperature": 0.9, "maxTokens": 5}));
    for format in Format::ALL {
        let mut expected = body(&plain, format, &r);
        let target = config.targets.iter().find(|t| t.format == format).unwrap();
        let fields = expected.as_object_mut().unwrap();
        fields.extend(target.extra_body.clone().unwrap());
        assert_eq!(body(&config, format, &r), expected, "{format:?}");
        assert_eq!(body(&config, format, &r)["temperature"], json!(0.1), "{format:?}: the extra field wins");
    }
    let debug = format!("{:?}", config.targets[config.target_index("openai_chat").unwrap()]);
    assert!(debug.contains(r#"extra_body: Some(["continue_final_message", "temperature", "top_k"])"#), "{debug}");
}

#[test]
fn extra_body_reaches_a_body_too_deep_to_read_back() {
    let config = Config::from_json(
        r#"{"targets": {"p": {"format": "openai_chat", "baseUrl": "https://a.test/v1", "model": "m",
            "extraBody": {"top_k": 40}}}}"#,
    )
    .unwrap();
    let mut deep = json!({"type": "string"});
    for _ in 0..130 {
        deep = json!({"type": "array", "items": deep});
    }
    let tool = llm_baton::chat::Tool { name: "f".into(), description: None, parameters: deep };
    let r = ChatRequest { messages: vec![Message::new(Role::User, "Hi")], tools: vec![tool], ..Default::default() };
    let target = &config.targets[0];
    let sent = target.format.build_request(target, &r, false).body;
    assert!(serde_json::from_str::<Value>(&sent).is_err(), "the case needs a body serde_json cannot read back");
    assert!(
        sent.starts_with(r#"{"messages":[{"content":"Hi","role":"user"}],"model":"m","stream":false,"tools":["#),
        "{}",
        &sent[..90]
    );
    assert!(sent.ends_with(r#""type":"array"}},"type":"function"}],"top_k":40}"#), "{}", &sent[sent.len() - 40..]);
    assert_eq!(sent.matches(r#""top_k""#).count(), 1, "the field is set once");
}

#[test]
fn extra_body_mistakes_name_the_field() {
    let target = |extra: &str| {
        format!(
            r#"{{"targets": {{"p": {{"format": "openai_chat", "baseUrl": "https://a.test/v1", "model": "m", "extraBody": {extra}}}}}}}"#
        )
    };
    let cases = [
        (
            "[]",
            "targets.p.extraBody",
            r#"targets.p.extraBody must be an object of fields to set in the provider's request body, e.g. {"top_k": 40} (got a list)"#,
        ),
        (
            r#""top_k=40""#,
            "targets.p.extraBody",
            r#"targets.p.extraBody must be an object of fields to set in the provider's request body, e.g. {"top_k": 40} (got "top_k=40")"#,
        ),
        (
            r#"{"stream": true}"#,
            "targets.p.extraBody.stream",
            "targets.p.extraBody.stream cannot be set: each call decides whether it streams; remove it",
        ),
    ];
    for (extra, path, message) in cases {
        let e = Config::from_json(&target(extra)).unwrap_err();
        assert_eq!((e.path.as_str(), e.message.as_str()), (path, message), "{extra}");
    }
    let none = Config::from_json(&target("null")).unwrap();
    assert_eq!(none.targets[0].extra_body, None);
}
