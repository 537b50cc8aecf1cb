//! Shadow profiles: Ingresses of a class another controller serves, compiled with that
//! controller's semantics so that a caller whose DNS points at shunt gets the answer it would
//! have got, and a verdict per host saying whether shunt answers identically or why not.
//!
//! ```text
//! compile (pure) ─ shadowed Ingresses by profile ─▶ Shadowed::compile ─▶ qcloud::compile ─▶ table claims
//!                                                                       └─▶ HostVerdict per host (verdict.rs)
//! verdicts ─▶ /shadow (report.rs), the log (log.rs), DNS refusals, metrics, diagnostics
//! ```
//! The verdicts, the report and the log are the same for every profile. A new profile (nginx
//! is next) plugs in here: a variant of [`Profile`], a module `shadow/NAME/` with a
//! `compile(ingresses, sink, certificates, options) -> Vec<HostVerdict>` claiming its routes
//! in the compile's table (route options go on its [`PathClaim`](crate::compile::PathClaim)s), and
//! an arm in [`Shadowed::take`], [`Shadowed::compile`], [`compiles_own`] and [`report`].

pub mod log;
pub mod qcloud;
pub mod refusals;
mod report;
mod verdict;

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::Ingress;

pub use self::verdict::{HostVerdict, Verdict};
use crate::compile::{CompileOptions, Profile, Sink, TlsBuilder};

/// What the shadow profiles need besides the Ingresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowOptions {
    /// qcloud `auto-rewrite` without a code: not documented precisely, 302 per a secondary source.
    pub default_rewrite_code: u16,
    /// `--shadow-tls HOST=NAMESPACE/NAME`: a `kubernetes.io/tls` Secret per host, as written.
    pub tls: BTreeMap<String, (String, String)>,
}

/// The shadowed Ingresses of the profiles that compile their own, in precedence order.
#[derive(Default)]
pub struct Shadowed<'i> {
    qcloud: Vec<&'i Ingress>,
}

// === impl ShadowOptions ===

impl Default for ShadowOptions {
    fn default() -> Self {
        ShadowOptions {
            default_rewrite_code: 302,
            tls: BTreeMap::new(),
        }
    }
}

// === impl Shadowed ===

impl<'i> Shadowed<'i> {
    /// Keeps `ingress` for its profile's compile; false when the profile is the Ingress spec's,
    /// compiled like our own classes.
    pub fn take(&mut self, ingress: &'i Ingress, profile: Profile) -> bool {
        match profile {
            Profile::IngressSpec => false,
            Profile::Qcloud => {
                self.qcloud.push(ingress);
                true
            }
        }
    }

    /// Compiles the kept Ingresses into `sink` and `certificates`, after the Ingress-spec ones (a
    /// host both claim keeps their routes, and the shadowed one is refused); returns a verdict
    /// per host, sorted by host.
    pub fn compile(
        self,
        sink: &mut Sink<'_>,
        certificates: &mut TlsBuilder<'_>,
        options: &ShadowOptions,
    ) -> Vec<HostVerdict> {
        qcloud::compile(&self.qcloud, sink, certificates, options)
    }
}

/// Whether a class of a profile that compiles its own Ingresses is served: then the compile
/// has verdicts and a `/shadow` document, and is done whole (the incremental compile keeps no
/// profile's state).
pub fn compiles_own(options: &CompileOptions) -> bool {
    options
        .shadow_classes
        .iter()
        .any(|class| class.profile == Profile::Qcloud)
}

/// The `/shadow` document, when a class of a profile with verdicts is served.
pub fn report(options: &CompileOptions, verdicts: &[HostVerdict]) -> Option<serde_json::Value> {
    compiles_own(options).then(|| report::document(qcloud::PROFILE, &qcloud::ASSUMED, verdicts))
}
