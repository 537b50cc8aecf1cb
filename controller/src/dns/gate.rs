//! Whether managed mode may write, and which form: nothing when CoreDNS is older than
//! [`MIN_COREDNS`], since it would reject the whole Corefile; the rules for every query type
//! (with a warning) before [`VIEW_COREDNS`]; the address-only form (a `view` block) from it on.
//! The version comes from the `coredns` Deployment's image in the ConfigMap's namespace (when
//! RBAC allows the get), else `--coredns-version`; when neither says, or the tag names no
//! version, shunt warns and writes the form every supported CoreDNS loads.

use k8s_openapi::api::{apps::v1::Deployment, core::v1::PodSpec};
use kube::{Api, Client};
use tokio::time::Instant;
use tracing::warn;

use super::version::{CorednsVersion, MIN_COREDNS, VIEW_COREDNS};

/// The Deployment stock installs (kubeadm, TKE, k3s, AKS) run CoreDNS as.
const DEPLOYMENT: &str = "coredns";

/// Which rules a CoreDNS loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleForm {
    /// A and AAAA rewritten, every other type forwarded (the `view` block).
    AddressOnly,
    /// Every query type of a served name rewritten (CoreDNS before 1.10, or unknown).
    AllTypes,
}

/// What the last check found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum GateDecision {
    Supported,
    /// Older than [`VIEW_COREDNS`]: the rules rewrite every query type.
    NoView {
        version: CorednsVersion,
        from: String,
    },
    TooOld {
        version: CorednsVersion,
        from: String,
    },
    /// Writes go ahead, with a warning saying why the version is unknown.
    Unknown(String),
}

pub struct VersionCheck {
    client: Client,
    namespace: String,
    configmap: String,
    flag: Option<CorednsVersion>,
    checked: Option<(GateDecision, Instant)>,
    /// The last decision reported (log, Event), so each is reported once until it changes.
    reported: Option<GateDecision>,
}

impl VersionCheck {
    pub fn new(client: Client, namespace: &str, configmap: &str, flag: Option<CorednsVersion>) -> Self {
        VersionCheck {
            client,
            namespace: namespace.to_string(),
            configmap: configmap.to_string(),
            flag,
            checked: None,
            reported: None,
        }
    }

    /// `None` when CoreDNS is known to be too old for any rule, else the form it loads (checked
    /// at most once per [`crate::control::RECOMPILE_EVERY`], so an upgrade is noticed without a
    /// restart).
    pub async fn form(&mut self) -> Option<RuleForm> {
        let decision = match &self.checked {
            Some((decision, at)) if at.elapsed() < crate::control::RECOMPILE_EVERY => decision.clone(),
            _ => {
                let decision = self.check().await;
                self.checked = Some((decision.clone(), Instant::now()));
                decision
            }
        };
        if self.reported.as_ref() != Some(&decision) {
            self.report(&decision).await;
            self.reported = Some(decision.clone());
        }
        match decision {
            GateDecision::TooOld { .. } => None,
            GateDecision::Supported => Some(RuleForm::AddressOnly),
            GateDecision::NoView { .. } | GateDecision::Unknown(_) => Some(RuleForm::AllTypes),
        }
    }

    async fn check(&self) -> GateDecision {
        let deployments: Api<Deployment> = Api::namespaced(self.client.clone(), &self.namespace);
        let image = match deployments.get_opt(DEPLOYMENT).await {
            Ok(Some(deployment)) => coredns_image(deployment.spec.and_then(|s| s.template.spec)),
            Ok(None) => None,
            // Most often a 403: the chart grants this get only with manage-coredns.
            Err(_) => None,
        };
        let from_image = image.as_deref().and_then(CorednsVersion::from_image);
        match (from_image, self.flag, image) {
            (Some(version), _, image) => decision(version, format!("image {}", image.unwrap_or_default())),
            (None, Some(version), _) => decision(version, "--coredns-version".to_string()),
            (None, None, Some(image)) => GateDecision::Unknown(format!(
                "the {}/{DEPLOYMENT} image {image} has no version tag; set --coredns-version",
                self.namespace
            )),
            (None, None, None) => GateDecision::Unknown(format!(
                "cannot read Deployment {}/{DEPLOYMENT}; set --coredns-version",
                self.namespace
            )),
        }
    }

    async fn report(&self, decision: &GateDecision) {
        match decision {
            GateDecision::Supported => {}
            GateDecision::Unknown(why) => warn!(
                %why,
                minimum = %MIN_COREDNS,
                "CoreDNS version unknown; writing the rules for every query type (1.8.4 or later), not the address-only view block (1.10.0 or later)"
            ),
            GateDecision::NoView { version, from } => warn!(
                %version,
                %from,
                view = %VIEW_COREDNS,
                "CoreDNS has no view plugin; the rules rewrite every query type of a served name (SOA, TXT, CAA too) until CoreDNS is upgraded"
            ),
            GateDecision::TooOld { version, from } => {
                let note = format!(
                    "CoreDNS {version} (from {from}) is older than {MIN_COREDNS}, which the rewrite rules need; \
                     not writing them (upgrade CoreDNS or drop --manage-coredns)"
                );
                warn!(%version, %from, minimum = %MIN_COREDNS, "CoreDNS too old for the rewrite rules; not writing them");
                let configmap = (self.namespace.as_str(), self.configmap.as_str());
                super::event::warn_on_configmap(&self.client, configmap, "CorednsTooOld", note).await;
            }
        }
    }
}

fn decision(version: CorednsVersion, from: String) -> GateDecision {
    if version.has_view() {
        GateDecision::Supported
    } else if version.is_supported() {
        GateDecision::NoView { version, from }
    } else {
        GateDecision::TooOld { version, from }
    }
}

/// The image of the container named `coredns`, else of the first container.
fn coredns_image(pod: Option<PodSpec>) -> Option<String> {
    let containers = pod?.containers;
    containers
        .iter()
        .find(|c| c.name == "coredns")
        .or_else(|| containers.first())
        .and_then(|c| c.image.clone())
}
