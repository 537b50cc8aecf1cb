//! The hosts of the extra ports' listeners (`TableSpec::ports`, Gateway listeners on neither 80
//! nor 443): each port its own hosts, built whole at every build (they are few, and a table
//! without them pays one empty check), looked up only for requests that arrived on that port.

use std::sync::Arc;

use super::{BuildParts, BuildWarning, Found, Hosts, Parts, RouteTable, VirtualHost, build_routes, stats_of};
use crate::{
    metrics::RouteStats,
    routes::{Route, conditions::Facts},
    spec::TableSpec,
    upstream::Upstream,
};

/// Each extra port's hosts, sorted by port.
pub(super) type PortTables = Vec<(u16, Hosts)>;

/// Builds every extra port's hosts of `spec`.
pub(super) fn build(
    spec: &TableSpec,
    nowhere: &Arc<Upstream>,
    parts: &mut Parts<'_, impl BuildParts>,
    warnings: &mut Vec<BuildWarning>,
) -> PortTables {
    let mut tables = Vec::with_capacity(spec.ports.len());
    for (&port, hosts) in &spec.ports {
        let mut built = Hosts::default();
        for vhost in &hosts.0 {
            let before = warnings.len();
            let routes = build_routes(vhost, nowhere, parts, warnings);
            let clean = warnings.len() == before;
            if let Some(one) = VirtualHost::build(vhost, &routes, None, clean, parts, warnings) {
                built.insert(&vhost.host, Arc::new(one));
            }
        }
        tables.push((port, built));
    }
    tables
}

/// The counters of every extra port's routes: never taken over by the next table.
pub(super) fn stats(tables: &PortTables) -> impl Iterator<Item = RouteStats> + '_ {
    let vhosts = tables.iter().flat_map(|(_, hosts)| hosts.iter());
    vhosts.flat_map(|vhost| vhost.routes.iter().map(stats_of))
}

// === impl RouteTable ===

impl RouteTable {
    /// The route for a request that arrived on the extra listener of `port`: only that port's
    /// hosts exist there (no default backend: it is the Ingresses'), so a miss is `None`.
    pub fn lookup_port(&self, port: u16, host: &str, path: &str, facts: &impl Facts) -> Option<&Arc<Route>> {
        let (_, hosts) = self.ports.iter().find(|(known, _)| *known == port)?;
        match hosts.find(host, path, facts) {
            Found::Route(route) => Some(route),
            Found::Stop | Found::Next => None,
        }
    }
}
