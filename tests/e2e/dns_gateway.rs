//! `shunt dns --manifests` and shunt's own Gateways: an accepted route's hostnames, as
//! intersected with its listener's, get rules under the guards Ingress hosts have; a hostname
//! the listener does not allow, a route its listener refuses, and another controller's
//! Gateways get none.

use crate::{
    dns::{TARGET, shunt_dns, stdout},
    support::*,
};

const OBJECTS: &str = r#"
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: shunt}
spec: {controllerName: shunt.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.net/gateway}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: blue}}
---
apiVersion: v1
kind: Namespace
metadata: {name: rogue, labels: {team: red}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: web}
spec:
  gatewayClassName: shunt
  listeners:
  - {name: apps, port: 80, protocol: HTTP, hostname: "*.apps.example.com", allowedRoutes: {namespaces: {from: Same}}}
  - {name: any, port: 80, protocol: HTTP, hostname: "any.example.org", allowedRoutes: {namespaces: {from: Selector, selector: {matchLabels: {team: blue}}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {namespace: shop, name: theirs}
spec:
  gatewayClassName: other
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: shop}
spec:
  parentRefs: [{name: web, sectionName: apps}]
  hostnames: ["cart.apps.example.com", "bank.example.net", "*.example.com"]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: rogue, name: hijack}
spec:
  parentRefs: [{name: web, namespace: shop}]
  hostnames: ["any.example.org", "cart.apps.example.com"]
  rules: [{backendRefs: [{name: web, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {namespace: shop, name: foreign}
spec:
  parentRefs: [{name: theirs}]
  hostnames: ["theirs.example.com"]
  rules: [{backendRefs: [{name: web, port: 80}]}]
"#;

#[tokio::test]
async fn accepted_routes_hostnames_within_their_listeners_get_rules_and_nothing_else() {
    let manifests = Manifests::new();
    manifests.write_text("gateway.yaml", OBJECTS);
    manifests.write("web.yaml", &[&mk_service_on_ports("shop", "web", None, &[])]);
    let printed = stdout(&shunt_dns(&manifests, &["--coredns-version", "1.9.4"]).await);
    // `*.example.com` narrows to the listener's `*.apps.example.com` (a Gateway API wildcard:
    // one label or more); `bank.example.net` is outside it; the rogue namespace is not selected and not Same; `theirs` is not ours.
    assert_eq!(
        printed,
        format!(
            "# BEGIN shunt shunt-system/shunt\n\
             rewrite name exact cart.apps.example.com {TARGET}\n\
             rewrite stop name regex ^(?:[^.]+\\.)+apps\\.example\\.com\\.$ {TARGET}. answer auto\n\
             # END shunt shunt-system/shunt\n"
        )
    );
}
