//! Prometheus metrics for the data plane. Handles are made when a table is built and kept on
//! its routes and upstreams, so a request touches only atomics, never a label lookup.
//!
//! ```text
//! publish ──▶ RouteStats / UpstreamStats (labels, empty cells) ──first request──▶ Family child
//!    └─ route or backend gone: retire() ──▶ Family::remove (its series leave /metrics)
//! ```
//! A series enters its family on its first use, not at publish: a scrape at 10,000 idle routes
//! stays small, and a route's series cost nothing until it serves.

use std::sync::{Arc, OnceLock};

use hyper::StatusCode;
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{Histogram, exponential_buckets},
    },
    registry::Registry,
};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    ingress: String,
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    ingress: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendLabels {
    backend: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendClassLabels {
    backend: String,
    code: &'static str,
}

fn latency_histogram() -> Histogram {
    // 0.5 ms .. ~16 s
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

/// `499` (the client went away before the response, as nginx logs it) is kept apart from the
/// `4xx` we answer ourselves.
const CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "499"];
const CLIENT_CLOSED: u16 = 499;

fn class_index(status: StatusCode) -> usize {
    match status.as_u16() {
        CLIENT_CLOSED => 5,
        code => usize::from(code / 100).clamp(1, 5) - 1,
    }
}

/// What the data plane records beyond the defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetricsOptions {
    /// A latency histogram per route (`shunt_route_response_seconds`): about 20 series per
    /// active route, so off unless asked for.
    pub per_route_latency: bool,
}

/// Every family the data plane writes; shared by all handles.
struct Families {
    requests: Family<RequestLabels, Counter>,
    route_latency: Option<Family<RouteLabels, Histogram>>,
    backend_responses: Family<BackendClassLabels, Counter>,
    upstream_latency: Family<BackendLabels, Histogram>,
    connect_errors: Family<BackendLabels, Counter>,
    upstream_connections: Family<BackendLabels, Gauge>,
    pool_timeouts: Family<BackendLabels, Counter>,
    endpoints: Family<BackendLabels, Gauge>,
    publishes: Counter,
}

#[derive(Clone)]
pub struct ProxyMetrics {
    families: Arc<Families>,
    unmatched: RouteStats,
}

/// Responses of one route by status class (and its latency with `per_route_latency`).
#[derive(Clone)]
pub struct RouteStats(Arc<RouteSeries>);

struct RouteSeries {
    families: Arc<Families>,
    route: String,
    ingress: String,
    by_class: [OnceLock<Counter>; 6],
    latency: OnceLock<Histogram>,
}

/// What one backend records per request.
#[derive(Clone)]
pub struct UpstreamStats(Arc<UpstreamSeries>);

struct UpstreamSeries {
    families: Arc<Families>,
    backend: String,
    by_class: [OnceLock<Counter>; 6],
    latency: OnceLock<Histogram>,
    connect_errors: OnceLock<Counter>,
    /// Open connections to the backend's endpoints; the pool holds a clone for each
    /// connection's life, so one made before a retire still counts down after it.
    connections: OnceLock<Gauge>,
    pool_timeouts: OnceLock<Counter>,
}

/// The series' value: its family's child once used (or retired), else nothing yet.
fn cell_value(cell: &OnceLock<Counter>) -> u64 {
    cell.get().map_or(0, Counter::get)
}

/// Detaches `cell` for good, then drops `labels` from `family`. Filling the cell first means a
/// request of an older table still in flight cannot put the series back after the removal.
fn retire<L, M>(cell: &OnceLock<M>, family: &Family<L, M>, labels: &L, detached: fn() -> M)
where
    L: Clone + std::hash::Hash + Eq,
{
    cell.get_or_init(detached);
    family.remove(labels);
}

// === impl Families ===

impl Families {
    fn new(options: MetricsOptions) -> Self {
        Families {
            requests: Family::default(),
            route_latency: options
                .per_route_latency
                .then(|| Family::new_with_constructor(latency_histogram as fn() -> Histogram)),
            backend_responses: Family::default(),
            upstream_latency: Family::new_with_constructor(latency_histogram as fn() -> Histogram),
            connect_errors: Family::default(),
            upstream_connections: Family::default(),
            pool_timeouts: Family::default(),
            endpoints: Family::default(),
            publishes: Counter::default(),
        }
    }

