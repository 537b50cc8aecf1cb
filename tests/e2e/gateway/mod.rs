//! shunt as a Gateway API implementation, end to end: each test reproduces one test of the
//! upstream conformance suite (kubernetes-sigs/gateway-api v1.6.1, `conformance/tests/`,
//! profile GATEWAY-HTTP) and names it. The suite's base objects are stood in for by [`BASE`]:
//! shunt's GatewayClass, the Gateways `same-namespace` and `all-namespaces`, and echo pods
//! behind the Services `infra-backend-v1`..`v3` (port 8080) of `gateway-conformance-infra` and
//! `web-backend` of `gateway-conformance-web-backend`, `app-backend-v1`/`v2` of
//! `gateway-conformance-app-backend`. Routes are the suite's, rewritten as
//! flow YAML.
//!
//! ```text
//! BASE + the test's routes ─▶ shunt serve --manifests ─▶ requests as the suite sends them
//!                                                     └▶ GET /gateway: the status it would write
//! ```

mod backends;
mod cors;
mod filters;
mod grpc;
mod hostnames;
mod https;
mod matching;
mod mirror;
mod parents;
mod ports;
mod redirect_ports;
mod references;
mod selector;
mod timeouts;

use http::{Method, Request, StatusCode};
use serde_json::{Value, json};

use crate::support::*;

pub const INFRA: &str = "gateway-conformance-infra";
pub const WEB: &str = "gateway-conformance-web-backend";
pub const APP: &str = "gateway-conformance-app-backend";

/// shunt's GatewayClass and the suite's two plain-HTTP Gateways.
const BASE: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shunt}
spec: {controllerName: shunt.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: gateway-conformance-infra, name: same-namespace}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: Same}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: gateway-conformance-infra, name: all-namespaces}
spec:
  gatewayClassName: shunt
  listeners: [{name: http, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}]
"#;

/// The echo pods, [`BASE`], the test's objects, and shunt serving them.
pub struct Conformance {
    /// The echo pods by Service name.
    backends: Vec<(&'static str, Backend)>,
    manifests: Manifests,
    pub shunt: Shunt,
}

impl Conformance {
    pub async fn start(objects: &str) -> Conformance {
        Self::start_with(objects, &[], &["http", "https", "admin"]).await
    }

