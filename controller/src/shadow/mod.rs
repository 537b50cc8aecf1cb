//! Shadow profiles: Ingresses of a class another controller serves, compiled with that
//! controller's semantics so that a caller whose DNS points at shunt gets the answer it would
//! have got, and a verdict per host saying whether shunt answers identically or why not.
//!
//! ```text
//! compile (pure) ─ shadowed Ingresses by profile ─▶ Shadowed::compile ─▶ OwnProfile::compile ─▶ table claims
//!                                                                       └─▶ HostVerdict per host (verdict.rs)
//! verdicts ─▶ /shadow (report.rs), the log (log.rs), DNS refusals, metrics, diagnostics
//! ```
//! The verdicts, the report and the log are the same for every profile. A new profile plugs in
//! through [`OwnProfile`]: a module `shadow/NAME/` implementing it (its `compile` claims its
//! routes in the compile's table, route options on its [`PathClaim`](crate::compile::PathClaim)s,
//! and returns a verdict per host), and a variant of [`Profile`] whose [`Profile::own`] names it.
//! The full compile and the incremental one (by host group) both call it through [`Shadowed`].

pub mod log;
pub mod nginx;
pub mod qcloud;
pub mod refusals;
pub mod report;
pub(crate) mod strings;
pub(crate) mod verdict;

use std::sync::Arc;

use std::{
    collections::BTreeMap,
    sync::atomic::{AtomicBool, Ordering},
};

use crate::objects::Ingress;
use tracing::info;

pub use self::verdict::{HostVerdict, IngressKind, IngressVerdict, Verdict, Verdicts};
use crate::compile::{ClusterState, CompileOptions, Profile, Sink, TlsBuilder};

/// What the shadow profiles need besides the Ingresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowOptions {
    /// qcloud `auto-rewrite` without a code: not documented precisely, 302 per a secondary source.
    pub default_rewrite_code: u16,
    /// `--shadow-tls HOST=NAMESPACE/NAME`: a `kubernetes.io/tls` Secret per host, as written.
    pub tls: BTreeMap<String, (String, String)>,
    /// `--nginx-configmap`: ingress-nginx's ConfigMap (namespace, name).
    pub nginx_configmap: (String, String),
    /// `--nginx-default-backend`: ingress-nginx's `--default-backend-service`, where custom
    /// error pages go without a `default-backend` annotation; none is its built-in 404 server.
    pub nginx_default_backend: Option<(String, String)>,
}

/// What the profiles read besides the Ingresses and options: found once per compile, whatever
/// the number of host groups compiled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileConfig {
    /// ingress-nginx's ConfigMap (`--nginx-configmap`), or its defaults.
    pub nginx: nginx::config::NginxConfig,
    /// TKE's TkeServiceConfigs, read when the qcloud profile is served.
    pub qcloud: qcloud::service_config::ServiceConfigs,
}

/// A profile that compiles its own Ingresses with the semantics of the controller it stands in
/// for, and says per host whether shunt answers as that controller would.
pub trait OwnProfile: Sync {
    /// Its name in `--shadow-class NAME=PROFILE` and the `/shadow` document.
    fn name(&self) -> &'static str;

    /// What it assumes of that controller where its documentation is not precise; `/shadow`
    /// lists it.
    fn assumed(&self) -> &'static [&'static str];

    /// The annotation keys it knows to change nothing a caller gets; `/shadow` lists them.
    fn no_effect(&self) -> Vec<String> {
        Vec::new()
    }

    /// Compiles `ingresses` (in precedence order) into `sink` and `certificates`, after the
    /// Ingress-spec ones; returns a verdict per named host, sorted by host, and one per
    /// catch-all or skipped Ingress. Called with all of
    /// the profile's Ingresses (the full compile) or with one host group's (the incremental one):
    /// what it gives a host must depend only on the Ingresses naming that host.
    fn compile(
        &self,
        ingresses: &[&Ingress],
        sink: &mut Sink<'_>,
        certificates: &mut TlsBuilder<'_>,
        options: &ShadowOptions,
        config: &ProfileConfig,
    ) -> Verdicts;
}

/// The shadowed Ingresses of the profiles that compile their own, in precedence order.
#[derive(Default)]
pub struct Shadowed<'i> {
    /// By profile, in the order the profiles compile (qcloud, then nginx).
    ingresses: BTreeMap<Profile, Vec<&'i Ingress>>,
    /// The class each kept Ingress (`namespace/name`) was selected by, for the report.
    classes: BTreeMap<String, String>,
}

// === impl ShadowOptions ===

impl Default for ShadowOptions {
    fn default() -> Self {
        ShadowOptions {
            default_rewrite_code: shunt_spec::defaults::QCLOUD_AUTO_REWRITE_CODE,
            tls: BTreeMap::new(),
            nginx_configmap: nginx::config::default_configmap(),
            nginx_default_backend: None,
        }
    }
}

// === impl Shadowed ===

impl<'i> Shadowed<'i> {
    /// Keeps `ingress` for its profile's compile; false when the profile is the Ingress spec's,
    /// compiled like our own classes.
    pub fn take(&mut self, ingress: &'i Ingress, profile: Profile) -> bool {
        if profile.own().is_none() {
            return false;
        }
        self.ingresses.entry(profile).or_default().push(ingress);
        let (namespace, name) = crate::compile::namespace_name(&ingress.metadata);
        self.classes.insert(format!("{namespace}/{name}"), class_label(ingress));
        true
    }

