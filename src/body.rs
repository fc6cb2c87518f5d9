//! An attempt's response body as it arrives, one network read at a time: bytes in, deltas or a
//! whole body out, with caps.
//!
//! The driver only moves bytes: it hands every read to one of these and passes on what comes
//! out. Keeping the decoding here (SSE or AWS event-stream framing, the format's decoder, the
//! size caps) means the whole path from provider bytes to the caller's outcome runs natively in
//! tests and fuzzing.

use crate::chat::Delta;
use crate::delivery::{answer_too_large, MAX_ANSWER_BYTES};
#[cfg(feature = "clouds")]
use crate::format::bedrock_converse;
use crate::format::{Cloud, DecodeError, Format, StreamDecoder};
use crate::outcome::Failure;
use crate::sse::{SseItem, SseParser};
#[cfg(feature = "clouds")]
use llm_baton_wire::event_stream::EventStreamDecoder;

/// How much of an error answer's body is read: the provider's message is in the first few
/// hundred bytes; the rest is not worth holding the connection for.
pub const MAX_ERROR_BODY_BYTES: usize = 64 << 10;

/// A streamed body being decoded. Each event goes from the parser to the decoder as it is
/// completed, lent rather than collected: the parser reuses its buffers for the next one.
#[derive(Debug)]
pub struct StreamBody {
    parser: Framing,
    decoder: StreamDecoder,
}

/// How a format frames its stream: SSE, or AWS's binary event stream (every Bedrock stream:
/// ConverseStream's, and InvokeModelWithResponseStream's `chunk`s), whose messages become events.
#[derive(Debug)]
enum Framing {
    Sse(SseParser),
    #[cfg(feature = "clouds")]
    EventStream(EventStreamDecoder),
}

impl Framing {
    fn feed_each(&mut self, chunk: &[u8], each: &mut dyn FnMut(&SseItem)) -> Result<(), Failure> {
        let fed = match self {
            Framing::Sse(parser) => parser.feed_each(chunk, each).map_err(|e| e.to_string()),
            #[cfg(feature = "clouds")]
            Framing::EventStream(decoder) => decoder
                .feed_each(chunk, &mut |m| each(&SseItem::Event(bedrock_converse::event_of(m))))
                .map_err(|e| e.to_string()),
        };
        fed.map_err(|message| Failure::Protocol { message })
    }

    fn finish_each(&mut self, each: &mut dyn FnMut(&SseItem)) -> Result<(), Failure> {
        let finished = match self {
            Framing::Sse(parser) => parser.finish_each(each).map_err(|e| e.to_string()),
            #[cfg(feature = "clouds")]
            Framing::EventStream(decoder) => decoder.finish().map_err(|e| e.to_string()),
        };
        finished.map_err(|message| Failure::Protocol { message })
    }
}

impl StreamBody {
    pub fn new(format: Format) -> StreamBody {
        StreamBody::on(format, None)
    }

    /// The streamed body of `format` reached on `cloud`.
    pub fn on(format: Format, cloud: Option<Cloud>) -> StreamBody {
        let parser = match (format, cloud) {
            #[cfg(feature = "clouds")]
            (Format::BedrockConverse, _) | (_, Some(Cloud::Bedrock)) => Framing::EventStream(EventStreamDecoder::new()),
            _ => Framing::Sse(SseParser::new().reporting_unframed()),
        };
        StreamBody { parser, decoder: format.stream_decoder_on(cloud) }
    }

