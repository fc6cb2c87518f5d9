//! Reading JSON text into a borrowed tree.
