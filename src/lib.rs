//! llm-baton: one deadline, one retry/failover gate and enforced limits for LLM calls.
//!
//! The crate is a sans-I/O core plus a thin WebAssembly driver:
//!
//! ```text
//!   config ──> Baton ──start──> Call (state machine)            driver (wasm32 only)
//!                                 │  poll() -> Send / Abort /     ├─ fetch + AbortController
//!                                 │           Event / Finish  ──> ├─ setTimeout at poll_timeout()
//!                                 │  on_* inputs, handle_timeout  └─ caller's AbortSignal
//!                                 └─ gate: outcome -> retry / fail over / stop
//! ```
//!
//! The core reads no clock, sleeps nowhere and does no I/O: time (`now`, in milliseconds) and
//! randomness are passed in, so every decision is tested natively and deterministically.
//!
//! # Layers
//!
//! The modules stand in layers, the ground floor first. A module uses its own layer and the ones
//! below it, never one above, so each layer can be read and tested knowing only what is under
//! it; tests/architecture.rs reads this list and fails on a `crate::` path that reaches up, or
//! on modules that use each other in a circle.
//!
//! 1. **values and failures** (`value`, `float`, `by_name`, `by_id`, `outcome`, `retry_after`,
//!    `secret`, `sigv4`, `vertex`, `base64`, `sse`, `trace_context`): JSON values read with a field
//!    path, decimal text as an `f64`, values by name and by id, what can go wrong with an attempt
//!    (and the caller's view of it), the server's Retry-After, credentials and their redaction,
//!    AWS's request signing, Vertex AI's endpoints and tokens, base64, SSE events, trace headers.
//! 2. **policy** (`policy`, `backoff`, `gate`): what the config says to do (the route's
//!    strategies, retry, backoff, resume, health), and the two decisions made from it alone:
//!    whether a failure may be tried again, and after how long.
//! 3. **chat model** (`chat`): the normalized request, its reader, and the answer and deltas
//!    every provider's reply becomes.
//! 4. **dialects** (`format`): each wire format in one folder with both directions, to and
//!    from the chat model: a provider's requests, answers and streams, and a gateway client's
//!    requests, answers, streams and errors, with the words both use mapped once between them.
//! 5. **config** (`config`): the config document read into targets, routes and policies.
//! 6. **health** (`health`): circuit breakers and the retry budget, learned across calls.
//! 7. **engine** (`engine`, `budget`, `delivery`, `body`, `record`, `propagation`): one call as
//!    a sans-I/O state machine: the deadline, what the reader is shown, the answer's bytes, the
//!    legs and events it leaves behind, and whether a target is told the deadline left.
//! 8. **gateway** (`gateway`): the OpenAI- and Anthropic-compatible server's decisions about a
//!    request (endpoint, CORS, key, body cap, deadline) and its replies; it speaks to clients
//!    through the dialects' client halves.
//! 9. **driver** (`driver`): on wasm32 only, fetch, timers and the JS API around the engine.

pub mod backoff;
pub mod base64;
pub mod body;
pub mod budget;
pub mod by_id;
pub mod by_name;
pub mod chat;
pub mod config;
pub mod delivery;
pub mod engine;
pub mod float;
pub mod format;
pub mod gate;
pub mod gateway;
pub mod health;
pub mod outcome;
pub mod policy;
pub mod propagation;
pub mod record;
pub mod retry_after;
pub mod secret;
#[cfg(feature = "clouds")]
pub mod sigv4;
pub mod sse;
pub mod trace_context;
pub mod value;
#[cfg(feature = "clouds")]
pub mod vertex;

#[cfg(target_arch = "wasm32")]
mod driver;
