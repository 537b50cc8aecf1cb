//! The cluster the incremental compile's property tests edit, held as `shunt run`'s stores hold
//! it, and how each edit changes it and what `shunt serve` is told changed.

use std::sync::OnceLock;

use k8s_openapi::{
    ByteString,
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::{
            IngressClass, IngressLoadBalancerIngress, IngressLoadBalancerStatus, IngressStatus, IngressTLS,
        },
    },
};
use rcgen::{CertificateParams, KeyPair, date_time_ymd};
use serde_json::json;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::objects::{self, Namespace};
use crate::sources::gateway::{
    CONTROLLER_NAME,
    objects::{Gateway, GatewayClass, HTTPRoute, ReferenceGrant},
};

/// Two certificates made once: one for the example hosts, one for another domain.
fn pems() -> &'static [(String, String); 2] {
    static PEMS: OnceLock<[(String, String); 2]> = OnceLock::new();
    PEMS.get_or_init(|| {
        [vec!["a.example.com", "*.example.com"], vec!["other.test"]].map(|names| {
            let mut params =
                CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).expect("valid names");
            params.not_before = date_time_ymd(2020, 1, 1);
            params.not_after = date_time_ymd(2040, 1, 1);
            let key = KeyPair::generate().expect("a key");
            let cert = params.self_signed(&key).expect("a certificate");
            (cert.pem(), key.serialize_pem())
        })
    })
}

fn meta(ns: usize, name: String) -> ObjectMeta {
    ObjectMeta {
        namespace: NAMESPACES[ns].map(str::to_string),
        name: Some(name),
        ..Default::default()
    }
}

/// The cluster as `shunt run`'s stores hold it: one `Arc` per object, replaced when it changes.
#[derive(Default)]
pub(super) struct World {
    ingresses: BTreeMap<(usize, usize), Arc<crate::objects::Ingress>>,
    services: BTreeMap<(usize, usize), Arc<Service>>,
    slices: BTreeMap<(usize, usize), Arc<EndpointSlice>>,
    secrets: BTreeMap<(usize, usize), Arc<Secret>>,
    classes: BTreeMap<usize, Arc<IngressClass>>,
    config_maps: Vec<Arc<ConfigMap>>,
    routes: BTreeMap<(usize, usize), Arc<HTTPRoute>>,
    gateway: Option<Arc<Gateway>>,
    gateway_class: Option<Arc<GatewayClass>>,
    grant: Option<Arc<ReferenceGrant>>,
    namespaces: BTreeMap<usize, Arc<Namespace>>,
}

/// The Gateway's listener sets: plain HTTP for every host, HTTP for `*.example.com` with
/// HTTPS for `a.example.com` (certificate `s0`), HTTP for the namespaces labelled
/// `team: blue`, and one listener shunt does not serve (kept last).
pub(super) const LISTENER_SETS: usize = 4;

/// Annotations of the profiles that tie Ingresses of one host together or read certificates:
/// regex paths and rewrites, `app-root`, a shared or ambiguous load balancer, a certificate by
/// annotation, and keys that refuse the host.
const PROFILE_ANNOTATIONS: [&[(&str, &str)]; 10] = [
    &[],
    &[("nginx.ingress.kubernetes.io/use-regex", "true")],
    &[("nginx.ingress.kubernetes.io/rewrite-target", "/$1")],
    &[("nginx.ingress.kubernetes.io/app-root", "/api")],
    &[("kubernetes.io/ingress.existLbId", "lb-1")],
    &[
        ("shunt.dev/tls-secret", "s0"),
        ("kubernetes.io/ingress.rule-mix", "true"),
    ],
    &[("nginx.ingress.kubernetes.io/canary", "true")],
    &[("nginx.ingress.kubernetes.io/force-ssl-redirect", "true")],
    &[("ingress.cloud.tencent.com/direct-access", "true")],
    &[
        (
            "nginx.ingress.kubernetes.io/auth-url",
            "http://auth.default.svc:80/check",
        ),
        (
            "nginx.ingress.kubernetes.io/auth-proxy-set-headers",
            "default/auth-headers",
        ),
    ],
];

/// Profiles the options can serve: none, each of them shadowing class `other`, and nginx
/// taking over class `shunt` while qcloud shadows `other`.
pub(super) const PROFILE_OPTIONS: usize = 4;

