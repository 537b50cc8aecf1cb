//! Handing back the pages of code that only start-up or a compile ran.
//!
//! The kernel maps an executable's code in 64 KiB runs around each page a fault touches
//! (fault-around), so once the flags are parsed, the manifests or first lists decoded and the
//! first table built, about 12 MiB of a release build's 19 MiB of code are resident, though
//! serving runs a small part of it; every later compile maps most of it back.
//! - After the first compile the executable's read-only mappings are paged out (`MADV_PAGEOUT`,
//!   Linux 5.4+): start-up code is dropped from memory altogether.
//! - After every later compile the code it ran is unmapped (`MADV_DONTNEED` on the executable's
//!   code only): the pages stay in the page cache, so the next compile faults them back in a few
//!   hundred minor faults (well under a millisecond), not from the disk.
//! - The main thread's work (watch events, lease rounds, the leader's writes) comes in bursts:
//!   once it has been idle for 50 ms (or a quarter of a second into steady work), the code it
//!   ran is unmapped the same way and the pages it freed handed back
//!   ([`after_main_thread_work`]), at most four times a second. The API client, JSON and TLS
//!   code of one lease round (every 2 s) maps ~7 MiB back, resident for those 50 ms only; a
//!   tidy is about a hundred minor faults' work (~0.2 ms).
//!
//! Best effort: another kernel or OS keeps everything mapped.

