//! Clients of the Kubernetes API, with the timeouts every command uses.

use std::time::Duration;

use kube::{
    Client, Config,
    config::{KubeConfigOptions, Kubeconfig},
};
use tracing::info;

/// Two clients from one kubeconfig, both with a connect timeout.
pub struct Clients {
    /// Lists and watches. No read timeout: a healthy watch is silent until something changes, and
    /// kube-runtime's watcher already gives up on one silent past its `timeoutSeconds` (290 s)
    /// plus a margin, when the server should have ended it.
    pub watch: Client,
    /// Every other request (Lease, status, Events, CoreDNS): an answer must start arriving
    /// within [`API_READ_TIMEOUT`] of the request being sent.
    pub api: Client,
}

/// How long connecting to the API server may take.
const API_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a single request may wait for its answer to start (and between reads).
const API_READ_TIMEOUT: Duration = Duration::from_secs(10);

impl Clients {
    /// From `--kubeconfig`, else the way kubectl finds one (KUBECONFIG, ~/.kube/config,
    /// in-cluster service account).
    pub async fn connect(kubeconfig: Option<&std::path::Path>) -> anyhow::Result<Clients> {
        let mut config = match kubeconfig {
            Some(path) => {
                let kubeconfig = Kubeconfig::read_from(path)
                    .map_err(|error| anyhow::anyhow!("reading kubeconfig {}: {error}", path.display()))?;
                Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default()).await?
            }
            None => Config::infer().await?,
        };
        info!(server = %config.cluster_url, "Connecting to the Kubernetes API");
        config.connect_timeout = Some(API_CONNECT_TIMEOUT);
        config.read_timeout = None;
        let watch = Client::try_from(config.clone())?;
        config.read_timeout = Some(API_READ_TIMEOUT);
        // Count the read timeout from each request, not from when its pooled connection went idle.
        config.reset_reader_on_write = true;
        let api = Client::try_from(config)?;
        Ok(Clients { watch, api })
    }
}

/// A client for one-off requests (`shunt dns`); see [`Clients::connect`].
pub async fn connect(kubeconfig: Option<&std::path::Path>) -> anyhow::Result<Client> {
    Ok(Clients::connect(kubeconfig).await?.api)
}
