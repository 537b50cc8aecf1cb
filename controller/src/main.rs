//! The `shunt` binary: parse arguments, set up logging and the runtime, run a subcommand.

use clap::Parser;

// A proxy allocates and frees small buffers per request from every thread; mimalloc's
// per-thread free lists beat glibc malloc there (and on table builds) without tuning.
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
    let (log, threads) = match &cli.command {
        Command::Serve(args) => (args.log.log_format, args.proxy.threads),
        Command::Demo(args) => (args.log.log_format, args.proxy.threads),
        Command::Run(args) => (args.log.log_format, args.proxy.threads),
        Command::Dns(_) => (shunt_controller::cli::LogFormat::Text, Some(1)),
    };
    telemetry::init(log);
    // One thread: everything on it, the way one nginx worker runs (no hand-offs between the
    // accept loop and a worker, no work-stealing bookkeeping).
    let mut runtime = match threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(threads) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            builder.worker_threads(threads.max(1));
            builder
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = runtime.enable_all().build()?;
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
