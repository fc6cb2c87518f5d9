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

pub mod backoff;
pub mod body;
pub mod budget;
pub mod chat;
pub mod config;
pub mod delivery;
pub mod engine;
pub mod format;
pub mod gate;
pub mod gateway;
pub mod health;
pub mod outcome;
pub mod propagation;
pub mod record;
pub mod secret;
pub mod sse;
pub mod trace_context;
pub mod value;

#[cfg(target_arch = "wasm32")]
mod driver;
