//! `shunt dns`: compile what shunt would serve (from manifests or one list of the API) and
//! print the rewrite rules for it, ready to paste, with a `# refused HOST: reason` line for each
//! served host the rules leave out. [`DnsRuleArgs`], what shapes the rules, is shared with
//! `shunt run --manage-coredns`. `shunt dns check` (check.rs) resolves the same hosts from inside a pod.

use std::{path::PathBuf, sync::Arc};

use clap::{Args, ValueEnum};
use k8s_openapi::{
    NamespaceResourceScope,
    api::{
        core::v1::{ConfigMap, Secret},
        networking::v1::{Ingress, IngressClass},
    },
};
use kube::{Api, Client, Resource, api::ListParams, core::PartialObjectMeta};
use serde::de::DeserializeOwned;

use super::{ClassArgs, parse::parse_namespaced};

mod check;
use crate::{
    compile::{ClusterState, SecretName, compile},
    dns::{
        DnsPolicy, Refusal, Release, Stanza, nodelocal, served_hosts,
        services::{ServiceName, load_balancer_names},
        view,
    },
    objects::{ApiEndpointSlice, ApiService, Service},
    shadow::{
        HostVerdict,
        refusals::{ShadowRewrite, dns_refusals},
    },
};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct DnsArgs {
    #[command(subcommand)]
    pub command: Option<DnsCommand>,
    #[command(flatten)]
    pub source: DnsSource,
    /// `block`: the marker block for the Corefile's `.:53 {`, then the view block that keeps
    /// other query types public; `override`: a coredns-custom key.
    #[arg(long, value_enum, default_value_t = DnsFormat::Block)]
    pub format: DnsFormat,
    /// The cluster's CoreDNS version: before 1.10.0 (no `view` plugin) the view block is left out.
    #[arg(long, value_name = "VERSION")]
    pub coredns_version: Option<crate::dns::CorednsVersion>,
    /// Also print the block for node-local-dns's Corefile (its `bind` and `forward` lines read
    /// from kube-system/node-local-dns when listing the API, node-cache's placeholders otherwise).
    #[arg(long)]
    pub node_local_dns: bool,
}

#[derive(Debug, clap::Subcommand)]
pub enum DnsCommand {
    /// Resolve every host shunt serves (and every one it refused) through this pod's own
    /// resolver and say, one line each, whether it reaches shunt; exit status 0 only when every
    /// rewritten host does.
    Check(check::CheckArgs),
}

/// Where the objects come from, for the commands that compile once: files, or one list of the API.
#[derive(Debug, Args)]
pub struct ObjectArgs {
    /// Read the objects from these manifest files or directories instead of the API; repeatable.
    #[arg(long = "manifests", short = 'f', value_name = "PATH", conflicts_with = "kubeconfig")]
    pub manifests: Vec<PathBuf>,
    /// Kubeconfig file; by default found the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Only list these namespaces (repeatable); all namespaces by default.
    #[arg(long = "watch-namespace", value_name = "NAMESPACE")]
    pub watch_namespaces: Vec<String>,
}

/// Where the hosts come from and what shapes the rules: the same for printing and checking.
#[derive(Debug, Args)]
pub struct DnsSource {
    #[command(flatten)]
    pub objects: ObjectArgs,
    /// shunt's Service (NAMESPACE/NAME): the name every host is rewritten to.
    #[arg(long, required = true, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub publish_service: Option<(String, String)>,
    #[command(flatten)]
    pub rules: DnsRuleArgs,
    #[command(flatten)]
    pub classes: ClassArgs,
}

/// One compile's rules, and what they were made from.
pub struct Compiled {
    pub stanza: Stanza,
    pub release: Release,
    /// shunt's Service name.
    pub target: String,
    pub services: Vec<ServiceName>,
    /// The API client, when the objects came from the API.
    pub client: Option<Client>,
}

