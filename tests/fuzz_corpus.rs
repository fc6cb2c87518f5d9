//! Replays the saved fuzz corpus (`fuzz/corpus/<target>/`) through the same checks the fuzz
//! targets run (`tests/fuzz_checks/`), on stable Rust and without libFuzzer: every input a fuzz
//! run found worth keeping, and the hand-made hostile ones, stay checked by `cargo test`.

mod fuzz_checks;

use std::path::{Path, PathBuf};
use std::time::Instant;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus")
}

/// Runs every file of `fuzz/corpus/<target>/` through `check`; names each file that failed.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = corpus().join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a readable corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no inputs", dir.display());
    let started = Instant::now();
    let failed: Vec<String> = files
        .iter()
        .filter(|file| {
            let data = std::fs::read(file).expect("a readable corpus file");
            std::panic::catch_unwind(|| check(&data)).is_err()
        })
        .map(|file| file.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{} of {} {target} inputs failed: {failed:#?}", failed.len(), files.len());
    eprintln!("{target}: {} inputs in {:?}", files.len(), started.elapsed());
}

#[test]
fn sse_corpus() {
    replay("sse", fuzz_checks::sse);
}

#[test]
fn event_stream_corpus() {
    replay("event_stream", fuzz_checks::event_stream);
}

#[test]
fn decoders_corpus() {
    replay("decoders", fuzz_checks::decoders);
}

#[test]
fn config_corpus() {
    replay("config", fuzz_checks::config);
}

#[test]
fn request_corpus() {
    replay("request", fuzz_checks::request);
}

#[test]
fn call_corpus() {
    replay("call", fuzz_checks::call);
}
