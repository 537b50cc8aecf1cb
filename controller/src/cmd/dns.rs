//! `shunt dns`: compile what shunt would serve (from manifests or one list of the API) and
//! print the rewrite rules for it, ready to paste, with a `# refused HOST: reason` line for each
//! served host the rules leave out. [`DnsRuleArgs`], what shapes the rules, is shared with
//! `shunt run --manage-coredns`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use k8s_openapi::{
    NamespaceResourceScope,
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::{Ingress, IngressClass},
    },
};
use kube::{Api, Client, Resource, api::ListParams};
use serde::de::DeserializeOwned;

use super::{ClassArgs, parse::parse_namespaced};
use crate::{
    compile::{ClusterState, compile},
    dns::{DnsPolicy, Refusal, Release, Stanza, served_hosts},
    objects::{EndpointSlice, Service},
    shadow::{
        HostVerdict,
        refusals::{ShadowRewrite, dns_refusals},
    },
};

#[derive(Debug, Args)]
pub struct DnsArgs {
    /// Read the objects from these manifest files or directories instead of the API; repeatable.
    #[arg(long = "manifests", short = 'f', value_name = "PATH", conflicts_with = "kubeconfig")]
    pub manifests: Vec<PathBuf>,
    /// Kubeconfig file; by default found the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Only list these namespaces (repeatable); all namespaces by default.
    #[arg(long = "watch-namespace", value_name = "NAMESPACE")]
    pub watch_namespaces: Vec<String>,
    /// shunt's Service (NAMESPACE/NAME): the name every host is rewritten to.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub publish_service: (String, String),
    /// `block`: the marker block for the Corefile's `.:53 {`; `override`: a coredns-custom key.
    #[arg(long, value_enum, default_value_t = DnsFormat::Block)]
    pub format: DnsFormat,
    #[command(flatten)]
    pub rules: DnsRuleArgs,
    #[command(flatten)]
    pub classes: ClassArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DnsFormat {
    Block,
    Override,
}

/// What shapes the rewrite rules, shared by `dns` and `run --manage-coredns`.
#[derive(Clone, Debug, Args)]
pub struct DnsRuleArgs {
    /// The cluster's DNS domain, for the Service's name; never rewritten.
    #[arg(long, default_value = "cluster.local", value_parser = crate::dns::parse_cluster_domain)]
    pub cluster_domain: String,
    /// Hosts that keep resolving the public way (to the load balancer): `shop.example.com` or
    /// `*.example.com` (one label); repeatable.
    #[arg(long = "dns-exclude", value_name = "PATTERN")]
    pub dns_exclude: Vec<crate::dns::DnsExclude>,
    /// Only hosts at or under these domains are rewritten (repeatable); recommended on clusters
    /// where many teams create Ingresses.
    #[arg(long = "dns-domain", value_name = "SUFFIX")]
    pub dns_domains: Vec<crate::dns::DnsDomain>,
    /// The identity on this release's CoreDNS block and key (NAMESPACE/NAME); --publish-service by default.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub release: Option<crate::dns::Release>,
    /// `refused`: shadowed hosts whose load-balancer answer shunt cannot reproduce keep
    /// resolving to it (listed as comments); `all`: rewrite them too.
    #[arg(long, value_enum, default_value_t = ShadowRewrite::Refused)]
    pub shadow_rewrite: ShadowRewrite,
}

impl DnsRuleArgs {
    /// Shadowed hosts to leave out of the rules, with why (none with `--shadow-rewrite=all`).
    pub fn shadow_refusals(&self, verdicts: &[HostVerdict]) -> Vec<Refusal> {
        dns_refusals(verdicts, self.shadow_rewrite)
    }

    /// `NAME.NAMESPACE.svc.DOMAIN` of a Service.
    pub fn service_fqdn(&self, (namespace, name): &(String, String)) -> String {
        format!("{name}.{namespace}.svc.{}", self.cluster_domain.trim_end_matches('.'))
    }

    pub fn policy(&self) -> DnsPolicy {
        DnsPolicy::new(&self.cluster_domain, self.dns_domains.clone(), self.dns_exclude.clone())
    }

    /// `--release`, else the Service's `NAMESPACE/NAME`.
    pub fn release(&self, (namespace, name): &(String, String)) -> Result<Release, String> {
        match &self.release {
            Some(release) => Ok(release.clone()),
            None => Release::new(namespace, name),
        }
    }
}

/// Compiles once and prints the rules (`--format`) on stdout.
pub async fn run(args: DnsArgs) -> anyhow::Result<()> {
    let state = if args.manifests.is_empty() {
        let client = super::clients::connect(args.kubeconfig.as_deref()).await?;
        list_state(&client, &args.watch_namespaces, &args.classes).await?
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
pub(super) async fn list_state(
    client: &Client,
    namespaces: &[String],
    classes: &ClassArgs,
) -> anyhow::Result<ClusterState> {
    // Read only when a class uses the nginx profile: other users need no ConfigMap access.
    let nginx_config = match crate::shadow::serves_nginx(&classes.compile_options()) {
        true => get_config_map(client, &classes.nginx_configmap).await?,
        false => None,
    };
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
        config_maps: nginx_config.into_iter().collect(),
    })
}

/// ingress-nginx's ConfigMap, `None` when it does not exist.
async fn get_config_map(
    client: &Client,
    (namespace, name): &(String, String),
) -> anyhow::Result<Option<std::sync::Arc<ConfigMap>>> {
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    Ok(api.get_opt(name).await?.map(std::sync::Arc::new))
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
