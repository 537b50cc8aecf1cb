//! One reflector store per kind (and per watched namespace), readiness, and a change signal.
//!
//! ```text
//! API ─watch─▶ watcher (backoff, relist on 410) ─slim─▶ Writer ─▶ Store<K> ──snapshot──▶ ClusterState
//!                                                                └─ every event: changed.notify_one()
//! ```
//! A store keeps its old contents until a relist completes (as kube-runtime's does), so a lost API connection
//! leaves the last good objects in place while the watcher backs off and resumes.

use crate::objects::Ingress;
use std::{fmt::Debug, sync::Arc};

use futures::StreamExt;
use k8s_openapi::{
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::IngressClass,
    },
    serde::de::DeserializeOwned,
};
use kube::{
    Api, Client, Resource,
    core::PartialObjectMeta,
    runtime::{WatchStreamExt, watcher},
};
use tokio::sync::Notify;
use tracing::{debug, warn};

use crate::{
    compile::{ClusterState, SecretName},
    objects::{ApiEndpointSlice, ApiIngress, ApiService, EndpointSlice, Named, Service, TkeServiceConfig},
};

mod gateway;
pub(crate) mod slim;
mod store;
mod tke;
pub use gateway::GatewayStores;
pub use slim::{DATA_DROPPED, Slim};
pub use store::{Store, WatcherStopped};

/// Secrets are cached only when they can hold certificates: shunt never reads other Secrets' data
/// (for qcloud it lists their names, metadata only).
pub const TLS_SECRET_SELECTOR: &str = "type=kubernetes.io/tls";

/// Secrets `kubectl create secret generic` makes, watched when an nginx profile is served:
/// `proxy-ssl-secret` names one holding `ca.crt` (ingress-nginx reads any type). Slimmed to the
/// keys compile reads on arrival, so other Opaque Secrets cost their name only.
pub const OPAQUE_SECRET_SELECTOR: &str = "type=Opaque";

/// The optional kinds `shunt run` watches besides Ingresses, Services, slices and Secrets.
#[derive(Clone, Copy, Debug)]
pub struct WatchedKinds {
    /// TkeServiceConfigs, when a qcloud profile is served (see `tke.rs`).
    pub qcloud: bool,
    /// Look for the Gateway API CRDs and watch their kinds once found (see `gateway.rs`).
    pub gateway_api: bool,
}

/// Readers for every watched kind. Namespaced kinds have one store per watched namespace.
#[derive(Clone)]
pub struct Stores {
    ingresses: Vec<Store<Ingress>>,
    classes: Store<IngressClass>,
    services: Vec<Store<Service>>,
    slices: Vec<Store<EndpointSlice>>,
    secrets: Vec<Store<Secret>>,
    /// Opaque Secrets, slimmed like `secrets`, when an nginx profile is served (see
    /// [`OPAQUE_SECRET_SELECTOR`]).
    opaque_secrets: Vec<Store<Secret>>,
    /// Every Secret's name, when a qcloud or nginx profile is served: TKE's certificate Secrets
    /// are Opaque, and one that does not exist is TKE's E4010; a `proxy-ssl-secret` that does not
    /// exist denies the Ingress's locations. A metadata-only watch: no data is sent.
    secret_names: Vec<Store<PartialObjectMeta<Secret>>>,
    /// ingress-nginx's ConfigMap alone (`--nginx-configmap`), when an nginx profile is served.
    nginx_config: Option<Store<ConfigMap>>,
    /// Every other ConfigMap, when an nginx profile is served: `auth-proxy-set-headers` names one
    /// in the Ingress's namespace (ingress-nginx watches them all too). Data past what such a
    /// ConfigMap may hold is dropped on arrival (`slim::bound_auth_config_map`).
    auth_config_maps: Vec<Store<ConfigMap>>,
    /// TKE's TkeServiceConfigs, when a qcloud profile is served (see `tke.rs`).
    tke_service_configs: Vec<Store<TkeServiceConfig>>,
    /// Gateway API kinds, once their CRDs are found.
    gateway: GatewayStores,
    /// Signalled on every watch event; a waiter that was busy still finds the permit.
    pub changed: Arc<Notify>,
}

