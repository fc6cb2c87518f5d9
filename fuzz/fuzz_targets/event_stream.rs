//! Bedrock's event-stream body: the same outcome however the stream is chunked.
//! The check itself is shared with the corpus replay: tests/fuzz_checks/.
#![no_main]

#[allow(dead_code, unused_imports)]
#[path = "../../tests/fuzz_checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::event_stream(data));