/// `ingress` as a status write leaves it: a load-balancer address and a new resourceVersion.
pub(super) fn with_status(ingress: &objects::Ingress, version: u8) -> objects::Ingress {
    let mut written = ingress.clone();
    written.metadata.resource_version = Some(format!("{version}"));
    written.status = Some(IngressStatus {
        load_balancer: Some(IngressLoadBalancerStatus {
            ingress: Some(vec![IngressLoadBalancerIngress {
                ip: Some(format!("203.0.113.{version}")),
                ..Default::default()
            }]),
        }),
    });
    written
}

impl World {
    pub(super) fn state(&self) -> ClusterState {
        ClusterState {
            ingresses: self.ingresses.values().cloned().collect(),
            ingress_classes: self.classes.values().cloned().collect(),
            services: self.services.values().cloned().collect(),
            endpoint_slices: self.slices.values().cloned().collect(),
            secrets: self.secrets.values().cloned().collect(),
            config_maps: self.config_maps.clone(),
            gateway_classes: self.gateway_class.iter().cloned().collect(),
            gateways: self.gateway.iter().cloned().collect(),
            http_routes: self.routes.values().cloned().collect(),
            grpc_routes: Vec::new(),
            reference_grants: self.grant.iter().cloned().collect(),
            tke_service_configs: Vec::new(),
            namespaces: self.namespaces.values().cloned().collect(),
            secrets_listed: true,
            secret_names: Vec::new(),
        }
    }

    /// Applies `edit`, recording what changed as `shunt serve` would tell it.
    pub(super) fn apply(&mut self, edit: &Edit, options: &mut CompileOptions, changes: &mut Changes) {
        let key = |ns: usize, name: String| (NAMESPACES[ns].unwrap_or(DEFAULT_NAMESPACE).to_string(), name);
        match edit.clone() {
            Edit::PutIngress { ns, name, .. } => {
                self.ingresses
                    .insert((ns, name), Arc::new(mk_edited_ingress(edit).into()));
                changes.ingresses.insert(key(ns, format!("i{name}")));
            }
            Edit::RemoveIngress(ns, name) => {
                self.ingresses.remove(&(ns, name));
                changes.ingresses.insert(key(ns, format!("i{name}")));
            }
            Edit::Annotate(ns, name, profile_annotations, ssl_redirect) => {
                if let Some(ingress) = self.ingresses.get(&(ns, name)) {
                    let mut annotated = objects::Ingress::clone(ingress);
                    annotated.metadata.annotations =
                        edited_annotations(profile_annotations, ssl_redirect).map(Into::into);
                    self.ingresses.insert((ns, name), Arc::new(annotated));
                    changes.ingresses.insert(key(ns, format!("i{name}")));
                }
            }
            Edit::WriteStatus(ns, name, version) => {
                if let Some(ingress) = self.ingresses.get(&(ns, name)) {
                    self.ingresses
                        .insert((ns, name), Arc::new(with_status(ingress, version)));
                    changes.ingresses.insert(key(ns, format!("i{name}")));
                }
            }
            Edit::PutService(ns, service, kind) => {
                let mut object = mk_service("x", SERVICES[service], &[("http", 80)]);
                object.metadata = meta(ns, SERVICES[service].to_string()).into();
                if kind == 1 {
                    first_port(&mut object).port = 81;
                } else if kind == 2 {
                    object.spec.get_or_insert_default().type_ = Some("ExternalName".into());
                }
                self.services.insert((ns, service), Arc::new(object));
                changes.services.insert(key(ns, SERVICES[service].to_string()));
            }
            Edit::RemoveService(ns, service) => {
                self.services.remove(&(ns, service));
                changes.services.insert(key(ns, SERVICES[service].to_string()));
            }
            Edit::PutSlice {
                ns,
                name,
                service,
                ref endpoints,
            } => {
                let slice = mk_edited_slice(ns, name, service, endpoints);
                self.slices.insert((ns, name), Arc::new(slice));
                changes.endpoint_slices.insert(key(ns, format!("e{name}")));
            }
            Edit::RemoveSlice(ns, name) => {
                self.slices.remove(&(ns, name));
                changes.endpoint_slices.insert(key(ns, format!("e{name}")));
            }
            Edit::PutSecret(ns, secret, kind) => {
                self.secrets.insert((ns, secret), mk_edited_secret(ns, secret, kind));
            }
            Edit::RemoveSecret(ns, secret) => {
                self.secrets.remove(&(ns, secret));
            }
            Edit::PutClass(..) | Edit::RemoveClass(_) | Edit::PutNginxConfig(_) | Edit::PutAuthHeaders(_) => {
                self.apply_class_or_config(edit, options, changes)
            }
            Edit::ToggleWithoutClass => options.watch_ingress_without_class ^= true,
            Edit::ToggleShadowGateway => match options.shadow_gateway_classes.is_empty() {
                true => options.shadow_gateway_classes = vec!["shunt".to_string()],
                false => options.shadow_gateway_classes.clear(),
            },
            Edit::SetProfiles(choice) => set_profiles(options, choice),
            Edit::PutRoute { .. }
            | Edit::RemoveRoute(..)
            | Edit::PutGateway(_)
            | Edit::PutGatewayClass(_)
            | Edit::PutGrant(_)
            | Edit::PutNamespace(..) => self.apply_gateway(edit),
        }
    }

