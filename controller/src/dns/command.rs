//! `shunt dns`: compile what shunt would serve (from manifests or one list of the API) and
//! print the rewrite rules for it, ready to paste, with a `# refused HOST: reason` line for each
//! served host the rules leave out.

use k8s_openapi::{
    NamespaceResourceScope,
    api::{
        core::v1::Secret,
        networking::v1::{Ingress, IngressClass},
    },
};
use kube::{Api, Client, Resource, api::ListParams};
use serde::de::DeserializeOwned;

use super::{Stanza, served_hosts};
use crate::{
    cli::{DnsArgs, DnsFormat},
    compile::{ClusterState, compile},
    objects::{EndpointSlice, Service},
};

pub async fn run(args: DnsArgs) -> anyhow::Result<()> {
    let state = if args.manifests.is_empty() {
        let client = crate::cluster::connect(args.kubeconfig.as_deref()).await?;
        list_state(&client, &args.watch_namespaces).await?
    } else {
        crate::manifests::load(&args.manifests)?
    };
    let compiled = compile(&state, &args.classes.compile_options());
    let target = args.rules.service_fqdn(&args.publish_service);
    let release = args
        .rules
        .release(&args.publish_service)
        .map_err(|error| anyhow::anyhow!("--publish-service: {error}; name the block with --release"))?;
    // Without the cluster's Corefile at hand, its `kubernetes` zones are not known here: the
    // cluster domain, cluster.local and the reverse zones are refused all the same.
    let mut plan = args.rules.policy().plan(&served_hosts(&compiled.table));
    for refusal in args.rules.shadow_refusals(&compiled.shadow) {
        plan.refuse(refusal.host, refusal.reason);
    }
    let stanza = Stanza::new(&release, &plan, &target);
    match args.format {
        DnsFormat::Block => print!("{stanza}"),
        DnsFormat::Override => print!("{}", stanza.override_file(true)),
    }
    Ok(())
}

/// One list of each kind compile reads for hosts. TLS Secrets decide shadow verdicts (a
/// shadowed HTTPS host without a certificate is refused), so they are listed as `run` watches them.
async fn list_state(client: &Client, namespaces: &[String]) -> anyhow::Result<ClusterState> {
    let classes = Api::<IngressClass>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    let tls = ListParams::default().fields(crate::watch::TLS_SECRET_SELECTOR);
    Ok(ClusterState {
        ingresses: list::<Ingress>(client, namespaces, &ListParams::default()).await?,
        ingress_classes: classes.items.into_iter().map(std::sync::Arc::new).collect(),
        services: list::<Service>(client, namespaces, &ListParams::default()).await?,
        endpoint_slices: list::<EndpointSlice>(client, namespaces, &ListParams::default()).await?,
        secrets: list::<Secret>(client, namespaces, &tls).await?,
    })
}

async fn list<K>(client: &Client, namespaces: &[String], params: &ListParams) -> anyhow::Result<Vec<std::sync::Arc<K>>>
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let apis: Vec<Api<K>> = if namespaces.is_empty() {
        vec![Api::all(client.clone())]
    } else {
        namespaces
            .iter()
            .map(|namespace| Api::namespaced(client.clone(), namespace))
            .collect()
    };
    let mut items = Vec::new();
    for api in apis {
        items.extend(api.list(params).await?.items.into_iter().map(std::sync::Arc::new));
    }
    Ok(items)
}
