//! The Gateway API kinds' stores, started only once their CRDs are found: a cluster without
//! Gateway API runs exactly as before, and one that installs the CRDs later is picked up.
//!
//! ```text
//! discover: list 1 of each kind ─ all found ─▶ reflect() each kind ─▶ readers set, changed
//!                                └ 404 / 403 / error: logged, again after BACKOFF (doubling to BACKOFF_MAX)
//! ```
//! ReferenceGrant is read as `v1beta1`, served by every Gateway API release that has the kind
//! (`v1` only since v1.5); a cluster without ReferenceGrants still gets the other kinds, and
//! one without GRPCRoutes (the experimental channel before v1.1) its HTTPRoutes.
//! Namespaces (name and labels only) are watched with them, for listeners that select routes'
//! namespaces by label; without the permission to list them, such listeners take no route.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use kube::{Api, Client, Resource, api::ListParams};
use tokio::sync::{Notify, watch};
use tracing::{info, warn};

use super::{Slim, Store, WatcherStopped, reflect, scoped, slim::slim_metadata};
use crate::{
    compile::ClusterState,
    objects::Namespace,
    sources::gateway::{
        grpc::objects::GRPCRoute,
        objects::{Gateway, GatewayClass, HTTPRoute, ReferenceGrant},
    },
};

/// The first retry of a discovery that found no CRDs (or no permission).
const BACKOFF: Duration = Duration::from_secs(10);
/// The longest wait between discoveries: installing the CRDs takes effect within it.
const BACKOFF_MAX: Duration = Duration::from_secs(5 * 60);
/// A discovery request that hangs is given up after this long.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Readers of the Gateway API stores, once discovery found the CRDs.
#[derive(Clone)]
pub struct GatewayStores {
    readers: Arc<OnceLock<Readers>>,
    /// `true` once the first discovery has decided (found, absent or failed).
    decided: watch::Receiver<bool>,
}

struct Readers {
    classes: Store<GatewayClass>,
    gateways: Vec<Store<Gateway>>,
    routes: Vec<Store<HTTPRoute>>,
    /// Empty when the cluster serves no GRPCRoute.
    grpc_routes: Vec<Store<GRPCRoute>>,
    /// Empty when the cluster serves no ReferenceGrant.
    grants: Vec<Store<ReferenceGrant>>,
    /// `None` when shunt may not list Namespaces.
    namespaces: Option<Store<Namespace>>,
}

/// What one discovery found.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    /// GatewayClass, Gateway and HTTPRoute, and whether ReferenceGrant, Namespace and GRPCRoute too.
    Served { grants: bool, namespaces: bool, grpc: bool },
    /// Some kind is not served (404): the CRDs are not installed.
    Absent(&'static str),
}

impl GatewayStores {
    /// Starts discovery in the background; `enabled` false (`--gateway-api=false`) never looks.
    pub fn spawn(client: &Client, scopes: &[Option<String>], changed: &Arc<Notify>, enabled: bool) -> Self {
        let readers = Arc::new(OnceLock::new());
        let (decide, decided) = watch::channel(!enabled);
        if enabled {
            let task = discover(
                client.clone(),
                scopes.to_vec(),
                changed.clone(),
                readers.clone(),
                decide,
            );
            tokio::spawn(task);
        }
        GatewayStores { readers, decided }
    }

    /// Resolves once the first discovery decided and, when it found the CRDs, every store listed.
    pub async fn wait_until_ready(&self) -> Result<(), WatcherStopped> {
        let mut decided = self.decided.clone();
        decided.wait_for(|decided| *decided).await.map_err(|_| WatcherStopped)?;
        let Some(readers) = self.readers.get() else {
            return Ok(());
        };
        readers.classes.wait_until_ready().await?;
        for store in &readers.gateways {
            store.wait_until_ready().await?;
        }
        for store in &readers.routes {
            store.wait_until_ready().await?;
        }
        for store in &readers.grants {
            store.wait_until_ready().await?;
        }
        for store in &readers.grpc_routes {
            store.wait_until_ready().await?;
        }
        if let Some(store) = &readers.namespaces {
            store.wait_until_ready().await?;
        }
        Ok(())
    }

    /// Adds the objects as they are now to `state` (nothing before discovery found them).
    pub fn fill(&self, state: &mut ClusterState) {
        let Some(readers) = self.readers.get() else {
            return;
        };
        state.gateway_classes = readers.classes.state();
        state.gateways = readers.gateways.iter().flat_map(Store::state).collect();
        state.http_routes = readers.routes.iter().flat_map(Store::state).collect();
        state.grpc_routes = readers.grpc_routes.iter().flat_map(Store::state).collect();
        state.reference_grants = readers.grants.iter().flat_map(Store::state).collect();
        state.namespaces = readers.namespaces.iter().flat_map(Store::state).collect();
    }
}

