//! The fuzz targets' checks, shared by the fuzz crate (`fuzz/fuzz_targets/*.rs`, under libFuzzer)
//! and the corpus replay (`tests/fuzz_corpus.rs`, under `cargo test` on stable Rust).
//!
//! Each check takes arbitrary bytes as outside data (a provider's body, a config, a request) and
//! panics only when the library broke a promise. Keeping one copy means an input libFuzzer found
//! keeps being checked, the same way, by every `cargo test` after it is saved in `fuzz/corpus/`.

mod alloc_meter;
mod call;
mod inputs;
mod stream;

pub use call::call;
pub use inputs::{config, request};
pub use stream::{decoders, event_stream, sse};
