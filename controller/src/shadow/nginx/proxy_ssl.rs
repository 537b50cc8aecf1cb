//! The `proxy-ssl-*` keys: how nginx speaks TLS to an HTTPS pod.
//!
//! ingress-nginx's parser (internal/ingress/annotations/proxyssl/main.go, `Parse`) reads
//! `proxy-ssl-secret` first and stops when it is absent: the location keeps an empty config and
//! nginx.tmpl writes no `proxy_ssl_*` directive, so the other six keys change nothing. With the
//! secret, the location gets (nginx.tmpl, the location's `ProxySSL` lines):
//!
//! ```text
//! always         proxy_ssl_name NAME (when set), proxy_ssl_server_name on|off
//! with ca.crt    proxy_ssl_trusted_certificate, _ciphers, _protocols, _verify, _verify_depth,
//!                proxy_ssl_certificate (when the Secret also has a keypair, see `secret`)
//! ```
//!
//! Without `proxy_ssl_name` nginx names the pod after the upstream block, `upstream_balancer`
//! (`ngx_http_upstream_init_request`: `u->ssl_name = uscf->host`): that is the name checked,
//! and sent as SNI when `proxy-ssl-server-name` is on. Only `proxy_pass https://` reads these
//! lines (`grpc_pass grpcs://` reads `grpc_ssl_*`, never written), so only `backend-protocol:
//! HTTPS` backends carry the result, and `AUTO_HTTP` ones for their callers over TLS.
//!
//! A Secret that does not exist, or one in another namespace, makes the parse fail with
//! `LocationDenied`: every location of the Ingress answers 503 (`denied.rs`), whatever its
//! protocol. An unreadable Secret is denied too, which shunt does not reproduce (its checks are
//! not OpenSSL's): the host is refused naming the secret.

mod hosts;
mod secret;
mod values;

use std::sync::Arc;

use shunt_proxy::publish::{PodTlsError, pod_client_config};
use shunt_spec::{PodVerification, TlsVersions, UpstreamTls};

pub(super) use self::hosts::refuse_mixed;
use super::annotations::Refusal;
use crate::compile::{Reason, Resolved, SecretLookup, Sink};

/// The keys ingress-nginx's proxyssl parser reads (without the prefix).
const KEYS: [&str; 7] = [
    "proxy-ssl-ciphers",
    "proxy-ssl-name",
    "proxy-ssl-protocols",
    "proxy-ssl-secret",
    "proxy-ssl-server-name",
    "proxy-ssl-verify",
    "proxy-ssl-verify-depth",
];

/// The name nginx checks (and sends as SNI) without `proxy-ssl-name`: the upstream block's.
const UPSTREAM_BLOCK: &str = "upstream_balancer";

/// The `proxy-ssl-*` keys of one Ingress as written (bounded).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProxySslKeys {
    present: Vec<&'static str>,
    /// By index in [`KEYS`].
    values: [Option<String>; 7],
}

type Refused = (Refusal, &'static str);

/// Why the keys give no upstream TLS.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Failure {
    /// shunt cannot reproduce what nginx does: the key named refuses the hosts.
    Refused(Refused),
    /// ingress-nginx denies the Ingress's locations, for this reason.
    Denied(String),
}

impl From<Refused> for Failure {
    fn from(refused: Refused) -> Self {
        Failure::Refused(refused)
    }
}

impl ProxySslKeys {
    /// Notes `name` (without the prefix) when it is a `proxy-ssl-*` key; `false` otherwise.
    pub fn set(&mut self, name: &str, value: &str) -> bool {
        let Some(index) = KEYS.iter().position(|key| *key == name) else {
            return false;
        };
        // Bounded: no legitimate value comes near the bound, and a longer one is refused or
        // invalid (then nginx's default).
        self.values[index] = Some(value.chars().take(values::MAX_VALUE + 1).collect());
        self.present.push(KEYS[index]);
        true
    }

    fn value(&self, key: &str) -> Option<&str> {
        let index = KEYS.iter().position(|known| *known == key)?;
        self.values[index].as_deref()
    }

