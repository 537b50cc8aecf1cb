//! A Kubernetes API server on loopback, with just enough of the wire protocol for `shunt run`:
//! LIST and WATCH (chunked newline-delimited JSON) for the watched kinds, GET/POST/PUT/PATCH for
//! Leases, Ingress status and Events, and faults the tests switch on.
//!
//! ```text
//! shunt run ──HTTP/1.1──▶ accept loop (stop/restart on the same port)
//!                            └▶ handle: record request ─▶ faults? ─▶ LIST | WATCH | GET | POST | PUT | PATCH
//!                                                                         └ Store (one resourceVersion counter)
//! ```
//! Every request is logged to the test's stderr and kept in [`ApiServer::requests`].
//!
//! Only for what a real kube-apiserver cannot stage on demand: black-holed or stalled
//! connections, slow or malformed answers, a forced `410 Gone`, held-back lists, and the exact log
//! of requests (the RBAC rules are checked against it verb by verb). It validates little and
//! authorizes nothing, so behaviour the API server judges (names, RBAC, conflicts, admission) is
//! tested on the real one (`real/envtest`, the `real::` tests).

mod listwatch;
mod request;
mod store;

use std::{
    collections::{BTreeMap, BTreeSet},
    convert::Infallible,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::{body::Incoming, service::service_fn};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use tokio::{
    net::TcpSocket,
    sync::watch,
    task::{JoinHandle, JoinSet},
    time::Instant,
};

use self::{
    request::{Params, parse_path},
    store::{Key, Refused, Resource, Store},
};

pub type Body = BoxBody<Bytes, Infallible>;

/// The running server; stops listening when dropped.
pub struct ApiServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Mutex<Option<JoinHandle<()>>>,
}

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// The bearer token, which each test kubeconfig sets to the replica's identity.
    pub who: String,
    pub method: Method,
    pub path: String,
    pub query: String,
    pub body: Value,
    /// 0 while the request is still being answered.
    pub status: u16,
    /// When it arrived.
    pub at: Instant,
    /// When it arrived, by the wall clock shunt's log lines use.
    pub wall: k8s_openapi::jiff::Timestamp,
}

/// How a watch is told its resourceVersion is too old.
#[derive(Clone, Copy, Debug)]
pub enum Gone {
    /// HTTP 200, then one `ERROR` event carrying a `Status` with code 410 (what kube-apiserver does).
    Event,
    /// The watch request itself answered `410 Gone`.
    Http,
}

pub(super) struct Shared {
    pub(super) store: Store,
    pub(super) requests: Mutex<Vec<Recorded>>,
    pub(super) faults: Mutex<Faults>,
    /// Bumped to end every open watch stream.
    pub(super) cut: watch::Sender<u64>,
    /// Kinds (plurals) whose LIST waits until they leave this set.
    pub(super) held: watch::Sender<BTreeSet<&'static str>>,
}

#[derive(Default)]
pub(super) struct Faults {
    /// Every request gets 500.
    pub(super) failing: bool,
    /// The next watches are answered as Gone, oldest first.
    pub(super) gone: Vec<Gone>,
    /// Watches of these kinds (plurals) deliver each change this late, as a loaded server does.
    pub(super) lag: BTreeMap<&'static str, Duration>,
    /// Requests of a kind (plural), from one client (`who`) or from all (`None`), are slowed.
    pub(super) stalls: Vec<(&'static str, Option<String>, Stall)>,
}

/// How [`ApiServer::stall`] slows a kind's requests down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stall {
    /// Not answered while the stall lasts (at most [`BLACK_HOLE_LIMIT`]): a black-holed connection.
    BlackHole,
    /// A random wait of up to `max` before the request is handled, and another after, so a write
    /// may be stored long before its client hears of it.
    Random { max: Duration },
}

/// A black-holed request is answered 504 after this, so no test hangs on one forever.
const BLACK_HOLE_LIMIT: Duration = Duration::from_secs(120);

// === impl Recorded ===

