//! The flag tables of `docs/operations.md` against the built binary's `--help`: every flag a
//! command takes has a row, every row names a flag that exists, and where `--help` prints a
//! default (`[default: ...]`) the row gives the same one. Defaults live in the code; the docs
//! repeat them, and this is what keeps the two from drifting apart.
//!
//! ```text
//! shunt <command> --help ─▶ flags and printed defaults ─┐
//! docs/operations.md ─▶ rows of tables headed `flag` ───┴─▶ each side checked against the other
//! ```

use std::collections::{BTreeMap, BTreeSet};

/// The commands whose flags the docs list.
const COMMANDS: [&str; 4] = ["serve", "run", "dns", "demo"];

const DOCS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/operations.md");

/// Flags `--help` lists that are not options of shunt.
const CLAP_FLAGS: [&str; 2] = ["--help", "--version"];

/// A row of a flag table: the flag it names and the default it gives.
#[derive(Debug, PartialEq, Eq)]
struct Row {
    line: usize,
    flag: String,
    default: String,
}

/// Each command's flags, with the default `--help` prints for each (if any).
type HelpFlags = BTreeMap<&'static str, BTreeMap<String, Option<String>>>;

fn help(command: &str) -> String {
    // A value in the environment would show in the help instead of the default: `launch` clears them.
    let output = crate::support::launch::shunt()
        .args([command, "--help"])
        .output()
        .expect("running shunt --help");
    assert!(
        output.status.success(),
        "shunt {command} --help failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("help is UTF-8")
}

fn all_help_flags() -> HelpFlags {
    COMMANDS
        .iter()
        .map(|&command| {
            let flags = parse_help(&help(command));
            assert!(!flags.is_empty(), "no flags found in `shunt {command} --help`");
            (command, flags)
        })
        .collect()
}

fn docs_rows() -> Vec<Row> {
    let text = std::fs::read_to_string(DOCS).expect("reading docs/operations.md");
    let rows = parse_docs(&text).unwrap_or_else(|problem| panic!("docs/operations.md: {problem}"));
    assert!(!rows.is_empty(), "docs/operations.md has no flag table");
    rows
}

/// Flags in a `--help` text by name, each with the default it prints. An option starts on a
/// line indented at most six spaces with `-`; its description and `[default: ...]` follow on
/// the same line or on deeper-indented ones (and may be wrapped).
fn parse_help(help: &str) -> BTreeMap<String, Option<String>> {
    let mut options: Vec<String> = Vec::new();
    for line in help.lines() {
        let text = line.trim_start();
        let indent = line.len() - text.len();
        if indent <= 6 && text.starts_with('-') {
            options.push(text.trim_end().to_string());
        } else if let Some(option) = options.last_mut()
            && !text.is_empty()
        {
            option.push(' ');
            option.push_str(text.trim_end());
        }
    }
    options
        .iter()
        .filter_map(|option| {
            let name = option
                .split([' ', ',', '=', '['])
                .find(|token| token.starts_with("--"))?;
            let default = option
                .split_once("[default: ")
                .and_then(|(_, rest)| rest.split_once(']').map(|(value, _)| value.trim().to_string()));
            Some((name.to_string(), default))
        })
        .filter(|(name, _)| !CLAP_FLAGS.contains(&name.as_str()))
        .collect()
}

/// The rows of every table whose first column is headed `flag` and that has a `default`
/// column; each such row must name exactly one flag, in backticks.
fn parse_docs(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    // The `default` column of the flag table being read, if one is.
    let mut default_column: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        let Some(cells) = table_cells(line) else {
            default_column = None;
            continue;
        };
        if cells
            .iter()
            .all(|cell| cell.chars().all(|c| matches!(c, '-' | ':' | ' ')))
        {
            continue;
        }
        if cells[0] == "flag" {
            default_column = cells.iter().position(|cell| *cell == "default");
            continue;
        }
        let Some(column) = default_column else { continue };
        let flag = backticked(cells[0])
            .filter(|flag| flag.starts_with("--") && !flag.contains(' '))
            .ok_or_else(|| {
                format!(
                    "line {line_number}: a flag row must name one `--flag`, not {:?}",
                    cells[0]
                )
            })?;
        let default = cells
            .get(column)
            .ok_or_else(|| format!("line {line_number}: `{flag}` has no default cell"))?;
        rows.push(Row {
            line: line_number,
            flag: flag.to_string(),
            default: backticked(default).unwrap_or(default).to_string(),
        });
    }
    Ok(rows)
}

/// The cells of a Markdown table row, trimmed; `None` for any other line.
fn table_cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(str::trim).collect())
}

