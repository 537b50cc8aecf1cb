//! Hostile, broken and slow clients against the real binary: each test names the abuse and
//! asserts shunt bounds it (closes, refuses, normalises or counts) instead of holding on.

mod connections;
mod requests;
mod smuggle;
mod upstream;