    /// Applies an edit of an IngressClass or a ConfigMap: `shunt serve` tells both as a class change.
    fn apply_class_or_config(&mut self, edit: &Edit, options: &CompileOptions, changes: &mut Changes) {
        match edit.clone() {
            Edit::PutClass(class, ours, default) => {
                let name = ["shunt", "other"][class];
                let controller = if ours {
                    "shunt.dev/ingress-controller"
                } else {
                    "else.dev/x"
                };
                let object = if default {
                    mk_default_class(name, controller)
                } else {
                    mk_class(name, controller)
                };
                self.classes.insert(class, Arc::new(object));
                changes.ingress_classes = true;
            }
            Edit::RemoveClass(class) => {
                self.classes.remove(&class);
                changes.ingress_classes = true;
            }
            Edit::PutNginxConfig(ssl_redirect) => {
                let nginx = mk_nginx_config(options, ssl_redirect);
                self.config_maps.retain(|map| map.metadata.name != nginx.metadata.name);
                self.config_maps.push(nginx);
                // `shunt serve` tells a ConfigMap change as it tells a class change.
                changes.ingress_classes = true;
            }
            Edit::PutAuthHeaders(data) => {
                self.config_maps
                    .retain(|map| map.metadata.name.as_deref() != Some("auth-headers"));
                self.config_maps.extend(data.map(mk_auth_headers));
                changes.ingress_classes = true;
            }
            _ => unreachable!("not a class or ConfigMap edit"),
        }
    }

    /// Applies an edit of a Gateway API object; `shunt serve` tells none (the layer is compiled whole).
    fn apply_gateway(&mut self, edit: &Edit) {
        match edit.clone() {
            Edit::PutRoute { ns, name, .. } => _ = self.routes.insert((ns, name), mk_edited_route(edit)),
            Edit::RemoveRoute(ns, name) => _ = self.routes.remove(&(ns, name)),
            Edit::PutGateway(listeners) => self.gateway = listeners.map(mk_gateway),
            Edit::PutNamespace(ns, labels) => {
                let name = NAMESPACES[ns].unwrap_or(DEFAULT_NAMESPACE);
                let labels = labels.map(|blue| json!({"team": if blue { "blue" } else { "red" }}));
                _ = match labels {
                    Some(labels) => self
                        .namespaces
                        .insert(ns, decoded(json!({"metadata": {"name": name, "labels": labels}}))),
                    None => self.namespaces.remove(&ns),
                };
            }
            Edit::PutGatewayClass(ours) => {
                let controller = if ours { CONTROLLER_NAME } else { "else.dev/gateway" };
                self.gateway_class = Some(decoded(json!({
                    "metadata": {"name": "shunt"}, "spec": {"controllerName": controller},
                })));
            }
            Edit::PutGrant(grant) => {
                let from: Vec<serde_json::Value> = NAMESPACES
                    .iter()
                    .map(|ns| {
                        let ns = ns.unwrap_or(DEFAULT_NAMESPACE);
                        json!({"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": ns})
                    })
                    .collect();
                self.grant = grant.then(|| {
                    decoded(json!({
                        "metadata": {"namespace": "b", "name": "grant"},
                        "spec": {"from": from, "to": [{"group": "", "kind": "Service"}]},
                    }))
                });
            }
            _ => {}
        }
    }
}

