//! OpenAI Responses, both directions: the provider side ([`provider`]) builds its requests and
//! reads its answers and streams; the client side ([`client`]) reads a gateway client's request
//! and writes its answer and stream.

pub mod client;
pub mod provider;

pub use provider::{OpenaiResponses, StreamDecoder};
