//! The virtual hosts one listener serves, by how their names match, and one host's paths.

use std::sync::Arc;

use super::{
    BuildParts, BuildWarning, FastMap, Route,
    build::{Parts, slash_redirect},
};
use crate::{
    routes::{
        conditions::Facts,
        paths::{PathTable, PathTableBuilder},
    },
    spec::{HostMatch, PathKind, PathSpec, VirtualHostSpec},
};

/// The virtual hosts one listener serves. Each is an `Arc` so the next table can reuse it.
#[derive(Clone, Default)]
pub(super) struct Hosts {
    pub(super) exact: FastMap<Box<str>, Arc<VirtualHost>>,
    /// Keyed by the suffix after `*.`.
    pub(super) wildcard: FastMap<Box<str>, Arc<VirtualHost>>,
    /// Keyed by the suffix after `*.`; matched from the longest suffix down.
    pub(super) deep_wildcard: FastMap<Box<str>, Arc<VirtualHost>>,
    pub(super) any: Option<Arc<VirtualHost>>,
}

pub(super) struct VirtualHost {
    pub(super) paths: PathTable,
    /// No match here is a 404, not a fall-through (see `VirtualHostSpec::exclusive`).
    pub(super) exclusive: bool,
    /// Built without a warning: only such a host may be reused, so a reused host never hides one.
    pub(super) clean: bool,
    /// Every route `paths` holds, slash redirects included: the next build checks their
    /// upstreams are still current before reusing the host, and retires them when it does not.
    pub(super) routes: Box<[Arc<Route>]>,
}

/// The outcome of looking up one virtual host.
pub(super) enum Found<'t> {
    Route(&'t Arc<Route>),
    /// The host is known and exclusive: stop with 404.
    Stop,
    Next,
}

// === impl Hosts ===

impl Hosts {
    pub(super) fn insert(&mut self, host: &HostMatch, vhost: Arc<VirtualHost>) {
        match host {
            HostMatch::Exact(host) => {
                self.exact.insert(host.as_str().into(), vhost);
            }
            HostMatch::Wildcard(suffix) => {
                self.wildcard.insert(suffix.as_str().into(), vhost);
            }
            HostMatch::DeepWildcard(suffix) => {
                self.deep_wildcard.insert(suffix.as_str().into(), vhost);
            }
            HostMatch::Any => self.any = Some(vhost),
        }
    }

    pub(super) fn get(&self, host: &HostMatch) -> Option<&Arc<VirtualHost>> {
        match host {
            HostMatch::Exact(host) => self.exact.get(host.as_str()),
            HostMatch::Wildcard(suffix) => self.wildcard.get(suffix.as_str()),
            HostMatch::DeepWildcard(suffix) => self.deep_wildcard.get(suffix.as_str()),
            HostMatch::Any => self.any.as_ref(),
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &Arc<VirtualHost>> {
        self.exact
            .values()
            .chain(self.wildcard.values())
            .chain(self.deep_wildcard.values())
            .chain(self.any.iter())
    }

    #[inline]
    pub(super) fn find(&self, host: &str, path: &str, facts: &impl Facts) -> Found<'_> {
        if let Some(vhost) = self.exact.get(host) {
            match vhost.find(path, facts) {
                Found::Next => {}
                found => return found,
            }
        }
        if !self.wildcard.is_empty()
            && let Some(suffix) = HostMatch::wildcard_suffix(host)
            && let Some(vhost) = self.wildcard.get(suffix)
        {
            match vhost.find(path, facts) {
                Found::Next => {}
                found => return found,
            }
        }
        // Same rule for the first label as one-label wildcards: `.example.com` is no name under it.
        if !self.deep_wildcard.is_empty() && HostMatch::wildcard_suffix(host).is_some() {
            // Longest suffix first: `a.b.example.com` tries `b.example.com`, then `example.com`.
            // Bounded by the host's labels.
            let mut rest = host;
            while let Some((_, suffix)) = rest.split_once('.') {
                if let Some(vhost) = self.deep_wildcard.get(suffix) {
                    match vhost.find(path, facts) {
                        Found::Next => {}
                        found => return found,
                    }
                }
                rest = suffix;
            }
        }
        match self.any.as_ref().map(|vhost| vhost.find(path, facts)) {
            Some(Found::Route(route)) => Found::Route(route),
            _ => Found::Next,
        }
    }
}

// === impl VirtualHost ===

impl VirtualHost {
    /// One listener's view of a host (`view`: `Some(tls)`; `None` takes every route). `None`
    /// when the host has no route there and is not exclusive: it is unknown on that listener.
    pub(super) fn build(
        vhost: &VirtualHostSpec,
        routes: &[(Arc<Route>, &PathSpec)],
        view: Option<bool>,
        clean: bool,
        parts: &mut Parts<'_, impl BuildParts>,
        warnings: &mut Vec<BuildWarning>,
    ) -> Option<Self> {
        let mut builder = PathTableBuilder::default();
        // Ranked on every listener, whichever paths carry the conditions: the compile ranks them all.
        if is_ranked(vhost) {
            builder.ranked();
        }
        let mut held = Vec::with_capacity(routes.len());
        for (route, path) in routes {
            if view.is_some_and(|tls| !path.options.listeners.serves(tls)) {
                continue;
            }
            builder.add(&path.path, path.kind, route.clone());
            held.push(route.clone());
            if path.kind == PathKind::CharPrefix && path.path.len() > 1 && path.path.ends_with('/') {
                let redirect = slash_redirect(route, path, parts);
                builder.add_slash_redirect(&path.path, redirect.clone());
                held.push(redirect);
            }
        }
        if held.is_empty() && !vhost.exclusive {
            // Unknown on this listener: requests fall to wildcards, host-less rules, the default.
            return None;
        }
        let (paths, rejected) = builder.build();
        let clean = clean && rejected.is_empty();
        // Both listener views reject the same patterns; report them once.
        if view != Some(true) {
            warnings.extend(rejected.into_iter().map(|(pattern, reason)| BuildWarning {
                host: vhost.host.clone(),
                pattern,
                reason,
            }));
        }
        Some(VirtualHost {
            paths,
            exclusive: vhost.exclusive,
            clean,
            routes: held.into_boxed_slice(),
        })
    }

    #[inline]
    pub(super) fn find(&self, path: &str, facts: &impl Facts) -> Found<'_> {
        match self.paths.lookup(path, facts) {
            Some(route) => Found::Route(route),
            None if self.exclusive => Found::Stop,
            None => Found::Next,
        }
    }
}

/// Whether some path of the host carries request conditions: it is ranked.
pub(super) fn is_ranked(vhost: &VirtualHostSpec) -> bool {
    vhost.paths.iter().any(|path| path.options.conditions.is_some())
}