use std::{
    ops::Range,
    path::Path,
    sync::{
        OnceLock,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

/// Set by the binary; tests that run the compile loop in their own process leave their code be.
static ENABLED: AtomicBool = AtomicBool::new(false);
static FIRST_DONE: AtomicBool = AtomicBool::new(false);

/// Lets [`after_compile`] hand code pages back (the binary calls it).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Hands back the code a compile (or start-up, the first time) ran, when the binary enabled it.
pub fn after_compile() {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let first = !FIRST_DONE.swap(true, Ordering::Relaxed);
    let released = release_code(if first { Advice::PageOut } else { Advice::Unmap });
    tracing::debug!(released_kib = released / 1024, first, "Code pages handed back");
}

/// How long the main thread must be idle before its tidy: a lease round or a write ends in one
/// burst, and the code it ran stays resident only this long.
const QUIET: Duration = Duration::from_millis(50);
/// The longest a tidy waits while work goes on: at most four a second under steady work.
const AT_MOST: Duration = Duration::from_millis(250);

/// After work on the main thread (a watch event, a lease round, the leader's writes; within its
/// tokio runtime): schedules a tidy once the main thread has been idle for [`QUIET`] (or
/// [`AT_MOST`] after the first work it covers) that unmaps the code run since, as after a
/// compile, and hands back the pages the main thread freed. Nothing before the first compile,
/// which pages start-up out.
pub fn after_main_thread_work() {
    static TIDY_DUE: AtomicBool = AtomicBool::new(false);
    static LAST_WORK_MS: AtomicU64 = AtomicU64::new(0);
    if !ENABLED.load(Ordering::Relaxed) || !FIRST_DONE.load(Ordering::Relaxed) {
        return;
    }
    let start = *PROCESS_START.get_or_init(Instant::now);
    LAST_WORK_MS.store(millis_between(start, Instant::now()), Ordering::Relaxed);
    if TIDY_DUE.swap(true, Ordering::AcqRel) {
        return;
    }
    let began = Instant::now();
    tokio::spawn(async move {
        loop {
            let last_work = start + Duration::from_millis(LAST_WORK_MS.load(Ordering::Relaxed));
            let due = tidy_due(began, last_work);
            if Instant::now() >= due {
                break;
            }
            tokio::time::sleep_until(due.into()).await;
        }
        TIDY_DUE.store(false, Ordering::Release);
        release_code(Advice::Unmap);
        crate::allocator::release_freed();
    });
}

static PROCESS_START: OnceLock<Instant> = OnceLock::new();

fn millis_between(earlier: Instant, later: Instant) -> u64 {
    u64::try_from(later.saturating_duration_since(earlier).as_millis()).unwrap_or(u64::MAX)
}

/// When the tidy of work that began at `began` and last ran at `last_work` is due.
fn tidy_due(began: Instant, last_work: Instant) -> Instant {
    (last_work + QUIET).min(began + AT_MOST)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Advice {
    /// Every read-only mapping, dropped from memory (`MADV_PAGEOUT`).
    PageOut,
    /// The code mappings only, unmapped but kept in the page cache (`MADV_DONTNEED`). Never
    /// on a read-only data mapping: the loader's relocated (copied-on-write) pages sit there,
    /// and unmapping them would bring back the file's unrelocated bytes.
    Unmap,
}

/// Advises the executable's mappings; returns the bytes advised. The code mappings are read
/// once: an executable's mappings do not move after start-up.
fn release_code(advice: Advice) -> usize {
    static CODE: OnceLock<Vec<Range<usize>>> = OnceLock::new();
    let ranges = match advice {
        Advice::PageOut => &executable_mappings(advice),
        Advice::Unmap => CODE.get_or_init(|| executable_mappings(advice)),
    };
    ranges.iter().map(|range| advise(range.clone(), advice)).sum()
}

/// The ranges `advice` applies to in this process's map of its executable; none when
/// `/proc/self` cannot be read.
fn executable_mappings(advice: Advice) -> Vec<Range<usize>> {
    let (Ok(exe), Ok(maps)) = (
        std::fs::read_link("/proc/self/exe"),
        std::fs::read_to_string("/proc/self/maps"),
    ) else {
        return Vec::new();
    };
    mappings(&maps, &exe, advice).collect()
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise(range: Range<usize>, advice: Advice) -> usize {
    let len = range.len();
    let advice = match advice {
        Advice::PageOut => libc::MADV_PAGEOUT,
        Advice::Unmap => libc::MADV_DONTNEED,
    };
    // SAFETY: the range is one of this process's own mappings of its executable, page-aligned
    // as /proc/self/maps gives it. MADV_PAGEOUT only drops clean pages; MADV_DONTNEED is given
    // only code mappings, which are private, never written and so equal to the file's bytes.
    // Either way the next access reads the same bytes back from the file: no memory the program
    // sees changes.
    let advised = unsafe { libc::madvise(range.start as *mut libc::c_void, len, advice) };
    if advised == 0 { len } else { 0 }
}

#[cfg(not(target_os = "linux"))]
fn advise(_: Range<usize>, _: Advice) -> usize {
    0
}

/// The address ranges of `exe`'s mappings that `advice` applies to, from the text of
/// `/proc/self/maps` (`start-end perms offset dev inode path`): readable and not writable, and
/// for [`Advice::Unmap`] executable too.
fn mappings<'a>(maps: &'a str, exe: &'a Path, advice: Advice) -> impl Iterator<Item = Range<usize>> + 'a {
    maps.lines().filter_map(move |line| {
        let mut fields = line.splitn(6, ' ');
        let (range, perms) = (fields.next()?, fields.next()?.as_bytes());
        let path = fields.nth(3)?.trim_start();
        let read_only = perms.first() == Some(&b'r') && perms.get(1) == Some(&b'-');
        let code = perms.get(2) == Some(&b'x');
        if !read_only || (advice == Advice::Unmap && !code) || Path::new(path) != exe {
            return None;
        }
        let (start, end) = range.split_once('-')?;
        let range = usize::from_str_radix(start, 16).ok()?..usize::from_str_radix(end, 16).ok()?;
        (!range.is_empty()).then_some(range)
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const MAPS: &str = "\
564dcfa1b000-564dcfec7000 r--p 00000000 fe:00 10010899                   /usr/bin/shunt
564dcfec7000-564dd1125000 r-xp 004ab000 fe:00 10010899                   /usr/bin/shunt
564dd11ba000-564dd11c2000 rw-p 0179c000 fe:00 10010899                   /usr/bin/shunt
564dd11c2000-564dd11c3000 rw-p 00000000 00:00 0 
7f0a2c000000-7f0a2c021000 r-xp 00000000 fe:00 2211                       /usr/lib/libc.so.6
7f0a2d000000-7f0a2d021000 r--p 00000000 fe:00 2212                       /usr/bin/shunt-old
7ffd1d5fe000-7ffd1d600000 r-xp 00000000 00:00 0                          [vdso]
";

    #[test]
    fn a_burst_is_tidied_once_quiet_and_steady_work_at_most_a_quarter_second_in() {
        let began = Instant::now();
        assert_eq!(tidy_due(began, began), began + QUIET);
        let late = began + Duration::from_millis(120);
        assert_eq!(tidy_due(began, late), late + QUIET);
        assert_eq!(tidy_due(began, began + Duration::from_secs(5)), began + AT_MOST);
    }

    #[test]
    fn only_the_executables_read_only_mappings_are_paged_out() {
        let found: Vec<_> = mappings(MAPS, Path::new("/usr/bin/shunt"), Advice::PageOut).collect();
        assert_eq!(found, [0x564dcfa1b000..0x564dcfec7000, 0x564dcfec7000..0x564dd1125000]);
    }

    #[test]
    fn only_the_executables_code_is_unmapped() {
        let found: Vec<_> = mappings(MAPS, Path::new("/usr/bin/shunt"), Advice::Unmap).collect();
        assert_eq!(found, vec![(0x564dcfec7000..0x564dd1125000)]);
    }

    #[test]
    fn a_path_with_spaces_is_one_path() {
        let maps = "1000-2000 r-xp 00000000 fe:00 1 /opt/my apps/shunt\n";
        let found: Vec<_> = mappings(maps, Path::new("/opt/my apps/shunt"), Advice::PageOut).collect();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0], 0x1000..0x2000);
    }

    proptest! {
        /// Any text, however broken, yields only ranges of lines that name the executable.
        #[test]
        fn arbitrary_lines_never_panic_or_name_another_file(text in "[0-9a-f rwxp:/-]{0,80}(\n[0-9a-f rwxp:/-]{0,80}){0,4}") {
            for advice in [Advice::PageOut, Advice::Unmap] {
                for range in mappings(&text, Path::new("/x"), advice) {
                    prop_assert!(range.start < range.end);
                }
            }
        }

        #[test]
        fn a_well_formed_line_round_trips(start in 0usize..1 << 40, len in 1usize..1 << 30, exec in any::<bool>()) {
            let perms = if exec { "r-xp" } else { "r--p" };
            let line = format!("{start:x}-{:x} {perms} 00000000 fe:00 7      /x\n", start + len);
            let found: Vec<_> = mappings(&line, Path::new("/x"), Advice::PageOut).collect();
            prop_assert_eq!(found, vec![start..start + len]);
            let unmapped: Vec<_> = mappings(&line, Path::new("/x"), Advice::Unmap).collect();
            prop_assert_eq!(unmapped.len(), usize::from(exec));
        }
    }
}