    /// [`Conformance::start`] with shunt given `args` and awaiting `listeners` (see
    /// [`Shunt::start_listening`]).
    pub async fn start_with(objects: &str, args: &[&str], listeners: &'static [&'static str]) -> Conformance {
        let mut backends = Vec::new();
        let mut services = Vec::new();
        for (namespace, name) in [
            (INFRA, "infra-backend-v1"),
            (INFRA, "infra-backend-v2"),
            (INFRA, "infra-backend-v3"),
            (WEB, "web-backend"),
            (APP, "app-backend-v1"),
            (APP, "app-backend-v2"),
        ] {
            let backend = Backend::http1(name)
                .handler(move |req| suite_echo(name, req))
                .start()
                .await;
            services.push(json!({
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"namespace": namespace, "name": name},
                "spec": {"ports": [{"name": "http", "port": 8080}]},
            }));
            services.extend(
                mk_slice(namespace, name, backend.port())
                    .port_name("http")
                    .ready("127.0.0.1")
                    .documents(),
            );
            backends.push((name, backend));
        }
        let manifests = Manifests::new();
        manifests.write("backends.yaml", &[&services]);
        manifests.write_text("gateway.yaml", &format!("{BASE}\n---\n{objects}"));
        let shunt = Shunt::start_listening(manifests.path(), args, listeners).await;
        Conformance {
            backends,
            manifests,
            shunt,
        }
    }

    /// The port echo pod `name` listens on (for EndpointSlices a test writes itself).
    pub fn port_of(&self, name: &str) -> u16 {
        let found = self.backends.iter().find(|(service, _)| *service == name);
        found.expect("an echo pod of the suite").1.port()
    }

    /// How many requests echo pod `name` has had.
    pub fn hits(&self, name: &str) -> usize {
        let found = self.backends.iter().find(|(service, _)| *service == name);
        found.expect("an echo pod of the suite").1.hits()
    }

    /// Replaces the test's objects (what `start` was given).
    pub fn rewrite(&self, objects: &str) {
        self.manifests
            .write_text("gateway.yaml", &format!("{BASE}\n---\n{objects}"));
    }

    /// Each `(request, backend)` must reach that echo pod.
    pub async fn expect_backends(&self, cases: &[(Request<Body>, &str)]) {
        for (request, backend) in cases {
            let what = format!("{} {} {:?}", request.method(), request.uri(), request.headers());
            let reply = self.shunt.send(clone(request)).await;
            assert_eq!(reply.status, StatusCode::OK, "{what}: {}", reply.text());
            assert_eq!(reply.backend(), *backend, "{what}");
        }
    }

    /// `GET /gateway`.
    pub async fn status(&self) -> Value {
        self.shunt.admin("/gateway").await.json()
    }

    /// `attachedRoutes` of each listener of Gateway `name`, in order.
    pub async fn attached_routes(&self, name: &str) -> Vec<u64> {
        let status = self.status().await;
        let gateways = status["gateways"].as_array().expect("gateways");
        let gateway = gateways.iter().find(|g| g["name"] == name).expect("the Gateway");
        let listeners = gateway["listeners"].as_array().expect("listeners");
        listeners
            .iter()
            .map(|l| l["attachedRoutes"].as_u64().expect("attachedRoutes"))
            .collect()
    }

    /// `(type, status, reason)` of `route`'s parent `gateway`'s conditions.
    pub async fn parent_conditions(&self, route: &str, gateway: &str) -> Vec<(String, String, String)> {
        let status = self.status().await;
        let routes = status["routes"].as_array().expect("routes");
        let route = routes
            .iter()
            .find(|entry| entry["name"] == route)
            .expect("the route's status");
        let parents = route["parents"].as_array().expect("parents");
        let parent = parents
            .iter()
            .find(|p| p["parentRef"]["name"] == gateway)
            .expect("the parent");
        let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
        let conditions = parent["conditions"].as_array().expect("conditions");
        conditions
            .iter()
            .map(|c| (text(&c["type"]), text(&c["status"]), text(&c["reason"])))
            .collect()
    }
}

pub fn condition(type_: &str, status: &str, reason: &str) -> (String, String, String) {
    (type_.to_string(), status.to_string(), reason.to_string())
}

/// A request as the suite sends it: method, host, path (with query), headers.
pub fn request(method: &str, host: &str, path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut builder = Request::builder()
        .method(Method::from_bytes(method.as_bytes()).expect("a method"))
        .uri(path)
        .header("host", host);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(full(bytes::Bytes::new())).expect("a valid request")
}

pub fn get_on(host: &str, path: &str) -> Request<Body> {
    request("GET", host, path, &[])
}

/// The echo pod as the suite's: `?delay=<n>ms|<n>s` waits that long before answering.
async fn suite_echo(name: &'static str, req: Request<hyper::body::Incoming>) -> http::Response<Body> {
    let query = req.uri().query().unwrap_or_default();
    let delay = query.split('&').find_map(|pair| pair.strip_prefix("delay="));
    let parsed = delay.and_then(|text| match text.strip_suffix("ms") {
        Some(millis) => millis.parse().ok().map(std::time::Duration::from_millis),
        None => text.strip_suffix('s')?.parse().ok().map(std::time::Duration::from_secs),
    });
    if let Some(delay) = parsed {
        tokio::time::sleep(delay).await;
    }
    echo(name.to_string(), req).await
}

/// A bodiless request again (requests are not `Clone`).
fn clone(request: &Request<Body>) -> Request<Body> {
    let mut builder = Request::builder().method(request.method()).uri(request.uri());
    for (name, value) in request.headers() {
        builder = builder.header(name, value);
    }
    builder.body(full(bytes::Bytes::new())).expect("a valid request")
}