/// `text` without the backticks around it, when it is one code span.
fn backticked(text: &str) -> Option<&str> {
    text.strip_prefix('`')?
        .strip_suffix('`')
        .filter(|inner| !inner.contains('`'))
}

/// clap prints an empty default as `[default: ""]`; the docs say `none`.
fn same_default(docs: &str, help: &str) -> bool {
    docs == help || (help == "\"\"" && docs == "none")
}

/// What is wrong with `rows` against `help`, one line per problem, each naming its flag.
fn problems(rows: &[Row], help: &HelpFlags) -> Vec<String> {
    let mut problems = Vec::new();
    for row in rows {
        let mut found = false;
        for (command, flags) in help {
            let Some(printed) = flags.get(&row.flag) else { continue };
            found = true;
            if let Some(default) = printed
                && !same_default(&row.default, default)
            {
                problems.push(format!(
                    "line {}: `{}` defaults to {default:?} in `shunt {command} --help`, the docs say {:?}",
                    row.line, row.flag, row.default
                ));
            }
        }
        if !found {
            problems.push(format!(
                "line {}: `{}` is not a flag of any of `shunt {}`",
                row.line,
                row.flag,
                COMMANDS.join("`, `shunt ")
            ));
        }
    }
    let documented: BTreeSet<&str> = rows.iter().map(|row| row.flag.as_str()).collect();
    for (command, flags) in help {
        for flag in flags.keys().filter(|flag| !documented.contains(flag.as_str())) {
            problems.push(format!("`{flag}` of `shunt {command}` has no row in a flag table"));
        }
    }
    problems
}

#[test]
fn the_flag_tables_in_the_operations_doc_match_every_commands_help() {
    let problems = problems(&docs_rows(), &all_help_flags());
    assert!(
        problems.is_empty(),
        "docs/operations.md disagrees with `shunt <command> --help`:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_help_parser_reads_names_and_defaults_in_short_and_long_form() {
    let short = "Usage: shunt serve [OPTIONS]\n\nOptions:\n  -f, --manifests <PATH>  Manifest file\n      \
                 --poll-interval <POLL_INTERVAL>  How often [default: 250ms]\n  -h, --help  Print help\n";
    let long = "Options:\n      --http-addr <HTTP_ADDR>\n          Plain listener\n\n          \
                [env: SHUNT_HTTP_ADDR=]\n          [default:\n          0.0.0.0:8080]\n\n      \
                --trusted-proxies <TRUSTED_PROXIES>\n          Peers\n          [default: \"\"]\n\n      \
                --coredns-target <CORED>\n          Possible values:\n          - corefile: a block\n";
    let expected = |pairs: &[(&str, Option<&str>)]| -> BTreeMap<String, Option<String>> {
        pairs
            .iter()
            .map(|(name, default)| (name.to_string(), default.map(str::to_string)))
            .collect()
    };
    assert_eq!(
        parse_help(short),
        expected(&[("--manifests", None), ("--poll-interval", Some("250ms"))])
    );
    assert_eq!(
        parse_help(long),
        expected(&[
            ("--coredns-target", None),
            ("--http-addr", Some("0.0.0.0:8080")),
            ("--trusted-proxies", Some("\"\"")),
        ])
    );
}

#[test]
fn a_wrong_default_a_missing_row_and_an_unknown_flag_are_each_named() {
    let docs = "| flag | default | meaning |\n| --- | --- | --- |\n| `--upstream-timeout` | `30s` | x |\n\
                | `--no-such-flag` | off | x |\n\
                | `--trusted-proxies` | none | x |\n\n| series | what |\n| --- | --- |\n| `shunt_x` | y |\n";
    let rows = parse_docs(docs).expect("well-formed tables");
    let help: HelpFlags = [(
        "serve",
        [
            ("--upstream-timeout".to_string(), Some("60s".to_string())),
            ("--threads".to_string(), None),
            ("--trusted-proxies".to_string(), Some("\"\"".to_string())),
        ]
        .into_iter()
        .collect(),
    )]
    .into_iter()
    .collect();
    let found = problems(&rows, &help);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(
        found[0].contains("`--upstream-timeout` defaults to \"60s\""),
        "{}",
        found[0]
    );
    assert!(found[1].contains("`--no-such-flag` is not a flag"), "{}", found[1]);
    assert!(
        found[2].contains("`--threads` of `shunt serve` has no row"),
        "{}",
        found[2]
    );
}

#[test]
fn a_flag_table_row_that_names_no_flag_is_refused() {
    let docs = "| flag | default | meaning |\n| --- | --- | --- |\n| `--a`, `--b` | none | two flags |\n";
    let error = parse_docs(docs).expect_err("a row with two flags");
    assert!(error.starts_with("line 3:"), "{error}");
}

// === the files the docs name ===

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The docs whose relative links must lead somewhere.
const LINKED: [&str; 9] = [
    "README.md",
    "docs/architecture.md",
    "docs/cluster.md",
    "docs/dns.md",
    "docs/operations.md",
    "docs/routing.md",
    "docs/shadow.md",
    "docs/tls.md",
    "benches/README.md",
];

/// The top-level folders a path in the docs may name something in.
const SOURCE_DIRS: [&str; 7] = ["spec", "proxy", "controller", "tests", "benches", "deploy", "examples"];

/// Every file and folder under `dir` (relative to the repository, `/`-separated, folders with
/// a trailing `/`), skipping build output and hidden entries.
fn tree(dir: &str, into: &mut BTreeSet<String>) {
    let entries = std::fs::read_dir(format!("{ROOT}/{dir}")).unwrap_or_else(|e| panic!("reading {dir}: {e}"));
    for entry in entries {
        let entry = entry.expect("a directory entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        let path = format!("{dir}/{name}");
        if entry.file_type().expect("a file type").is_dir() {
            into.insert(format!("{path}/"));
            tree(&path, into);
        } else {
            into.insert(path);
        }
    }
}

/// Code spans that name a source path: a folder part and a file (`server/limits.rs`) or a
/// folder (`proxy/src/h1/`). Not URLs, routes (`/healthz`) or placeholders (`NAMESPACE/NAME`).
fn named_paths(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| {
            span.contains('/')
                && !span.starts_with('/')
                && span
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "/_.-".contains(c))
                && (span.ends_with(".rs") || span.ends_with('/'))
        })
        .collect()
}