/// The Ingress a `PutIngress` edit puts.
fn mk_edited_ingress(edit: &Edit) -> Ingress {
    let Edit::PutIngress {
        ns,
        name,
        created,
        class,
        rules,
        default_backend,
        tls,
        ssl_redirect,
        profile_annotations,
    } = edit.clone()
    else {
        unreachable!("only a PutIngress edit puts an Ingress");
    };
    let rules = rules
        .into_iter()
        .map(|(host, paths)| {
            let paths = paths
                .into_iter()
                .map(|(path, exact, service, port)| {
                    let backend = mk_backend(SERVICES[service], [80, 81, 0][port]);
                    mk_path(PATHS[path], if exact { "Exact" } else { "Prefix" }, backend)
                })
                .collect();
            let mut rule = mk_rule(HOSTS[host], paths);
            rule.host = Some(HOSTS[host].to_string()).filter(|h| !h.is_empty());
            rule
        })
        .collect();
    let mut ingress = mk_ingress("x", &format!("i{name}"), rules);
    ingress.metadata = meta(ns, format!("i{name}"));
    let mut ingress = with_class(ingress, [Some("shunt"), Some("other"), None][class]);
    if let Some(seconds) = created {
        ingress = created_at(ingress, seconds);
    }
    if let Some((service, port)) = default_backend {
        ingress = with_default_backend(ingress, mk_backend(SERVICES[service], [80, 81, 0][port]));
    }
    if let Some((host, secret)) = tls {
        ingress.spec.get_or_insert_default().tls = Some(vec![IngressTLS {
            hosts: Some(vec![HOSTS[host].to_string()]).filter(|_| !HOSTS[host].is_empty()),
            secret_name: Some(format!("s{secret}")),
        }]);
    }
    ingress.metadata.annotations = edited_annotations(profile_annotations, ssl_redirect);
    ingress
}

/// One of the world's profile annotation sets, with or without an `ssl-redirect` of ours.
fn edited_annotations(profile_annotations: usize, ssl_redirect: bool) -> Option<BTreeMap<String, String>> {
    let mut annotations: BTreeMap<String, String> = PROFILE_ANNOTATIONS[profile_annotations]
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect();
    if ssl_redirect {
        annotations.insert("shunt.dev/ssl-redirect".to_string(), "maybe".to_string());
    }
    Some(annotations).filter(|a| !a.is_empty())
}

fn decoded<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Arc<T> {
    Arc::new(serde_json::from_value(value).expect("a valid object"))
}

/// The HTTPRoute a `PutRoute` edit puts.
fn mk_edited_route(edit: &Edit) -> Arc<HTTPRoute> {
    let Edit::PutRoute {
        ns,
        name,
        created,
        hosts,
        rules,
    } = edit.clone()
    else {
        unreachable!("only a PutRoute edit puts a route");
    };
    let rules: Vec<serde_json::Value> = rules
        .into_iter()
        .map(|(path, exact, header, service, backend_ns)| {
            let kind = if exact { "Exact" } else { "PathPrefix" };
            let headers = if header {
                json!([{"name": "x-v", "value": "1"}])
            } else {
                json!([])
            };
            json!({
                "matches": [{"path": {"type": kind, "value": PATHS[path]}, "headers": headers}],
                "backendRefs": [{
                    "name": SERVICES[service], "port": 80,
                    "namespace": NAMESPACES[backend_ns].unwrap_or(DEFAULT_NAMESPACE),
                }],
            })
        })
        .collect();
    let hostnames: Vec<&str> = hosts.iter().map(|&host| HOSTS[host]).collect();
    let mut metadata = json!({"namespace": NAMESPACES[ns], "name": format!("r{name}")});
    if let Some(seconds) = created {
        metadata["creationTimestamp"] = json!(
            Timestamp::from_second(1_700_000_000 + seconds)
                .expect("a time")
                .to_string()
        );
    }
    decoded(json!({
        "metadata": metadata,
        "spec": {
            "parentRefs": [{"name": "g", "namespace": "default"}],
            "hostnames": hostnames,
            "rules": rules,
        },
    }))
}

