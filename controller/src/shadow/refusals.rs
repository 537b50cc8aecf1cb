//! Shadowed hosts the CoreDNS rules leave out: a host whose verdict is refused keeps resolving
//! to the load balancer, since shunt cannot answer it as the load balancer does.

use std::sync::Arc;

use crate::{
    dns::{Refusal, RefusalReason},
    shadow::{HostVerdict, Verdict},
};

/// Which shadowed hosts the DNS rules rewrite (`--shadow-rewrite`; its help says what each
/// value does, so the variants carry no doc comments of their own, which clap would print).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ShadowRewrite {
    // Refused hosts keep resolving to the load balancer, listed as comments.
    Refused,
    // Every served host is rewritten, whatever its verdict.
    All,
}

/// The hosts to leave out of the rules, each with its verdict's reasons (none with
/// [`ShadowRewrite::All`]).
pub fn dns_refusals(verdicts: &[Arc<HostVerdict>], rewrite: ShadowRewrite) -> Vec<Refusal> {
    if rewrite == ShadowRewrite::All {
        return Vec::new();
    }
    verdicts
        .iter()
        .filter(|v| v.verdict == Verdict::Refused)
        .map(|v| Refusal {
            host: v.matched.clone(),
            reason: RefusalReason::Other {
                code: "ShadowRefused",
                detail: v.reasons.join("; "),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests;
