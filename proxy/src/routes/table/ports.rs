//! The hosts of the extra ports' listeners (`TableSpec::ports`, Gateway listeners on neither 80
//! nor 443): each port its own hosts, built whole at every build (they are few, and a table
//! without them pays one empty check), looked up only for requests that arrived on that port;
//! a port's plain and TLS connections each see the routes of its HTTP or HTTPS listeners
//! (`RouteOptions::listeners`), as the main listeners do.

use std::sync::Arc;

use super::{BuildParts, BuildWarning, Found, Hosts, Parts, RouteTable, VirtualHost, build_routes, stats_of};
use crate::{
    metrics::RouteStats,
    routes::{Route, conditions::Facts},
    spec::TableSpec,
    upstream::Upstream,
};

/// Each extra port's hosts, sorted by port.
pub(super) type PortTables = Vec<(u16, PortHosts)>;

/// One extra port's hosts as its plain and its TLS connections see them.
#[derive(Default)]
pub(super) struct PortHosts {
    plain: Hosts,
    tls: Hosts,
}

/// Builds every extra port's hosts of `spec`.
pub(super) fn build(
    spec: &TableSpec,
    nowhere: &Arc<Upstream>,
    parts: &mut Parts<'_, impl BuildParts>,
    warnings: &mut Vec<BuildWarning>,
) -> PortTables {
    let mut tables = Vec::with_capacity(spec.ports.len());
    for (&port, hosts) in &spec.ports {
        let mut built = PortHosts::default();
        for vhost in &hosts.0 {
            let before = warnings.len();
            let routes = build_routes(vhost, nowhere, parts, warnings);
            let clean = warnings.len() == before;
            for (tls, side) in [(false, &mut built.plain), (true, &mut built.tls)] {
                if let Some(one) = VirtualHost::build(vhost, &routes, Some(tls), clean, parts, warnings) {
                    side.insert(&vhost.host, Arc::new(one));
                }
            }
        }
        tables.push((port, built));
    }
    tables
}

/// The counters of every extra port's routes: never taken over by the next table.
pub(super) fn stats(tables: &PortTables) -> impl Iterator<Item = RouteStats> + '_ {
    let vhosts = (tables.iter()).flat_map(|(_, hosts)| hosts.plain.iter().chain(hosts.tls.iter()));
    vhosts.flat_map(|vhost| vhost.routes.iter().map(stats_of))
}

// === impl RouteTable ===

impl RouteTable {
    /// The route for a request that arrived on the extra listener of `port`, over TLS or not:
    /// only that port's hosts exist there (no default backend: it is the Ingresses'), so a
    /// miss is `None`.
    pub fn lookup_port(&self, port: u16, tls: bool, host: &str, path: &str, facts: &impl Facts) -> Option<&Arc<Route>> {
        let (_, hosts) = self.ports.iter().find(|(known, _)| *known == port)?;
        let hosts = if tls { &hosts.tls } else { &hosts.plain };
        match hosts.find(host, path, facts) {
            Found::Route(route) => Some(route),
            Found::Stop | Found::Next => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::{
        metrics::{ProxyMetrics, UpstreamStats},
        routes::conditions::NoFacts,
        spec::{
            BackendSpec, HostMatch, Listeners, PathKind, PathSpec, PortHosts, RouteOptions, UpstreamProtocol,
            VirtualHostSpec,
        },
    };

    fn host(name: &str, backend: &str) -> Arc<VirtualHostSpec> {
        host_on(name, backend, Listeners::Both)
    }

    fn host_on(name: &str, backend: &str, listeners: Listeners) -> Arc<VirtualHostSpec> {
        let path = PathSpec {
            path: "/".into(),
            kind: PathKind::Prefix,
            backend: backend.into(),
            source: "ns/route".into(),
            ssl_redirect: false,
            options: Arc::new(RouteOptions {
                listeners,
                ..Default::default()
            }),
        };
        Arc::new(VirtualHostSpec {
            host: HostMatch::Exact(name.into()),
            paths: vec![path],
            exclusive: false,
        })
    }

    fn mk_table() -> RouteTable {
        let backend = || BackendSpec {
            protocol: UpstreamProtocol::Http1,
            endpoints: [].into(),
            topology: Default::default(),
            tls: None,
        };
        let backends: BTreeMap<_, _> = ["main", "extra", "default", "secure"]
            .map(|id| (id.to_string(), backend()))
            .into();
        let spec = TableSpec {
            hosts: vec![host("foo.com", "main")],
            default_backend: Some("default".into()),
            backends,
            ports: [
                (8080, PortHosts(vec![host("foo.com", "extra")])),
                (8443, PortHosts(vec![host_on("foo.com", "secure", Listeners::Tls)])),
            ]
            .into(),
            ..Default::default()
        };
        let metrics = ProxyMetrics::detached();
        let upstream = |id: &String| {
            Arc::new(Upstream::new(
                id,
                UpstreamProtocol::Http1,
                vec![],
                UpstreamStats::default(),
            ))
        };
        let (table, warnings) = RouteTable::build(Arc::new(spec), upstream, |route, backend| {
            metrics.route_stats(route, backend)
        });
        assert_eq!(warnings, vec![]);
        table
    }

    #[test]
    fn a_ports_hosts_exist_on_that_port_only() {
        let table = mk_table();
        let on_port = |port, host| {
            table
                .lookup_port(port, false, host, "/", &NoFacts)
                .map(|route| route.upstream.id.to_string())
        };
        let on_main = |host| table.lookup(host, "/").map(|route| route.upstream.id.to_string());
        assert_eq!(on_port(8080, "foo.com").as_deref(), Some("extra"));
        assert_eq!(on_main("foo.com").as_deref(), Some("main"));
        // No default backend on an extra port, and no port shunt was not given.
        assert_eq!(on_port(8080, "bar.com"), None);
        assert_eq!(on_port(8090, "foo.com"), None);
        assert_eq!(on_main("bar.com").as_deref(), Some("default"));
        // Built whole every time: never next to a previous table's hosts.
        assert!(!RouteTable::rebuilds_changed(&table.spec, &table));
    }

    #[test]
    fn a_ports_tls_listeners_routes_are_seen_over_tls_only() {
        let table = mk_table();
        let on = |port, tls| {
            (table.lookup_port(port, tls, "foo.com", "/", &NoFacts)).map(|route| route.upstream.id.to_string())
        };
        assert_eq!(on(8443, true).as_deref(), Some("secure"));
        assert_eq!(on(8443, false), None);
        // A route of both listeners is seen both ways.
        assert_eq!(on(8080, true).as_deref(), Some("extra"));
        assert_eq!(on(8080, false).as_deref(), Some("extra"));
    }
}
