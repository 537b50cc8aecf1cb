//! Prometheus metrics for the data plane. Handles are fetched when a table is built and kept on
//! its routes and upstreams, so a request touches only atomics, never a label lookup.

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
struct BackendLabels {
    backend: String,
}

fn latency_histogram() -> Histogram {
    // 0.5 ms .. ~16 s
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

#[derive(Clone)]
pub struct ProxyMetrics {
    requests: Family<RequestLabels, Counter>,
    upstream_latency: Family<BackendLabels, Histogram, fn() -> Histogram>,
    connect_errors: Family<BackendLabels, Counter>,
    upstream_connections: Family<BackendLabels, Gauge>,
    pool_timeouts: Family<BackendLabels, Counter>,
    endpoints: Family<BackendLabels, Gauge>,
    publishes: Counter,
    unmatched: RouteStats,
}

/// Responses of one route by status class, and client aborts (nginx's 499) on their own.
#[derive(Clone, Debug, Default)]
pub struct RouteStats {
    by_class: [Counter; 6],
}

/// What one backend records per request.
#[derive(Clone, Debug, Default)]
pub struct UpstreamStats {
    pub latency: LatencyHistogram,
    pub connect_errors: Counter,
    /// This process's open connections to the backend's endpoints.
    pub connections: Gauge,
    /// Requests that found the endpoint at its connection cap and gave up waiting (503).
    pub pool_timeouts: Counter,
}

/// A histogram handle that may be detached from any registry (tests, empty tables).
#[derive(Clone, Debug)]
pub struct LatencyHistogram(Histogram);

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram(latency_histogram())
    }
}

impl LatencyHistogram {
    pub fn observe(&self, seconds: f64) {
        self.0.observe(seconds);
    }
}

/// `499` (the client went away before the response) is kept apart from the `4xx` we answer.
const CLASSES: [&str; 6] = ["1xx", "2xx", "3xx", "4xx", "5xx", "499"];
const CLIENT_CLOSED: u16 = 499;

// === impl ProxyMetrics ===

impl ProxyMetrics {
    pub fn register(registry: &mut Registry) -> Self {
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "shunt_requests",
            "Responses sent, by route and status class",
            requests.clone(),
        );
        let upstream_latency = Family::new_with_constructor(latency_histogram as fn() -> Histogram);
        registry.register(
            "shunt_upstream_response_seconds",
            "Time from sending a request upstream to its response head",
            upstream_latency.clone(),
        );
        let connect_errors = Family::<BackendLabels, Counter>::default();
        registry.register(
            "shunt_upstream_connect_errors",
            "Failed connection attempts to backend endpoints",
            connect_errors.clone(),
        );
        let upstream_connections = Family::<BackendLabels, Gauge>::default();
        registry.register(
            "shunt_upstream_connections",
            "Open connections to backend endpoints",
            upstream_connections.clone(),
        );
        let pool_timeouts = Family::<BackendLabels, Counter>::default();
        registry.register(
            "shunt_upstream_pool_timeouts",
            "Requests that waited for a free connection to an endpoint at its cap and got 503",
            pool_timeouts.clone(),
        );
        let endpoints = Family::<BackendLabels, Gauge>::default();
        registry.register(
            "shunt_backend_endpoints",
            "Endpoints currently routed to, by backend",
            endpoints.clone(),
        );
        let publishes = Counter::default();
        registry.register("shunt_table_publishes", "Route tables published", publishes.clone());
        let mut metrics = ProxyMetrics {
            requests,
            upstream_latency,
            connect_errors,
            upstream_connections,
            pool_timeouts,
            endpoints,
            publishes,
            unmatched: RouteStats::default(),
        };
        metrics.unmatched = metrics.route_stats("", "");
        metrics
    }

    /// Metrics that go nowhere, for tests and tools.
    pub fn detached() -> Self {
        Self::register(&mut Registry::default())
    }

    pub fn route_stats(&self, route: &str, ingress: &str) -> RouteStats {
        let by_class = CLASSES.map(|code| {
            let labels = RequestLabels {
                route: route.to_string(),
                ingress: ingress.to_string(),
                code,
            };
            self.requests.get_or_create(&labels).clone()
        });
        RouteStats { by_class }
    }

    /// Counts responses that matched no route (404s, 400s).
    pub fn unmatched(&self) -> &RouteStats {
        &self.unmatched
    }

    pub fn upstream_stats(&self, backend: &str) -> UpstreamStats {
        let labels = BackendLabels {
            backend: backend.to_string(),
        };
        UpstreamStats {
            latency: LatencyHistogram(self.upstream_latency.get_or_create(&labels).clone()),
            connect_errors: self.connect_errors.get_or_create(&labels).clone(),
            connections: self.upstream_connections.get_or_create(&labels).clone(),
            pool_timeouts: self.pool_timeouts.get_or_create(&labels).clone(),
        }
    }

    /// Replaces the endpoint gauges with the new table's backends.
    pub fn set_endpoints<'a>(
        &self,
        previous: impl Iterator<Item = &'a str>,
        current: impl Iterator<Item = (&'a str, usize)>,
    ) {
        for backend in previous {
            self.endpoints.remove(&BackendLabels {
                backend: backend.to_string(),
            });
        }
        for (backend, count) in current {
            let count = i64::try_from(count).unwrap_or(i64::MAX);
            self.endpoints
                .get_or_create(&BackendLabels {
                    backend: backend.to_string(),
                })
                .set(count);
        }
    }

    pub fn record_publish(&self) {
        self.publishes.inc();
    }
}

// === impl RouteStats ===

impl RouteStats {
    /// Counters attached to no registry.
    pub fn detached() -> Self {
        Self::default()
    }

    pub fn record(&self, status: StatusCode) {
        let index = match status.as_u16() {
            CLIENT_CLOSED => 5,
            code => usize::from(code / 100).clamp(1, 5) - 1,
        };
        self.by_class[index].inc();
    }

    /// Responses counted so far with this status class (1..=5).
    pub fn count(&self, class: usize) -> u64 {
        self.by_class[class.clamp(1, 5) - 1].get()
    }

    /// Requests whose client went away first (recorded as 499).
    pub fn client_aborts(&self) -> u64 {
        self.by_class[5].get()
    }
}
