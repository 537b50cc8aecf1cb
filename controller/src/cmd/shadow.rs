//! `shunt shadow report`: what the shadow profiles make of a cluster's Ingresses, from
//! manifests or one list of the API, as Markdown for people or JSON for a CI gate.

use std::path::PathBuf;

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
    /// Read the objects from these manifest files or directories instead of the API; repeatable.
    #[arg(long = "manifests", short = 'f', value_name = "PATH", conflicts_with = "kubeconfig")]
    pub manifests: Vec<PathBuf>,
    /// Kubeconfig file; by default found the way kubectl finds it (KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Only list these namespaces (repeatable); all namespaces by default.
    #[arg(long = "watch-namespace", value_name = "NAMESPACE")]
    pub watch_namespaces: Vec<String>,
    /// Print the `/shadow` JSON document (`summary.refused` and friends to gate on).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub classes: ClassArgs,
}

/// Compiles once and prints the report on stdout.
pub async fn run(args: ShadowArgs) -> anyhow::Result<()> {
    let ShadowCommand::Report(args) = args.command;
    let options = args.classes.compile_options();
    let Some((profile, assumed)) = shadow::served_profiles(&options) else {
        bail!("no class with a shadow profile: add --shadow-class nginx (or qcloud), or --class-profile NAME=nginx");
    };
    let state = if args.manifests.is_empty() {
        let client = super::clients::connect(args.kubeconfig.as_deref()).await?;
        super::dns::list_state(&client, &args.watch_namespaces, &args.classes).await?
    } else {
        crate::manifests::load(&args.manifests)?
    };
    let compiled = compile(&state, &options);
    if args.json {
        let document = shadow::report::document(&profile, &assumed, &compiled.shadow);
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        print!("{}", shadow::report::markdown(&profile, &compiled.shadow));
    }
    Ok(())
}
