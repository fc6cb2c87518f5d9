//! Google Gemini, the provider side only ([`provider`]): no gateway client speaks it.

pub mod provider;

pub(crate) use provider::uncarried;
pub use provider::{Gemini, StreamDecoder};
