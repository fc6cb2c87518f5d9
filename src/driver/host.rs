//! The driver's event loop, run from JavaScript (pkg/host.js), and the few host services a call
//! waits on: a promise, a timer, the caller's cancel, and an AbortController.
//!
//! Why not wasm-bindgen-futures and gloo-timers: they hand the JS engine wasm closures (promise
//! reactions, timer callbacks, a microtask that polls every task), and those run the wasm from
//! no JavaScript call site. If the wasm ever traps there (a bug), the RuntimeError escapes from a
//! microtask: no caller can catch it, Node exits, and the call never settles. Here the wasm is
//! entered only through the functions below, each called by pkg/host.js under one try/catch:
//! `pollTask` runs a task, `settleSlot` hands it what a promise or timer produced, `cancelTask`
//! stops it. A trap there is caught, every call of the instance settles as an internal error,
//! its AbortControllers are aborted, and the instance is replaced. JavaScript holds no wasm
//! closure, so nothing of a trapped instance can run again.
//!
//! A task's outputs (events, deltas, the result) are queued and returned by `pollTask`, so the
//! caller's callbacks run after the wasm has returned, never inside it. Bytes for a client
//! (`emit_bytes`, the gateway's stream) are joined into one `Uint8Array` per run of them, so a
//! poll that handled many upstream events hands JavaScript one chunk to write.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use js_sys::{Array, Promise, Uint8Array};
use wasm_bindgen::prelude::*;
use web_sys::{AbortController, AbortSignal, RequestInit};

use crate::by_id::ById;
pub use crate::by_id::Id;

/// The wasm's allocator: talc, a maintained allocator made for wasm, instead of Rust's default
/// dlmalloc: 7 KB less wasm, and faster in talc's own benchmarks. Its heap grows the wasm memory
/// as dlmalloc's did; the instance is single-threaded (no atomics), which its cell assumes.
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[wasm_bindgen]
extern "C" {
    /// The services pkg/host.js provides (see there).
    pub type Host;

    /// Poll `task` soon (from a fresh microtask, never from inside the wasm).
    #[wasm_bindgen(method)]
    fn schedule(this: &Host, task: Id);

    /// When `promise` settles, call `settleSlot(slot, ok, value)`.
    #[wasm_bindgen(method)]
    fn watch(this: &Host, promise: &Promise, slot: Id);

    /// After `ms`, call `settleSlot(slot, true, undefined)`. Returns the timer's handle.
    #[wasm_bindgen(method, js_name = setTimer)]
    fn set_timer(this: &Host, ms: f64, slot: Id) -> JsValue;

    #[wasm_bindgen(method, js_name = clearTimer)]
    fn clear_timer(this: &Host, handle: &JsValue);

    /// A new AbortController that the host aborts itself if this instance traps.
    #[wasm_bindgen(method)]
    fn controller(this: &Host) -> AbortController;

    #[wasm_bindgen(method)]
    fn abort(this: &Host, controller: &AbortController);

    /// Sends an attempt: the runtime's `fetch(url, init)`, as this runtime must be called so
    /// that it sends the request once (in Deno, with the body as a stream).
    #[wasm_bindgen(method, js_name = fetch, catch)]
    fn send(this: &Host, url: &str, init: &RequestInit) -> Result<Promise, JsValue>;

    /// Signs `data` with the RSA key in `pkcs8` (DER), RSASSA-PKCS1-v1_5 with SHA-256, through
    /// the runtime's WebCrypto: a promise of the signature's bytes. Both are copied at once.
    #[cfg(feature = "clouds")]
    #[wasm_bindgen(method, js_name = signRs256)]
    fn sign_rs256(this: &Host, pkcs8: &[u8], data: &[u8]) -> Promise;

    /// The trace headers for attempt `attempt` of `task` on `target`, being sent now: an object
    /// `{traceparent, tracestate?}` from a call that traces, else undefined. Never throws.
    #[wasm_bindgen(method, js_name = attemptHeaders)]
    fn attempt_headers(this: &Host, task: Id, target: &str, attempt: u32) -> JsValue;

    /// A promise that settles once `task`'s reader has room for more (a gateway's client that
    /// stopped reading), or undefined when it has room now. Never throws.
    #[cfg(feature = "gateway")]
    #[wasm_bindgen(method)]
    fn room(this: &Host, task: Id) -> JsValue;
}

/// A task's work: one call, from start to its `done` output.
pub type TaskFuture = Pin<Box<dyn Future<Output = ()>>>;

struct Task {
    /// Out while the task is being polled.
    future: Option<TaskFuture>,
    outputs: Vec<Output>,
    cancelled: bool,
}

/// A queued output: a value, or bytes that the next `emit_bytes` of the same poll extends.
enum Output {
    Value(JsValue),
    #[cfg_attr(not(feature = "gateway"), allow(dead_code))]
    Bytes(Vec<u8>),
}