impl Stores {
    /// Starts the watchers. `namespaces` empty means all namespaces. `nginx_config` is the one
    /// ConfigMap watched, by name (RBAC grants it by `resourceNames`); `kinds` says which
    /// optional kinds are watched.
    pub fn spawn(
        client: &Client,
        namespaces: &[String],
        nginx_config: Option<&(String, String)>,
        kinds: WatchedKinds,
    ) -> Self {
        let changed = Arc::new(Notify::new());
        let scopes: Vec<Option<&str>> = if namespaces.is_empty() {
            vec![None]
        } else {
            namespaces.iter().map(|ns| Some(ns.as_str())).collect()
        };
        let config = watcher::Config::default;
        let owned: Vec<Option<String>> = scopes.iter().map(|s| s.map(str::to_string)).collect();
        Stores {
            ingresses: scopes
                .iter()
                .map(|s| {
                    let decoded: Api<ApiIngress> = scoped(client, *s);
                    reflect_with(decoded, config(), &changed, ApiIngress::slim, |ingress| ingress.into())
                })
                .collect(),
            classes: reflect(Api::all(client.clone()), config(), &changed),
            services: scopes
                .iter()
                .map(|s| reflect_as::<ApiService, _>(scoped(client, *s), config(), &changed))
                .collect(),
            slices: scopes
                .iter()
                .map(|s| reflect_as::<ApiEndpointSlice, _>(scoped(client, *s), config(), &changed))
                .collect(),
            secrets: scopes
                .iter()
                .map(|s| reflect(scoped(client, *s), config().fields(TLS_SECRET_SELECTOR), &changed))
                .collect(),
            opaque_secrets: match nginx_config {
                Some(_) => (scopes.iter())
                    .map(|s| reflect(scoped(client, *s), config().fields(OPAQUE_SECRET_SELECTOR), &changed))
                    .collect(),
                None => Vec::new(),
            },
            secret_names: match kinds.qcloud || nginx_config.is_some() {
                true => (scopes.iter())
                    .map(|s| reflect(scoped(client, *s), config(), &changed))
                    .collect(),
                false => Vec::new(),
            },
            nginx_config: nginx_config.map(|(namespace, name)| {
                let by_name = config().fields(&format!("metadata.name={name}"));
                reflect(Api::namespaced(client.clone(), namespace), by_name, &changed)
            }),
            auth_config_maps: match nginx_config {
                Some((_, name)) => (scopes.iter())
                    .map(|s| {
                        let others = config().fields(&format!("metadata.name!={name}"));
                        let bound = slim::bound_auth_config_map;
                        reflect_with(scoped(client, *s), others, &changed, bound, ConfigMap::clone)
                    })
                    .collect(),
                None => Vec::new(),
            },
            tke_service_configs: match kinds.qcloud {
                true => tke::spawn(client, &scopes, &changed),
                false => Vec::new(),
            },
            gateway: GatewayStores::spawn(client, &owned, &changed, kinds.gateway_api),
            changed,
        }
    }

    /// Resolves once every store has finished its first list.
    pub async fn wait_until_ready(&self) -> Result<(), WatcherStopped> {
        self.classes.wait_until_ready().await?;
        for store in &self.ingresses {
            store.wait_until_ready().await?;
        }
        for store in &self.services {
            store.wait_until_ready().await?;
        }
        for store in &self.slices {
            store.wait_until_ready().await?;
        }
        for store in &self.secrets {
            store.wait_until_ready().await?;
        }
        for store in &self.opaque_secrets {
            store.wait_until_ready().await?;
        }
        for store in &self.secret_names {
            store.wait_until_ready().await?;
        }
        if let Some(store) = &self.nginx_config {
            store.wait_until_ready().await?;
        }
        for store in &self.auth_config_maps {
            store.wait_until_ready().await?;
        }
        for store in &self.tke_service_configs {
            store.wait_until_ready().await?;
        }
        self.gateway.wait_until_ready().await
    }

    /// The objects as they are now, for compile: the stores' own `Arc`s, no copies.
    pub fn snapshot(&self) -> ClusterState {
        fn all<K: Named>(stores: &[Store<K>]) -> Vec<Arc<K>> {
            stores.iter().flat_map(|store| store.state()).collect()
        }
        let mut state = ClusterState {
            ingresses: all(&self.ingresses),
            ingress_classes: all(std::slice::from_ref(&self.classes)),
            services: all(&self.services),
            endpoint_slices: all(&self.slices),
            secrets: [all(&self.secrets), all(&self.opaque_secrets)].concat(),
            config_maps: (self.nginx_config.iter().chain(&self.auth_config_maps))
                .flat_map(|store| store.state())
                .collect(),
            tke_service_configs: all(&self.tke_service_configs),
            secrets_listed: !self.secret_names.is_empty(),
            secret_names: all(&self.secret_names).into_iter().map(SecretName).collect(),
            ..ClusterState::default()
        };
        self.gateway.fill(&mut state);
        state
    }

    /// Readers of the Ingress stores, for status writes.
    pub fn ingresses(&self) -> impl Iterator<Item = Arc<Ingress>> + '_ {
        self.ingresses.iter().flat_map(|store| store.state())
    }
}

fn scoped<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// Runs a watcher into a new store in the background; every event (and every error, after the
/// watcher's backoff) is reported.
fn reflect<K>(api: Api<K>, config: watcher::Config, changed: &Arc<Notify>) -> Store<K>
where
    K: Resource + Named + Slim + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
{
    reflect_with(api, config, changed, K::slim, K::clone)
}

/// [`reflect`] into a store of another type: each object is slimmed as decoded, then stored
/// converted and slimmed as a `K`.
fn reflect_as<W, K>(api: Api<W>, config: watcher::Config, changed: &Arc<Notify>) -> Store<K>
where
    W: Resource + Slim + Clone + Into<K> + DeserializeOwned + Debug + Send + Sync + 'static,
    W::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
    K: Named + Slim + Send + Sync + 'static,
{
    reflect_with(api, config, changed, W::slim, slim::stored::<W, K>)
}

/// [`reflect`] with `slim` applied to each object on arrival and `convert` making what is stored.
fn reflect_with<W, K>(
    api: Api<W>,
    config: watcher::Config,
    changed: &Arc<Notify>,
    slim: fn(&mut W),
    convert: fn(&W) -> K,
) -> Store<K>
where
    W: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    W::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
    K: Named + Send + Sync + 'static,
{
    let (reader, writer) = store::store(convert);
    let kind = W::kind(&W::DynamicType::default()).to_string();
    let changed = changed.clone();
    let writer = writer.on_store_thread(move || changed.notify_one());
    let events = watcher(api, config).default_backoff().modify(slim);
    tokio::spawn(async move {
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    if matches!(event, watcher::Event::InitDone) {
                        debug!(%kind, "Watch listed");
                    }
                    writer.apply(event).await;
                    crate::residency::after_main_thread_work();
                }
                Err(error) => warn!(%error, %kind, "Watch failed; last known objects keep serving, retrying"),
            }
        }
    });
    reader
}
