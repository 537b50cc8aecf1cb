//! The DNS side: CoreDNS `rewrite` rules that send the hostnames shunt serves to shunt's
//! Service, so in-cluster callers keep their URLs and skip the cloud load balancer.
//!
//! ```text
//! TableSpec hosts ─▶ stanza (exact: rewrite name exact, *.x: anchored one-label regex)
//!                      └─▶ `shunt dns` prints it
//!                      └─▶ managed (leader): ConfigMap `shunt.override` key, or the
//!                          `# BEGIN shunt` … `# END shunt` block of the Corefile's `.:53 {`
//! ```

pub mod command;
mod corefile;
mod managed;
mod stanza;

pub use self::{
    corefile::{CorefileError, replace_block},
    managed::{CorednsTarget, CorednsWriter},
    stanza::{BEGIN_MARKER, DnsExclude, END_MARKER, Stanza, served_hosts},
};
