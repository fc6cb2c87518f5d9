//! Tool call ids that carry reasoning state to a gateway client and back.
//!
//! The gateway keeps nothing between requests, and a client that speaks a format without a place
//! for another provider's state (Chat Completions for all of them; Anthropic Messages for Gemini's
//! call signatures) still echoes one thing unchanged: a tool call's id, in the assistant turn it
//! replays and in the tool result that answers it. So an answer's state rides in that id, and the
//! next request's id gives it back; each target is then sent only what its own format and model
//! issued ([`crate::chat::ReasoningState::valid_for`]), as in a library call.
//!
//! An id that carries state is `bt1_` and the base64url (no padding) of `{id, state?,
//! reasoning?}` (the provider's own id, the call's state, and for the turn's first call the
//! turn's signed reasoning parts, text included, in the JS API's shape) followed by a 4-byte
//! FNV-1a check of that JSON. base64url keeps the id within what every tool id allows
//! (`[A-Za-z0-9_-]`). Ids are bounded ([`MAX_ID_LEN`]): state that does not fit is not carried,
//! and the turn is sent on as the rules for state from elsewhere say. An id that is not ours, too
//! long, altered (its check fails) or unreadable is just an id, passed on as the client gave it.
//! The check is no seal: the provider verifies its own signatures, and a client could send any
//! history anyway; it keeps a mangled id from being read as a different state. Nothing in an id
//! is secret: it is what the provider sent, which the client is shown anyway.

use llm_baton_wire::write::JsonWriter;

use crate::base64::{self, Alphabet};
use crate::chat::{read_carried, ReasoningPart, ReasoningState};
use crate::value::parse_json;

const PREFIX: &str = "bt1_";

/// The longest id the gateway writes or reads as carrying state: 16 KiB, room for a few
/// signatures and a thinking text of a few thousand words.
pub const MAX_ID_LEN: usize = 16 * 1024;

/// What an id carries: the provider's own id and the state that came with it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Carried {
    pub id: String,
    /// The state of what the id names: a call's own (a Gemini call's thought signature), or a
    /// reasoning item's.
    pub state: Option<ReasoningState>,
    /// The turn's signed reasoning (Anthropic thinking, Responses items), on its first call.
    pub reasoning: Vec<ReasoningPart>,
}

/// The id to give a client for a call (or a reasoning item) of `id` with this state, and for a
/// turn's first call the turn's reasoning; `id` itself when there is no state, or when it would
/// not fit in [`MAX_ID_LEN`].
pub fn encode(id: &str, call: Option<&ReasoningState>, reasoning: &[ReasoningPart]) -> String {
    let signed: Vec<&ReasoningPart> = reasoning.iter().filter(|p| p.state.is_some()).collect();
    if call.is_none() && signed.is_empty() {
        return id.to_string();
    }
    let mut w = JsonWriter::new();
    w.begin_object();
    w.field("id", id);
    w.opt_field("state", call);
    w.list_field("reasoning", &signed);
    w.end_object();
    let mut bytes = w.finish().into_bytes();
    let check = fnv1a(&bytes);
    bytes.extend_from_slice(&check.to_be_bytes());
    if PREFIX.len() + bytes.len().div_ceil(3) * 4 > MAX_ID_LEN {
        return id.to_string();
    }
    PREFIX.to_string() + &base64::encode(&bytes, Alphabet::Url, false)
}

/// What a client's id carries; an id that carries nothing readable is itself, with no state.
pub fn decode(id: &str) -> Carried {
    let plain = || Carried { id: id.to_string(), ..Carried::default() };
    let Some(encoded) = id.strip_prefix(PREFIX).filter(|_| id.len() <= MAX_ID_LEN) else { return plain() };
    let Some(bytes) = base64::decode(encoded, Alphabet::Url).filter(|d| d.canonical).map(|d| d.bytes) else {
        return plain();
    };
    let Some((json, check)) = bytes.split_last_chunk::<4>() else { return plain() };
    if fnv1a(json) != u32::from_be_bytes(*check) {
        return plain();
    }
    let read = std::str::from_utf8(json).ok().and_then(|text| parse_json(text, "id").ok());
    match read.as_ref().map(read_carried) {
        Some(Ok((id, state, reasoning))) => Carried { id, state, reasoning },
        _ => plain(),
    }
}

