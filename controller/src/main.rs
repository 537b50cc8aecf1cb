//! The `shunt` binary: parse arguments, set up logging and the runtime, run a subcommand.

use clap::Parser;

// A proxy allocates and frees small buffers per request from every thread; mimalloc's
// per-thread free lists beat glibc malloc there (and on table builds) without tuning.
// `--features system-allocator` leaves it out for heap profilers, which cannot see mimalloc.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use shunt_controller::{cmd::Cli, telemetry};

/// mimalloc's settings: commit arena memory as it is used rather than ahead, which roughly
/// halves what `shunt serve` holds at 10k Ingresses. Freed pages are purged after mimalloc's own
/// delay, so a busy worker reuses them instead of faulting fresh pages in for each request; the
/// control thread releases what a compile freed right after each publish instead
/// ([`release_freed_pages`]). A value set by the user wins.
const ALLOCATOR_ENV: [(&str, &str); 1] = [("MIMALLOC_ARENA_EAGER_COMMIT", "0")];

fn main() -> std::process::ExitCode {
    reexec_with_allocator_settings();
    #[cfg(not(feature = "system-allocator"))]
    shunt_controller::allocator::register_release(release_freed_pages);
    shunt_controller::residency::enable();
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}` prints the whole cause chain on one line, without a backtrace.
            eprintln!("shunt: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// mimalloc reads its options from the environment once, before `main`: when one is missing,
/// start this binary again in place (same pid, same arguments) with it set. Best effort: if
/// that fails, run with the defaults.
fn reexec_with_allocator_settings() {
    use std::os::unix::process::CommandExt;

    if cfg!(feature = "system-allocator") {
        return;
    }
    let missing: Vec<_> = ALLOCATOR_ENV
        .into_iter()
        .filter(|(name, _)| std::env::var_os(name).is_none())
        .collect();
    if missing.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| exe.clone().into_os_string());
    // `exec` returns only on failure.
    let error = std::process::Command::new(&exe)
        .arg0(arg0)
        .args(args)
        .envs(missing)
        .exec();
    eprintln!("shunt: running with mimalloc's default settings: {error}");
}

/// Frees this thread's empty pages and purges every due and delayed range of mimalloc's arenas
/// now, whatever the purge delay.
#[cfg(not(feature = "system-allocator"))]
#[allow(unsafe_code)]
fn release_freed_pages() {
    // SAFETY: mi_collect has no preconditions; it walks the calling thread's own heap and the
    // arenas under mimalloc's locks, and frees no block that is still allocated.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    // Flushes buffered log lines when `run` returns.
    let _logs = telemetry::init(cli.command.log_format());
    // This thread runs the admin listener and the API watchers; the proxy workers and the
    // compile loop each get a thread of their own (see `cmd::dataplane::serve`, `control.rs`).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(cli.command.run())
}
