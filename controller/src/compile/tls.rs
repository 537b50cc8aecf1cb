//! Server certificates: each selected Ingress's `spec.tls` entries, in precedence order, bind
//! their hosts to a `kubernetes.io/tls` Secret in the Ingress's namespace. A missing, broken,
//! expired or non-covering Secret is a diagnostic, and its hosts fall back to the default.

use crate::objects::{Ingress, IngressSpec};
use std::{
    cell::Cell,
    collections::{BTreeMap, BTreeSet, HashMap, HashSet, btree_map::Entry},
};

use k8s_openapi::{
    api::{core::v1::Secret, networking::v1::IngressTLS},
    jiff::Timestamp,
};
use shunt_proxy::publish::LoadedCertificate;
use shunt_spec::{CertificateId, CertificateSpec, HostMatch, TlsSpec};

use super::{ClusterState, Diagnostic, Reason, namespace_name, paths};

const TLS_SECRET_TYPE: &str = "kubernetes.io/tls";
/// The key of TKE's Opaque certificate Secrets: a Tencent certificate id, never PEM.
const QCLOUD_CERT_ID: &str = "qcloud_cert_id";

/// Collects certificate bindings for one compile.
pub struct TlsBuilder<'a> {
    secrets: HashMap<(&'a str, &'a str), &'a Secret>,
    /// `secrets` and `names` hold every Secret (see [`ClusterState::secrets_listed`]).
    secrets_listed: bool,
    /// Secrets of other types than `kubernetes.io/tls`, by name only.
    names: HashSet<(&'a str, &'a str)>,
    now: Option<Timestamp>,
    /// Each Secret is loaded once per compile, however many Ingresses name it.
    loaded: HashMap<CertificateId, Result<LoadedCertificate, Unusable>>,
    /// Host to (certificate, the Ingress that bound it).
    hosts: BTreeMap<HostMatch, (CertificateId, String)>,
    certificates: BTreeMap<CertificateId, CertificateSpec>,
    default: Option<CertificateId>,
    /// How many times a profile's compile asked about certificates (`ingress` with `spec.tls`,
    /// `serves`, `bind`): a host group that asked depends on Secrets and the clock, which the
    /// incremental compile does not track, so it is compiled again every time.
    asked: Cell<usize>,
}

/// What a Secret holds of a Tencent certificate id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CertId {
    Held,
    /// The Secret exists without one.
    Lacking,
    /// No such Secret.
    NoSecret,
    /// Not in the state, which does not hold every Secret.
    Unknown,
}

/// What the state says of one Secret.
#[derive(Clone, Copy, Debug)]
pub enum SecretLookup<'a> {
    Found(&'a Secret),
    /// No such Secret: the state holds every Secret's name.
    Absent,
    /// Its data is not in the state (a type `shunt run` does not read), or the state does
    /// not say whether it exists.
    Unread,
}

/// Why a Secret cannot serve.
#[derive(Clone)]
struct Unusable {
    reason: Reason,
    message: String,
}

// === impl TlsBuilder ===

impl<'a> TlsBuilder<'a> {
    pub fn new(state: &'a ClusterState, now: Option<Timestamp>) -> Self {
        let secrets = state
            .secrets
            .iter()
            .map(|secret| (namespace_name(&secret.metadata), &**secret))
            .collect();
        TlsBuilder {
            secrets,
            secrets_listed: state.secrets_listed,
            names: (state.secret_names.iter())
                .map(|secret| namespace_name(&secret.0.metadata))
                .collect(),
            now,
            loaded: HashMap::new(),
            hosts: BTreeMap::new(),
            certificates: BTreeMap::new(),
            default: None,
            asked: Cell::new(0),
        }
    }

