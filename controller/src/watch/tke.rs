//! TKE's TkeServiceConfigs, for the qcloud profile: a CRD only TKE clusters have. Its absence
//! (404) or a role without it (403) must not hold the controller back: the store then counts as
//! listed, empty, and the watcher keeps retrying with its backoff, so a CRD installed later is
//! picked up. A lost connection keeps the last objects, as every store does.

use std::sync::Arc;

use futures::StreamExt;
use kube::{
    Api, Client,
    runtime::{WatchStreamExt, watcher},
};
use tokio::sync::Notify;
use tracing::{debug, warn};

use super::{Slim, Store, scoped, store};
use crate::objects::TkeServiceConfig;

/// A store per scope (`None`: all namespaces).
pub fn spawn(client: &Client, scopes: &[Option<&str>], changed: &Arc<Notify>) -> Vec<Store<TkeServiceConfig>> {
    scopes
        .iter()
        .map(|scope| reflect(scoped(client, *scope), changed))
        .collect()
}

fn reflect(api: Api<TkeServiceConfig>, changed: &Arc<Notify>) -> Store<TkeServiceConfig> {
    let (reader, mut writer) = store::store(TkeServiceConfig::clone);
    let changed = changed.clone();
    let events = watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(TkeServiceConfig::slim);
    tokio::spawn(async move {
        let mut events = std::pin::pin!(events);
        let mut said = false;
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    writer.apply(&event);
                    if matches!(event, watcher::Event::InitDone) {
                        debug!("TkeServiceConfigs listed");
                    }
                    changed.notify_one();
                }
                Err(error) => match absent(&error) {
                    Some(code) => {
                        if !said {
                            warn!(%error, code, "TkeServiceConfigs cannot be listed (no such CRD, or no grant); Ingresses naming one are refused");
                            said = true;
                        }
                        if writer.mark_ready() {
                            changed.notify_one();
                        }
                    }
                    None => {
                        warn!(%error, kind = "TkeServiceConfig", "Watch failed; last known objects keep serving, retrying")
                    }
                },
            }
        }
    });
    reader
}

/// The status code of a list the API refused because the resource does not exist or is not granted.
fn absent(error: &watcher::Error) -> Option<u16> {
    match error {
        watcher::Error::InitialListFailed(kube::Error::Api(status))
        | watcher::Error::WatchStartFailed(kube::Error::Api(status))
            if matches!(status.code, 403 | 404) =>
        {
            Some(status.code)
        }
        _ => None,
    }
}

impl Slim for TkeServiceConfig {
    /// The spec stays: the qcloud profile reads it.
    fn slim(&mut self) {
        super::slim::slim_metadata_fully(&mut self.metadata);
    }
}
