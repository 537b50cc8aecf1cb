//! The full compile's table: claims in walk order, settled as they come by [`HostSlots`], so
//! the table is final before the proxy builds its matchit trees (which reject conflicts
//! instead of choosing).

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use shunt_spec::{BackendId, HostMatch, TableSpec, VirtualHostSpec};

use super::{
    backend::Resolved,
    claims::{HostSlots, PathClaim, RouteSettings},
};

/// foldhash, not SipHash, and hashed rather than B-tree keyed: every path looks up its host and
/// backend, and B-tree key compares were the largest cost of a 10k-Ingress compile. Sorted once
/// in [`TableBuilder::finish`].
pub type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Claims in walk order; turns into a sorted [`TableSpec`].
#[derive(Default)]
pub struct TableBuilder {
    /// Host, then path, then kind and listeners. Nested, so a claim looks up by reference and
    /// allocates only what it inserts.
    hosts: FastMap<HostMatch, HostSlots<String, Held>>,
    /// Hosts whose unmatched requests get 404 (see `VirtualHostSpec::exclusive`).
    exclusive: BTreeSet<HostMatch>,
    /// The default backend and the Ingress holding it.
    default_backend: Option<(BackendId, String)>,
    /// Shared with the claims: a profile's kept state holds the same resolution, not a copy.
    backends: FastMap<BackendId, Arc<Resolved>>,
}

/// A finished table's hosts and the resolved backends they name, for a caller that keeps them
/// (the incremental compile's profiles) rather than publishing them as a [`TableSpec`].
pub struct FinishedHosts {
    /// Sorted by host.
    pub hosts: Vec<Arc<VirtualHostSpec>>,
    pub backends: FastMap<BackendId, Arc<Resolved>>,
}

/// Who holds a slot and the route it asked for.
struct Held {
    /// The Ingress, `namespace/name`.
    source: String,
    backend: Option<Arc<Resolved>>,
    route: RouteSettings,
}

// === impl TableBuilder ===

impl TableBuilder {
    /// Routes `claim` for `source` (`namespace/name`) unless someone already holds its slot;
    /// then returns the holder.
    pub fn claim(&mut self, claim: &PathClaim, source: &str) -> Result<(), String> {
        let slots = match self.hosts.get_mut(&claim.host) {
            Some(found) => found,
            None => self.hosts.entry(claim.host.clone()).or_default(),
        };
        let held = Held {
            source: source.to_string(),
            backend: claim.backend.clone(),
            route: claim.route.clone(),
        };
        slots.claim(
            (&claim.path, || claim.path.clone()),
            (claim.kind, claim.route.listeners()),
            held,
            |held| held.source.clone(),
        )?;
        if let Some(backend) = &claim.backend {
            self.add_backend(backend);
        }
        Ok(())
    }

    /// Marks `host` exclusive: a request for it that no path matches gets 404.
    pub fn set_exclusive(&mut self, host: &HostMatch) {
        self.exclusive.insert(host.clone());
    }

    /// Makes `backend` the default backend unless one is set; then returns the holder.
    pub fn claim_default(&mut self, backend: &Arc<Resolved>, source: &str) -> Result<(), String> {
        if let Some((_, held)) = &self.default_backend {
            return Err(held.clone());
        }
        self.default_backend = Some((backend.id.clone(), source.to_string()));
        self.add_backend(backend);
        Ok(())
    }

    /// Adds a backend a claimed route names besides its own (a canary's).
    pub fn add_alternative(&mut self, backend: &Arc<Resolved>) {
        self.add_backend(backend);
    }

    fn add_backend(&mut self, backend: &Arc<Resolved>) {
        // Most paths name a backend already added: look up before cloning the id.
        if !self.backends.contains_key(&backend.id) {
            self.backends.insert(backend.id.clone(), backend.clone());
        }
    }

    pub fn finish(mut self) -> TableSpec {
        let default_backend = self.default_backend.take().map(|(backend, _)| backend);
        let FinishedHosts { hosts, backends } = self.finish_hosts();
        TableSpec {
            hosts,
            default_backend,
            // A B-tree collected from an iterator sorts once and builds in one pass.
            backends: backends
                .into_iter()
                .map(|(id, resolved)| (id, resolved.spec.clone()))
                .collect(),
            tls: Default::default(),
            documents: Default::default(),
            ports: Default::default(),
        }
    }

    /// The hosts, settled and sorted, and the backends they name; the default backend is left out.
    pub fn finish_hosts(self) -> FinishedHosts {
        let mut sorted: Vec<(HostMatch, HostSlots<String, Held>)> = self.hosts.into_iter().collect();
        sorted.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        let mut hosts: Vec<Arc<VirtualHostSpec>> = Vec::with_capacity(sorted.len());
        for (host, slots) in sorted {
            let exclusive = self.exclusive.contains(&host);
            let spec = slots.into_spec(host, exclusive, |path, kind, held| {
                held.route.spec(path, kind, held.backend.as_deref(), held.source)
            });
            hosts.extend(spec.map(Arc::new));
        }
        FinishedHosts {
            hosts,
            backends: self.backends,
        }
    }
}