    /// Binds the hosts of `ingress`'s `spec.tls`; problems go to `diagnostics`.
    pub fn ingress(&mut self, ingress: &Ingress, diagnostics: &mut Vec<Diagnostic>) {
        let (namespace, name) = namespace_name(&ingress.metadata);
        let Some(spec) = ingress
            .spec
            .as_ref()
            .filter(|spec| spec.tls.as_ref().is_some_and(|tls| !tls.is_empty()))
        else {
            return;
        };
        self.asked.set(self.asked.get() + 1);
        let source = format!("{namespace}/{name}");
        let mut report = |reason, message| diagnostics.push(Diagnostic::new(namespace, name, reason, message));
        for entry in spec.tls.iter().flatten() {
            let hosts = entry_hosts(spec, entry, &mut report);
            if hosts.is_empty() {
                continue;
            }
            let Some(secret_name) = entry.secret_name.as_deref().filter(|s| !s.is_empty()) else {
                let message = format!(
                    "tls entry for {} names no secret; the default certificate serves it",
                    list(&hosts)
                );
                report(Reason::MissingTlsSecret, message);
                continue;
            };
            let certificate = match self.load(namespace, secret_name) {
                Ok(certificate) => certificate.clone(),
                Err(unusable) => {
                    let message = format!("{}; the default certificate serves {}", unusable.message, list(&hosts));
                    report(unusable.reason, message);
                    continue;
                }
            };
            let secret = (format!("{namespace}/{secret_name}"), secret_name);
            for host in hosts {
                self.bind_entry_host(host, &certificate, &secret, &source, &mut report);
            }
        }
    }

    /// Binds `host` of a `spec.tls` entry to its Secret (`id`, `name`) if the certificate
    /// covers it and no earlier Ingress bound it to another.
    fn bind_entry_host(
        &mut self,
        host: HostMatch,
        certificate: &LoadedCertificate,
        (id, secret_name): &(String, &str),
        source: &str,
        report: &mut impl FnMut(Reason, String),
    ) {
        if !certificate.covers(&host) {
            let message = format!(
                "certificate in secret {secret_name:?} does not cover host \"{host}\" (it names {}); \
                 the host uses the default certificate",
                certificate.names.join(", ")
            );
            return report(Reason::TlsHostNotCovered, message);
        }
        match self.hosts.entry(host.clone()) {
            Entry::Vacant(slot) => {
                slot.insert((id.clone(), source.to_string()));
            }
            Entry::Occupied(held) if held.get().0 == *id => {}
            Entry::Occupied(held) => {
                let (held_id, holder) = held.get();
                let message = format!("tls host \"{host}\" already uses secret {held_id:?} from ingress {holder:?}");
                report(Reason::Conflict, message);
            }
        }
    }