/// Just the provider's own id, for a tool result's reference to its call.
pub fn original_id(id: &str) -> String {
    decode(id).id
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |hash, b| (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Opaque;
    use crate::chat::ReasoningKind;

    fn state(format: &str, model: &str, opaque: Opaque) -> ReasoningState {
        ReasoningState { format: format.into(), model: model.into(), opaque }
    }

    fn thinking() -> Vec<ReasoningPart> {
        let signed = |text: &str, opaque| ReasoningPart {
            text: text.into(),
            kind: ReasoningKind::Summary,
            state: Some(state("anthropic_messages", "claude-sonnet-4-5", opaque)),
        };
        vec![
            signed("The user wants \"this\"; ünïcode too.", Opaque::Signature("sig.1".into())),
            signed("", Opaque::Redacted("EuYBCkQYAiJA".into())),
        ]
    }

    #[test]
    fn an_id_gives_back_what_it_carries() {
        let gemini = state("gemini", "gemini-3-pro-preview", Opaque::Signature("CiQB0e2Kb+/=".into()));
        let item = state(
            "openai_responses",
            "gpt-5",
            Opaque::Item { id: "rs_1".into(), encrypted_content: Some("gAAA".into()) },
        );
        let unsigned = ReasoningPart { kind: ReasoningKind::Summary, text: "not carried".into(), state: None };
        let cases = [
            ("call_1", Some(gemini.clone()), Vec::new()),
            ("toolu_01A", None, thinking()),
            ("call_0", Some(gemini), thinking()),
            (
                "fc_1",
                None,
                vec![
                    unsigned,
                    ReasoningPart { kind: ReasoningKind::Summary, text: "summary".into(), state: Some(item) },
                ],
            ),
        ];
        for (id, call, reasoning) in cases {
            let encoded = encode(id, call.as_ref(), &reasoning);
            assert!(encoded.starts_with("bt1_"), "{encoded}");
            assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'), "{encoded}");
            let signed: Vec<ReasoningPart> = reasoning.into_iter().filter(|p| p.state.is_some()).collect();
            assert_eq!(decode(&encoded), Carried { id: id.into(), state: call, reasoning: signed });
            assert_eq!(original_id(&encoded), id);
        }
        assert_eq!(
            encode("call_1", None, &[ReasoningPart { kind: ReasoningKind::Summary, text: "t".into(), state: None }]),
            "call_1"
        );
    }

    #[test]
    fn an_altered_or_foreign_id_is_just_an_id() {
        let encoded = encode("toolu_01A", None, &thinking());
        let plain = |id: &str| Carried { id: id.into(), ..Carried::default() };
        // Every one-character change is caught: by the alphabet, the JSON or the check.
        for at in PREFIX.len()..encoded.len() {
            let mut altered = encoded.clone().into_bytes();
            altered[at] = if altered[at] == b'A' { b'B' } else { b'A' };
            let altered = String::from_utf8(altered).unwrap();
            assert_eq!(decode(&altered), plain(&altered), "changed at {at}");
        }
        let cut = &encoded[..encoded.len() - 3];
        assert_eq!(decode(cut), plain(cut));
        let foreign = ["call_abc123", "toolu_01A09q90qw90lq917835lq9", "bt1_", "bt1_!!!!", "bt1_A", ""];
        for id in foreign {
            assert_eq!(decode(id), plain(id), "{id}");
        }
        // Ours in form, with a check that holds, but not the shape of a state: still just an id.
        let mut bytes = br#"{"id":"x","state":{"format":"gemini"}}"#.to_vec();
        bytes.extend_from_slice(&fnv1a(&bytes.clone()).to_be_bytes());
        let odd = format!("{PREFIX}{}", base64::encode(&bytes, Alphabet::Url, false));
        assert_eq!(decode(&odd), plain(&odd));
    }

    #[test]
    fn state_that_does_not_fit_is_not_carried() {
        let big = |n: usize| state("gemini", "gemini-3-pro-preview", Opaque::Signature("s".repeat(n)));
        let fits = encode("call_1", Some(&big(11_000)), &[]);
        assert!(fits.len() <= MAX_ID_LEN && fits.starts_with(PREFIX), "{}", fits.len());
        assert_eq!(decode(&fits).state, Some(big(11_000)));
        assert_eq!(encode("call_1", Some(&big(MAX_ID_LEN)), &[]), "call_1");
        let too_long = format!("{PREFIX}{}", "A".repeat(MAX_ID_LEN));
        assert_eq!(decode(&too_long).state, None);
    }
}
