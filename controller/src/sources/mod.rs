//! Sources of routes besides the Ingress spec's walk (`compile/ingress.rs`) and the Ingress
//! profiles (`shadow/`): each parses its objects into the contract's behaviours.

pub mod gateway;
