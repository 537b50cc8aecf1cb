//! Guards on managed DNS: a Corefile without `reload` (CoreDNS never loads the edits until its
//! pods restart) is reported; a change that would remove more than half of the rules in place,
//! or all of them, waits `--dns-prune-delay` first, so a transient empty view (a broken class
//! filter, a mass delete undone a minute later) never sends every caller back to the hairpin.

use std::time::Duration;

use tokio::time::Instant;

use super::corefile::blocks::server_blocks;

/// The default `--dns-prune-delay`.
pub const DEFAULT_PRUNE_DELAY: Duration = Duration::from_secs(300);

/// Whether any server block of the Corefile loads `reload` (it applies to the whole file).
pub fn has_reload(corefile: &str) -> bool {
    let lines: Vec<&str> = corefile.lines().collect();
    server_blocks(&lines)
        .iter()
        .any(|block| !block.directives(&lines, "reload").is_empty())
}

/// Holds a large removal of rules until it has lasted `delay`.
#[derive(Debug)]
pub struct PruneGuard {
    delay: Duration,
    /// Since when a large removal has been asked for.
    since: Option<Instant>,
}

/// What the guard says about one change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prune {
    /// Not a large removal (or it has lasted the delay): write it.
    Write,
    /// A large removal seen for the first time: hold it, and say so.
    Started,
    /// Still holding, `left` to go.
    Holding { left: Duration },
}

impl PruneGuard {
    pub fn new(delay: Duration) -> Self {
        PruneGuard { delay, since: None }
    }

    /// `in_place` rules now, `wanted` after the change, at `now`.
    pub fn check(&mut self, in_place: usize, wanted: usize, now: Instant) -> Prune {
        let large = in_place > 0 && (wanted == 0 || wanted * 2 < in_place);
        if !large || self.delay.is_zero() {
            self.since = None;
            return Prune::Write;
        }
        match self.since {
            None => {
                self.since = Some(now);
                Prune::Started
            }
            Some(since) => match self.delay.checked_sub(now.saturating_duration_since(since)) {
                Some(left) if !left.is_zero() => Prune::Holding { left },
                _ => {
                    self.since = None;
                    Prune::Write
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn removing_more_than_half_or_all_waits_the_delay_then_writes() {
        let start = Instant::now();
        let mut guard = PruneGuard::new(5 * MINUTE);
        assert_eq!(guard.check(10, 4, start), Prune::Started);
        assert_eq!(guard.check(10, 4, start + MINUTE), Prune::Holding { left: 4 * MINUTE });
        assert_eq!(guard.check(10, 4, start + 5 * MINUTE), Prune::Write);
        assert_eq!(guard.check(1, 0, start + 6 * MINUTE), Prune::Started, "all of them");
    }

    #[test]
    fn half_or_fewer_removed_additions_and_a_recovery_write_at_once() {
        let start = Instant::now();
        let mut guard = PruneGuard::new(5 * MINUTE);
        assert_eq!(guard.check(10, 5, start), Prune::Write, "exactly half");
        assert_eq!(guard.check(0, 0, start), Prune::Write, "nothing to remove");
        assert_eq!(guard.check(2, 30, start), Prune::Write);
        assert_eq!(guard.check(10, 0, start), Prune::Started);
        assert_eq!(guard.check(10, 9, start + MINUTE), Prune::Write, "the hosts came back");
        assert_eq!(
            guard.check(10, 0, start + 2 * MINUTE),
            Prune::Started,
            "a new hold, from zero"
        );
        assert_eq!(PruneGuard::new(Duration::ZERO).check(10, 0, start), Prune::Write);
    }

    #[test]
    fn reload_anywhere_in_the_corefile_counts() {
        assert!(has_reload(include_str!("testdata/tke.Corefile")));
        assert!(!has_reload(
            ".:53 {\n    errors\n    # reload\n    forward . /etc/resolv.conf\n}\n"
        ));
        assert!(has_reload(
            ".:53 {\n    forward . 1.1.1.1 {\n        max_fails 2\n    }\n    reload 10s\n}\n"
        ));
    }
}
