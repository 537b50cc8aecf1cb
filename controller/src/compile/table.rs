//! Settles precedence: the first claimant of a (host, path, kind) or of the default backend
//! keeps it, so the table is final before the proxy builds its matchit trees (which reject
//! conflicts instead of choosing).

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
};

use shunt_proxy::routes::spec::{
    BackendId, BackendSpec, HostMatch, Listeners, PathKind, PathSpec, RouteOptions, TableSpec, VirtualHostSpec,
};

use super::backend::Resolved;

/// foldhash, not SipHash, and hashed rather than B-tree keyed: every path looks up its host and
/// backend, and B-tree key compares were the largest cost of a 10k-Ingress compile. Sorted once
/// in [`TableBuilder::finish`].
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Claims in walk order; turns into a sorted [`TableSpec`].
#[derive(Default)]
pub struct TableBuilder {
    /// Host, then path, then kind and listeners (which never overlap for one host, path and
    /// kind). Nested, so a claim looks up by reference and allocates only what it inserts.
    paths: FastMap<HostMatch, HostClaims>,
    /// Hosts whose unmatched requests get 404 (see `VirtualHostSpec::exclusive`).
    exclusive: BTreeSet<HostMatch>,
    /// Some claim is limited to one listener: only then can claims on other keys overlap.
    scoped: bool,
    default_backend: Option<Claim>,
    backends: FastMap<BackendId, BackendSpec>,
}

/// One host's claims: path, then its slots.
type HostClaims = BTreeMap<String, Slots>;

/// The claims of one host and path by (kind, listeners), sorted: at most nine, mostly one, so a
/// short Vec rather than a B-tree node per path (a node is sized for eleven claims).
type Slots = Vec<((PathKind, Listeners), Claim)>;

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
        let host_paths = match self.paths.get_mut(host) {
            Some(found) => found,
            None => self.paths.entry(host.clone()).or_default(),
        };
        let slots = match host_paths.get_mut(path) {
            Some(found) => found,
            None => host_paths.entry(path.to_string()).or_default(),
        };
        // Ingress-spec claims (both listeners, nothing scoped yet) need only the entry below.
        if self.scoped || !options.listeners.is_both() {
            for listeners in [Listeners::Both, Listeners::Plain, Listeners::Tls] {
                if listeners.overlaps(options.listeners)
                    && let Ok(held) = slots.binary_search_by_key(&(kind, listeners), |(key, _)| *key)
                {
                    return Err(slots[held].1.source.clone());
                }
            }
        }
        self.scoped |= !options.listeners.is_both();
        match slots.binary_search_by_key(&(kind, options.listeners), |(key, _)| *key) {
            Ok(held) => Err(slots[held].1.source.clone()),
            Err(at) => {
                let key = (kind, options.listeners);
                let claim = Claim {
                    backend: backend.map(|backend| backend.id.clone()).unwrap_or_default(),
                    source: source.to_string(),
                    ssl_redirect,
                    options,
                };
                slots.insert(at, (key, claim));
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
        // Most paths name a backend already added: look up before cloning the id.
        if !self.backends.contains_key(&backend.id) {
            self.backends.insert(backend.id.clone(), backend.spec.clone());
        }
    }

    pub fn finish(self) -> TableSpec {
        let mut sorted: Vec<(HostMatch, HostClaims)> = self.paths.into_iter().collect();
        sorted.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        let mut hosts: Vec<Arc<VirtualHostSpec>> = Vec::with_capacity(sorted.len());
        for (host, host_paths) in sorted {
            let mut paths = Vec::new();
            for (mut path, slots) in host_paths {
                let mut slots = slots.into_iter().peekable();
                while let Some(((kind, _), claim)) = slots.next() {
                    // One slot per path is the rule: move the path into the last one.
                    let path = match slots.peek() {
                        Some(_) => path.clone(),
                        None => std::mem::take(&mut path),
                    };
                    paths.push(PathSpec {
                        path,
                        kind,
                        backend: claim.backend,
                        source: claim.source,
                        ssl_redirect: claim.ssl_redirect,
                        options: claim.options,
                    });
                }
            }
            // A host whose every claim was refused has no entry (nothing was inserted for it
            // but its empty map): as before, it does not appear.
            if paths.is_empty() {
                continue;
            }
            hosts.push(Arc::new(VirtualHostSpec {
                exclusive: self.exclusive.contains(&host),
                host,
                paths,
            }));
        }
        TableSpec {
            hosts,
            default_backend: self.default_backend.map(|claim| claim.backend),
            // A B-tree collected from an iterator sorts once and builds in one pass.
            backends: self.backends.into_iter().collect(),
            tls: Default::default(),
            documents: Default::default(),
        }
    }
}
