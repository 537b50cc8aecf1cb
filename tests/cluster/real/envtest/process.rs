//! A control-plane program run under a tiny `sh` guard that kills it when our end of its stdin
//! closes: when the guard is dropped, and also when the test binary exits however it exits (a
//! shared control plane lives in a static, which is never dropped).

use std::{
    fs::File,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, ChildStdin, Command, Stdio},
};

/// Starts the program, prints its pid, then waits for EOF on stdin (or a signal to the guard,
/// as `timeout` sends its process group), kills it and removes `$GUARD_REMOVE` if set (a shared
/// control plane's directory, which no `Drop` removes).
const GUARD: &str = r#""$@" >"$GUARD_LOG" 2>&1 &
child=$!
stop() {
    kill -KILL "$child" 2>/dev/null
    wait "$child" 2>/dev/null
    if [ -n "$GUARD_REMOVE" ]; then rm -rf "$GUARD_REMOVE"; fi
    exit 0
}
trap stop TERM INT HUP
echo "$child"
read _ignored
stop"#;

/// A running program; killed by pid when dropped.
pub struct Guarded {
    pub name: &'static str,
    pub pid: u32,
    pub log: PathBuf,
    guard: Child,
    stdin: Option<ChildStdin>,
}

impl Guarded {
    /// Runs `program args` with its output in `dir/NAME.log`.
    pub fn spawn(name: &'static str, program: &Path, args: &[String], dir: &Path) -> Guarded {
        Guarded::spawn_removing(name, program, args, dir, None)
    }

    /// [`Guarded::spawn`], and once the program is killed, `remove` is deleted too.
    pub fn spawn_removing(
        name: &'static str,
        program: &Path,
        args: &[String],
        dir: &Path,
        remove: Option<&Path>,
    ) -> Guarded {
        let log = dir.join(format!("{name}.log"));
        File::create(&log).unwrap_or_else(|e| panic!("creating {}: {e}", log.display()));
        let mut guard = Command::new("sh")
            .arg("-c")
            .arg(GUARD)
            .arg("guard")
            .arg(program)
            .args(args)
            .env("GUARD_LOG", &log)
            .env("GUARD_REMOVE", remove.unwrap_or(Path::new("")))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name} ({}): {e}", program.display()));
        let stdout = guard.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reading the guarded pid");
        let pid = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}: the guard printed {line:?}, not a pid"));
        let stdin = guard.stdin.take();
        Guarded {
            name,
            pid,
            log,
            guard,
            stdin,
        }
    }

    /// The program's output so far, for failure messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Whether the program is still running (not yet exited or reaped).
    pub fn alive(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SIGKILL by pid first, so the port is free once this returns; then let the guard go.
        let _ = Command::new("kill")
            .args(["-KILL", &self.pid.to_string()])
            .stderr(Stdio::null())
            .status();
        drop(self.stdin.take());
        let _ = self.guard.wait();
    }
}
