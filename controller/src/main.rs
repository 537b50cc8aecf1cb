//! The `shunt` binary: parse arguments, set up logging and the runtime, run a subcommand.

use clap::Parser;

// A proxy allocates and frees small buffers per request from every thread; mimalloc's
// per-thread free lists beat glibc malloc there (and on table builds) without tuning.
// `--features system-allocator` leaves it out for heap profilers, which cannot see mimalloc.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use shunt_controller::{
    cli::{Cli, Command},
    cluster, demo, dns, standalone, telemetry,
};

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the whole cause chain on one line, without a backtrace.
            eprintln!("shunt: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    let log = match &cli.command {
        Command::Serve(args) => args.log.log_format,
        Command::Demo(args) => args.log.log_format,
        Command::Run(args) => args.log.log_format,
        Command::Dns(_) => shunt_controller::cli::LogFormat::Text,
    };
    // Flushes buffered log lines when `run` returns.
    let _logs = telemetry::init(log);
    // This thread runs the admin listener and the API watchers; the proxy workers and the
    // compile loop each get a thread of their own (see `dataplane::serve`, `control.rs`).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Serve(args) => {
                let watcher = standalone::ManifestWatcher::new(args.manifests)?;
                standalone::serve(watcher, &args.proxy, args.classes.compile_options(), args.poll_interval).await
            }
            Command::Demo(args) => demo::run(args).await,
            Command::Run(args) => cluster::run(args).await,
            Command::Dns(args) => dns::command::run(args).await,
        }
    })
}
