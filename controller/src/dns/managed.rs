//! Managed mode (`--manage-coredns`, leader only): keeps this release's rules current in a
//! ConfigMap with get + update, nothing else (the RBAC is scoped to that one ConfigMap by name,
//! which `create` cannot be). An update carries the resourceVersion it read, so an operator's
//! concurrent edit (or another release's) is never overwritten: the write fails with 409 and
//! is redone from a fresh read.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client, api::PostParams};
use tracing::{info, warn};

use super::{
    corefile::{kubernetes_zones, replace_block},
    gate::RuleForm,
    guards::has_reload,
    release::BEGIN_MARKER,
    stanza::Stanza,
    view::{self, ViewError},
};

/// The key releases without an identity wrote; taken over (removed) when this release writes.
const LEGACY_OVERRIDE_KEY: &str = "shunt.override";
const COREFILE_KEY: &str = "Corefile";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CorednsTarget {
    /// The marker block inside `.:53 {` of the main Corefile (TKE and most clusters).
    Corefile,
    /// Key `NAMESPACE.NAME.override` of a `coredns-custom` ConfigMap (k3s, AKS).
    Custom,
}

pub struct CorednsWriter {
    api: Api<ConfigMap>,
    name: String,
    /// `namespace/name`, for errors and logs.
    qualified: String,
    pub(super) target: CorednsTarget,
}

/// What one sync did: whether it wrote, and the stanza now in place.
#[derive(Debug)]
pub struct Synced {
    pub wrote: bool,
    pub stanza: Stanza,
    /// The zones the Corefile's `kubernetes` plugin serves (empty for the custom target).
    pub zones: Vec<String>,
    /// Whether the Corefile loads `reload` (true for the custom target, whose Corefile shunt
    /// does not read).
    pub reload: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CorednsError {
    #[error("ConfigMap {0} not found (shunt only updates it; create it or fix --coredns-configmap)")]
    Missing(String),
    #[error("ConfigMap {0} has no key {COREFILE_KEY}")]
    NoCorefile(String),
    #[error("ConfigMap {name}: {source}")]
    Corefile {
        name: String,
        #[source]
        source: super::CorefileError,
    },
    #[error("ConfigMap {name}: {source}")]
    Api {
        name: String,
        #[source]
        source: kube::Error,
    },
}

impl CorednsTarget {
    /// The ConfigMap name a target uses unless `--coredns-configmap` says otherwise.
    pub fn default_configmap(self) -> &'static str {
        match self {
            CorednsTarget::Corefile => "coredns",
            CorednsTarget::Custom => "coredns-custom",
        }
    }
}

impl CorednsWriter {
    pub fn new(client: Client, namespace: &str, name: &str, target: CorednsTarget) -> Self {
        CorednsWriter {
            api: Api::namespaced(client, namespace),
            name: name.to_string(),
            qualified: format!("{namespace}/{name}"),
            target,
        }
    }

    /// Brings the ConfigMap in line with the stanza `build` makes from the Corefile's
    /// `kubernetes` zones (read in the same get as the Corefile it edits). A write that lost a
    /// race (409: another release or an operator wrote in between) is redone from a fresh
    /// read, a few times, so two releases editing one Corefile both land without waiting for
    /// their next change.
    pub async fn sync(&self, build: impl Fn(&[String]) -> Stanza, form: RuleForm) -> Result<Synced, CorednsError> {
        const ATTEMPTS: usize = 3;
        let mut attempt = 1;
        loop {
            match self.sync_once(&build, form).await {
                Err(CorednsError::Api {
                    source: kube::Error::Api(status),
                    ..
                }) if status.code == 409 && attempt < ATTEMPTS => attempt += 1,
                result => return result,
            }
        }
    }

    async fn sync_once(&self, build: &impl Fn(&[String]) -> Stanza, form: RuleForm) -> Result<Synced, CorednsError> {
        let api_error = |source| CorednsError::Api {
            name: self.qualified.clone(),
            source,
        };
        let Some(mut config_map) = self.api.get_opt(&self.name).await.map_err(api_error)? else {
            return Err(CorednsError::Missing(self.qualified.clone()));
        };
        let data = config_map.data.get_or_insert_with(BTreeMap::new);
        let mut adopted = false;
        let (key, wanted, zones, stanza, reload) = match self.target {
            CorednsTarget::Custom => {
                let stanza = build(&[]);
                let key = stanza.release().override_key();
                // An older shunt's key (marked as ours on its first line) would double the rules.
                if data
                    .get(LEGACY_OVERRIDE_KEY)
                    .is_some_and(|old| old.starts_with(&format!("{BEGIN_MARKER} (written by shunt")))
                {
                    adopted = data.remove(LEGACY_OVERRIDE_KEY).is_some();
                }
                (key, stanza.override_file(false), Vec::new(), stanza, true)
            }
            CorednsTarget::Corefile => {
                let current = data
                    .get(COREFILE_KEY)
                    .ok_or_else(|| CorednsError::NoCorefile(self.qualified.clone()))?;
                let zones = kubernetes_zones(current);
                let stanza = build(&zones);
                let edited = replace_block(current, &stanza).map_err(|source| CorednsError::Corefile {
                    name: self.qualified.clone(),
                    source,
                })?;
                let edited = self.with_view(edited, &stanza, form)?;
                (COREFILE_KEY.to_string(), edited, zones, stanza, has_reload(current))
            }
        };
        if data.get(&key) == Some(&wanted) && !adopted {
            return Ok(Synced {
                wrote: false,
                stanza,
                zones,
                reload,
            });
        }
        data.insert(key.clone(), wanted);
        self.api
            .replace(&self.name, &PostParams::default(), &config_map)
            .await
            .map_err(api_error)?;
        info!(configmap = %self.qualified, key, rules = stanza.rules().len(), "Updated CoreDNS rewrite rules");
        Ok(Synced {
            wrote: true,
            stanza,
            zones,
            reload,
        })
    }
}

impl CorednsWriter {
    /// The Corefile with this release's view block (address records only) or, for a CoreDNS
    /// without `view` or a root block without `forward`, without one: the rules then rewrite
    /// every query type, as before, and the log says so.
    fn with_view(&self, corefile: String, stanza: &Stanza, form: RuleForm) -> Result<String, CorednsError> {
        let release = stanza.release();
        let corefile_error = |source| CorednsError::Corefile {
            name: self.qualified.clone(),
            source,
        };
        let result = match form {
            RuleForm::AddressOnly => view::replace_view(&corefile, release, stanza.hosts()),
            RuleForm::AllTypes => view::remove_view(&corefile, release),
        };
        match result {
            Ok(edited) => Ok(edited),
            Err(ViewError::Corefile(source)) => Err(corefile_error(source)),
            Err(error @ ViewError::NoForward) => {
                warn!(configmap = %self.qualified, %error, "Rewriting every query type of the served names, not only A and AAAA");
                view::remove_view(&corefile, release).map_err(|error| match error {
                    ViewError::Corefile(source) => corefile_error(source),
                    ViewError::NoForward => unreachable!("removing a view block needs no forward"),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests;
