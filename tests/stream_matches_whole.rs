//! A streamed answer says what the same answer says whole. Recorded-style streams, written from the
//! providers' API references (`tests/fixtures/{format}/{case}.sse`), are read the way a call
//! reads them: the body reader ([`StreamBody`]) fed the bytes cut at every split point, its
//! deltas handed to the engine, which delivers them and assembles the answer. When the fixture
//! has the same answer whole (`{case}.answer.json`), `decode_answer` must give the same fields.
//! The last test is docs/errors.md's "How a stream ends" table, row by row.

use std::fs;
use std::path::{Path, PathBuf};

use llm_baton::backoff::SplitMix64;
use llm_baton::body::StreamBody;
use llm_baton::chat::{Answer, Delta, FinishReason, ToolCall, Usage};
use llm_baton::config::Config;
use llm_baton::engine::{Action, Baton, CallOptions};
use llm_baton::format::{DecodeError, FailureClass, Format};
use llm_baton::outcome::Failure;

const CONFIGURED_MODEL: &str = "configured-model";

fn fixture(format: Format, case: &str, ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(format.as_str()).join(format!("{case}.{ext}"))
}

fn read(format: Format, case: &str) -> Vec<u8> {
    let path = fixture(format, case, "sse");
    fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a caller gets from one streamed call: the deltas delivered, then the answer or failure.
#[derive(Debug, Clone, PartialEq)]
struct Streamed {
    /// Adjacent texts (and reasonings) joined: how fragments group into deltas depends on how
    /// the body arrived in reads, and is not what is compared.
    delivered: Vec<Delta>,
    outcome: Result<Answer, Failure>,
}

impl Streamed {
    /// The arguments delivered for the tool call at `position`, joined.
    fn arguments_of(&self, position: usize) -> String {
        self.delivered
            .iter()
            .filter_map(|d| match d {
                Delta::ToolCall { index, arguments, .. } if *index as usize == position => Some(arguments.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// One call of a single-target route, the body arriving in the given reads.
fn stream_in_reads(format: Format, reads: &[&[u8]]) -> Streamed {
    let config = format!(
        r#"{{"targets": {{"p": {{"format": "{}", "baseUrl": "http://127.0.0.1:1/v1", "model": "{CONFIGURED_MODEL}"}}}}}}"#,
        format.as_str()
    );
    let mut baton = Baton::new(Config::from_json(&config).expect("config"));
    let options = CallOptions { deadline_ms: None, stream: true, ..CallOptions::default() };
    let mut call = baton.start("p", options, 0, Box::new(SplitMix64(1))).expect("route");
    let mut actions: Vec<Action> = std::iter::from_fn(|| call.poll()).collect();
    let attempt = actions
        .iter()
        .find_map(|a| match a {
            Action::Send { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .expect("sent");
    call.on_headers(attempt, 1);
    let mut body = StreamBody::new(format);
    let mut failure = None;
    for (now, read) in (2..).zip(reads) {
        let mut deltas = Vec::new();
        let fed = body.feed(read, &mut deltas);
        call.on_deltas(attempt, now, deltas);
        if let Err(f) = fed {
            failure = Some(f);
            break;
        }
    }
    if failure.is_none() {
        let mut deltas = Vec::new();
        let finished = body.finish(&mut deltas);
        call.on_deltas(attempt, 100, deltas);
        failure = finished.err();
    }
    if let Some(f) = failure {
        call.on_failure(attempt, 101, f);
    }
    actions.extend(std::iter::from_fn(|| call.poll()));
    let mut delivered = Vec::new();
    let mut outcome = None;
    for action in actions {
        match action {
            Action::Deliver(deltas) => deltas.into_iter().for_each(|d| Delta::push(&mut delivered, d)),
            Action::Finish(o) => outcome = Some(o.map(|served| served.answer).map_err(|e| e.failure)),
            _ => {}
        }
    }
    Streamed { delivered, outcome: outcome.expect("the call finished") }
}

/// The stream read whole, then cut at every split point: every cut must give what the whole
/// read gives (the deltas may be grouped differently, never different).
fn stream_everywhere(format: Format, bytes: &[u8]) -> Streamed {
    let whole = stream_in_reads(format, &[bytes]);
    for split in 0..=bytes.len() {
        let cut = stream_in_reads(format, &[&bytes[..split], &bytes[split..]]);
        assert_eq!(cut, whole, "{format:?} split at byte {split}");
    }
    whole
}

fn whole_answer(format: Format, case: &str) -> Result<Answer, DecodeError> {
    let path = fixture(format, case, "answer.json");
    format.decode_answer(&fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

fn text(deltas: &[Delta]) -> String {
    deltas.iter().filter_map(|d| if let Delta::Text { text } = d { Some(text.as_str()) } else { None }).collect()
}

/// The answer with each tool call's arguments written the one way serde_json writes them, when
/// they are JSON: a whole Anthropic answer has `input` as an object, which the decoder writes
/// without the spaces its stream's `partial_json` fragments carry. Arguments that are not JSON (a
/// call cut by max tokens) stay as they are.
fn same_json(mut answer: Answer) -> Answer {
    for call in &mut answer.tool_calls {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(&call.arguments) {
            call.arguments = value.to_string();
        }
    }
    answer
}

/// Every case of the corpus that has its answer whole too (`{case}.answer.json`), by format.
fn recorded_both_ways() -> Vec<(Format, String)> {
    let mut all = Vec::new();
    // Bedrock's streams are binary event streams, not SSE transcripts: they are checked against
    // its whole answers end to end, through AWS's own codec (tests/e2e/bedrock.test.mjs).
    for format in Format::ALL.into_iter().filter(|f| *f != Format::BedrockConverse) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(format.as_str());
        let mut cases: Vec<String> = fs::read_dir(&dir)
            .expect("fixtures")
            .filter_map(|e| e.expect("entry").file_name().into_string().ok())
            .filter_map(|name| name.strip_suffix(".answer.json").map(str::to_string))
            .collect();
        cases.sort();
        all.extend(cases.into_iter().map(|case| (format, case)));
    }
    all
}

/// The whole answer, its states named as the engine names the issuer of what an answer holds.
fn named_whole_answer(format: Format, case: &str) -> Answer {
    let mut whole = whole_answer(format, case).unwrap_or_else(|e| panic!("{format:?} {case}: {e:?}"));
    whole.name_issuer(format.as_str(), CONFIGURED_MODEL);
    whole
}

#[test]
fn every_answer_recorded_both_ways_streams_as_it_reads_whole() {
    let cases = recorded_both_ways();
    for (format, case) in &cases {
        let whole = named_whole_answer(*format, case);
        let streamed = stream_everywhere(*format, &read(*format, case));
        assert_eq!(streamed.outcome.map(same_json), Ok(same_json(whole.clone())), "{format:?} {case}");
        assert_ne!(whole.model.as_deref(), Some(CONFIGURED_MODEL));
        assert!(whole.model.is_some(), "{format:?} {case}: the answering model is named");
    }
    assert!(cases.len() >= 43, "only {} answers recorded both ways", cases.len());
}

/// Point 1: a refusal streams as visible text and finishes `content_filter`, as the whole
/// answer's refusal does: OpenAI Chat's `delta.refusal`, and the Responses API's refusal part
/// (`response.refusal.delta`), whose response says only `completed`.
#[test]
fn an_openai_refusal_streams_as_its_text() {
    let cases = [
        (
            Format::OpenaiChat,
            "I'm sorry, I can't help with that.",
            Usage { input_tokens: Some(17), output_tokens: Some(10) },
        ),
        (
            Format::OpenaiResponses,
            "I'm sorry, but I can't help with that.",
            Usage { input_tokens: Some(19), output_tokens: Some(11) },
        ),
    ];
    for (format, refusal, usage) in cases {
        let streamed = stream_everywhere(format, &read(format, "refusal"));
        assert_eq!(text(&streamed.delivered), refusal, "{format:?}");
        let answer = streamed.outcome.expect("answer");
        assert_eq!((answer.text.as_str(), answer.finish_reason), (refusal, FinishReason::ContentFilter), "{format:?}");
        assert_eq!(answer.usage, usage, "{format:?}");
        assert_eq!(whole_answer(format, "refusal").map(|a| a.finish_reason), Ok(FinishReason::ContentFilter));
    }
}

/// Point 2: a call numbered 1 after text (Anthropic's OpenAI-compatible endpoint) is the
/// answer's only call, delivered at position 0; no phantom call at 0.
#[test]
fn an_openai_chat_tool_call_at_index_one_after_text_is_the_only_call() {
    let streamed = stream_everywhere(Format::OpenaiChat, &read(Format::OpenaiChat, "tool_index_after_text"));
    let positions: Vec<u32> = streamed
        .delivered
        .iter()
        .filter_map(|d| if let Delta::ToolCall { index, .. } = d { Some(*index) } else { None })
        .collect();
    assert_eq!(positions, [0, 0, 0]);
    let answer = streamed.outcome.expect("answer");
    assert_eq!(
        answer.tool_calls,
        [ToolCall {
            id: "toolu_01PqR8sT3uV5wX7yZ9aB1cD2".into(),
            name: "get_weather".into(),
            arguments: r#"{"city":"Paris"}"#.into(),
            state: None
        }]
    );
    assert_eq!(answer.text, "I'll check the weather in Paris.");
}

/// Point 3: a `tool_use` block without `input_json_delta` is delivered, visibly, with the
/// input `content_block_start` gave: `{}` when empty, its JSON otherwise.
#[test]
fn an_anthropic_tool_call_without_streamed_input_takes_its_start_input() {
    let cases: [(&str, &[(&str, &str)]); 2] = [
        ("tool_empty_input", &[("get_time", "{}")]),
        (
            "tool_input_in_start",
            &[("get_weather", r#"{"city":"Paris","unit":"celsius"}"#), ("get_time", r#"{"zone":"Europe/Paris"}"#)],
        ),
    ];
    for (case, calls) in cases {
        let streamed = stream_everywhere(Format::AnthropicMessages, &read(Format::AnthropicMessages, case));
        for (position, (_, arguments)) in calls.iter().enumerate() {
            let delivered = streamed.arguments_of(position);
            assert_eq!(&delivered, arguments, "{case}: call {position}");
        }
        let answer = streamed.outcome.expect("answer");
        let got: Vec<(&str, &str)> =
            answer.tool_calls.iter().map(|c| (c.name.as_str(), c.arguments.as_str())).collect();
        assert_eq!(got, calls, "{case}");
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
    }
    let empty = stream_everywhere(Format::AnthropicMessages, &read(Format::AnthropicMessages, "tool_empty_input"));
    let last_call = empty.delivered.iter().rev().find(|d| matches!(d, Delta::ToolCall { .. })).expect("a call");
    assert_eq!(last_call, &Delta::ToolCall { index: 0, id: None, name: None, arguments: "{}".into() });
    assert!(last_call.is_visible());
}

/// Point 4: Google's error object after the frames, outside SSE framing (one line, or
/// pretty-printed inside `[...]`), fails the call with its status; the text shown before it
/// never becomes a success.
#[test]
fn a_gemini_error_after_the_frames_is_a_provider_error() {
    let cases = [
        ("error_after_frames", 499, "The operation was cancelled.", "CANCELLED", None),
        (
            "error_after_frames_pretty",
            503,
            "The model is overloaded. Please try again later.",
            "UNAVAILABLE",
            Some(FailureClass::Overloaded),
        ),
    ];
    for (case, status, message, code, class) in cases {
        let streamed = stream_everywhere(Format::Gemini, &read(Format::Gemini, case));
        assert_eq!(text(&streamed.delivered), "The first chapter of the story begins", "{case}");
        assert_eq!(
            streamed.outcome,
            Err(Failure::from(DecodeError::Provider {
                status,
                message: message.into(),
                code: Some(code.into()),
                class
            })),
            "{case}"
        );
    }
}

/// Point 5: the answer names the model the stream named, in every format.
#[test]
fn the_answer_names_the_model_that_answered() {
    let cases = [
        (Format::OpenaiChat, "text", "gpt-4o-mini-2024-07-18"),
        (Format::AnthropicMessages, "text", "claude-sonnet-4-5-20250929"),
        (Format::OpenaiResponses, "text", "gpt-4.1-mini-2025-04-14"),
        (Format::Gemini, "text", "gemini-2.0-flash"),
    ];
    for (format, case, model) in cases {
        let bytes = read(format, case);
        let answer = stream_in_reads(format, &[&bytes]).outcome.expect("answer");
        assert_eq!(answer.model.as_deref(), Some(model), "{format:?}");
    }
}

/// Point 6: reasoning in several summary parts reads with a blank line between parts, streamed
/// and whole.
#[test]
fn responses_reasoning_parts_are_joined_by_a_blank_line() {
    let streamed = stream_everywhere(Format::OpenaiResponses, &read(Format::OpenaiResponses, "reasoning_parts"));
    let answer = streamed.outcome.expect("answer");
    assert_eq!(
        answer.reasoning,
        "**Reading the question**\n\nThe user wants the larger number.\n\n**Comparing**\n\n0.8 beats 0.11 in the tenths place."
    );
    assert_eq!(answer.reasoning, whole_answer(Format::OpenaiResponses, "reasoning_parts").expect("whole").reasoning);
}

/// A Responses function call's arguments are delivered once, whether they stream in
/// `.delta` events (`tool_call`, whose `.done` events repeat them) or come only in the `.done`
/// events (`tool_call_arguments_done`, as gpt-5.3-codex-spark sends them) or only in the item of
/// `response.output_item.done` (`tool_call_item_done`).
#[test]
fn responses_arguments_are_delivered_once_from_deltas_or_done_events() {
    for case in ["tool_call", "tool_call_arguments_done", "tool_call_item_done"] {
        let streamed = stream_everywhere(Format::OpenaiResponses, &read(Format::OpenaiResponses, case));
        let whole = whole_answer(Format::OpenaiResponses, case).expect("whole");
        assert!(whole.tool_calls.iter().all(|c| !c.arguments.is_empty()), "{case}");
        for (position, call) in whole.tool_calls.iter().enumerate() {
            let delivered = streamed.arguments_of(position);
            assert_eq!(delivered, call.arguments, "{case}: call {position}");
        }
        assert_eq!(streamed.outcome.map(|a| a.tool_calls), Ok(whole.tool_calls), "{case}");
    }
}

/// Final arguments that do not begin with the fragments already delivered fail the
/// call, naming the event; what was delivered stays as it was, never corrected behind the
/// reader's back.
#[test]
fn a_responses_done_event_that_disowns_the_delivered_arguments_fails_the_call() {
    let recorded = String::from_utf8(read(Format::OpenaiResponses, "tool_call")).expect("UTF-8");
    let disowning: String = recorded
        .split_inclusive("\n\n")
        .map(|event| match event.starts_with("event: response.function_call_arguments.done") {
            true => event.replacen("Paris, France", "Lyon, France", 1),
            false => event.to_string(),
        })
        .collect();
    assert_ne!(disowning, recorded);
    let streamed = stream_everywhere(Format::OpenaiResponses, disowning.as_bytes());
    assert_eq!(streamed.arguments_of(0), r#"{"location":"Paris, France"}"#);
    assert_eq!(
        streamed.outcome,
        Err(Failure::Protocol {
            message: "openai_responses stream: response.function_call_arguments.done for output item 0 gives arguments (27 bytes) that do not begin with the 28 bytes its deltas streamed".into()
        })
    );
}

/// How a stream ended, as docs/errors.md's table says.
#[derive(Debug)]
enum Ends {
    Complete { finish: FinishReason, usage: Usage },
    Truncated { message: &'static str },
}

/// Point 7: docs/errors.md's "How a stream ends" table, every row of every format.
#[test]
fn how_each_format_ends_a_stream() {
    const CHAT_TEXT: &str =
        "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":null}]}\n\n";
    const CHAT_FINISH: &str =
        "data: {\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
    const CHAT_USAGE: &str =
        "data: {\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n";
    const ANTHROPIC_TEXT: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n\
        event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n";
    const ANTHROPIC_FINISH: &str = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n";
    const ANTHROPIC_STOP: &str = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    const RESPONSES_TEXT: &str = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hi\"}\n\n\
        event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"output_index\":0,\"content_index\":0,\"text\":\"Hi\"}\n\n\
        event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"message\",\"status\":\"completed\"}}\n\n";
    const RESPONSES_COMPLETED: &str = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"model\":\"m\",\"output\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n";
    const GEMINI_TEXT: &str = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hi\"}],\"role\":\"model\"}}],\"modelVersion\":\"m\"}\n\n";
    const GEMINI_FINISH: &str = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":1}}\n\n";

    let full = Usage { input_tokens: Some(3), output_tokens: Some(1) };
    let complete = Ends::Complete { finish: FinishReason::Stop, usage: full };
    let rows: Vec<(Format, &str, String, Ends)> = vec![
        (Format::OpenaiChat, "marker", [CHAT_TEXT, CHAT_FINISH, CHAT_USAGE, "data: [DONE]\n\n"].concat(), complete),
        (
            Format::OpenaiChat,
            "finished, no marker",
            [CHAT_TEXT, CHAT_FINISH, CHAT_USAGE].concat(),
            Ends::Complete { finish: FinishReason::Stop, usage: full },
        ),
        (
            Format::OpenaiChat,
            "finished, no usage, no marker",
            [CHAT_TEXT, CHAT_FINISH].concat(),
            Ends::Complete { finish: FinishReason::Stop, usage: Usage::default() },
        ),
        (
            Format::OpenaiChat,
            "truncated",
            [CHAT_TEXT, CHAT_USAGE].concat(),
            Ends::Truncated { message: "openai_chat stream ended without a finish_reason or data: [DONE]" },
        ),
        (
            Format::AnthropicMessages,
            "marker",
            [ANTHROPIC_TEXT, ANTHROPIC_FINISH, ANTHROPIC_STOP].concat(),
            Ends::Complete { finish: FinishReason::Stop, usage: full },
        ),
        (
            Format::AnthropicMessages,
            "finished, no marker",
            [ANTHROPIC_TEXT, ANTHROPIC_FINISH].concat(),
            Ends::Complete { finish: FinishReason::Stop, usage: full },
        ),
        (
            Format::AnthropicMessages,
            "truncated",
            ANTHROPIC_TEXT.to_string(),
            Ends::Truncated { message: "anthropic_messages stream ended without a stop_reason or message_stop" },
        ),
        (
            Format::OpenaiResponses,
            "marker",
            [RESPONSES_TEXT, RESPONSES_COMPLETED].concat(),
            Ends::Complete { finish: FinishReason::Stop, usage: full },
        ),
        (
            Format::OpenaiResponses,
            "every item done, no marker",
            RESPONSES_TEXT.to_string(),
            Ends::Truncated { message: "openai_responses stream ended without response.completed" },
        ),
        (
            Format::Gemini,
            "finished (no marker exists)",
            [GEMINI_TEXT, GEMINI_FINISH].concat(),
            Ends::Complete { finish: FinishReason::Stop, usage: full },
        ),
        (
            Format::Gemini,
            "truncated",
            GEMINI_TEXT.to_string(),
            Ends::Truncated { message: "gemini stream ended without a finishReason" },
        ),
    ];
    for (format, row, bytes, ends) in rows {
        let streamed = stream_everywhere(format, bytes.as_bytes());
        assert_eq!(text(&streamed.delivered), "Hi", "{format:?} {row}");
        match (ends, streamed.outcome) {
            (Ends::Complete { finish, usage }, Ok(answer)) => {
                assert_eq!((answer.finish_reason, answer.usage), (finish, usage), "{format:?} {row}");
                assert_eq!(answer.model.as_deref(), Some("m"), "{format:?} {row}");
            }
            (Ends::Truncated { message }, Err(failure)) => {
                assert_eq!(failure, Failure::Protocol { message: message.into() }, "{format:?} {row}")
            }
            (ends, outcome) => panic!("{format:?} {row}: expected {ends:?}, got {outcome:?}"),
        }
    }
}

/// The reasoning state of every fixture that carries it, found in the corpus: the same whole and
/// streamed, piece by piece, delivered by the stream as its state deltas in the answer's order,
/// and named by the target that answered; the comparison above covers the rest of the answer.
#[test]
fn reasoning_state_streams_as_it_reads_whole() {
    let states = |a: &Answer| {
        let parts = a.reasoning_parts.iter().filter_map(|p| p.state.clone());
        parts.chain(a.tool_calls.iter().filter_map(|c| c.state.clone())).collect::<Vec<_>>()
    };
    let mut carrying = Vec::new();
    for (format, case) in recorded_both_ways() {
        let whole = named_whole_answer(format, &case);
        let kept = states(&whole);
        if kept.is_empty() {
            continue;
        }
        let streamed = stream_in_reads(format, &[&read(format, &case)]);
        let delivered: Vec<_> = streamed
            .delivered
            .iter()
            .filter_map(|d| match d {
                Delta::ReasoningState { state } | Delta::ToolCallState { state, .. } => Some(state.clone()),
                _ => None,
            })
            .collect();
        let answer = streamed.outcome.expect("answer");
        assert!(kept.iter().all(|s| s.valid_for(format.as_str(), CONFIGURED_MODEL)), "{format:?} {case}");
        assert_eq!(answer.reasoning_parts, whole.reasoning_parts, "{format:?} {case}");
        assert_eq!(states(&answer), kept, "{format:?} {case}");
        assert_eq!(delivered, kept, "{format:?} {case}: the stream's state deltas");
        carrying.push((format, case, kept.len()));
    }
    // Which fixtures carry state, and how many: a new one is checked above, and listed here.
    let expected = [
        (Format::OpenaiChat, "reasoning", 1),
        (Format::AnthropicMessages, "reasoning", 1),
        (Format::AnthropicMessages, "redacted_thinking_citations", 2),
        (Format::AnthropicMessages, "redacted_thinking_tool_use", 1),
        (Format::AnthropicMessages, "thinking_tool_use", 1),
        (Format::OpenaiResponses, "reasoning", 1),
        (Format::OpenaiResponses, "reasoning_encrypted", 1),
        (Format::OpenaiResponses, "reasoning_encrypted_no_summary", 1),
        (Format::OpenaiResponses, "reasoning_parts", 1),
        (Format::OpenaiResponses, "tool_call_arguments_done", 1),
        (Format::OpenaiResponses, "tool_call_item_done", 1),
        (Format::Gemini, "parallel_calls_streamed", 1),
        (Format::Gemini, "thought_signature_text", 1),
        (Format::Gemini, "tool_call", 1),
    ];
    let carrying: Vec<_> = carrying.iter().map(|(f, c, n)| (*f, c.as_str(), *n)).collect();
    assert_eq!(carrying, expected, "the fixtures that carry reasoning state");
}
