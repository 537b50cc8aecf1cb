//! Why part of an Ingress was left out of the table: one `Diagnostic` per problem, named for
//! the Ingress so it can become a log line, an Event and a metric label.

use std::fmt;

use serde::Serialize;

/// A problem found in one Ingress. The offending path, rule or backend was skipped (or, for
/// [`Reason::NoEndpoints`], compiled to answer 503); everything else still compiled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub namespace: String,
    /// The Ingress.
    pub name: String,
    pub reason: Reason,
    /// Lowercase, no trailing period, names the service/path/host involved.
    pub message: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Reason {
    /// The backend names a Service that does not exist.
    MissingService,
    /// The Service exists but has no (TCP) port with that number or name.
    MissingServicePort,
    /// `type: ExternalName` Services have no endpoints to proxy to.
    ExternalNameService,
    /// `backend.resource` (a non-Service backend) is not supported.
    ResourceBackend,
    /// A service backend without a usable port (none, both number and name, out of range).
    InvalidBackend,
    /// Neither `backend.service` nor `backend.resource` is set.
    MissingBackend,
    /// Not an absolute path, an unknown `pathType`, or characters a request path cannot carry.
    InvalidPath,
    /// Not a DNS-1123 name or a `*.` wildcard of one; the whole rule is skipped.
    InvalidHost,
    /// The backend has no ready (or serving, terminating) endpoints: requests get 503.
    NoEndpoints,
    /// An older Ingress (or an earlier rule of the same one) already routes this host and path,
    /// or already set the default backend, or already bound a certificate to this TLS host.
    Conflict,
    /// A `spec.tls` entry names a Secret that does not exist (or names none): its hosts get
    /// the default certificate.
    MissingTlsSecret,
    /// The Secret is not `kubernetes.io/tls`, lacks a key, does not parse, has a key that does
    /// not match, or is expired or not yet valid: its hosts get the default certificate.
    InvalidTlsSecret,
    /// The certificate does not name a host it is listed for: that host gets the default.
    TlsHostNotCovered,
    /// An annotation shunt reads has a value it does not understand; it is ignored.
    InvalidAnnotation,
    /// The host is served but cluster DNS does not send it to shunt (`--manage-coredns`): it is
    /// the cluster's own name, a public suffix, outside `--dns-domain` or excluded.
    DnsRewriteRefused,
    /// A shadowed host whose load-balancer answer shunt cannot reproduce: it keeps resolving
    /// to the load balancer (see `/shadow` for the reasons).
    ShadowRefused,
}

// === impl Diagnostic ===

impl Diagnostic {
    pub fn new(namespace: &str, name: &str, reason: Reason, message: String) -> Self {
        Diagnostic {
            namespace: namespace.to_string(),
            name: name.to_string(),
            reason,
            message,
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ingress {}/{}: {}: {}",
            self.namespace, self.name, self.reason, self.message
        )
    }
}

// === impl Reason ===

impl Reason {
    /// Every reason, for metrics that want each label present even at 0.
    pub const ALL: [Reason; 16] = [
        Reason::MissingService,
        Reason::MissingServicePort,
        Reason::ExternalNameService,
        Reason::ResourceBackend,
        Reason::InvalidBackend,
        Reason::MissingBackend,
        Reason::InvalidPath,
        Reason::InvalidHost,
        Reason::NoEndpoints,
        Reason::Conflict,
        Reason::MissingTlsSecret,
        Reason::InvalidTlsSecret,
        Reason::TlsHostNotCovered,
        Reason::InvalidAnnotation,
        Reason::DnsRewriteRefused,
        Reason::ShadowRefused,
    ];

    /// The Event reason and metric label: stable, CamelCase like Kubernetes reasons.
    pub const fn as_str(self) -> &'static str {
        match self {
            Reason::MissingService => "MissingService",
            Reason::MissingServicePort => "MissingServicePort",
            Reason::ExternalNameService => "ExternalNameService",
            Reason::ResourceBackend => "ResourceBackend",
            Reason::InvalidBackend => "InvalidBackend",
            Reason::MissingBackend => "MissingBackend",
            Reason::InvalidPath => "InvalidPath",
            Reason::InvalidHost => "InvalidHost",
            Reason::NoEndpoints => "NoEndpoints",
            Reason::Conflict => "Conflict",
            Reason::MissingTlsSecret => "MissingTlsSecret",
            Reason::InvalidTlsSecret => "InvalidTlsSecret",
            Reason::TlsHostNotCovered => "TlsHostNotCovered",
            Reason::InvalidAnnotation => "InvalidAnnotation",
            Reason::DnsRewriteRefused => "DnsRewriteRefused",
            Reason::ShadowRefused => "ShadowRefused",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
