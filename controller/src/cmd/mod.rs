//! The `shunt` binary's commands, one file each (`run`, `serve`, `dns`, `demo`), and the
//! arguments they share. Errors are `anyhow`'s here and in `main.rs`; the modules below have
//! their own types.
//!
//! ```text
//! main.rs ─parse─▶ Cli ─▶ Command::run ─▶ run.rs   (API stores ─▶ control::compile_loop, leader writes)
//!                                       ├▶ serve.rs (manifest files ─▶ control::compile_loop)
//!                                       ├▶ demo.rs  (example pods, then serve)
//!                                       ├▶ dns.rs   (one compile, print the CoreDNS rules)
//!                                       └▶ shadow.rs (one compile, print the shadow report)
//! ```

use clap::{Args, Parser, Subcommand};

pub use crate::telemetry::LogFormat;

mod class_args;
mod clients;
mod dataplane;
pub mod demo;
pub mod dns;
mod gateway_list;
mod gateway_port;
mod parse;
mod proxy_args;
pub mod run;
pub mod serve;
pub mod shadow;

pub use self::{
    class_args::ClassArgs,
    demo::DemoArgs,
    dns::{DnsArgs, DnsFormat, DnsRuleArgs},
    proxy_args::ProxyArgs,
    run::{ElectionArgs, RunArgs},
    serve::ServeArgs,
    shadow::ShadowArgs,
};

#[derive(Debug, Parser)]
#[command(
    name = "shunt",
    version,
    about = "In-cluster Kubernetes ingress: host+path straight to pod endpoints"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant, reason = "parsed once per process")]
pub enum Command {
    /// Serve Ingress manifests from files, no cluster needed; edits apply live.
    Serve(ServeArgs),
    /// Start example backends on 127.0.0.11-14 and serve the bundled example manifests.
    Demo(DemoArgs),
    /// Run in a cluster: watch the Kubernetes API, publish Ingress status, report problems as Events.
    Run(RunArgs),
    /// Print the CoreDNS rewrite rules that point every host shunt serves at its Service.
    Dns(DnsArgs),
    /// Report what the shadow profiles make of the Ingresses (`shunt shadow report`).
    Shadow(ShadowArgs),
}

impl Command {
    /// The log format asked for; `dns` prints its rules on stdout and logs as text.
    pub fn log_format(&self) -> LogFormat {
        match self {
            Command::Serve(args) => args.log.log_format,
            Command::Demo(args) => args.log.log_format,
            Command::Run(args) => args.log.log_format,
            Command::Dns(_) | Command::Shadow(_) => LogFormat::Text,
        }
    }

    /// Runs the command on the calling runtime until it finishes or SIGTERM/SIGINT.
    pub async fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Serve(args) => serve::serve(args).await,
            Command::Demo(args) => demo::run(args).await,
            Command::Run(args) => run::run(args).await,
            Command::Dns(args) => dns::run(args).await,
            Command::Shadow(args) => shadow::run(args).await,
        }
    }
}

#[derive(Clone, Debug, Args)]
pub struct LogArgs {
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "SHUNT_LOG_FORMAT")]
    pub log_format: LogFormat,
}

#[cfg(test)]
mod tests;
