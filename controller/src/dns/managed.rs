//! Managed mode (`--manage-coredns`, leader only): keeps the stanza current in a ConfigMap
//! with get + update, nothing else (the RBAC is scoped to that one ConfigMap by name, which
//! `create` cannot be). An update carries the resourceVersion it read, so an operator's
//! concurrent edit is never overwritten: the write fails with 409 and the next sync redoes it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{Api, Client, api::PostParams};
use tracing::info;

use super::{corefile::replace_block, stanza::Stanza};

/// The key a `coredns-custom` ConfigMap holds our rules under; CoreDNS imports `*.override`.
pub const OVERRIDE_KEY: &str = "shunt.override";
const COREFILE_KEY: &str = "Corefile";

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CorednsTarget {
    /// The marker block inside `.:53 {` of the main Corefile (TKE and most clusters).
    Corefile,
    /// Key `shunt.override` of a `coredns-custom` ConfigMap (k3s, AKS).
    Custom,
}

pub struct CorednsWriter {
    api: Api<ConfigMap>,
    name: String,
    /// `namespace/name`, for errors and logs.
    qualified: String,
    target: CorednsTarget,
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

    /// Brings the ConfigMap in line with `stanza`; `Ok(true)` when it wrote.
    pub async fn sync(&self, stanza: &Stanza) -> Result<bool, CorednsError> {
        let api_error = |source| CorednsError::Api {
            name: self.qualified.clone(),
            source,
        };
        let Some(mut config_map) = self.api.get_opt(&self.name).await.map_err(api_error)? else {
            return Err(CorednsError::Missing(self.qualified.clone()));
        };
        let data = config_map.data.get_or_insert_with(BTreeMap::new);
        let (key, wanted) = match self.target {
            CorednsTarget::Custom => (OVERRIDE_KEY, stanza.override_file()),
            CorednsTarget::Corefile => {
                let current = data
                    .get(COREFILE_KEY)
                    .ok_or_else(|| CorednsError::NoCorefile(self.qualified.clone()))?;
                let edited = replace_block(current, stanza).map_err(|source| CorednsError::Corefile {
                    name: self.qualified.clone(),
                    source,
                })?;
                (COREFILE_KEY, edited)
            }
        };
        if data.get(key) == Some(&wanted) {
            return Ok(false);
        }
        data.insert(key.to_string(), wanted);
        self.api
            .replace(&self.name, &PostParams::default(), &config_map)
            .await
            .map_err(api_error)?;
        info!(configmap = %self.qualified, key, rules = stanza.lines().len(), "Updated CoreDNS rewrite rules");
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
