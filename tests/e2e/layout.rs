//! The source's shape, as `docs/architecture.md` and STYLE promise it: no two top-level modules
//! of the proxy crate import each other, and no function in the three crates' `src/` passes 80
//! lines. Read from the files (rustfmt's layout: a function's closing brace sits at its `fn`
//! line's indent), so a change that breaks either fails here with the place named.
//!
//! ```text
//! proxy/src/*.rs, proxy/src/*/ ─▶ crate::MODULE paths per top-level module ─▶ pairs importing each other
//! {proxy,controller,spec}/src/**.rs ─▶ fn line .. closing brace ─▶ longer than MAX_FN_LINES
//! ```

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

const MAX_FN_LINES: usize = 80;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|error| panic!("reading {}: {error}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// The top-level modules `source` names through `crate::NAME`, in `use crate::{a, b::c}` lists
/// too. Doc comments and line comments are not imports.
fn crate_paths(source: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let mut named = BTreeSet::new();
    let mut in_group = 0usize;
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if word.is_empty() && rest.starts_with('{') {
                in_group += 1;
            }
            if modules.contains(&word) {
                named.insert(word);
            }
        }
        if in_group > 0 {
            // Inside `use crate::{ ... }`: each item's first segment is a module of the crate.
            for item in code.split([',', '{', ' ']) {
                let first = item.trim().split("::").next().unwrap_or_default();
                if modules.contains(first) {
                    named.insert(first.to_string());
                }
            }
            if code.contains("};") {
                in_group = 0;
            }
        }
    }
    named
}

#[test]
fn no_two_top_level_proxy_modules_import_each_other() {
    let src = repo().join("proxy/src");
    let modules: BTreeSet<String> = std::fs::read_dir(&src)
        .expect("proxy/src")
        .map(|entry| entry.expect("entry").path())
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .filter(|name| name != "lib" && name != "main")
        .collect();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for module in &modules {
        let mut files = Vec::new();
        let file = src.join(format!("{module}.rs"));
        if file.exists() {
            files.push(file);
        }
        if src.join(module).is_dir() {
            rust_files(&src.join(module), &mut files);
        }
        // Unit tests may reach across; the layering is about the code they test.
        files.retain(|file| file.file_stem().is_some_and(|stem| stem != "tests") && !file.iter().any(|p| p == "tests"));
        let named = imports.entry(module.clone()).or_default();
        for file in files {
            let source = std::fs::read_to_string(&file).expect("readable source");
            named.extend(crate_paths(&source, &modules).into_iter().filter(|name| name != module));
        }
    }
    let cycles: Vec<String> = imports
        .iter()
        .flat_map(|(module, named)| {
            named
                .iter()
                .filter(|other| *module < **other && imports.get(*other).is_some_and(|back| back.contains(module)))
                .map(move |other| format!("{module} <-> {other}"))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "top-level proxy modules importing each other: {cycles:?}"
    );
}

/// Where each function of `source` starts and how many lines it spans, `fn` line to closing
/// brace. Bodiless declarations and one-line functions are skipped.
fn function_spans(source: &str) -> Vec<(usize, usize)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut spans = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let head = ["pub ", "pub(crate) ", "pub(super) ", "const ", "async ", "unsafe "]
            .iter()
            .fold(trimmed, |rest, word| rest.strip_prefix(word).unwrap_or(rest));
        let head = ["const ", "async ", "unsafe "]
            .iter()
            .fold(head, |rest, word| rest.strip_prefix(word).unwrap_or(rest));
        if !head.starts_with("fn ") {
            continue;
        }
        // The signature ends where a line ends in `{` (a body) or `;` (a declaration).
        let Some(open) = (at..lines.len()).find(|&i| {
            let end = lines[i].trim_end();
            end.ends_with('{') || end.ends_with(';') || end.ends_with('}')
        }) else {
            continue;
        };
        if !lines[open].trim_end().ends_with('{') {
            continue;
        }
        let closing = format!("{indent}}}");
        if let Some(close) = (open + 1..lines.len()).find(|&i| lines[i] == closing) {
            spans.push((at + 1, close - at + 1));
        }
    }
    spans
}

#[test]
fn no_function_passes_eighty_lines() {
    let mut files = Vec::new();
    for crate_src in ["proxy/src", "controller/src", "spec/src"] {
        rust_files(&repo().join(crate_src), &mut files);
    }
    let mut long = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).expect("readable source");
        for (line, span) in function_spans(&source) {
            if span > MAX_FN_LINES {
                let shown = file.strip_prefix(repo()).unwrap_or(&file).display().to_string();
                long.push(format!("{shown}:{line} ({span} lines)"));
            }
        }
    }
    assert!(long.is_empty(), "functions over {MAX_FN_LINES} lines: {long:?}");
}

#[test]
fn the_span_reader_counts_from_fn_to_its_closing_brace() {
    let source = "impl A {\n    pub(crate) async fn long(\n        x: u8,\n    ) -> u8 {\n        let y = x;\n        y\n    }\n    fn short() -> u8 { 1 }\n    fn declared();\n}\n";
    assert_eq!(function_spans(source), vec![(2, 6)]);
    let modules = BTreeSet::from(["body".to_string(), "upstream".to_string(), "routes".to_string()]);
    let named = crate_paths(
        "use crate::{\n    body::X,\n    routes::{a, b},\n};\n// crate::upstream\n",
        &modules,
    );
    assert_eq!(named, BTreeSet::from(["body".to_string(), "routes".to_string()]));
}
