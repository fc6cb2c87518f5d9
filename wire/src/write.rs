//! Writing JSON text.
