//! Tests of the Gateway API layer.
