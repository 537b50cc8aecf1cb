//! Settles precedence: the first claimant of a (host, path, kind) or of the default backend
//! keeps it, so the table is final before the proxy builds its matchit trees (which reject
//! conflicts instead of choosing).

use std::collections::{BTreeMap, BTreeSet, btree_map::Entry};

use shunt_proxy::routes::spec::{
    BackendId, BackendSpec, HostMatch, Listeners, PathKind, PathSpec, RouteOptions, TableSpec, VirtualHostSpec,
};

use super::backend::Resolved;

/// Claims in walk order; turns into a sorted [`TableSpec`].
#[derive(Default)]
pub struct TableBuilder {
    /// Keyed in output order: host, then path, then kind, then listeners (which never overlap
    /// for one host, path and kind).
    paths: BTreeMap<(HostMatch, String, PathKind, Listeners), Claim>,
    /// Hosts whose unmatched requests get 404 (see `VirtualHostSpec::exclusive`).
    exclusive: BTreeSet<HostMatch>,
    /// Some claim is limited to one listener: only then can claims on other keys overlap.
    scoped: bool,
    default_backend: Option<Claim>,
    backends: BTreeMap<BackendId, BackendSpec>,
}

/// Who holds a slot and where it sends requests.
struct Claim {
    backend: BackendId,
    /// The Ingress, `namespace/name`.
    source: String,
    ssl_redirect: bool,
    options: RouteOptions,
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
        self.claim_route(
            host,
            path,
            kind,
            Some(backend),
            source,
            ssl_redirect,
            RouteOptions::default(),
        )
    }

    /// [`TableBuilder::claim_path`] with profile options; a redirect route needs no backend.
    /// A claim on one listener conflicts only with claims that share a listener.
    #[allow(clippy::too_many_arguments, reason = "one claim's parts, all needed")]
    pub fn claim_route(
        &mut self,
        host: &HostMatch,
        path: &str,
        kind: PathKind,
        backend: Option<&Resolved>,
        source: &str,
        ssl_redirect: bool,
        options: RouteOptions,
    ) -> Result<(), String> {
        // Ingress-spec claims (both listeners, nothing scoped yet) need only the entry below.
        if self.scoped || !options.listeners.is_both() {
            for listeners in [Listeners::Both, Listeners::Plain, Listeners::Tls] {
                if listeners.overlaps(options.listeners)
                    && let Some(held) = self.paths.get(&(host.clone(), path.to_string(), kind, listeners))
                {
                    return Err(held.source.clone());
                }
            }
        }
        self.scoped |= !options.listeners.is_both();
        let key = (host.clone(), path.to_string(), kind, options.listeners);
        match self.paths.entry(key) {
            Entry::Occupied(held) => Err(held.get().source.clone()),
            Entry::Vacant(slot) => {
                slot.insert(Claim {
                    backend: backend.map(|backend| backend.id.clone()).unwrap_or_default(),
                    source: source.to_string(),
                    ssl_redirect,
                    options,
                });
                if let Some(backend) = backend {
                    self.add_backend(backend);
                }
                Ok(())
            }
        }
    }

    /// Marks `host` exclusive: a request for it that no path matches gets 404.
    pub fn set_exclusive(&mut self, host: &HostMatch) {
        self.exclusive.insert(host.clone());
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
            options: RouteOptions::default(),
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
        for ((host, path, kind, _), claim) in self.paths {
            let spec = PathSpec {
                path,
                kind,
                backend: claim.backend,
                source: claim.source,
                ssl_redirect: claim.ssl_redirect,
                options: claim.options,
            };
            match hosts.last_mut() {
                Some(last) if last.host == host => last.paths.push(spec),
                _ => hosts.push(VirtualHostSpec {
                    exclusive: self.exclusive.contains(&host),
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
            documents: Default::default(),
        }
    }
}