impl Output {
    fn into_js(self) -> JsValue {
        match self {
            Output::Value(value) => value,
            Output::Bytes(bytes) => Uint8Array::from(&bytes[..]).into(),
        }
    }
}

/// What a promise or timer delivered, waiting for its task to take it.
struct Slot {
    task: Id,
    value: Option<Result<JsValue, JsValue>>,
}

#[derive(Default)]
struct Loop {
    tasks: ById<Task>,
    slots: ById<Slot>,
}

thread_local! {
    static HOST: RefCell<Option<Host>> = const { RefCell::new(None) };
    static LOOP: RefCell<Loop> = RefCell::new(Loop::default());
    /// The task being polled: futures it creates register their slots under it.
    static CURRENT: Cell<Id> = const { Cell::new(0.0) };
    /// The task being polled woke itself (a signal its own attempt sent): poll it again at once.
    static WOKEN: Cell<bool> = const { Cell::new(false) };
    static TRAP_ARMED: Cell<bool> = const { Cell::new(false) };
}

fn host<R>(f: impl FnOnce(&Host) -> R) -> R {
    HOST.with(|h| f(h.borrow().as_ref().expect("pkg/host.js calls setHost before any task")))
}

fn with_loop<R>(f: impl FnOnce(&mut Loop) -> R) -> R {
    LOOP.with(|l| f(&mut l.borrow_mut()))
}

/// Installs the host's services; pkg/host.js calls it once per instance, before anything else.
#[wasm_bindgen(js_name = setHost)]
pub fn set_host(host: Host) {
    HOST.with(|h| *h.borrow_mut() = Some(host));
}

/// Registers a task; the host starts it with `pollTask(id)`.
pub fn spawn(future: impl Future<Output = ()> + 'static) -> Id {
    with_loop(|l| l.tasks.insert(Task { future: Some(Box::pin(future)), outputs: Vec::new(), cancelled: false }))
}

/// Queues an output of the task being polled.
pub fn emit(output: JsValue) {
    let id = CURRENT.get();
    with_loop(|l| {
        if let Some(t) = l.tasks.get_mut(id) {
            t.outputs.push(Output::Value(output));
        }
    });
}

/// Queues bytes for the task's reader: appended to the bytes queued just before, if the last
/// output was bytes, so JavaScript gets one `Uint8Array` for them.
#[cfg_attr(not(feature = "gateway"), allow(dead_code))]
pub fn emit_bytes(bytes: &[u8]) {
    let id = CURRENT.get();
    with_loop(|l| {
        if let Some(t) = l.tasks.get_mut(id) {
            match t.outputs.last_mut() {
                Some(Output::Bytes(queued)) => queued.extend_from_slice(bytes),
                _ => t.outputs.push(Output::Bytes(bytes.to_vec())),
            }
        }
    });
}

/// How many times in a row one `pollTask` polls a task that keeps waking itself before it
/// leaves the next poll to the host's queue (so such a task cannot hold the thread).
const MAX_REPOLLS: u32 = 16;

/// Runs task `id` until it waits; returns its outputs since the last poll (the last one is its
/// `done` output when it finished). An unknown task (finished, or never spawned) has none.
#[wasm_bindgen(js_name = pollTask)]
pub fn poll_task(id: Id) -> Array {
    if TRAP_ARMED.replace(false) {
        // The test-only trap (see `armTrap`): exactly what a panic does under panic = "abort".
        core::arch::wasm32::unreachable();
    }
    let Some(mut future) = with_loop(|l| l.tasks.get_mut(id).and_then(|t| t.future.take())) else {
        return Array::new();
    };
    let outer = CURRENT.replace(id);
    let waker = Waker::from(Arc::new(TaskWaker(id)));
    let mut polls = 0;
    let finished = loop {
        WOKEN.set(false);
        polls += 1;
        if future.as_mut().poll(&mut Context::from_waker(&waker)).is_ready() {
            break true;
        }
        if !WOKEN.get() {
            break false;
        }
        if polls == MAX_REPOLLS {
            host(|h| h.schedule(id));
            break false;
        }
    };
    WOKEN.set(false);
    CURRENT.set(outer);
    let outputs = with_loop(|l| {
        // A finished future has dropped its promises and timers, and with them their slots.
        if finished {
            l.tasks.remove(id).map(|t| t.outputs).unwrap_or_default()
        } else {
            l.tasks
                .get_mut(id)
                .map(|t| {
                    t.future = Some(future);
                    std::mem::take(&mut t.outputs)
                })
                .unwrap_or_default()
        }
    });
    outputs.into_iter().map(Output::into_js).collect()
}

/// A promise or timer the host watched has settled. Returns the task to poll now, if it still
/// waits for this slot.
#[wasm_bindgen(js_name = settleSlot)]
pub fn settle_slot(slot: Id, ok: bool, value: JsValue) -> Option<Id> {
    with_loop(|l| {
        let s = l.slots.get_mut(slot)?;
        s.value = Some(if ok { Ok(value) } else { Err(value) });
        Some(s.task)
    })
}

