//! Settles precedence: the first claimant of a (host, path, kind) or of the default backend
//! keeps it, so the table is final before the proxy builds its matchit trees (which reject
//! conflicts instead of choosing).

use std::collections::{BTreeMap, btree_map::Entry};

use shunt_proxy::routes::spec::{BackendId, BackendSpec, HostMatch, PathKind, PathSpec, TableSpec, VirtualHostSpec};

use super::backend::Resolved;

/// Claims in walk order; turns into a sorted [`TableSpec`].
#[derive(Default)]
pub struct TableBuilder {
    /// Keyed in output order: host, then path, then kind.
    paths: BTreeMap<(HostMatch, String, PathKind), Claim>,
    default_backend: Option<Claim>,
    backends: BTreeMap<BackendId, BackendSpec>,
}

/// Who holds a slot and where it sends requests.
struct Claim {
    backend: BackendId,
    /// The Ingress, `namespace/name`.
    source: String,
    ssl_redirect: bool,
}

// === impl TableBuilder ===

impl TableBuilder {
    /// Routes `host` + `path` to `backend` unless someone already does; then returns the holder.
    pub fn claim_path(
        &mut self,
        host: &HostMatch,
        path: &str,
        kind: PathKind,
        backend: &Resolved,
        source: &str,
        ssl_redirect: bool,
    ) -> Result<(), String> {
        match self.paths.entry((host.clone(), path.to_string(), kind)) {
            Entry::Occupied(held) => Err(held.get().source.clone()),
            Entry::Vacant(slot) => {
                slot.insert(Claim {
                    backend: backend.id.clone(),
                    source: source.to_string(),
                    ssl_redirect,
                });
                self.add_backend(backend);
                Ok(())
            }
        }
    }

    /// Makes `backend` the default backend unless one is set; then returns the holder.
    pub fn claim_default(&mut self, backend: &Resolved, source: &str) -> Result<(), String> {
        if let Some(held) = &self.default_backend {
            return Err(held.source.clone());
        }
        self.default_backend = Some(Claim {
            backend: backend.id.clone(),
            source: source.to_string(),
            ssl_redirect: false,
        });
        self.add_backend(backend);
        Ok(())
    }

    fn add_backend(&mut self, backend: &Resolved) {
        self.backends
            .entry(backend.id.clone())
            .or_insert_with(|| backend.spec.clone());
    }

    pub fn finish(self) -> TableSpec {
        let mut hosts: Vec<VirtualHostSpec> = Vec::new();
        for ((host, path, kind), claim) in self.paths {
            let spec = PathSpec {
                path,
                kind,
                backend: claim.backend,
                source: claim.source,
                ssl_redirect: claim.ssl_redirect,
            };
            match hosts.last_mut() {
                Some(last) if last.host == host => last.paths.push(spec),
                _ => hosts.push(VirtualHostSpec {
                    host,
                    paths: vec![spec],
                }),
            }
        }
        TableSpec {
            hosts,
            default_backend: self.default_backend.map(|claim| claim.backend),
            backends: self.backends,
            tls: Default::default(),
        }
    }
}
