//! Claims on the table's slots and the one rule that settles them: the first claim of a
//! (host, path, kind) on an overlapping listener holds it. The full compile feeds a host's
//! claims here as it walks; the incremental one feeds a touched host's kept claims again, in
//! the same precedence order, so both settle alike.
//!
//! ```text
//! PathClaim { host, path, kind, backend, route } ─HostSlots::claim─▶ held, or who holds it
//!   held slots ─HostSlots::into_spec─▶ VirtualHostSpec { paths: PathSpec (RouteSettings::spec) }
//! ```

use std::{borrow::Borrow, cell::RefCell, collections::BTreeMap, sync::Arc};

use shunt_spec::{HostMatch, Listeners, PathKind, PathSpec, RouteOptions, VirtualHostSpec};

use super::backend::Resolved;

/// Most paths set no option: their specs share one allocation (a `RouteOptions` is ~400 B).
static DEFAULT_OPTIONS: std::sync::LazyLock<Arc<RouteOptions>> = std::sync::LazyLock::new(Default::default);

/// A (host, path, kind) slot an Ingress wants, and the route it asks for there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathClaim {
    pub host: HostMatch,
    pub path: String,
    pub kind: PathKind,
    /// `None` for a route that only redirects.
    pub backend: Option<Arc<Resolved>>,
    pub route: RouteSettings,
}

/// How a claimed path's route behaves besides where it sends requests. Carried untouched from
/// the profile that parses it to the table: a new route option is a field of [`RouteOptions`]
/// set where its annotation is parsed, and nowhere else in the compile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteSettings {
    pub ssl_redirect: bool,
    /// `None` is the default options. Boxed: the incremental compile keeps every claim between
    /// compiles, and most routes set none.
    pub options: Option<Arc<RouteOptions>>,
}

/// The claims on one host, by path, then by kind and listeners. `P` is the path: owned where
/// the claims outlive their Ingress's walk (the full compile), borrowed where kept claims are
/// settled again (the incremental one).
pub struct HostSlots<P, C> {
    paths: BTreeMap<P, PathSlots<C>>,
    /// Some claim is limited to one listener: only then can claims on other keys overlap.
    scoped: bool,
}

/// The claims of one host and path, sorted by (kind, listeners): at most nine, mostly one, so a
/// short Vec rather than a B-tree node per path (a node is sized for eleven claims).
type PathSlots<C> = Vec<((PathKind, Listeners), C)>;

// === impl RouteSettings ===

impl RouteSettings {
    pub fn listeners(&self) -> Listeners {
        self.options
            .as_ref()
            .map_or(Listeners::Both, |options| options.listeners)
    }

    /// The table's path for a slot this route holds.
    pub fn spec(&self, path: String, kind: PathKind, backend: Option<&Resolved>, source: String) -> PathSpec {
        PathSpec {
            path,
            kind,
            backend: backend.map(|backend| backend.id.clone()).unwrap_or_default(),
            source,
            ssl_redirect: self.ssl_redirect,
            // Shared with the claim, or the one default every plain path points at.
            options: self.options.clone().unwrap_or_else(|| DEFAULT_OPTIONS.clone()),
        }
    }
}

impl From<RouteOptions> for RouteSettings {
    fn from(options: RouteOptions) -> Self {
        RouteSettings {
            ssl_redirect: false,
            options: (options != RouteOptions::default()).then(|| shared(options)),
        }
    }
}

/// How many distinct options [`shared`] remembers.
const RECENT_OPTIONS: usize = 8;

thread_local! {
    /// The options [`shared`] made last, newest last.
    static RECENT: RefCell<Vec<Arc<RouteOptions>>> = const { RefCell::new(Vec::new()) };
}

/// `options` in an `Arc`, the one made before for equal options when it is among the last few:
/// a profile gives most of its paths the same options (its ConfigMap's, no annotation), ~1.5
/// KiB each, which the compile keeps on every claim and the table on every path (15 MiB at
/// 10k nginx paths). Equal options shared or not compile to the same table.
fn shared(options: RouteOptions) -> Arc<RouteOptions> {
    RECENT.with_borrow_mut(|recent| {
        if let Some(kept) = recent.iter().rev().find(|kept| ***kept == options) {
            return kept.clone();
        }
        if recent.len() == RECENT_OPTIONS {
            recent.remove(0);
        }
        let made = Arc::new(options);
        recent.push(made.clone());
        made
    })
}

// === impl HostSlots ===

impl<P, C> Default for HostSlots<P, C> {
    fn default() -> Self {
        HostSlots {
            paths: BTreeMap::new(),
            scoped: false,
        }
    }
}

impl<P: Ord + Borrow<str>, C> HostSlots<P, C> {
    /// First claim wins: `claim` takes the slot of `path`, `kind` and `listeners` unless a
    /// claim of that kind on an overlapping listener holds it; then returns `holder(held)`.
    /// `owned` makes the key of a path not claimed before.
    pub fn claim<H>(
        &mut self,
        (path, owned): (&str, impl FnOnce() -> P),
        (kind, listeners): (PathKind, Listeners),
        claim: C,
        holder: impl FnOnce(&C) -> H,
    ) -> Result<(), H> {
        // Looked up by reference: only a path not claimed before allocates its key.
        let slots = match self.paths.get_mut(path) {
            Some(found) => found,
            None => self.paths.entry(owned()).or_default(),
        };
        // Ingress-spec claims (both listeners, nothing scoped yet) need only the search below.
        if self.scoped || !listeners.is_both() {
            for held in [Listeners::Both, Listeners::Plain, Listeners::Tls] {
                if held.overlaps(listeners)
                    && let Ok(at) = slots.binary_search_by_key(&(kind, held), |(key, _)| *key)
                {
                    return Err(holder(&slots[at].1));
                }
            }
        }
        self.scoped |= !listeners.is_both();
        match slots.binary_search_by_key(&(kind, listeners), |(key, _)| *key) {
            Ok(at) => Err(holder(&slots[at].1)),
            Err(at) => {
                slots.insert(at, ((kind, listeners), claim));
                Ok(())
            }
        }
    }
}

impl<P: Into<String>, C> HostSlots<P, C> {
    /// The host as the table holds it, its paths in (path, kind, listeners) order; `None` when
    /// no claim holds a slot. `spec` makes each held slot's path.
    pub fn into_spec(
        self,
        host: HostMatch,
        exclusive: bool,
        mut spec: impl FnMut(String, PathKind, C) -> PathSpec,
    ) -> Option<VirtualHostSpec> {
        let mut paths = Vec::new();
        for (path, slots) in self.paths {
            let mut path: String = path.into();
            let mut slots = slots.into_iter().peekable();
            while let Some(((kind, _), claim)) = slots.next() {
                // One slot per path is the rule: move the path into the last one.
                let path = match slots.peek() {
                    Some(_) => path.clone(),
                    None => std::mem::take(&mut path),
                };
                paths.push(spec(path, kind, claim));
            }
        }
        // Kept until the host changes: most hosts have one path, and a `Vec`'s first growth
        // holds four.
        paths.shrink_to_fit();
        // A host whose every claim was refused has no entry.
        (!paths.is_empty()).then_some(VirtualHostSpec { host, paths, exclusive })
    }
}
