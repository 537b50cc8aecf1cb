//! References.
