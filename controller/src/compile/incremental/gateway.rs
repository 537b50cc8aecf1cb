//! The Gateway API layer in the incremental compile: compiled whole after the Ingresses (as the
//! full compile does), then compared with the last one so the publisher hears which of its
//! hosts and backends changed.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use shunt_spec::{HostMatch, TableSpec, VirtualHostSpec};

use super::{Incremental, TlsBuilder};
use crate::{
    compile::ClusterState,
    sources::gateway::{self, Layer},
};

// === impl Incremental ===

impl Incremental {
    /// Compiles the Gateway API layer whole, after the Ingresses (as the full compile does), and
    /// notes what it changed in the table since the last compile.
    pub(super) fn gateway_layer(
        &mut self,
        state: &ClusterState,
        shadow_classes: &[String],
        table: &mut TableSpec,
        certificates: &mut TlsBuilder<'_>,
        ports: &BTreeSet<u16>,
    ) {
        let mut layer = gateway::compile(state, table, certificates, (shadow_classes, ports));
        if let Some(layer) = &mut layer {
            if let Some(last) = &self.gateway {
                layer.keep_report(last);
            }
            gateway::merge(layer, table);
        }
        let before = std::mem::replace(&mut self.gateway, layer);
        if let Some(changes) = self.spec_changes.as_mut() {
            let empty = Layer::default();
            let (old, new) = (
                before.as_ref().unwrap_or(&empty),
                self.gateway.as_ref().unwrap_or(&empty),
            );
            changes.hosts.extend(differing(&old.hosts, &new.hosts));
            let backends = old.backends.iter().chain(&new.backends);
            let changed = backends
                .filter(|(id, spec)| old.backends.get(*id) != Some(spec) || new.backends.get(*id) != Some(spec));
            changes.backends.extend(changed.map(|(id, _)| id.clone()));
        }
    }
}

/// The hosts of `old` and `new` (each sorted by host) that are not equal in both.
fn differing(old: &[Arc<VirtualHostSpec>], new: &[Arc<VirtualHostSpec>]) -> Vec<HostMatch> {
    let old: BTreeMap<&HostMatch, &VirtualHostSpec> = old.iter().map(|vhost| (&vhost.host, &**vhost)).collect();
    let new: BTreeMap<&HostMatch, &VirtualHostSpec> = new.iter().map(|vhost| (&vhost.host, &**vhost)).collect();
    let keys: BTreeSet<&HostMatch> = old.keys().chain(new.keys()).copied().collect();
    keys.into_iter()
        .filter(|host| old.get(host) != new.get(host))
        .cloned()
        .collect()
}