    fn register(&self, registry: &mut Registry) {
        registry.register(
            "shunt_requests",
            "Responses sent, by route and status class",
            self.requests.clone(),
        );
        if let Some(route_latency) = &self.route_latency {
            registry.register(
                "shunt_route_response_seconds",
                "Time from a request's arrival to its response head, by route",
                route_latency.clone(),
            );
        }
        registry.register(
            "shunt_backend_responses",
            "Responses sent for requests routed to a backend, by status class",
            self.backend_responses.clone(),
        );
        registry.register(
            "shunt_upstream_response_seconds",
            "Time from sending a request upstream to its response head",
            self.upstream_latency.clone(),
        );
        registry.register(
            "shunt_upstream_connect_errors",
            "Failed connection attempts to backend endpoints",
            self.connect_errors.clone(),
        );
        registry.register(
            "shunt_upstream_connections",
            "Open connections to backend endpoints, by backend",
            self.upstream_connections.clone(),
        );
        registry.register(
            "shunt_upstream_pool_timeouts",
            "Requests that waited for a free connection to an endpoint at its cap and got 503",
            self.pool_timeouts.clone(),
        );
        registry.register(
            "shunt_backend_endpoints",
            "Endpoints currently routed to, by backend",
            self.endpoints.clone(),
        );
        registry.register(
            "shunt_table_publishes",
            "Route tables published",
            self.publishes.clone(),
        );
    }
}

// === impl ProxyMetrics ===

impl ProxyMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        Self::register_with(registry, MetricsOptions::default())
    }

    pub fn register_with(registry: &mut Registry, options: MetricsOptions) -> Self {
        let families = Arc::new(Families::new(options));
        families.register(registry);
        let unmatched = RouteStats::new(families.clone(), "", "");
        ProxyMetrics { families, unmatched }
    }

    /// Metrics that go nowhere, for tests and tools.
    pub fn detached() -> Self {
        Self::register(&mut Registry::default())
    }

    pub fn route_stats(&self, route: &str, ingress: &str) -> RouteStats {
        RouteStats::new(self.families.clone(), route, ingress)
    }

    /// Counts responses that matched no route (404s, 400s).
    pub fn unmatched(&self) -> &RouteStats {
        &self.unmatched
    }

    pub fn upstream_stats(&self, backend: &str) -> UpstreamStats {
        UpstreamStats::new(self.families.clone(), backend)
    }

    /// Sets the endpoint gauges: backends gone lose theirs, the others get their new count.
    pub fn set_endpoints<'a>(
        &self,
        previous: impl Iterator<Item = &'a str>,
        current: impl Iterator<Item = (&'a str, usize)>,
    ) {
        for backend in previous {
            self.families.endpoints.remove(&BackendLabels {
                backend: backend.to_string(),
            });
        }
        for (backend, count) in current {
            let count = i64::try_from(count).unwrap_or(i64::MAX);
            self.families
                .endpoints
                .get_or_create(&BackendLabels {
                    backend: backend.to_string(),
                })
                .set(count);
        }
    }

    pub fn record_publish(&self) {
        self.families.publishes.inc();
    }
}

// === impl RouteStats ===

impl RouteStats {
    fn new(families: Arc<Families>, route: &str, ingress: &str) -> Self {
        RouteStats(Arc::new(RouteSeries {
            families,
            route: route.to_string(),
            ingress: ingress.to_string(),
            by_class: Default::default(),
            latency: OnceLock::new(),
        }))
    }

    /// Counters attached to no registry.
    pub fn detached() -> Self {
        Self::new(Arc::new(Families::new(MetricsOptions::default())), "", "")
    }

    /// Counts a response; `elapsed` goes to the route's histogram when there is one.
    pub fn record(&self, status: StatusCode, elapsed: std::time::Duration) {
        let series = &*self.0;
        let class = class_index(status);
        series.by_class[class]
            .get_or_init(|| series.families.requests.get_or_create_owned(&series.labels(class)))
            .inc();
        if let Some(family) = &series.families.route_latency {
            series
                .latency
                .get_or_init(|| family.get_or_create_owned(&series.route_labels()))
                .observe(elapsed.as_secs_f64());
        }
    }

    /// Responses counted so far with this status class (1..=5).
    pub fn count(&self, class: usize) -> u64 {
        cell_value(&self.0.by_class[class.clamp(1, 5) - 1])
    }

    /// Removes this route's series from /metrics; later records go nowhere.
    pub fn retire(&self) {
        let series = &*self.0;
        for (class, cell) in series.by_class.iter().enumerate() {
            retire(cell, &series.families.requests, &series.labels(class), Counter::default);
        }
        if let Some(family) = &series.families.route_latency {
            retire(&series.latency, family, &series.route_labels(), latency_histogram);
        }
    }

