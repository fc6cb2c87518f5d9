//! The Server-Sent Events parser: [`llm_baton_wire::sse`], re-exported. It is in the wire crate
//! because every byte of every stream passes through it, and that crate is built for speed while
//! the rest is built for size; its docs say how it parses and why.

pub use llm_baton_wire::sse::{SseError, SseEvent, SseItem, SseParser};
