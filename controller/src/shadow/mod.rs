//! Ingresses of foreign classes served as their own controller serves them: verdicts and what
//! follows from them.

pub mod refusals;
