//! End-to-end tests of the scripted provider: the real binary, real sockets, hand-written HTTP.

mod client;
mod control;
mod faults;
mod formats;
mod hostile;
