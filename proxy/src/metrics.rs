//! Prometheus metrics for the data plane. Handles are made when a table is built and kept on
//! its routes and upstreams, so a request touches only atomics: no label lookup, no lock.
//!
//! ```text
//! publish ──▶ RouteStats / UpstreamStats (labels, empty cells) ──first request──▶ Family child
//!    └─ route or backend gone: retire() ──▶ Family::remove (its series leave /metrics)
//! ```
//! A series enters its family on its first use, not at publish: a scrape at 10,000 idle routes
//! stays small, and a route's series cost nothing until it serves. At scale every byte of a
//! series is paid once per route, so the defaults are one counter line per route and status
//! class (which also names the backend) and one latency sum per backend; the upstream latency
//! histogram is global, and per-route histograms wait for `--metrics-per-route-latency`.

mod choice;
mod histogram;
mod register;
pub mod scrape;
mod seconds;
mod upstream;

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use hyper::StatusCode;
use prometheus_client::{
    encoding::EncodeLabelSet,
    metrics::{counter::Counter, family::Family, gauge::Gauge},
    registry::Registry,
};

pub use histogram::Histogram;
pub use register::{gauge_value, register};
pub use seconds::Seconds;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: String,
    backend: String,
    code: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: String,
    backend: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BackendLabels {
    backend: String,
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
    /// A latency histogram per route (`shunt_route_response_seconds`): 19 series per active
    /// route, so off unless asked for.
    pub per_route_latency: bool,
}

/// Every family the data plane writes; shared by all handles.
struct Families {
    requests: Family<RequestLabels, Counter>,
    backend_seconds: Family<BackendLabels, Seconds>,
    route_latency: Option<Family<RouteLabels, Histogram>>,
    connect_errors: Family<BackendLabels, Counter>,
    pool_timeouts: Family<BackendLabels, Counter>,
    upstream: upstream::UpstreamFamilies,
    endpoints: Gauge,
    without_endpoints: Family<BackendLabels, Gauge>,
    publishes: Counter,
    dropped_fields: Counter,
    choice: choice::ChoiceFamilies,
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
    /// `host` + `path` as configured; empty for requests no route matched. Shared with the
    /// route's name: a table of 10k routes holds no second copy.
    route: Arc<str>,
    /// The backend the route forwards to (its upstream's id); none for redirects and no route.
    backend: Option<Arc<str>>,
    by_class: [OnceLock<Counter>; 6],
    latency: OnceLock<Histogram>,
}

/// What one backend records: its share of the response time, and rare failures.
#[derive(Clone)]
pub struct UpstreamStats(Arc<UpstreamSeries>);

struct UpstreamSeries {
    families: Arc<Families>,
    backend: String,
    seconds: OnceLock<Seconds>,
    connect_errors: OnceLock<Counter>,
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
    fn register(registry: &mut Registry, options: MetricsOptions) -> Self {
        let route_latency = options.per_route_latency.then(|| {
            register(
                registry,
                "shunt_route_response_seconds",
                "Time from a request's arrival to its response head, by route and backend (--metrics-per-route-latency)",
                Family::new_with_constructor(Histogram::latency as fn() -> Histogram),
            )
        });
        Families {
            requests: register(
                registry,
                "shunt_requests",
                "Responses sent, by route, the backend it forwards to and status class",
                Family::default(),
            ),
            backend_seconds: register(
                registry,
                "shunt_backend_response_seconds",
                "Time from a request's arrival to its response head, summed over the requests routed to a backend (divide by shunt_requests_total for the mean)",
                Family::default(),
            ),
            route_latency,
            connect_errors: register(
                registry,
                "shunt_upstream_connect_errors",
                "Failed connection attempts to backend endpoints",
                Family::default(),
            ),
            pool_timeouts: register(
                registry,
                "shunt_upstream_pool_timeouts",
                "Requests that waited for a free connection to an endpoint at its cap and got 503",
                Family::default(),
            ),
            upstream: upstream::UpstreamFamilies::register(registry),
            endpoints: register(
                registry,
                "shunt_endpoints",
                "Endpoints currently routed to, summed over backends",
                Gauge::default(),
            ),
            without_endpoints: register(
                registry,
                "shunt_backend_without_endpoints",
                "1 for each backend routed to that has no endpoints (its requests get 503)",
                Family::default(),
            ),
            publishes: register(
                registry,
                "shunt_table_publishes",
                "Route tables published",
                Counter::default(),
            ),
            dropped_fields: register(
                registry,
                "shunt_request_fields_dropped",
                "Request fields not forwarded because their names hold an underscore (--allow-underscores-in-headers keeps them)",
                Counter::default(),
            ),
            choice: choice::ChoiceFamilies::register(registry),
        }
    }

    /// Families in no registry.
    fn detached() -> Arc<Self> {
        Arc::new(Self::register(&mut Registry::default(), MetricsOptions::default()))
    }
}

// === impl ProxyMetrics ===

