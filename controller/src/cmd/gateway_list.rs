//! The Gateway API objects for the one-shot commands that list the API (`shunt dns`, `shunt
//! shadow report`): GatewayClasses, Gateways, HTTPRoutes, GRPCRoutes, ReferenceGrants and the Namespaces
//! Selector listeners judge. A cluster without the CRDs (404) or a user without the permission
//! (403) gives none of that kind, as `shunt run` then serves none.

use kube::{Api, Client, api::ListParams};

use super::dns::list;
use crate::{
    compile::ClusterState,
    objects::Namespace,
    sources::gateway::{
        grpc::objects::GRPCRoute,
        objects::{Gateway, GatewayClass, HTTPRoute, ReferenceGrant},
    },
};

/// Adds the Gateway API objects (in `namespaces`, or all) to `state`.
pub(super) async fn add(client: &Client, namespaces: &[String], state: &mut ClusterState) -> anyhow::Result<()> {
    let params = ListParams::default();
    let classes = Api::<GatewayClass>::all(client.clone()).list(&params).await;
    let Some(classes) = tolerated(classes.map_err(anyhow::Error::from))? else {
        return Ok(());
    };
    state.gateway_classes = classes.items.into_iter().map(std::sync::Arc::new).collect();
    state.gateways = tolerated(list::<Gateway>(client, namespaces, &params).await)?.unwrap_or_default();
    state.http_routes = tolerated(list::<HTTPRoute>(client, namespaces, &params).await)?.unwrap_or_default();
    state.grpc_routes = tolerated(list::<GRPCRoute>(client, namespaces, &params).await)?.unwrap_or_default();
    state.reference_grants = tolerated(list::<ReferenceGrant>(client, namespaces, &params).await)?.unwrap_or_default();
    let listed = Api::<Namespace>::all(client.clone()).list(&params).await;
    let listed = tolerated(listed.map_err(anyhow::Error::from))?;
    state.namespaces = listed
        .map(|list| list.items.into_iter().map(std::sync::Arc::new).collect())
        .unwrap_or_default();
    Ok(())
}

/// `None` for a kind not served (404) or not granted (403); other errors stay errors.
fn tolerated<T>(result: anyhow::Result<T>) -> anyhow::Result<Option<T>> {
    match result {
        Ok(found) => Ok(Some(found)),
        Err(error) => match error.downcast_ref::<kube::Error>() {
            Some(kube::Error::Api(status)) if status.code == 404 || status.code == 403 => Ok(None),
            _ => Err(error),
        },
    }
}