/// Looks for the CRDs until found, then starts the watchers and signals a change.
async fn discover(
    client: Client,
    scopes: Vec<Option<String>>,
    changed: Arc<Notify>,
    readers: Arc<OnceLock<Readers>>,
    decide: watch::Sender<bool>,
) {
    let mut backoff = BACKOFF;
    loop {
        match probe_all(&client, &scopes).await {
            Ok(Found::Served {
                grants,
                namespaces,
                grpc,
            }) => {
                info!(
                    grants,
                    grpc, namespaces, "Gateway API CRDs found; watching GatewayClasses, Gateways and HTTPRoutes"
                );
                if !namespaces {
                    warn!("Cannot list Namespaces; listeners with allowedRoutes from Selector take no route");
                }
                _ = readers.set(start(&client, &scopes, &changed, (grants, namespaces, grpc)));
                decide.send_replace(true);
                changed.notify_one();
                return;
            }
            Ok(Found::Absent(kind)) => {
                info!(%kind, retry = ?backoff, "Gateway API CRDs not installed; Gateway API objects are not served")
            }
            Err(error) => {
                warn!(%error, retry = ?backoff, "Cannot read Gateway API objects; Gateway API objects are not served")
            }
        }
        decide.send_replace(true);
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

/// Lists one object of each kind in each scope: the CRDs are served and shunt may read them.
async fn probe_all(client: &Client, scopes: &[Option<String>]) -> Result<Found, String> {
    if !probe(Api::<GatewayClass>::all(client.clone())).await? {
        return Ok(Found::Absent("GatewayClass"));
    }
    let (mut grants, mut grpc) = (true, true);
    for scope in scopes.iter().map(Option::as_deref) {
        if !probe(scoped::<Gateway>(client, scope)).await? {
            return Ok(Found::Absent("Gateway"));
        }
        if !probe(scoped::<HTTPRoute>(client, scope)).await? {
            return Ok(Found::Absent("HTTPRoute"));
        }
        grants &= probe(scoped::<ReferenceGrant>(client, scope)).await?;
        // Refused or failing: the other kinds are still served (a role written before GRPCRoute).
        grpc &= probe(scoped::<GRPCRoute>(client, scope)).await.unwrap_or_else(|error| {
            warn!(%error, "Cannot read GRPCRoutes; they are not served");
            false
        });
    }
    // Refused (403) or failing: Selector listeners take no route, the rest is served.
    let namespaces = probe(Api::<Namespace>::all(client.clone())).await.unwrap_or(false);
    Ok(Found::Served {
        grants,
        namespaces,
        grpc,
    })
}

/// `false` when the kind is not served (404); a hung request counts as an error.
async fn probe<K>(api: Api<K>) -> Result<bool, String>
where
    K: Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let kind = K::kind(&()).to_string();
    let params = ListParams::default().limit(1);
    match tokio::time::timeout(PROBE_TIMEOUT, api.list_metadata(&params)).await {
        Ok(Ok(_)) => Ok(true),
        Ok(Err(kube::Error::Api(status))) if status.code == 404 => Ok(false),
        Ok(Err(error)) => Err(format!("listing {kind}: {error}")),
        Err(_) => Err(format!("listing {kind}: no answer within {PROBE_TIMEOUT:?}")),
    }
}

/// Starts the watchers; `(grants, namespaces, grpc)` say whether those kinds may be read.
fn start(
    client: &Client,
    scopes: &[Option<String>],
    changed: &Arc<Notify>,
    (grants, namespaces, grpc): (bool, bool, bool),
) -> Readers {
    let config = kube::runtime::watcher::Config::default;
    Readers {
        classes: reflect(Api::all(client.clone()), config(), changed),
        gateways: scopes
            .iter()
            .map(|s| reflect(scoped(client, s.as_deref()), config(), changed))
            .collect(),
        routes: scopes
            .iter()
            .map(|s| reflect(scoped(client, s.as_deref()), config(), changed))
            .collect(),
        grants: match grants {
            true => scopes
                .iter()
                .map(|s| reflect(scoped(client, s.as_deref()), config(), changed))
                .collect(),
            false => Vec::new(),
        },
        grpc_routes: match grpc {
            true => scopes
                .iter()
                .map(|s| reflect(scoped(client, s.as_deref()), config(), changed))
                .collect(),
            false => Vec::new(),
        },
        namespaces: namespaces.then(|| reflect(Api::all(client.clone()), config(), changed)),
    }
}

impl Slim for GatewayClass {
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for Gateway {
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for HTTPRoute {
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for GRPCRoute {
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}

impl Slim for Namespace {
    /// Only the name and labels are read.
    fn slim(&mut self) {
        let metadata = std::mem::take(&mut self.metadata);
        self.metadata.name = metadata.name;
        self.metadata.labels = metadata.labels;
        self.metadata.resource_version = metadata.resource_version;
    }
}

impl Slim for ReferenceGrant {
    fn slim(&mut self) {
        slim_metadata(&mut self.metadata);
    }
}
