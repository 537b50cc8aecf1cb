//! Where the real control-plane programs come from: a `KUBEBUILDER_ASSETS` directory (envtest's
//! convention), else `.k8s-bin/` at the top of the repository, which `tests/install.sh` unpacks from
//! `../shared/k8s` and checks against its `SHA256SUMS`.

use std::{
    io::Write,
    path::{Path, PathBuf},
    sync::Mutex,
};

/// Set by `tests/run.sh`: missing binaries fail the run instead of skipping the real tier.
pub const REQUIRE: &str = "SHUNT_REQUIRE_REAL_K8S";

/// A directory holding at least `kube-apiserver` and `etcd`.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub dir: PathBuf,
}

impl Binaries {
    /// The first directory that has both programs, if any.
    pub fn find() -> Option<Binaries> {
        let assets = std::env::var_os("KUBEBUILDER_ASSETS").map(PathBuf::from);
        let unpacked = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.k8s-bin");
        [assets, Some(unpacked)]
            .into_iter()
            .flatten()
            .find(|dir| ["kube-apiserver", "etcd"].iter().all(|name| dir.join(name).is_file()))
            .map(|dir| Binaries { dir })
    }

    pub fn apiserver(&self) -> PathBuf {
        self.dir.join("kube-apiserver")
    }

    pub fn etcd(&self) -> PathBuf {
        self.dir.join("etcd")
    }

    /// CoreDNS, when the same directory has it.
    pub fn coredns(&self) -> Option<PathBuf> {
        Some(self.dir.join("coredns")).filter(|path| path.is_file())
    }
}

/// Says once per test binary, past libtest's output capture, that a tier is skipped and why;
/// panics instead when [`REQUIRE`] is set.
pub fn skip(tier: &str, why: &str) {
    assert!(
        std::env::var_os(REQUIRE).is_none(),
        "{REQUIRE} is set but the {tier} cannot run: {why}"
    );
    say_skipped(tier, why);
}

/// [`skip`] for what an envtest directory does not hold (CoreDNS): never required, still said.
pub fn say_skipped(tier: &str, why: &str) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().expect("skip lock");
    if said.iter().any(|t| t == tier) {
        return;
    }
    said.push(tier.to_string());
    // Straight to the stderr handle: libtest captures `eprintln!` of passing tests.
    let line = format!("skipped: the {tier} ({why}); see docs/testing.md\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}