    /// The keys present when they change nothing (no secret); empty otherwise.
    pub fn inert(&self) -> Vec<&'static str> {
        match self.value("proxy-ssl-secret") {
            None => self.present.clone(),
            Some(_) => Vec::new(),
        }
    }

    /// The upstream TLS the Ingress's HTTPS locations get (`None` without the secret), the key
    /// that refuses its hosts, or why nginx denies its locations. `secret` finds a Secret by
    /// namespace and name.
    pub(super) fn resolve<'s>(
        &self,
        namespace: &str,
        secret: impl FnOnce(&str, &str) -> SecretLookup<'s>,
    ) -> Result<Option<Arc<UpstreamTls>>, Failure> {
        let Some(reference) = self.value("proxy-ssl-secret") else {
            return Ok(None);
        };
        let refuse = |refusal, key| Err(Failure::Refused((refusal, key)));
        let Some((owner, name)) = values::secret_reference(reference) else {
            return refuse(Refusal::Invalid, "proxy-ssl-secret");
        };
        // allow-cross-namespace-resources is off by default.
        if owner != namespace {
            return Err(Failure::Denied(format!(
                "proxy-ssl-secret {owner}/{name}: cross namespace secrets are not supported"
            )));
        }
        let found = match secret(owner, name) {
            SecretLookup::Found(found) => found,
            SecretLookup::Absent => {
                return Err(Failure::Denied(format!(
                    "proxy-ssl-secret {owner}/{name} does not exist"
                )));
            }
            // Of a type `shunt run` does not watch, or the state cannot say it is missing.
            SecretLookup::Unread => return refuse(Refusal::Unsupported, "proxy-ssl-secret"),
        };
        let read = match secret::read(found) {
            Ok(read) => read,
            Err(secret::SecretProblem::Unusable) => return refuse(Refusal::Invalid, "proxy-ssl-secret"),
            Err(secret::SecretProblem::Unsupported) => return refuse(Refusal::Unsupported, "proxy-ssl-secret"),
        };
        let Ok(name) = values::server_name(self.value("proxy-ssl-name")) else {
            return refuse(Refusal::Unsupported, "proxy-ssl-name");
        };
        let name = name.unwrap_or_else(|| UPSTREAM_BLOCK.to_string());
        let sni = values::on(self.value("proxy-ssl-server-name")).then(|| name.clone());
        let tls = match read.trusted {
            None => UpstreamTls {
                verify: None,
                sni,
                versions: TlsVersions::Both,
                client_certificate: None,
            },
            Some(trusted) => self
                .trusted(trusted, name, sni, read.client)
                .map_err(Failure::Refused)?,
        };
        match pod_client_config(&tls, b"http/1.1") {
            Ok(_) => Ok(Some(Arc::new(tls))),
            Err(PodTlsError::Name(_)) => refuse(Refusal::Unsupported, "proxy-ssl-name"),
            Err(_) => refuse(Refusal::Invalid, "proxy-ssl-secret"),
        }
    }

    /// With `ca.crt`: the lines nginx writes only then.
    fn trusted(
        &self,
        trusted: Vec<Vec<u8>>,
        name: String,
        sni: Option<String>,
        client_certificate: Option<shunt_spec::ClientCertificate>,
    ) -> Result<UpstreamTls, Refused> {
        if self
            .value("proxy-ssl-ciphers")
            .is_some_and(|value| !values::default_ciphers(value))
        {
            return Err((Refusal::Unsupported, "proxy-ssl-ciphers"));
        }
        let max_intermediates = match self.value("proxy-ssl-verify-depth").map(values::verify_depth) {
            Some(values::Depth::Negative) => return Err((Refusal::Invalid, "proxy-ssl-verify-depth")),
            Some(values::Depth::Max(depth)) => depth,
            None => 1,
        };
        let Ok(versions) = values::protocols(self.value("proxy-ssl-protocols")) else {
            return Err((Refusal::Invalid, "proxy-ssl-protocols"));
        };
        let verify = values::on(self.value("proxy-ssl-verify")).then_some(PodVerification {
            trusted,
            name,
            max_intermediates,
        });
        Ok(UpstreamTls {
            verify,
            sni,
            versions,
            client_certificate,
        })
    }
}

/// Resolves `nginx`'s keys against the Secrets; a refusal joins its problems, a denial is
/// noted on it (and said, as ingress-nginx logs it).
pub(super) fn apply(
    nginx: &mut super::Nginx<'_>,
    certificates: &crate::compile::TlsBuilder<'_>,
    config: &super::config::NginxConfig,
    sink: &mut Sink<'_>,
) {
    let keys = &nginx.annotations.proxy_ssl;
    let prefix = super::annotations::PREFIX;
    match keys.resolve(nginx.namespace, |namespace, name| certificates.secret(namespace, name)) {
        Ok(tls) => nginx.annotations.upstream_tls = tls,
        Err(Failure::Refused((refusal, key))) => nginx.problems.push(format!("{refusal}: {prefix}{key}")),
        Err(Failure::Denied(reason)) => match super::denied::reproducible(config) {
            Ok(()) => {
                let message = format!("{reason}: ingress-nginx answers 503 on every path of the Ingress");
                super::report(nginx, sink, Reason::InvalidAnnotation, message);
                nginx.denied = Some(reason);
            }
            // The ConfigMap's error pages take the 503 (see `denied.rs`).
            Err(()) => nginx
                .problems
                .push(format!("UnsupportedAnnotation: {prefix}proxy-ssl-secret")),
        },
    }
}

/// The backend a location of `nginx` forwards to: with `backend-protocol: HTTPS` (or
/// `AUTO_HTTP`, whose callers over TLS get `proxy_pass https://`) and a resolved secret, its
/// own copy carrying the setting (an id of its own, so its connections and those of the same
/// Service under another setting never mix).
pub(super) fn backend(nginx: &super::Nginx<'_>, resolved: Arc<Resolved>) -> Arc<Resolved> {
    use shunt_spec::UpstreamProtocol::{AutoHttp, Https};
    use std::hash::{Hash, Hasher};
    let Some(tls) = &nginx.annotations.upstream_tls else {
        return resolved;
    };
    let protocol = nginx.annotations.backend_protocol;
    if !matches!(protocol, Some(Https | AutoHttp)) || Some(resolved.spec.protocol) != protocol {
        return resolved;
    }
    // SipHash with fixed keys: the same setting gives the same id in every compile.
    let mut hasher = std::hash::DefaultHasher::new();
    tls.hash(&mut hasher);
    let mut spec = resolved.spec.clone();
    spec.tls = Some(tls.clone());
    Arc::new(Resolved {
        id: format!("{}#proxy-ssl-{:016x}", resolved.id, hasher.finish()),
        spec,
    })
}
