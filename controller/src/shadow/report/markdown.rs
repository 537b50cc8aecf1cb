//! The report for people: the counts, every refusal grouped by kind (the text before `:`) with
//! the hosts under it, what to fill in for missing certificates, the catch-alls and the
//! skipped Ingresses, then a line per host.

use std::sync::Arc;

use std::{collections::BTreeSet, fmt::Write};

use super::{Served, Summary, by_class, reach, reason_kind, summary};
use crate::shadow::{HostVerdict, IngressKind, IngressVerdict};

/// The kind of refusal the fill-in lines answer.
const CERTIFICATE_UNAVAILABLE: &str = "CertificateUnavailable";

/// The Markdown report.
pub fn markdown(served: &Served, verdicts: &[Arc<HostVerdict>], ingresses: &[IngressVerdict]) -> String {
    let summary = summary(verdicts, ingresses);
    let mut out = format!(
        "# Shadow report: {}\n\n{} Ingresses, {} hosts: {} identical, {} refused; {} catch-alls, {} skipped\n",
        served.profile,
        summary.ingresses,
        summary.hosts,
        summary.identical,
        summary.refused,
        summary.catch_alls,
        summary.skipped
    );
    classes(&mut out, verdicts, ingresses);
    refusals(&mut out, &summary, verdicts);
    catch_alls(&mut out, served, ingresses);
    skipped(&mut out, ingresses);
    out.push_str("\n## Hosts\n\n| host | verdict | Ingresses | reasons |\n|---|---|---|---|\n");
    for verdict in verdicts {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            verdict.host,
            verdict.verdict.as_str(),
            verdict.ingresses.join(", "),
            cell(&verdict.reasons.join("; "))
        );
    }
    out
}

fn classes(out: &mut String, verdicts: &[Arc<HostVerdict>], ingresses: &[IngressVerdict]) {
    let classes = by_class(verdicts, ingresses);
    if classes.len() < 2 {
        return;
    }
    out.push_str("\n## By class\n\n| class | Ingresses | hosts | identical | refused | catch-alls | skipped | most common refusal |\n|---|---:|---:|---:|---:|---:|---:|---|\n");
    for (class, summary) in &classes {
        let top = summary.top_reasons.first().map_or("", |(reason, _)| reason.as_str());
        let _ = writeln!(
            out,
            "| {class} | {} | {} | {} | {} | {} | {} | {} |",
            summary.ingresses,
            summary.hosts,
            summary.identical,
            summary.refused,
            summary.catch_alls,
            summary.skipped,
            cell(top)
        );
    }
}

/// Every refusal, one section per kind, most hosts first; under each, its hosts and details.
fn refusals(out: &mut String, summary: &Summary, verdicts: &[Arc<HostVerdict>]) {
    if summary.reason_kinds.is_empty() {
        return;
    }
    out.push_str("\n## Refusals by kind\n");
    for (kind, hosts) in &summary.reason_kinds {
        let plural = if *hosts == 1 { "" } else { "s" };
        let _ = writeln!(out, "\n### {kind} ({hosts} host{plural})\n");
        let of_kind = |verdict: &&Arc<HostVerdict>| verdict.reasons.iter().any(|r| reason_kind(r) == kind);
        for verdict in verdicts.iter().filter(of_kind) {
            let details: Vec<&str> = (verdict.reasons.iter())
                .filter(|reason| reason_kind(reason) == kind)
                .map(|reason| reason.split_once(':').map_or("", |(_, detail)| detail.trim()))
                .collect();
            let _ = writeln!(
                out,
                "- {} ({}): {}",
                verdict.host,
                verdict.ingresses.join(", "),
                details.join("; ")
            );
        }
        if kind == CERTIFICATE_UNAVAILABLE {
            fill_ins(out, verdicts.iter().filter(of_kind));
        }
    }
}

/// What the operator fills in: a `--shadow-tls` flag per host, or the qcloud Ingress's
/// annotation naming a `kubernetes.io/tls` Secret in its namespace.
fn fill_ins<'v>(out: &mut String, verdicts: impl Iterator<Item = &'v Arc<HostVerdict>>) {
    let mut flags = Vec::new();
    let mut annotated = BTreeSet::new();
    for verdict in verdicts {
        flags.push(format!("--shadow-tls {}=NAMESPACE/SECRET", verdict.host));
        annotated.extend(verdict.ingresses.iter().cloned());
    }
    out.push_str("\nGive each a `kubernetes.io/tls` Secret, by flag:\n\n```\n");
    for flag in flags {
        let _ = writeln!(out, "{flag}");
    }
    out.push_str("```\n\nor, for qcloud Ingresses, by annotation (a Secret in the Ingress's namespace):\n\n```\n");
    for source in annotated {
        let (namespace, name) = source.split_once('/').unwrap_or(("default", &source));
        let _ = writeln!(
            out,
            "kubectl -n {namespace} annotate ingress {name} {}=SECRET",
            crate::shadow::qcloud::TLS_SECRET
        );
    }
    out.push_str("```\n");
}

fn catch_alls(out: &mut String, served: &Served, ingresses: &[IngressVerdict]) {
    let mut entries = ingresses.iter().filter(|e| e.kind == IngressKind::CatchAll).peekable();
    if entries.peek().is_none() {
        return;
    }
    out.push_str(
        "\n## Catch-alls (rules without a host)\n\n| Ingress | class | reach | reasons |\n|---|---|---|---|\n",
    );
    for entry in entries {
        let reasons = cell(&entry.reasons.join("; "));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {reasons} |",
            entry.ingress,
            entry.class,
            reach(served, entry)
        );
    }
}

fn skipped(out: &mut String, ingresses: &[IngressVerdict]) {
    let mut entries = ingresses.iter().filter(|e| e.kind == IngressKind::Skipped).peekable();
    if entries.peek().is_none() {
        return;
    }
    out.push_str(
        "\n## Skipped (the other controller serves none of them)\n\n| Ingress | class | reason |\n|---|---|---|\n",
    );
    for entry in entries {
        let _ = writeln!(
            out,
            "| {} | {} | {} |",
            entry.ingress,
            entry.class,
            cell(&entry.reasons.join("; "))
        );
    }
}

/// A table cell: `|` escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}