impl Recorded {
    /// Answered with a 2xx.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn is_watch(&self) -> bool {
        self.method == Method::GET
            && self
                .query
                .split('&')
                .any(|pair| pair == "watch=true" || pair == "watch=1")
    }

    /// A LIST (not a watch) of this kind, in any namespace.
    pub fn is_list_of(&self, plural: &str) -> bool {
        self.method == Method::GET && !self.is_watch() && self.path.ends_with(&format!("/{plural}"))
    }

    pub fn is_watch_of(&self, plural: &str) -> bool {
        self.is_watch() && self.path.ends_with(&format!("/{plural}"))
    }

    /// The Ingress (`namespace/name`) whose status this request writes.
    pub fn ingress_status_write(&self) -> Option<String> {
        let rest = self.path.strip_prefix("/apis/networking.k8s.io/v1/namespaces/")?;
        let (namespace, rest) = rest.split_once("/ingresses/")?;
        let name = rest.strip_suffix("/status")?;
        matches!(self.method, Method::PUT | Method::PATCH).then(|| format!("{namespace}/{name}"))
    }
}

// === impl ApiServer ===

impl ApiServer {
    pub fn start() -> ApiServer {
        let (cut, _) = watch::channel(0);
        let (held, _) = watch::channel(BTreeSet::new());
        let shared = Arc::new(Shared {
            store: Store::default(),
            requests: Mutex::default(),
            faults: Mutex::default(),
            cut,
            held,
        });
        let (addr, accept) = listen(SocketAddr::from(([127, 0, 0, 1], 0)), shared.clone());
        ApiServer {
            addr,
            shared,
            accept: Mutex::new(Some(accept)),
        }
    }

    /// Creates or replaces an object as another client would (a watch sees ADDED or MODIFIED).
    /// Returns it as stored, with its new resourceVersion.
    pub fn apply(&self, object: Value) -> Value {
        self.shared.store.apply(object)
    }

    pub fn delete(&self, kind: &str, namespace: &str, name: &str) {
        let key = Key::new(Resource::by_kind(kind), namespace, name);
        self.shared
            .store
            .delete(&key)
            .unwrap_or_else(|| panic!("no {kind} {namespace}/{name} to delete"));
    }

    pub fn get(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        self.shared
            .store
            .get(&Key::new(Resource::by_kind(kind), namespace, name))
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("requests lock").clone()
    }

    /// Ends every open watch stream cleanly, as an API server restart or a load balancer would.
    pub fn cut_watches(&self) {
        self.shared.cut.send_modify(|epoch| *epoch += 1);
    }

    /// Answers the next `count` watches as Gone (410), so their clients must list again.
    pub fn gone_next_watches(&self, count: usize, how: Gone) {
        self.shared
            .faults
            .lock()
            .expect("faults lock")
            .gone
            .extend(std::iter::repeat_n(how, count));
    }

    /// How many of the watches [`ApiServer::gone_next_watches`] asked for are still to come.
    pub fn gone_pending(&self) -> usize {
        self.shared.faults.lock().expect("faults lock").gone.len()
    }

    /// Delivers every later change of this kind (plural) to watches `lag` after it was made.
    pub fn lag_watches(&self, plural: &'static str, lag: Duration) {
        self.shared.faults.lock().expect("faults lock").lag.insert(plural, lag);
    }

    /// Slows down requests for `plural` from `who` (every client when `None`); see [`Stall`].
    pub fn stall(&self, plural: &'static str, who: Option<&str>, stall: Stall) {
        let mut faults = self.shared.faults.lock().expect("faults lock");
        faults.stalls.push((plural, who.map(str::to_string), stall));
    }

    /// Ends every stall; black-holed requests are answered now.
    pub fn unstall(&self) {
        self.shared.faults.lock().expect("faults lock").stalls.clear();
    }

    /// While set, every request gets `500 Internal Server Error`.
    pub fn set_failing(&self, failing: bool) {
        self.shared.faults.lock().expect("faults lock").failing = failing;
    }

    /// Holds back LIST answers for this kind (plural) until [`ApiServer::release_lists`].
    pub fn hold_lists(&self, plural: &'static str) {
        self.shared.held.send_modify(|held| {
            held.insert(plural);
        });
    }

    pub fn release_lists(&self) {
        self.shared.held.send_modify(BTreeSet::clear);
    }