    /// Decodes one read, appending its deltas to `out`. Deltas decoded before a failure in the
    /// same read stay in `out`: text the provider showed before its error must still count. After
    /// a decoding failure, the rest of the read is framed but not decoded.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<Delta>) -> Result<(), Failure> {
        let mut decoding = Decoding { decoder: &mut self.decoder, out, failed: None };
        let parsed = self.parser.feed_each(chunk, &mut |item| decoding.item(item));
        decoding.result()?;
        parsed
    }

    /// The body ended: flushes the parser and lets the format judge whether the stream was whole.
    pub fn finish(&mut self, out: &mut Vec<Delta>) -> Result<(), Failure> {
        let mut decoding = Decoding { decoder: &mut self.decoder, out, failed: None };
        let parsed = self.parser.finish_each(&mut |item| decoding.item(item));
        decoding.result()?;
        parsed?;
        Ok(self.decoder.finish(out)?)
    }
}

/// One read's items going to the decoder, until the first failure.
struct Decoding<'a> {
    decoder: &'a mut StreamDecoder,
    out: &'a mut Vec<Delta>,
    failed: Option<DecodeError>,
}

impl Decoding<'_> {
    fn item(&mut self, item: &SseItem) {
        if self.failed.is_some() {
            return;
        }
        let decoded = match item {
            SseItem::Event(event) => self.decoder.on_event(event, self.out),
            SseItem::Unframed(line) => self.decoder.on_unframed(line),
            SseItem::Comment(_) => Ok(()),
        };
        self.failed = decoded.err();
    }

    fn result(self) -> Result<(), DecodeError> {
        self.failed.map_or(Ok(()), Err)
    }
}

/// A whole body (an answer, or an error's explanation) collected up to its cap.
#[derive(Debug)]
pub struct WholeBody {
    bytes: Vec<u8>,
    kind: Whole,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whole {
    Answer,
    Error,
}

impl WholeBody {
    /// A 2xx answer: more than [`MAX_ANSWER_BYTES`] is a protocol error.
    pub fn answer() -> WholeBody {
        WholeBody { bytes: Vec::new(), kind: Whole::Answer }
    }

    /// An error answer's body: only its first [`MAX_ERROR_BODY_BYTES`] are kept.
    pub fn error() -> WholeBody {
        WholeBody { bytes: Vec::new(), kind: Whole::Error }
    }

    /// Adds one read. `Ok(false)` means the body has all it will keep: stop reading (and close
    /// the connection) now.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<bool, Failure> {
        let cap = match self.kind {
            Whole::Answer => MAX_ANSWER_BYTES,
            Whole::Error => MAX_ERROR_BODY_BYTES,
        };
        let room = cap - self.bytes.len();
        if chunk.len() > room {
            if self.kind == Whole::Answer {
                return Err(answer_too_large());
            }
            self.bytes.extend_from_slice(&chunk[..room]);
            return Ok(false);
        }
        self.bytes.extend_from_slice(chunk);
        Ok(self.bytes.len() < cap || self.kind == Whole::Answer)
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_body_keeps_its_head_and_asks_to_stop() {
        let mut b = WholeBody::error();
        assert_eq!(b.feed(&[b'a'; 1000]), Ok(true));
        assert_eq!(b.feed(&vec![b'b'; MAX_ERROR_BODY_BYTES]), Ok(false));
        assert_eq!(b.bytes().len(), MAX_ERROR_BODY_BYTES);
        assert_eq!(&b.bytes()[..1000], &[b'a'; 1000][..]);
    }

    #[test]
    fn an_answer_over_the_cap_fails_naming_it() {
        let mut b = WholeBody::answer();
        let mib = vec![b' '; 1 << 20];
        for _ in 0..16 {
            assert_eq!(b.feed(&mib), Ok(true));
        }
        assert_eq!(b.feed(b" "), Err(answer_too_large()));
    }

    #[test]
    fn stream_deltas_before_an_error_in_the_same_read_are_kept() {
        let mut s = StreamBody::new(Format::OpenaiChat);
        let mut out = Vec::new();
        let read = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"error\":{\"message\":\"boom\"}}\n\n";
        assert!(matches!(s.feed(read, &mut out), Err(Failure::Http { status: 500, .. })));
        assert_eq!(out, [Delta::Text { text: "Hi".into() }]);
    }
}
