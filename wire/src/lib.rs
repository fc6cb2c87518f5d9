//! The byte-level code on llm-baton's hot path: SSE and AWS event-stream framing, and reading and
//! writing JSON, built at opt-level 3 (the workspace's release profile) while the rest of the
//! wasm is built for size.
//!
//! It is its own crate because optimisation levels are set per crate: every frame of every
//! stream passes through here, so this code is worth its extra bytes, and nothing else is.

pub mod event_stream;
pub mod frame;
pub mod frames;
pub mod json;
pub mod sse;
pub mod write;