impl DnsSource {
    /// Lists (or loads) the objects once, compiles, and builds the rules.
    pub async fn compile(&self) -> anyhow::Result<Compiled> {
        let publish_service = self
            .publish_service
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("--publish-service is required"))?;
        let (state, client) = if self.objects.manifests.is_empty() {
            let client = super::clients::connect(self.objects.kubeconfig.as_deref()).await?;
            (
                list_state(&client, &self.objects.watch_namespaces, &self.classes).await?,
                Some(client),
            )
        } else {
            (crate::manifests::load(&self.objects.manifests)?, None)
        };
        let compiled = compile(&state, &self.classes.compile_options());
        let target = self.rules.service_fqdn(publish_service);
        let release = self
            .rules
            .release(publish_service)
            .map_err(|error| anyhow::anyhow!("--publish-service: {error}; name the block with --release"))?;
        // Without the cluster's Corefile at hand, its `kubernetes` zones are not known here: the
        // cluster domain, cluster.local and the reverse zones are refused all the same.
        let mut plan = self.rules.policy().plan(&served_hosts(&compiled.table));
        for refusal in self.rules.shadow_refusals(&compiled.shadow) {
            plan.refuse(refusal.host, refusal.reason);
        }
        let mut stanza = Stanza::new(&release, &plan, &target);
        let services = self.rules.service_names(state.services.iter().map(|s| &**s));
        stanza.add_services(&self.rules.policy(), &services);
        Ok(Compiled {
            stanza,
            release,
            target,
            services,
            client,
        })
    }
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
    /// Also answer the hostnames `type: LoadBalancer` Services name in
    /// `external-dns.alpha.kubernetes.io/hostname` with the Service's own cluster name (its
    /// ClusterIP), so in-cluster callers by name skip the load balancer at L4 too.
    #[arg(long)]
    pub dns_loadbalancer_services: bool,
}

impl DnsRuleArgs {
    /// Shadowed hosts to leave out of the rules, with why (none with `--shadow-rewrite=all`).
    pub fn shadow_refusals(&self, verdicts: &[Arc<HostVerdict>]) -> Vec<Refusal> {
        dns_refusals(verdicts, self.shadow_rewrite)
    }

    /// `NAME.NAMESPACE.svc.DOMAIN` of a Service.
    pub fn service_fqdn(&self, (namespace, name): &(String, String)) -> String {
        format!("{name}.{namespace}.svc.{}", self.cluster_domain.trim_end_matches('.'))
    }

    /// The LoadBalancer Services' hostnames (none without `--dns-loadbalancer-services`); names
    /// that are no hostnames are logged.
    pub fn service_names<'a>(&self, services: impl IntoIterator<Item = &'a Service>) -> Vec<ServiceName> {
        if !self.dns_loadbalancer_services {
            return Vec::new();
        }
        let (names, invalid) = load_balancer_names(services, &self.cluster_domain);
        for problem in invalid {
            tracing::warn!(%problem, "LoadBalancer hostname left out of cluster DNS");
        }
        names
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

/// Compiles once and prints the rules (`--format`) on stdout; or `check`.
pub async fn run(args: DnsArgs) -> anyhow::Result<()> {
    args.source.classes.check()?;
    if let Some(DnsCommand::Check(check)) = args.command {
        return check::run(check).await;
    }
    let Compiled {
        stanza,
        release,
        client,
        ..
    } = args.source.compile().await?;
    let node_local_corefile = match (&client, args.node_local_dns) {
        (Some(client), true) => config_map_corefile(client, nodelocal::DEFAULT_CONFIGMAP).await,
        _ => None,
    };
    match args.format {
        DnsFormat::Block => {
            print!("{stanza}");
            if args.coredns_version.is_none_or(|version| version.has_view()) && !stanza.hosts().is_empty() {
                println!(
                    "# Address records only (CoreDNS 1.10.0 or later): paste at top level, before `.:53 {{`,\n\
                     # with `.:53`'s own forward (and bind) lines in place of this forward line"
                );
                print!("{}", view::block(&release, stanza.hosts(), &view::Upstream::stock()));
            }
        }
        DnsFormat::Override => print!("{}", stanza.override_file(true)),
    }
    if args.node_local_dns {
        let (namespace, name) = nodelocal::DEFAULT_CONFIGMAP;
        println!("# node-local-dns: paste at top level of the Corefile in ConfigMap {namespace}/{name}");
        let zones = nodelocal::zones(stanza.hosts(), &args.source.rules.policy());
        print!("{}", nodelocal::block(&release, &zones, node_local_corefile.as_deref()));
    }
    Ok(())
}

/// The Corefile of ConfigMap `namespace/name`, when it exists and may be read.
pub async fn config_map_corefile(client: &Client, (namespace, name): (&str, &str)) -> Option<String> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let config_map = api.get_opt(name).await.ok()??;
    config_map.data?.remove("Corefile")
}