    /// Requests whose client went away first (recorded as 499).
    pub fn client_aborts(&self) -> u64 {
        cell_value(&self.0.by_class[5])
    }
}

impl RouteSeries {
    fn labels(&self, class: usize) -> RequestLabels {
        RequestLabels {
            route: self.route.clone(),
            ingress: self.ingress.clone(),
            code: CLASSES[class],
        }
    }

    fn route_labels(&self) -> RouteLabels {
        RouteLabels {
            route: self.route.clone(),
            ingress: self.ingress.clone(),
        }
    }
}

impl Default for RouteStats {
    fn default() -> Self {
        Self::detached()
    }
}

impl std::fmt::Debug for RouteStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RouteStats").field(&self.0.route).finish()
    }
}

// === impl UpstreamStats ===

impl UpstreamStats {
    fn new(families: Arc<Families>, backend: &str) -> Self {
        UpstreamStats(Arc::new(UpstreamSeries {
            families,
            backend: backend.to_string(),
            by_class: Default::default(),
            latency: OnceLock::new(),
            connect_errors: OnceLock::new(),
            connections: OnceLock::new(),
            pool_timeouts: OnceLock::new(),
        }))
    }

    /// Counts a response sent for a request routed to this backend.
    pub fn record(&self, status: StatusCode) {
        let series = &*self.0;
        let class = class_index(status);
        series.by_class[class]
            .get_or_init(|| {
                series
                    .families
                    .backend_responses
                    .get_or_create_owned(&BackendClassLabels {
                        backend: series.backend.clone(),
                        code: CLASSES[class],
                    })
            })
            .inc();
    }

    /// Time from sending a request upstream to its response head.
    pub fn observe_latency(&self, seconds: f64) {
        let series = &*self.0;
        series
            .latency
            .get_or_init(|| series.families.upstream_latency.get_or_create_owned(&series.labels()))
            .observe(seconds);
    }

    /// The gauge of open connections, entered in `/metrics` from the first connection on.
    pub fn connections(&self) -> Gauge {
        let series = &*self.0;
        series
            .connections
            .get_or_init(|| {
                series
                    .families
                    .upstream_connections
                    .get_or_create_owned(&series.labels())
            })
            .clone()
    }

    /// A request gave up waiting for a free connection at the endpoint's cap.
    pub fn pool_timeout(&self) {
        let series = &*self.0;
        series
            .pool_timeouts
            .get_or_init(|| series.families.pool_timeouts.get_or_create_owned(&series.labels()))
            .inc();
    }

    pub fn connect_error(&self) {
        let series = &*self.0;
        series
            .connect_errors
            .get_or_init(|| series.families.connect_errors.get_or_create_owned(&series.labels()))
            .inc();
    }

    /// Responses counted so far with this status class (1..=5).
    pub fn count(&self, class: usize) -> u64 {
        cell_value(&self.0.by_class[class.clamp(1, 5) - 1])
    }

    /// Removes this backend's series from /metrics; later records go nowhere.
    pub fn retire(&self) {
        let series = &*self.0;
        for (class, cell) in series.by_class.iter().enumerate() {
            let labels = BackendClassLabels {
                backend: series.backend.clone(),
                code: CLASSES[class],
            };
            retire(cell, &series.families.backend_responses, &labels, Counter::default);
        }
        let labels = series.labels();
        retire(
            &series.latency,
            &series.families.upstream_latency,
            &labels,
            latency_histogram,
        );
        retire(
            &series.connect_errors,
            &series.families.connect_errors,
            &labels,
            Counter::default,
        );
        retire(
            &series.pool_timeouts,
            &series.families.pool_timeouts,
            &labels,
            Counter::default,
        );
        retire(
            &series.connections,
            &series.families.upstream_connections,
            &labels,
            Gauge::default,
        );
    }
}

impl UpstreamSeries {
    fn labels(&self) -> BackendLabels {
        BackendLabels {
            backend: self.backend.clone(),
        }
    }
}

impl Default for UpstreamStats {
    fn default() -> Self {
        Self::new(Arc::new(Families::new(MetricsOptions::default())), "")
    }
}

impl std::fmt::Debug for UpstreamStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("UpstreamStats").field(&self.0.backend).finish()
    }
}

#[cfg(test)]
mod tests;
