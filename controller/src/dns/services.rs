//! L4 LoadBalancer Services by name (`--dns-loadbalancer-services`): a `type: LoadBalancer`
//! Service naming its public hostnames in external-dns's annotation hairpins through the load
//! balancer like an Ingress host does, with no proxy needed to fix the by-name case: the name
//! can answer with the Service's own cluster name, `NAME.NS.svc.CLUSTER_DOMAIN` (its ClusterIP).
//!
//! ```text
//! Service (LoadBalancer, external-dns.alpha.kubernetes.io/hostname: a.example.com,b.example.com)
//!   ─▶ ServiceName { host, target: NAME.NS.svc.cluster.local } ─▶ policy ─▶ Stanza rules
//! ```

use std::fmt;

use shunt_spec::HostMatch;

use crate::{compile::parse_host, objects::Service};

/// external-dns's annotation: the public hostnames of a Service, comma-separated.
pub const HOSTNAME_ANNOTATION: &str = "external-dns.alpha.kubernetes.io/hostname";

/// One public hostname of a LoadBalancer Service and the cluster name it answers with.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ServiceName {
    pub host: HostMatch,
    /// `NAME.NAMESPACE.svc.CLUSTER_DOMAIN`, without the trailing dot.
    pub target: String,
    /// `NAMESPACE/NAME`, for logs and refusals.
    pub service: String,
}

impl fmt::Display for ServiceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (Service {})", self.host, self.service)
    }
}

/// Every hostname the LoadBalancer Services name, sorted; names that do not parse as hosts
/// (with the Service and why) come second.
pub fn load_balancer_names<'a>(
    services: impl IntoIterator<Item = &'a Service>,
    cluster_domain: &str,
) -> (Vec<ServiceName>, Vec<String>) {
    let mut names = Vec::new();
    let mut invalid = Vec::new();
    for service in services {
        let is_load_balancer = service.spec.as_ref().and_then(|spec| spec.type_.as_deref()) == Some("LoadBalancer");
        let annotation = service
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(HOSTNAME_ANNOTATION));
        let (Some(annotation), true) = (annotation, is_load_balancer) else {
            continue;
        };
        let namespace = service.metadata.namespace.as_deref().unwrap_or_default();
        let name = service.metadata.name.as_deref().unwrap_or_default();
        let domain = cluster_domain.trim_end_matches('.');
        for raw in annotation.split(',').map(str::trim).filter(|raw| !raw.is_empty()) {
            // external-dns accepts a trailing dot.
            match parse_host(raw.strip_suffix('.').unwrap_or(raw)) {
                Ok(HostMatch::Any) | Err(_) => {
                    invalid.push(format!("Service {namespace}/{name}: {raw:?} is not a hostname"))
                }
                Ok(host) => names.push(ServiceName {
                    host,
                    target: format!("{name}.{namespace}.svc.{domain}"),
                    service: format!("{namespace}/{name}"),
                }),
            }
        }
    }
    names.sort();
    // One name, one answer: the first Service (by namespace and name) keeps a name two claim.
    names.dedup_by(|later, first| later.host == first.host);
    (names, invalid)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::mk_service;

    fn mk_load_balancer(namespace: &str, name: &str, hostnames: &str) -> Service {
        let mut service = mk_service(namespace, name, &[("", 443)]);
        service.spec.get_or_insert_with(Default::default).type_ = Some("LoadBalancer".into());
        service.metadata.annotations = Some(Box::new(
            [(HOSTNAME_ANNOTATION.to_string(), hostnames.to_string())].into(),
        ));
        service
    }

    #[test]
    fn each_hostname_of_a_load_balancer_answers_with_its_cluster_name() {
        let db = mk_load_balancer("data", "db", "db.example.com, Replica.Example.com.,");
        let mut cluster_ip = mk_load_balancer("web", "internal", "internal.example.com");
        cluster_ip.spec.get_or_insert_with(Default::default).type_ = Some("ClusterIP".into());
        let (names, invalid) = load_balancer_names([&db, &cluster_ip], "cluster.local");
        let named: Vec<(String, &str)> = names.iter().map(|n| (n.host.to_string(), n.target.as_str())).collect();
        assert_eq!(
            named,
            [
                ("db.example.com".to_string(), "db.data.svc.cluster.local"),
                ("replica.example.com".to_string(), "db.data.svc.cluster.local"),
            ]
        );
        assert!(invalid.is_empty());
    }

    #[test]
    fn a_bad_hostname_is_reported_and_a_name_two_services_claim_goes_to_the_first() {
        let a = mk_load_balancer("a", "lb", "x.example.com,bad name");
        let b = mk_load_balancer("b", "lb", "x.example.com");
        let (names, invalid) = load_balancer_names([&b, &a], "corp.local.");
        assert_eq!(names.len(), 1);
        assert_eq!(names[0].target, "lb.a.svc.corp.local");
        assert_eq!(invalid, ["Service a/lb: \"bad name\" is not a hostname"]);
    }
}