    /// The Secret `namespace/name` of any type, for a profile that reads other keys of it
    /// (ingress-nginx's `proxy-ssl-secret`); counts as asking, as certificates do.
    pub fn secret(&self, namespace: &str, name: &str) -> SecretLookup<'a> {
        self.asked.set(self.asked.get() + 1);
        match self.secrets.get(&(namespace, name)) {
            Some(secret) => SecretLookup::Found(secret),
            None if self.secrets_listed && !self.names.contains(&(namespace, name)) => SecretLookup::Absent,
            None => SecretLookup::Unread,
        }
    }

    /// Whether a certificate is bound to exactly `host` (not the default certificate).
    pub fn serves(&self, host: &HostMatch) -> bool {
        self.asked.set(self.asked.get() + 1);
        self.hosts.contains_key(host)
    }

    /// Binds every name the certificate of Secret `namespace/name` holds to it, for `source`
    /// serving any host through it (a Gateway listener and route without hostnames): a client
    /// naming one of them gets that certificate. A name already bound keeps its own.
    pub fn bind_names(&mut self, namespace: &str, name: &str, source: &str) {
        let Ok(certificate) = self.load(namespace, name) else {
            return;
        };
        let names: Vec<HostMatch> = (certificate.names.iter())
            .map(|name| HostMatch::from_rule_host(name))
            .collect();
        for host in names {
            // Taken names stay with their first binder, as `bind` decides for one host.
            let _ = self.bind(&host, namespace, name, source);
        }
    }

    /// Binds `host` to the `kubernetes.io/tls` Secret `namespace/name` for `source` (a shadow
    /// profile's explicit mapping). Why not, when not: missing, unusable, not covering, taken.
    pub fn bind(&mut self, host: &HostMatch, namespace: &str, name: &str, source: &str) -> Result<(), String> {
        self.asked.set(self.asked.get() + 1);
        if let Some(secret) = self.secrets.get(&(namespace, name))
            && secret_key(secret, QCLOUD_CERT_ID).is_some()
        {
            return Err(format!(
                "secret {namespace}/{name} holds a Tencent certificate id ({QCLOUD_CERT_ID}), not a certificate"
            ));
        }
        let id = format!("{namespace}/{name}");
        let certificate = self
            .load(namespace, name)
            .map_err(|unusable| format!("{}/{}", namespace, unusable.message))?
            .clone();
        if !certificate.covers(host) {
            return Err(format!(
                "certificate in secret {id} does not cover \"{host}\" (it names {})",
                certificate.names.join(", ")
            ));
        }
        match self.hosts.entry(host.clone()) {
            Entry::Vacant(slot) => {
                slot.insert((id, source.to_string()));
                Ok(())
            }
            Entry::Occupied(held) if held.get().0 == id => Ok(()),
            Entry::Occupied(held) => Err(format!(
                "\"{host}\" already uses secret {:?} from {:?}",
                held.get().0,
                held.get().1
            )),
        }
    }

    /// Whether the `kubernetes.io/tls` Secret `namespace/name` can serve: a Gateway listener's
    /// certificate is judged before any host is bound to it.
    pub fn check(&mut self, namespace: &str, name: &str) -> Result<(), String> {
        self.asked.set(self.asked.get() + 1);
        self.load(namespace, name)
            .map(|_| ())
            .map_err(|unusable| unusable.message)
    }

    /// What the Secret `namespace/name` holds of a Tencent certificate id (TKE's `qcloud_cert_id`).
    pub fn qcloud_cert_id(&self, namespace: &str, name: &str) -> CertId {
        self.asked.set(self.asked.get() + 1);
        match self.secrets.get(&(namespace, name)) {
            Some(secret) if secret_key(secret, QCLOUD_CERT_ID).is_some() => CertId::Held,
            Some(_) => CertId::Lacking,
            // An Opaque Secret, where TKE keeps its ids, whose data shunt never reads.
            None if self.names.contains(&(namespace, name)) => CertId::Unknown,
            None if self.secrets_listed => CertId::NoSecret,
            None => CertId::Unknown,
        }
    }

    /// How many questions about certificates this builder has answered so far.
    pub fn asked(&self) -> usize {
        self.asked.get()
    }

    /// `--default-ssl-certificate`: for SNI names nothing covers and clients without SNI.
    pub fn default_certificate(&mut self, namespace: &str, name: &str) -> Result<(), String> {
        match self.load(namespace, name) {
            Ok(_) => {
                self.default = Some(format!("{namespace}/{name}"));
                Ok(())
            }
            Err(unusable) => Err(unusable.message),
        }
    }

    /// The certificates actually bound, and their bindings.
    pub fn finish(mut self) -> TlsSpec {
        let hosts: BTreeMap<HostMatch, CertificateId> =
            self.hosts.into_iter().map(|(host, (id, _))| (host, id)).collect();
        let used: BTreeSet<&CertificateId> = hosts.values().chain(self.default.as_ref()).collect();
        self.certificates.retain(|id, _| used.contains(id));
        TlsSpec {
            hosts,
            default: self.default,
            certificates: self.certificates,
        }
    }

    /// Loads `namespace/name` once per compile, recording usable ones in `certificates`.
    fn load(&mut self, namespace: &str, name: &str) -> Result<&LoadedCertificate, Unusable> {
        let id = format!("{namespace}/{name}");
        if !self.loaded.contains_key(&id) {
            let outcome = self.read_secret(namespace, name).map(|(spec, certificate)| {
                self.certificates.insert(id.clone(), spec);
                certificate
            });
            self.loaded.insert(id.clone(), outcome);
        }
        self.loaded[&id].as_ref().map_err(Unusable::clone)
    }

    fn read_secret(&self, namespace: &str, name: &str) -> Result<(CertificateSpec, LoadedCertificate), Unusable> {
        let invalid = |message: String| Unusable {
            reason: Reason::InvalidTlsSecret,
            message,
        };
        let Some(secret) = self.secrets.get(&(namespace, name)) else {
            return Err(Unusable {
                reason: Reason::MissingTlsSecret,
                message: format!("secret {name:?} not found"),
            });
        };
        let kind = secret.type_.as_deref().unwrap_or("Opaque");
        if kind != TLS_SECRET_TYPE {
            return Err(invalid(format!(
                "secret {name:?} is of type {kind}, not {TLS_SECRET_TYPE}"
            )));
        }
        let chain = secret_key(secret, "tls.crt").ok_or_else(|| invalid(format!("secret {name:?} has no tls.crt")))?;
        let key = secret_key(secret, "tls.key").ok_or_else(|| invalid(format!("secret {name:?} has no tls.key")))?;
        let certificate =
            LoadedCertificate::from_pem(&chain, &key).map_err(|error| invalid(format!("secret {name:?}: {error}")))?;
        if let Some(now) = self.now {
            let second = now.as_second();
            if second > certificate.not_after {
                return Err(invalid(format!(
                    "certificate in secret {name:?} expired at {}",
                    timestamp(certificate.not_after)
                )));
            }
            if second < certificate.not_before {
                let starts = timestamp(certificate.not_before);
                return Err(invalid(format!(
                    "certificate in secret {name:?} is not valid before {starts}"
                )));
            }
        }
        let spec = CertificateSpec::new(chain, key, certificate.names.clone(), timestamp(certificate.not_after));
        Ok((spec, certificate))
    }
}