/// The caller cancelled task `id`. Returns whether it is still running (then poll it).
#[wasm_bindgen(js_name = cancelTask)]
pub fn cancel_task(id: Id) -> bool {
    with_loop(|l| l.tasks.get_mut(id).map(|t| t.cancelled = true).is_some())
}

/// Test only: the next `pollTask` traps, as a bug would. Proves that a trap settles every call
/// of the instance and that the next call works (tests/e2e/hostile.mjs).
#[wasm_bindgen(js_name = armTrap)]
pub fn arm_trap() {
    TRAP_ARMED.set(true);
}

/// Sends an attempt's request through the host's `fetch` (see [`Host::send`]).
pub fn fetch(url: &str, init: &RequestInit) -> Result<Promise, JsValue> {
    host(|h| h.send(url, init))
}

/// Signs `data` RS256 with `pkcs8` through the host's WebCrypto (see [`Host::sign_rs256`]).
#[cfg(feature = "clouds")]
pub fn sign_rs256(pkcs8: &[u8], data: &[u8]) -> Promise {
    host(|h| h.sign_rs256(pkcs8, data))
}

/// Whether the caller cancelled the task being polled.
pub fn cancelled() -> bool {
    let id = CURRENT.get();
    with_loop(|l| l.tasks.get_mut(id).is_some_and(|t| t.cancelled))
}

/// The W3C trace headers the task being polled adds to the attempt it sends now (none unless the
/// call traces and its tracer gave valid ones: see `crate::trace_context`).
pub fn attempt_headers(target: &str, attempt: u32) -> Vec<(String, String)> {
    let task = CURRENT.get();
    let given = host(|h| h.attempt_headers(task, target, attempt));
    if !given.is_object() {
        return Vec::new();
    }
    let read = |name: &str| js_sys::Reflect::get(&given, &JsValue::from_str(name)).ok().and_then(|v| v.as_string());
    match read("traceparent") {
        Some(traceparent) => crate::trace_context::trace_headers(&traceparent, read("tracestate").as_deref()),
        None => Vec::new(),
    }
}

/// Wakes a task by asking the host to poll it, or, woken from inside its own poll (its attempt
/// sent the call loop a signal), by having `pollTask` poll it again before returning: a read's
/// deltas cost one entry into the wasm, not two.
struct TaskWaker(Id);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        if CURRENT.get() == self.0 {
            WOKEN.set(true);
        } else {
            host(|h| h.schedule(self.0));
        }
    }
}

/// Waits until the reader of the task being polled has room (see `Host::room`); at once when it
/// has. The gateway reads no more of an upstream body while its client reads nothing (a Baton's
/// stream is read by its own caller, and has no such queue).
#[cfg(feature = "gateway")]
pub async fn room() {
    use wasm_bindgen::JsCast;
    let task = CURRENT.get();
    let promise = host(|h| h.room(task));
    if !promise.is_undefined() {
        let _ = Awaited::new(promise.unchecked_ref()).await;
    }
}

fn new_slot() -> Id {
    let task = CURRENT.get();
    with_loop(|l| l.slots.insert(Slot { task, value: None }))
}

fn take_slot(slot: Id) -> Option<Result<JsValue, JsValue>> {
    with_loop(|l| l.slots.get_mut(slot).and_then(|s| s.value.take()))
}

fn free_slot(slot: Id) {
    with_loop(|l| l.slots.remove(slot));
}

/// A JS promise, awaited through the host.
pub struct Awaited {
    slot: Id,
}

impl Awaited {
    pub fn new(promise: &Promise) -> Awaited {
        let slot = new_slot();
        host(|h| h.watch(promise, slot));
        Awaited { slot }
    }
}

impl Future for Awaited {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        take_slot(self.slot).map_or(Poll::Pending, Poll::Ready)
    }
}

impl Drop for Awaited {
    fn drop(&mut self) {
        free_slot(self.slot);
    }
}

/// A host timer; dropping it clears the timer, so nothing keeps the host alive for a call that
/// has ended.
pub struct Sleep {
    slot: Id,
    handle: JsValue,
}

impl Sleep {
    pub fn new(ms: u64) -> Sleep {
        let slot = new_slot();
        let handle = host(|h| h.set_timer(ms as f64, slot));
        Sleep { slot, handle }
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        take_slot(self.slot).map_or(Poll::Pending, |_| Poll::Ready(()))
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        host(|h| h.clear_timer(&self.handle));
        free_slot(self.slot);
    }
}

/// Owns an attempt's AbortController (made by the host, which knows every live one); aborts it
/// when dropped, so no path leaves a request running upstream.
pub struct AbortGuard {
    controller: AbortController,
}

impl AbortGuard {
    pub fn new() -> AbortGuard {
        AbortGuard { controller: host(|h| h.controller()) }
    }

    pub fn signal(&self) -> AbortSignal {
        self.controller.signal()
    }
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        host(|h| h.abort(&self.controller));
    }
}