impl ProxyMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        Self::register_with(registry, MetricsOptions::default())
    }

    pub fn register_with(registry: &mut Registry, options: MetricsOptions) -> Self {
        let families = Arc::new(Families::register(registry, options));
        let unmatched = RouteStats::new(families.clone(), "".into(), None);
        ProxyMetrics { families, unmatched }
    }

    /// Metrics that go nowhere, for tests and tools.
    pub fn detached() -> Self {
        Self::register(&mut Registry::default())
    }

    /// The counters of the route `route` (`host` + `path`) forwarding to `backend` (none for
    /// redirects). Both names are shared, not copied.
    pub fn route_stats(&self, route: &Arc<str>, backend: Option<&Arc<str>>) -> RouteStats {
        RouteStats::new(self.families.clone(), route.clone(), backend.cloned())
    }

    /// Counts responses that matched no route (404s, 400s).
    pub fn unmatched(&self) -> &RouteStats {
        &self.unmatched
    }

    pub fn upstream_stats(&self, backend: &str) -> UpstreamStats {
        UpstreamStats::new(self.families.clone(), backend)
    }

    /// Keeps the endpoint series current: backends `gone` leave, `changed` ones (new, or a new
    /// endpoint count) are listed in `shunt_backend_without_endpoints` exactly when they have
    /// none, and `total` is the sum over every backend in the table.
    pub fn set_endpoints<'a>(
        &self,
        gone: impl Iterator<Item = &'a str>,
        changed: impl Iterator<Item = (&'a str, usize)>,
        total: usize,
    ) {
        let family = &self.families.without_endpoints;
        for backend in gone {
            family.remove(&BackendLabels {
                backend: backend.to_string(),
            });
        }
        for (backend, count) in changed {
            let labels = BackendLabels {
                backend: backend.to_string(),
            };
            if count == 0 {
                family.get_or_create(&labels).set(1);
            } else {
                family.remove(&labels);
            }
        }
        self.families.endpoints.set(gauge_value(total));
    }

    /// Counts request fields dropped for their names.
    pub fn dropped_fields(&self, count: usize) {
        self.families.dropped_fields.inc_by(count as u64);
    }

    pub fn record_publish(&self) {
        self.families.publishes.inc();
    }
}

// === impl RouteStats ===

impl RouteStats {
    fn new(families: Arc<Families>, route: Arc<str>, backend: Option<Arc<str>>) -> Self {
        RouteStats(Arc::new(RouteSeries {
            families,
            route,
            backend,
            by_class: Default::default(),
            latency: OnceLock::new(),
        }))
    }

    /// Counters attached to no registry.
    pub fn detached() -> Self {
        Self::new(Families::detached(), "".into(), None)
    }

    /// Counts a response and its time from the request's arrival to the response head.
    pub fn record(&self, status: StatusCode, elapsed: Duration) {
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

    /// The `(route, backend)` labels these counters were made for (backend empty for none).
    pub fn key(&self) -> (&str, &str) {
        self.0.key()
    }

    /// True when the route forwards to a backend, whose [`UpstreamStats`] then count it too.
    pub fn has_backend(&self) -> bool {
        self.0.backend.as_deref().is_some_and(|backend| !backend.is_empty())
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
            retire(&series.latency, family, &series.route_labels(), Histogram::latency);
        }
    }

    /// Requests whose client went away first (recorded as 499).
    pub fn client_aborts(&self) -> u64 {
        cell_value(&self.0.by_class[5])
    }
}

impl RouteSeries {
    fn key(&self) -> (&str, &str) {
        (&self.route, self.backend.as_deref().unwrap_or_default())
    }

    fn labels(&self, class: usize) -> RequestLabels {
        let (route, backend) = self.key();
        RequestLabels {
            route: route.to_string(),
            backend: backend.to_string(),
            code: CLASSES[class],
        }
    }

    fn route_labels(&self) -> RouteLabels {
        let (route, backend) = self.key();
        RouteLabels {
            route: route.to_string(),
            backend: backend.to_string(),
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
            seconds: OnceLock::new(),
            connect_errors: OnceLock::new(),
            pool_timeouts: OnceLock::new(),
        }))
    }

    /// Adds the time of a response sent for a request routed to this backend (the route
    /// counted the response itself).
    pub fn record(&self, elapsed: Duration) {
        let series = &*self.0;
        series
            .seconds
            .get_or_init(|| series.families.backend_seconds.get_or_create_owned(&series.labels()))
            .add(elapsed.as_secs_f64());
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

    /// Seconds recorded so far for this backend's responses.
    pub fn seconds(&self) -> f64 {
        self.0.seconds.get().map_or(0.0, Seconds::get)
    }

    /// Removes this backend's series from /metrics; later records go nowhere.
    pub fn retire(&self) {
        let series = &*self.0;
        let labels = series.labels();
        let families = &series.families;
        retire(&series.seconds, &families.backend_seconds, &labels, Seconds::default);
        retire(
            &series.connect_errors,
            &families.connect_errors,
            &labels,
            Counter::default,
        );
        retire(
            &series.pool_timeouts,
            &families.pool_timeouts,
            &labels,
            Counter::default,
        );
        families.choice.retire(&labels);
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
        Self::new(Families::detached(), "")
    }
}

impl std::fmt::Debug for UpstreamStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("UpstreamStats").field(&self.0.backend).finish()
    }
}

#[cfg(test)]
mod tests;
