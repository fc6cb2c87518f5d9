//! Counts the heap bytes each thread holds, so a check can bound what one input made the library
//! allocate: a number a provider sent (a tool-call index, a token count, a length) must cost
//! nothing, and every buffer must stay proportional to the bytes actually received.
//!
//! Per thread, so the replay's tests can run in parallel without counting each other.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Metered;

#[global_allocator]
static METERED: Metered = Metered;

thread_local! {
    // Signed: a block freed here may have been allocated by another thread.
    static HELD: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn grew(bytes: usize) {
    let _ = HELD.try_with(|held| {
        let now = held.get().wrapping_add_unsigned(bytes);
        held.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn shrank(bytes: usize) {
    let _ = HELD.try_with(|held| held.set(held.get().wrapping_sub_unsigned(bytes)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; only counters are added.
unsafe impl GlobalAlloc for Metered {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout);
        shrank(layout.size());
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = System.realloc(p, layout, new_size);
        if !q.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        q
    }
}

/// Runs `f` and returns its result with the most heap this thread held at once above what it
/// held before `f` started.
pub fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = HELD.with(Cell::get);
    PEAK.with(|peak| peak.set(start));
    let result = f();
    (result, PEAK.with(Cell::get).abs_diff(start))
}

/// Panics when `f` held more heap at once than a fixed allowance plus a constant per input byte:
/// what one input may cost is bounded by its length, whatever numbers it holds.
pub fn bounded_by_input<R>(input_len: usize, f: impl FnOnce() -> R) -> R {
    const FIXED: usize = 2 << 20;
    const PER_INPUT_BYTE: usize = 64;
    let (result, peak) = peak_during(f);
    let allowed = FIXED + PER_INPUT_BYTE * input_len;
    assert!(
        peak <= allowed,
        "{input_len} input bytes made the library hold {peak} heap bytes at once (allowed {allowed})"
    );
    result
}