    /// Stops listening and drops every open connection: clients get connection refused.
    pub fn stop(&self) {
        if let Some(accept) = self.accept.lock().expect("accept lock").take() {
            accept.abort();
        }
        eprintln!("apiserver: stopped listening on {}", self.addr);
    }

    /// Listens again on the same port.
    pub fn restart(&self) {
        let (addr, accept) = listen(self.addr, self.shared.clone());
        assert_eq!(addr, self.addr);
        *self.accept.lock().expect("accept lock") = Some(accept);
        eprintln!("apiserver: listening again on {addr}");
    }

    /// Writes a kubeconfig for this server into `dir`, authenticating as `identity` (a bearer
    /// token, so the server can tell replicas apart).
    pub fn kubeconfig(&self, dir: &Path, identity: &str) -> PathBuf {
        let path = dir.join(format!("kubeconfig-{identity}.yaml"));
        let config = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n\
             clusters:\n- name: fake\n  cluster:\n    server: http://{addr}\n\
             users:\n- name: {identity}\n  user:\n    token: {identity}\n\
             contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: {identity}\n    namespace: default\n",
            addr = self.addr,
        );
        std::fs::write(&path, config).expect("writing the kubeconfig");
        path
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        if let Some(accept) = self.accept.lock().ok().and_then(|mut accept| accept.take()) {
            accept.abort();
        }
    }
}

/// Binds `addr` (port 0 for any) and serves it until the returned task is aborted; aborting it
/// also drops every connection it accepted.
fn listen(addr: SocketAddr, shared: Arc<Shared>) -> (SocketAddr, JoinHandle<()>) {
    let socket = TcpSocket::new_v4().expect("a socket");
    // Restarting on the same port while old connections linger in TIME_WAIT.
    socket.set_reuseaddr(true).expect("SO_REUSEADDR");
    socket
        .bind(addr)
        .unwrap_or_else(|error| panic!("binding the fake API server to {addr}: {error}"));
    let listener = socket.listen(128).expect("listening");
    let addr = listener.local_addr().expect("a bound address");
    let accept = tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            // An accept error on loopback is unexpected: stop, so the test fails on it.
            let Ok((stream, _)) = listener.accept().await else {
                break;
            };
            let shared = shared.clone();
            connections.spawn(async move {
                let service = service_fn(move |req| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(handle(shared, req).await) }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .http1_only()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
            // Reap finished connections so the set does not grow for the whole test.
            while connections.try_join_next().is_some() {}
        }
    });
    (addr, accept)
}

async fn handle(shared: Arc<Shared>, req: Request<Incoming>) -> Response<Body> {
    let who = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .unwrap_or("-")
        .to_string();
    let (method, path, query) = (
        req.method().clone(),
        req.uri().path().to_string(),
        req.uri().query().unwrap_or("").to_string(),
    );
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|body| body.to_bytes())
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);

    // Recorded on arrival (status 0 until answered): a held LIST is visible while it waits.
    let recorded = Recorded {
        who,
        method,
        path,
        query,
        body,
        status: 0,
        at: Instant::now(),
        wall: k8s_openapi::jiff::Timestamp::now(),
    };
    let index = {
        let mut requests = shared.requests.lock().expect("requests lock");
        requests.push(recorded.clone());
        requests.len() - 1
    };
    let Recorded {
        who,
        method,
        path,
        query,
        body,
        ..
    } = recorded;
    let stall = stall_of(&shared, &path, &who);
    let response = match stall {
        Some(Stall::BlackHole) => black_hole(&shared, &path, &who).await,
        _ => None,
    };
    let response = match (response, stall) {
        (Some(timed_out), _) => timed_out,
        (None, Some(Stall::Random { max })) => {
            tokio::time::sleep(max.mul_f64(fastrand::f64())).await;
            let response = respond(&shared, &method, &path, &query, &content_type, &body).await;
            tokio::time::sleep(max.mul_f64(fastrand::f64())).await;
            response
        }
        (None, _) => respond(&shared, &method, &path, &query, &content_type, &body).await,
    };
    let status = response.status().as_u16();
    eprintln!(
        "apiserver {who}: {method} {path}{}{query} -> {status}",
        if query.is_empty() { "" } else { "?" }
    );
    shared.requests.lock().expect("requests lock")[index].status = status;
    response
}