/// One list of each kind compile reads for hosts. TLS Secrets decide shadow verdicts (a
/// shadowed HTTPS host without a certificate is refused), so they are listed as `run` watches them.
pub(super) async fn list_state(
    client: &Client,
    namespaces: &[String],
    classes: &ClassArgs,
) -> anyhow::Result<ClusterState> {
    let classes_options = classes.compile_options();
    // Read only when a class uses the nginx profile: other users need no ConfigMap access.
    let nginx = crate::shadow::serves_nginx(&classes_options);
    let nginx_config = match nginx {
        true => get_config_map(client, &classes.nginx_configmap).await?,
        false => None,
    };
    let classes = Api::<IngressClass>::all(client.clone())
        .list(&ListParams::default())
        .await?;
    let tls = ListParams::default().fields(crate::watch::TLS_SECRET_SELECTOR);
    let qcloud = crate::shadow::serves_qcloud(&classes_options);
    let tke_service_configs = match qcloud {
        true => list_tke_service_configs(client, namespaces).await?,
        false => Vec::new(),
    };
    // Every Secret's name, as `run` watches them for qcloud (TKE's E4010) and nginx (a missing
    // `proxy-ssl-secret`); never their data.
    let secret_names = match qcloud || nginx {
        true => list::<PartialObjectMeta<Secret>>(client, namespaces, &ListParams::default()).await?,
        false => Vec::new(),
    };
    let mut state = ClusterState {
        ingresses: compact(list::<Ingress>(client, namespaces, &ListParams::default()).await?),
        ingress_classes: classes.items.into_iter().map(std::sync::Arc::new).collect(),
        services: compact(list::<ApiService>(client, namespaces, &ListParams::default()).await?),
        endpoint_slices: compact(list::<ApiEndpointSlice>(client, namespaces, &ListParams::default()).await?),
        secrets: list_secrets(client, namespaces, &tls, nginx).await?,
        config_maps: nginx_config.into_iter().collect(),
        tke_service_configs,
        secrets_listed: qcloud || nginx,
        secret_names: secret_names.into_iter().map(SecretName).collect(),
        ..ClusterState::default()
    };
    super::gateway_list::add(client, namespaces, &mut state).await?;
    Ok(state)
}

/// The `kubernetes.io/tls` Secrets, and the Opaque ones when an nginx profile is served
/// (`proxy-ssl-secret`), slimmed as `run` keeps them.
async fn list_secrets(
    client: &Client,
    namespaces: &[String],
    tls: &ListParams,
    nginx: bool,
) -> anyhow::Result<Vec<std::sync::Arc<Secret>>> {
    let mut secrets = list::<Secret>(client, namespaces, tls).await?;
    if nginx {
        let opaque = ListParams::default().fields(crate::watch::OPAQUE_SECRET_SELECTOR);
        secrets.extend(list::<Secret>(client, namespaces, &opaque).await?);
    }
    for secret in &mut secrets {
        crate::watch::Slim::slim(std::sync::Arc::make_mut(secret));
    }
    Ok(secrets)
}

/// TKE's TkeServiceConfigs, as `run` watches them: none where the CRD is absent or not granted.
async fn list_tke_service_configs(
    client: &Client,
    namespaces: &[String],
) -> anyhow::Result<Vec<std::sync::Arc<crate::objects::TkeServiceConfig>>> {
    match list(client, namespaces, &ListParams::default()).await {
        Ok(configs) => Ok(configs),
        Err(error) => match error.downcast_ref::<kube::Error>() {
            Some(kube::Error::Api(status)) if matches!(status.code, 403 | 404) => Ok(Vec::new()),
            _ => Err(error),
        },
    }
}

/// ingress-nginx's ConfigMap, `None` when it does not exist.
async fn get_config_map(
    client: &Client,
    (namespace, name): &(String, String),
) -> anyhow::Result<Option<std::sync::Arc<ConfigMap>>> {
    let api = Api::<ConfigMap>::namespaced(client.clone(), namespace);
    Ok(api.get_opt(name).await?.map(std::sync::Arc::new))
}

/// Listed objects in the compact form the watchers store.
fn compact<W: Clone + Into<K>, K>(listed: Vec<Arc<W>>) -> Vec<Arc<K>> {
    let compact = |object: Arc<W>| Arc::new(Arc::unwrap_or_clone(object).into());
    listed.into_iter().map(compact).collect()
}

pub(super) async fn list<K>(
    client: &Client,
    namespaces: &[String],
    params: &ListParams,
) -> anyhow::Result<Vec<std::sync::Arc<K>>>
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