/// The Gateway `g` with one of the [`LISTENER_SETS`].
fn mk_gateway(set: usize) -> Arc<Gateway> {
    let all = json!({"namespaces": {"from": "All"}});
    let listeners = match set {
        0 => json!([{"name": "http", "port": 80, "protocol": "HTTP", "allowedRoutes": all}]),
        1 => json!([
            {"name": "http", "port": 80, "protocol": "HTTP", "hostname": "*.example.com", "allowedRoutes": all},
            {"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "a.example.com", "allowedRoutes": all,
             "tls": {"certificateRefs": [{"name": "s0"}]}},
        ]),
        2 => json!([{"name": "http", "port": 80, "protocol": "HTTP",
            "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "blue"}}}}}]),
        _ => json!([{"name": "tcp", "port": 9000, "protocol": "TCP"}]),
    };
    decoded(json!({
        "metadata": {"namespace": "default", "name": "g"},
        "spec": {"gatewayClassName": "shunt", "listeners": listeners},
    }))
}

/// Serves one of the [`PROFILE_OPTIONS`] choices of profiles.
fn set_profiles(options: &mut CompileOptions, choice: usize) {
    let class = |spec: &str| spec.parse::<ShadowClass>().expect("a class profile");
    (options.shadow_classes, options.class_profiles) = match choice {
        1 => (vec![class("other=qcloud")], vec![]),
        2 => (vec![class("other=nginx")], vec![]),
        3 => (vec![class("other=qcloud")], vec![class("shunt=nginx")]),
        _ => (vec![], vec![]),
    };
}

/// ingress-nginx's ConfigMap where `options` look for it: `ssl-redirect` off, or no keys.
fn mk_nginx_config(options: &CompileOptions, ssl_redirect_off: bool) -> Arc<ConfigMap> {
    let (namespace, name) = options.shadow.nginx_configmap.clone();
    let data = BTreeMap::from([("ssl-redirect".to_string(), "false".to_string())]);
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(namespace),
            name: Some(name),
            ..Default::default()
        },
        data: Some(data).filter(|_| ssl_redirect_off),
        ..Default::default()
    })
}

/// `default/auth-headers`: one valid field, two, or one no ingress-nginx accepts.
fn mk_auth_headers(choice: usize) -> Arc<ConfigMap> {
    let data: &[(&str, &str)] = match choice {
        0 => &[("X-Tenant", "blue")],
        1 => &[("X-Tenant", "green"), ("X-Team", "ops")],
        _ => &[("X Bad", "v")],
    };
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("default".to_string()),
            name: Some("auth-headers".to_string()),
            ..Default::default()
        },
        data: Some(data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()),
        ..Default::default()
    })
}

/// A `kubernetes.io/tls` Secret: the example hosts' certificate (kind 0), another domain's
/// (1), or the first without its key (2).
fn mk_edited_secret(ns: usize, secret: usize, kind: usize) -> Arc<Secret> {
    let (chain, pem_key) = &pems()[kind.min(1)];
    let mut data = BTreeMap::from(
        [("tls.crt", chain), ("tls.key", pem_key)].map(|(k, v)| (k.to_string(), ByteString(v.clone().into_bytes()))),
    );
    if kind == 2 {
        data.remove("tls.key");
    }
    Arc::new(Secret {
        metadata: meta(ns, format!("s{secret}")),
        type_: Some("kubernetes.io/tls".into()),
        data: Some(data),
        ..Default::default()
    })
}

/// An IPv4 slice `e{name}` of `SERVICES[service]` with `endpoints` as (address, ready).
fn mk_edited_slice(ns: usize, name: usize, service: usize, endpoints: &[(u8, bool)]) -> EndpointSlice {
    let endpoints = endpoints
        .iter()
        .map(|&(host, ready)| mk_endpoint(&format!("10.0.0.{host}"), Some(ready), Some(true), Some(!ready)))
        .collect();
    let mut slice = mk_slice("x", "y", SERVICES[service], &[("http", 8080)], endpoints);
    slice.address_type = "IPv4".into();
    slice.metadata.namespace = NAMESPACES[ns].map(str::to_string);
    slice.metadata.name = Some(format!("e{name}"));
    slice
}
