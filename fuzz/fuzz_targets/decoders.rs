//! Format decoders: no panic on any input. The bytes are fed to all four stream decoders as SSE
//! events (one per line, `name<TAB>data` or bare data), then each decoder is finished; the same
//! bytes are also a whole answer body and an error body for every format.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_baton::chat::Delta;
use llm_baton::format::Format;
use llm_baton::sse::SseEvent;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let events: Vec<SseEvent> = text
        .split('\n')
        .map(|line| match line.split_once('\t') {
            Some((name, data)) => SseEvent { event: name.into(), data: data.into(), id: None },
            None => SseEvent { event: String::new(), data: line.into(), id: None },
        })
        .collect();
    for format in Format::ALL {
        let mut decoder = format.stream_decoder();
        let mut out = Vec::new();
        let mut failed = false;
        for event in &events {
            // Keep feeding after an error too: a decoder must stay panic-free whatever the caller does.
            failed |= decoder.on_event(event, &mut out).is_err();
        }
        let finished = decoder.finish(&mut out);
        let dones = out.iter().filter(|d| matches!(d, Delta::Done { .. })).count();
        assert!(dones <= 1, "{format:?} emitted {dones} Done deltas");
        if !failed && finished.is_ok() {
            assert_eq!(dones, 1, "{format:?} finished without Done");
        }
        let _ = format.decode_answer(data);
        let _ = format.error_message(500, data);
    }
});