    /// Compiles the kept Ingresses into `sink` and `certificates`, after the Ingress-spec ones (a
    /// host both claim keeps their routes, and the shadowed one is refused); returns a verdict
    /// per host, sorted by host, and per catch-all or skipped Ingress, sorted by Ingress.
    ///
    /// The profile's diagnostics come last, ordered by Ingress (namespace, name), each Ingress's
    /// in the order its profile found them: the same whether the kept Ingresses are all of them
    /// (the full compile) or one host group (the incremental one).
    pub fn compile(
        self,
        sink: &mut Sink<'_>,
        certificates: &mut TlsBuilder<'_>,
        options: &ShadowOptions,
        config: &ProfileConfig,
    ) -> Verdicts {
        let first = sink.diagnostics.len();
        let mut verdicts = Vec::new();
        let mut ingresses = Vec::new();
        for (profile, kept) in &self.ingresses {
            if let Some(own) = profile.own() {
                let compiled = own.compile(kept, sink, certificates, options, config);
                verdicts.extend(compiled.hosts);
                ingresses.extend(compiled.ingresses);
            }
        }
        sink.diagnostics[first..].sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
        verdicts.sort_by(|a, b| a.host.cmp(&b.host));
        for verdict in &mut verdicts {
            let classes = verdict.ingresses.iter().filter_map(|source| self.classes.get(source));
            verdict.classes = classes
                .cloned()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .into();
        }
        for entry in &mut ingresses {
            entry.class = self.classes.get(&entry.ingress).cloned().unwrap_or_default();
        }
        ingresses.sort_by(|a, b| a.ingress.cmp(&b.ingress));
        Verdicts {
            hosts: verdicts,
            ingresses,
        }
    }
}

// === impl ProfileConfig ===

impl ProfileConfig {
    /// The configuration `options` point at in `config_maps`; a missing nginx ConfigMap is said
    /// in the log when the nginx profile is served.
    pub fn find(options: &CompileOptions, state: &ClusterState) -> Self {
        let qcloud = match serves(options, Profile::Qcloud) {
            true => qcloud::service_config::ServiceConfigs::parse(&state.tke_service_configs),
            false => Default::default(),
        };
        if !serves_nginx(options) {
            return ProfileConfig {
                qcloud,
                ..ProfileConfig::default()
            };
        }
        let configmap = &options.shadow.nginx_configmap;
        let nginx = nginx::config::NginxConfig::find(&state.config_maps, configmap);
        say_missing_configmap(&nginx, configmap);
        ProfileConfig { nginx, qcloud }
    }
}

/// The class an Ingress names: `spec.ingressClassName`, else the legacy annotation, else none
/// (Ingresses without a class that a profile takes, as qcloud does).
fn class_label(ingress: &Ingress) -> String {
    let spec = ingress.spec.as_ref().and_then(|spec| spec.ingress_class_name.clone());
    let annotation = || {
        let annotations = ingress.metadata.annotations.as_ref()?;
        annotations.get("kubernetes.io/ingress.class").cloned()
    };
    spec.or_else(annotation).unwrap_or_else(|| "(none)".to_string())
}

/// A missing ConfigMap is said once (again only after it was found in between): compiles run
/// every minute and on every change, and the defaults they assume do not change.
fn say_missing_configmap(config: &nginx::config::NginxConfig, (namespace, name): &(String, String)) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if config.found {
        SAID.store(false, Ordering::Relaxed);
    } else if !SAID.swap(true, Ordering::Relaxed) {
        info!(
            configmap = %format_args!("{namespace}/{name}"),
            "ingress-nginx's ConfigMap not found: the nginx profile assumes ingress-nginx's defaults"
        );
    }
}

/// Whether a class is compiled with the nginx profile: then its ConfigMap is read.
pub fn serves_nginx(options: &CompileOptions) -> bool {
    serves(options, Profile::Nginx)
}

/// Whether a class is compiled with the qcloud profile: then TkeServiceConfigs are read.
pub fn serves_qcloud(options: &CompileOptions) -> bool {
    serves(options, Profile::Qcloud)
}

fn serves(options: &CompileOptions, profile: Profile) -> bool {
    (options.shadow_classes.iter())
        .chain(&options.class_profiles)
        .any(|class| class.profile == profile)
}

/// The `/shadow` document as the table keeps it (written when first read), when a class of a
/// profile with verdicts is served.
pub fn report(
    options: &CompileOptions,
    verdicts: Arc<[Arc<HostVerdict>]>,
    ingresses: Arc<[IngressVerdict]>,
) -> Option<shunt_spec::Document> {
    let served = served_profiles(options)?;
    Some(report::deferred(served, verdicts, ingresses))
}

/// The profiles with verdicts that `options` serve (named `qcloud`, `nginx` or `qcloud+nginx`),
/// what they assume and know to have no effect; `None` when none is served.
pub fn served_profiles(options: &CompileOptions) -> Option<report::Served> {
    let classes = (options.shadow_classes.iter()).chain(&options.class_profiles);
    let profiles: std::collections::BTreeSet<Profile> = classes.map(|class| class.profile).collect();
    let mut served = report::Served::default();
    let mut names = Vec::new();
    for own in profiles.into_iter().filter_map(Profile::own) {
        names.push(own.name());
        served.assumed.extend(own.assumed());
        served.no_effect.extend(own.no_effect());
    }
    served.profile = names.join("+");
    let owned = options
        .class_profiles
        .iter()
        .filter(|class| class.profile.compiles_own());
    served.owned = owned.map(|class| class.name.clone()).collect();
    (!names.is_empty()).then_some(served)
}
