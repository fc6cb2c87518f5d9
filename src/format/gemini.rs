//! (placeholder until the format lands)
use crate::chat::{Answer, ChatRequest, Delta};
use crate::config::Target;
use crate::format::{DecodeError, HttpRequest};
use crate::sse::SseEvent;

pub fn build_request(_target: &Target, _request: &ChatRequest, _stream: bool) -> HttpRequest {
    unimplemented!()
}
pub fn decode_answer(_body: &[u8]) -> Result<Answer, DecodeError> {
    unimplemented!()
}
pub fn error_message(_body: &[u8]) -> Option<String> {
    None
}
#[derive(Debug, Default)]
pub struct StreamDecoder;
impl StreamDecoder {
    pub fn on_event(&mut self, _e: &SseEvent, _out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        unimplemented!()
    }
    pub fn finish(&mut self, _out: &mut Vec<Delta>) -> Result<(), DecodeError> {
        unimplemented!()
    }
}