/// The stall for a request to `path` from `who`, if any.
fn stall_of(shared: &Shared, path: &str, who: &str) -> Option<Stall> {
    let plural = parse_path(path)?.resource.plural;
    let faults = shared.faults.lock().expect("faults lock");
    let applies = |(p, w, _): &&(&str, Option<String>, Stall)| *p == plural && w.as_deref().is_none_or(|w| w == who);
    faults.stalls.iter().find(applies).map(|(_, _, stall)| *stall)
}

/// Holds the request while its black hole lasts; `Some(504)` if it outlasted [`BLACK_HOLE_LIMIT`].
async fn black_hole(shared: &Shared, path: &str, who: &str) -> Option<Response<Body>> {
    let since = Instant::now();
    while stall_of(shared, path, who) == Some(Stall::BlackHole) {
        if since.elapsed() >= BLACK_HOLE_LIMIT {
            return Some(status(StatusCode::GATEWAY_TIMEOUT, "Timeout", "black-holed"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

async fn respond(
    shared: &Arc<Shared>,
    method: &Method,
    path: &str,
    query: &str,
    content_type: &str,
    body: &Value,
) -> Response<Body> {
    if shared.faults.lock().expect("faults lock").failing {
        return status(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", "injected failure");
    }
    let Some(target) = parse_path(path) else {
        return status(
            StatusCode::NOT_FOUND,
            "NotFound",
            &format!("the server could not find the requested resource {path}"),
        );
    };
    let params = Params::parse(query);
    let store = &shared.store;
    let key = |name: &str| Key::new(target.resource, target.namespace.as_deref().unwrap_or(""), name);
    match (method.clone(), target.name.as_deref()) {
        (Method::GET, None) if params.get("watch").is_some_and(|w| w == "true" || w == "1") => {
            listwatch::watch(shared, &target, &params)
        }
        (Method::GET, None) => listwatch::list(shared, &target, &params).await,
        (Method::GET, Some(name)) => match store.get(&key(name)) {
            Some(object) => json_response(StatusCode::OK, &object),
            None => not_found(target.resource, name),
        },
        (Method::POST, None) => {
            let mut object = body.clone();
            object["kind"] = json!(target.resource.kind);
            if let Some(namespace) = &target.namespace {
                object["metadata"]["namespace"] = json!(namespace);
            }
            written(store.create(object), target.resource, StatusCode::CREATED)
        }
        (Method::PUT, Some(name)) => {
            let mut object = body.clone();
            object["kind"] = json!(target.resource.kind);
            written(
                store.replace(&key(name), object, target.status),
                target.resource,
                StatusCode::OK,
            )
        }
        (Method::PATCH, Some(_)) if content_type != "application/merge-patch+json" => status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            &format!("only merge patches, not {content_type}"),
        ),
        (Method::PATCH, Some(name)) => written(
            store.merge_patch(&key(name), body, target.status),
            target.resource,
            StatusCode::OK,
        ),
        _ => status(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            &format!("{method} {path}"),
        ),
    }
}

fn written(result: Result<Value, Refused>, resource: &Resource, ok: StatusCode) -> Response<Body> {
    match result {
        Ok(object) => json_response(ok, &object),
        Err(Refused::NotFound) => not_found(resource, ""),
        Err(Refused::Invalid(message)) => status(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", &message),
        Err(Refused::Conflict(reason)) => status(
            StatusCode::CONFLICT,
            reason,
            &format!("{}: the object has been modified or already exists", resource.plural),
        ),
    }
}

fn not_found(resource: &Resource, name: &str) -> Response<Body> {
    status(
        StatusCode::NOT_FOUND,
        "NotFound",
        &format!("{} {name:?} not found", resource.plural),
    )
}

/// A `Status` object, as the API server sends with every error.
pub(super) fn status(code: StatusCode, reason: &str, message: &str) -> Response<Body> {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": message, "reason": reason, "code": code.as_u16()});
    json_response(code, &body)
}

pub(super) fn json_response(code: StatusCode, body: &Value) -> Response<Body> {
    let bytes = Bytes::from(serde_json::to_vec(body).expect("serializable"));
    Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(bytes).boxed())
        .expect("a valid response")
}
