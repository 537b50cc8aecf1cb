//! The tests' own client to the real API server: objects as JSON, applied server-side, read,
//! listed and deleted by kind, so test code reads like the manifests it stands for.

use kube::{
    Api, Client, Config,
    api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams},
};
use rustls::pki_types::{CertificateDer, pem::PemObject};
use serde_json::Value;

/// A kube Client for `url` with a bearer `token`, trusting `ca_pem` only.
pub fn client(url: &str, token: &str, ca_pem: &str) -> Client {
    let mut config = Config::new(url.parse().expect("a valid API server URL"));
    let ca = CertificateDer::from_pem_slice(ca_pem.as_bytes()).expect("the CA in PEM");
    config.root_cert = Some(vec![ca.to_vec()]);
    config.auth_info.token = Some(token.to_string().into());
    Client::try_from(config).expect("a kube client")
}

/// Whether `GET /readyz` answers 200.
pub async fn readyz(url: &str, token: &str, ca_pem: &str) -> bool {
    let (base, _) = url.rsplit_once("/readyz").expect("a /readyz URL");
    let request = http::Request::get("/readyz").body(Vec::new()).expect("a request");
    client(base, token, ca_pem).request_text(request).await.is_ok()
}

/// Objects in one namespace (cluster-scoped kinds ignore it).
#[derive(Clone)]
pub struct Kube {
    pub client: Client,
    pub namespace: String,
}

impl Kube {
    /// Creates or updates `object` (server-side apply, forced); returns it as stored.
    pub async fn apply(&self, object: Value) -> Value {
        let kind = object["kind"].as_str().expect("an object with a kind").to_string();
        let name = object["metadata"]["name"]
            .as_str()
            .expect("an object with a name")
            .to_string();
        let api = self.api(&kind);
        let params = PatchParams::apply("shunt-tests").force();
        let stored = api
            .patch(&name, &params, &Patch::Apply(&object))
            .await
            .unwrap_or_else(|e| panic!("applying {kind} {name}: {e}"));
        serde_json::to_value(stored).expect("JSON")
    }

    /// Creates `object` (a plain POST: cheaper for the server than an apply, for bulk loads).
    pub async fn create(&self, object: &Value) {
        let kind = object["kind"].as_str().expect("an object with a kind");
        let dynamic: DynamicObject = serde_json::from_value(object.clone()).expect("an object");
        let created = self.api(kind).create(&PostParams::default(), &dynamic).await;
        created.unwrap_or_else(|e| panic!("creating {kind} {}: {e}", object["metadata"]["name"]));
    }

    /// Merges `status` into the object's status subresource (which an apply of the object
    /// leaves alone), as the controller owning it would.
    pub async fn patch_status(&self, kind: &str, name: &str, status: Value) -> Value {
        let patch = serde_json::json!({"status": status});
        let patched = self
            .api(kind)
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        let patched = patched.unwrap_or_else(|e| panic!("patching the status of {kind} {name}: {e}"));
        serde_json::to_value(patched).expect("JSON")
    }

    /// The stored object, or `None` if there is none.
    pub async fn get(&self, kind: &str, name: &str) -> Option<Value> {
        let found = self.api(kind).get_opt(name).await;
        let found = found.unwrap_or_else(|e| panic!("reading {kind} {name}: {e}"));
        found.map(|object| serde_json::to_value(object).expect("JSON"))
    }

    /// Every object of `kind` matching `fields` (a field selector, or "").
    pub async fn list(&self, kind: &str, fields: &str) -> Vec<Value> {
        let params = ListParams::default().fields(fields);
        let list = self.api(kind).list(&params).await;
        let list = list.unwrap_or_else(|e| panic!("listing {kind} ({fields}): {e}"));
        list.items
            .into_iter()
            .map(|object| serde_json::to_value(object).expect("JSON"))
            .collect()
    }

    /// Deletes it; a missing object is no error.
    pub async fn delete(&self, kind: &str, name: &str) {
        let deleted = self.api(kind).delete(name, &DeleteParams::default()).await;
        match deleted {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => panic!("deleting {kind} {name}: {e}"),
        }
    }

    /// The dynamic API of `kind`; `v1.Event` is the core Event, `Event` the events.k8s.io one.
    pub fn api(&self, kind: &str) -> Api<DynamicObject> {
        let (resource, namespaced) = resource(kind);
        if namespaced {
            Api::namespaced_with(self.client.clone(), &self.namespace, &resource)
        } else {
            Api::all_with(self.client.clone(), &resource)
        }
    }
}

const GATEWAY: &str = "gateway.networking.k8s.io";

/// The kinds the tests use: group, version, kind, plural, namespaced.
fn resource(kind: &str) -> (ApiResource, bool) {
    let (group, version, kind, plural, namespaced) = match kind {
        "Namespace" => ("", "v1", "Namespace", "namespaces", false),
        "Service" => ("", "v1", "Service", "services", true),
        "ConfigMap" => ("", "v1", "ConfigMap", "configmaps", true),
        "Secret" => ("", "v1", "Secret", "secrets", true),
        "ServiceAccount" => ("", "v1", "ServiceAccount", "serviceaccounts", true),
        "v1.Event" => ("", "v1", "Event", "events", true),
        "Event" => ("events.k8s.io", "v1", "Event", "events", true),
        "EndpointSlice" => ("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", true),
        "Ingress" => ("networking.k8s.io", "v1", "Ingress", "ingresses", true),
        "IngressClass" => ("networking.k8s.io", "v1", "IngressClass", "ingressclasses", false),
        "Lease" => ("coordination.k8s.io", "v1", "Lease", "leases", true),
        "Deployment" => ("apps", "v1", "Deployment", "deployments", true),
        "Role" => ("rbac.authorization.k8s.io", "v1", "Role", "roles", true),
        "RoleBinding" => ("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", true),
        "ClusterRole" => ("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false),
        "ClusterRoleBinding" => (
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
        ),
        "CustomResourceDefinition" => (
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        ),
        "GatewayClass" => (GATEWAY, "v1", "GatewayClass", "gatewayclasses", false),
        "Gateway" => (GATEWAY, "v1", "Gateway", "gateways", true),
        "HTTPRoute" => (GATEWAY, "v1", "HTTPRoute", "httproutes", true),
        "GRPCRoute" => (GATEWAY, "v1", "GRPCRoute", "grpcroutes", true),
        "ReferenceGrant" => (GATEWAY, "v1beta1", "ReferenceGrant", "referencegrants", true),
        other => panic!("tests/cluster/real/envtest/kube.rs knows no kind {other}"),
    };
    let gvk = GroupVersionKind::gvk(group, version, kind);
    (ApiResource::from_gvk_with_plural(&gvk, plural), namespaced)
}
