//! A push-based Server-Sent Events parser (WHATWG event stream rules), bounded in memory.
//! (Interface only; the implementation lands with its vectors.)

/// One dispatched event. `event` is empty when the stream named none ("message" by default in
/// browsers).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
    pub id: Option<String>,
}
