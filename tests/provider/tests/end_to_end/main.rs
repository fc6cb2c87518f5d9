//! End-to-end tests of the scripted provider: the real binary, real sockets, hand-written HTTP.

mod billed;
mod client;
mod continue_from;
mod control;
mod echo;
mod faults;
mod formats;
mod hostile;
mod refuse_prefill;
mod turns;
mod usage_per_event;
