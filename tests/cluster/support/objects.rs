//! The objects the tests put into the fake API server, as the API would return them (JSON).

use serde_json::{Value, json};

/// Our class under shunt's default `--ingress-class shunt`.
pub const OURS: &str = "shunt";

/// A ClusterIP Service with one port, 80, named `http`.
pub fn mk_service(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"clusterIP": "10.96.0.20", "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]},
    })
}

/// An EndpointSlice of `service` with one ready endpoint, `127.0.0.1:port`.
pub fn mk_slice(namespace: &str, name: &str, service: &str, port: u16) -> Value {
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"namespace": namespace, "name": name, "labels": {"kubernetes.io/service-name": service}},
        "addressType": "IPv4",
        "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true, "serving": true, "terminating": false}}],
    })
}

/// An Ingress of `class` routing every path of `host` to port `http` of `service`.
pub fn mk_ingress(namespace: &str, name: &str, class: &str, host: &str, service: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {
            "ingressClassName": class,
            "rules": [{"host": host, "http": {"paths": [{
                "path": "/", "pathType": "Prefix",
                "backend": {"service": {"name": service, "port": {"name": "http"}}},
            }]}}],
        },
    })
}

pub fn mk_ingress_class(name: &str, controller: &str) -> Value {
    json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
        "metadata": {"name": name},
        "spec": {"controller": controller},
    })
}

/// `status.loadBalancer.ingress` of a stored Ingress (null when unset).
pub fn lb_status(ingress: &Value) -> Value {
    ingress["status"]["loadBalancer"]["ingress"].clone()
}
