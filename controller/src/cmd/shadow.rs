//! `shunt shadow report`: what the shadow profiles make of a cluster's Ingresses, from
//! manifests or one list of the API, as Markdown for people or JSON for a CI gate.

use std::sync::Arc;

use anyhow::bail;
use clap::{Args, Subcommand};

use super::ClassArgs;
use crate::{compile::compile, shadow};

#[derive(Debug, Args)]
pub struct ShadowArgs {
    #[command(subcommand)]
    pub command: ShadowCommand,
}

#[derive(Debug, Subcommand)]
pub enum ShadowCommand {
    /// Print each shadowed host's verdict and the counts (the `/shadow` document).
    Report(ReportArgs),
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub objects: super::dns::ObjectArgs,
    /// Print the `/shadow` JSON document (`summary.refused` and friends to gate on).
    #[arg(long)]
    pub json: bool,
    /// Exit non-zero, after printing the report, when a host of the classes named
    /// (`--shadow-class`, `--class-profile`) is refused or one of their Ingresses skipped: a CI gate.
    #[arg(long)]
    pub fail_on_refused: bool,
    #[command(flatten)]
    pub classes: ClassArgs,
}

/// Compiles once and prints the report on stdout.
pub async fn run(args: ShadowArgs) -> anyhow::Result<()> {
    let ShadowCommand::Report(args) = args.command;
    args.classes.check()?;
    let options = args.classes.compile_options();
    let served = match shadow::served_profiles(&options) {
        Some(served) => served,
        // Shadowed Gateways alone: their verdicts have no Ingress profile.
        None if !options.shadow_gateway_classes.is_empty() => shadow::report::Served {
            profile: "gateway".to_string(),
            ..Default::default()
        },
        None => bail!(
            "no class with a shadow profile: add --shadow-class nginx (or qcloud), --class-profile NAME=nginx, \
             or --shadow-gateway-class NAME"
        ),
    };
    let state = if args.objects.manifests.is_empty() {
        let client = super::clients::connect(args.objects.kubeconfig.as_deref()).await?;
        super::dns::list_state(&client, &args.objects.watch_namespaces, &args.classes).await?
    } else {
        crate::manifests::load(&args.objects.manifests)?
    };
    let compiled = compile(&state, &options);
    // The shadowed Gateways' routes' hosts with the Ingresses', in one list by host.
    let mut hosts: Vec<Arc<shadow::HostVerdict>> = compiled.shadow.to_vec();
    hosts.extend(compiled.shadow_gateway.iter().cloned());
    hosts.sort_by(|a, b| a.host.cmp(&b.host));
    let (hosts, ingresses) = (&hosts, &compiled.shadow_ingresses);
    if args.json {
        let document = shadow::report::document(&served, hosts, ingresses);
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        print!("{}", shadow::report::markdown(&served, hosts, ingresses));
    }
    if args.fail_on_refused && shadow::report::gate_fails(hosts, ingresses) {
        bail!("refused hosts or skipped Ingresses (--fail-on-refused)");
    }
    Ok(())
}