/// Relative link targets of a Markdown text, without their `#fragment`.
fn relative_links(text: &str) -> Vec<&str> {
    text.split("](")
        .skip(1)
        .filter_map(|rest| rest.split_once(')').map(|(target, _)| target))
        .filter(|target| !target.contains("://") && !target.starts_with('#'))
        .map(|target| target.split_once('#').map_or(target, |(path, _)| path))
        .collect()
}

/// A path named from any level exists: `incremental/diff.rs` is `controller/src/compile/...`.
fn exists_somewhere(tree: &BTreeSet<String>, path: &str) -> bool {
    tree.iter()
        .any(|entry| entry == path || entry.ends_with(&format!("/{path}")))
}

#[test]
fn every_file_the_architecture_walk_names_and_every_docs_link_exists() {
    let mut files = BTreeSet::new();
    for dir in SOURCE_DIRS {
        files.insert(format!("{dir}/"));
        tree(dir, &mut files);
    }
    let mut missing = Vec::new();
    let walk = std::fs::read_to_string(format!("{ROOT}/docs/architecture.md")).expect("reading the walk");
    let named: BTreeSet<&str> = named_paths(&walk).into_iter().collect();
    assert!(named.len() > 20, "docs/architecture.md names only {named:?}");
    for path in named {
        if !exists_somewhere(&files, path) {
            missing.push(format!(
                "docs/architecture.md names `{path}`, which no file or folder is"
            ));
        }
    }
    for doc in LINKED {
        let text = std::fs::read_to_string(format!("{ROOT}/{doc}")).unwrap_or_else(|e| panic!("reading {doc}: {e}"));
        let base = std::path::Path::new(ROOT).join(doc);
        let base = base.parent().expect("a doc is in a folder");
        for target in relative_links(&text) {
            if !base.join(target).exists() {
                missing.push(format!("{doc} links to `{target}`, which does not exist"));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn source_paths_and_relative_links_are_told_from_the_rest() {
    let text = "`proxy/src/h1/` and `server/limits.rs`, not `/healthz`, `NAMESPACE/NAME`, \
                `namespace/service:port` or `shunt::access`; [a](../deploy/README.md#rbac), \
                [b](https://example.com/x), [c](#here), [d](cluster.md)";
    assert_eq!(named_paths(text), ["proxy/src/h1/", "server/limits.rs"]);
    assert_eq!(relative_links(text), ["../deploy/README.md", "cluster.md"]);
    let tree: BTreeSet<String> = ["controller/src/compile/incremental/diff.rs".to_string()].into();
    assert!(exists_somewhere(&tree, "incremental/diff.rs"));
    assert!(!exists_somewhere(&tree, "cremental/diff.rs"));
}
