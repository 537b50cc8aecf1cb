//! The real-world fixture sets under `tests/corpus/<class>`: each file run alone through
//! `shunt shadow report --shadow-class <class> --json`, as an operator would run it on that
//! file's cluster.

use std::path::PathBuf;

use serde_json::Value;

use super::common::launch;

/// One file's report, with how many Ingresses the file holds (for the accounting checks).
pub struct Outcome {
    pub file: String,
    pub ingresses_written: usize,
    pub report: Value,
}

/// The corpus files of `class` (`tests/corpus/<class>/*.yaml`), sorted.
pub fn corpus_files(class: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../tests/corpus/{class}"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading tests/corpus/{class}: {e}"))
        .map(|entry| entry.expect("readable").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "yaml"))
        .collect();
    files.sort();
    files
}

/// `shunt shadow report` over `file` with `class` shadowed; panics unless it succeeds.
pub fn report(class: &str, file: &PathBuf) -> Outcome {
    let output = launch::shunt()
        .args(["shadow", "report", "--shadow-class", class, "--json", "--manifests"])
        .arg(file)
        .output()
        .expect("shunt runs");
    let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
    assert!(
        output.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(file).expect("readable");
    Outcome {
        ingresses_written: text.matches("\nkind: Ingress\n").count(),
        report: serde_json::from_slice(&output.stdout).expect("JSON report"),
        file: name,
    }
}
