//! ReferenceGrants: a reference from one namespace to another's object (an HTTPRoute's
//! backend, a Gateway's certificate) holds only when a ReferenceGrant in the target's
//! namespace lets that kind, from that namespace, refer to that kind (and name, if it names one).

use std::sync::Arc;

use super::objects::ReferenceGrant;
use crate::compile::namespace_name;

/// The ReferenceGrants of one compile.
pub struct Grants<'s> {
    grants: &'s [Arc<ReferenceGrant>],
}

/// One side of a reference: group (`""` for the core group), kind, namespace.
#[derive(Clone, Copy, Debug)]
pub struct From<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
}

/// The object referred to.
#[derive(Clone, Copy, Debug)]
pub struct To<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub namespace: &'a str,
    pub name: &'a str,
}

// === impl Grants ===

impl<'s> Grants<'s> {
    pub fn new(grants: &'s [Arc<ReferenceGrant>]) -> Self {
        Grants { grants }
    }

    /// Whether `from` may refer to `to`: always within one namespace, else by a grant.
    pub fn permits(&self, from: From<'_>, to: To<'_>) -> bool {
        if from.namespace == to.namespace {
            return true;
        }
        self.grants
            .iter()
            .filter(|grant| namespace_name(&grant.metadata).0 == to.namespace)
            .any(|grant| {
                let spec = &grant.spec;
                let from_ok = spec.from.iter().any(|entry| {
                    entry.group == from.group && entry.kind == from.kind && entry.namespace == from.namespace
                });
                let to_ok = spec.to.iter().any(|entry| {
                    entry.group == to.group
                        && entry.kind == to.kind
                        && entry
                            .name
                            .as_deref()
                            .is_none_or(|name| name.is_empty() || name == to.name)
                });
                from_ok && to_ok
            })
    }
}