/// A key of the Secret: `stringData` (hand-written manifests) over `data`, as the API server merges them.
fn secret_key(secret: &Secret, key: &str) -> Option<Vec<u8>> {
    if let Some(value) = secret.string_data.as_ref().and_then(|data| data.get(key)) {
        return Some(value.clone().into_bytes());
    }
    secret
        .data
        .as_ref()
        .and_then(|data| data.get(key))
        .map(|bytes| bytes.0.clone())
        .filter(|bytes| !bytes.is_empty())
}

/// The hosts a `spec.tls` entry names (an empty list: those of the Ingress's rules), parsed;
/// the catch-all host has no certificate of its own.
fn entry_hosts(spec: &IngressSpec, entry: &IngressTLS, report: &mut impl FnMut(Reason, String)) -> Vec<HostMatch> {
    let listed: Vec<&str> = match entry.hosts.as_deref() {
        Some(hosts) if !hosts.is_empty() => hosts.iter().map(String::as_str).collect(),
        _ => spec
            .rules
            .iter()
            .flatten()
            .filter_map(|rule| rule.host.as_deref())
            .collect(),
    };
    listed
        .iter()
        .filter_map(|raw| match paths::parse_host(raw) {
            Ok(HostMatch::Any) => None,
            Ok(host) => Some(host),
            Err(error) => {
                report(
                    Reason::InvalidHost,
                    format!("invalid tls host {raw:?}, skipped: {error}"),
                );
                None
            }
        })
        .collect()
}

fn timestamp(unix_seconds: i64) -> String {
    Timestamp::from_second(unix_seconds).map_or_else(|_| unix_seconds.to_string(), |t| t.to_string())
}

fn list(hosts: &[HostMatch]) -> String {
    let names: Vec<String> = hosts.iter().map(|host| format!("\"{host}\"")).collect();
    match names.as_slice() {
        [one] => format!("host {one}"),
        _ => format!("hosts {}", names.join(", ")),
    }
}
