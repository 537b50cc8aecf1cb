//! The TKE (qcloud) Ingress annotations that decide what the CLB answers, parsed. A value that
//! does not parse is kept as an error: the CLB's answer for it is unknown, so its hosts are refused.

use std::collections::BTreeMap;

use crate::objects::{Annotations, Ingress};
use serde::Deserialize;

use super::keys;

pub const RULE_MIX: &str = "kubernetes.io/ingress.rule-mix";
pub const RULE_MIX_BOTH: &str = "kubernetes.io/ingress.rule-mix-both";
pub const HTTP_RULES: &str = "kubernetes.io/ingress.http-rules";
pub const HTTPS_RULES: &str = "kubernetes.io/ingress.https-rules";
pub const AUTO_REWRITE: &str = "ingress.cloud.tencent.com/auto-rewrite";
pub const AUTO_REWRITE_CODE: &str = "ingress.cloud.tencent.com/auto-rewrite-code";
pub const REWRITE_SUPPORT: &str = "ingress.cloud.tencent.com/rewrite-support";
pub const LISTEN_PORTS: &str = "ingress.cloud.tencent.com/listen-ports";
pub const DIRECT_ACCESS: &str = "ingress.cloud.tencent.com/direct-access";
pub const ENABLE_GROUP: &str = "ingress.cloud.tencent.com/enable-group";
pub const EXIST_LB_ID: &str = "kubernetes.io/ingress.existLbId";
/// Ours: a `kubernetes.io/tls` Secret in the Ingress's namespace for its HTTPS hosts.
pub const TLS_SECRET: &str = "shunt.dev/tls-secret";

/// The CLB only offers these redirect codes.
pub const REWRITE_CODES: [u16; 3] = [301, 302, 307];

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QcloudAnnotations {
    pub rule_mix: bool,
    pub rule_mix_both: bool,
    /// `None`: the annotation is absent; `Some([])`: `"null"` or an empty list.
    pub http_rules: Option<Vec<RuleEntry>>,
    pub https_rules: Option<Vec<RuleEntry>>,
    pub auto_rewrite: bool,
    pub rewrite_codes: RewriteCodes,
    pub rewrite_support: bool,
    /// `(protocol, port)`, protocol uppercase; `None` when absent (80 and 443 as the Ingress needs).
    pub listen_ports: Option<Vec<(String, u16)>>,
    /// `direct-access: "true"`: the CLB reaches pods directly, so a ClusterIP backend serves.
    pub direct_access: bool,
    /// The load balancer the Ingress shares with others (`enable-group` on an `existLbId`).
    pub group: Option<String>,
    pub tls_secret: Option<String>,
    /// Keys under a TKE prefix that shunt neither reproduces nor knows to have no effect.
    pub unsupported: Vec<String>,
    /// Keys whose values did not parse, with why.
    pub invalid: Vec<(&'static str, String)>,
}

/// One entry of `http-rules` / `https-rules`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct RuleEntry {
    /// Absent or empty: the default domain.
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub backend: Option<EntryBackend>,
    #[serde(default)]
    pub rewrite: Option<RewriteTarget>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryBackend {
    pub service_name: String,
    /// A string in TKE's examples (`"80"`); a number is accepted too. A port number or name.
    pub service_port: PortValue,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum PortValue {
    Number(i32),
    Text(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct RewriteTarget {
    pub port: u16,
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
}

/// `auto-rewrite-code`: a default and per-host overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RewriteCodes {
    pub default: Option<u16>,
    pub hosts: BTreeMap<String, u16>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RewriteCodeJson {
    #[serde(default)]
    default_rewrite_code: Option<u16>,
    #[serde(default)]
    rewrite_code_infos: Vec<RewriteCodeInfo>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RewriteCodeInfo {
    host: String,
    rewrite_code: u16,
}

pub fn parse(ingress: &Ingress) -> QcloudAnnotations {
    let empty = Annotations::default();
    let annotations = ingress.metadata.annotations.as_ref().unwrap_or(&empty);
    let mut parsed = QcloudAnnotations::default();
    let flag = |key: &'static str, invalid: &mut Vec<(&'static str, String)>| match annotations.get(key) {
        None => false,
        Some(value) => match value.trim() {
            "true" => true,
            "false" => false,
            other => {
                invalid.push((key, format!("{other:?} is not \"true\" or \"false\"")));
                false
            }
        },
    };
    parsed.rule_mix = flag(RULE_MIX, &mut parsed.invalid);
    parsed.rule_mix_both = flag(RULE_MIX_BOTH, &mut parsed.invalid);
    parsed.auto_rewrite = flag(AUTO_REWRITE, &mut parsed.invalid);
    parsed.rewrite_support = flag(REWRITE_SUPPORT, &mut parsed.invalid);
    let enable_group = flag(ENABLE_GROUP, &mut parsed.invalid);
    parsed.http_rules = rules(annotations, HTTP_RULES, &mut parsed.invalid);
    parsed.https_rules = rules(annotations, HTTPS_RULES, &mut parsed.invalid);
    if let Some(value) = annotations.get(AUTO_REWRITE_CODE) {
        match rewrite_codes(value) {
            Ok(codes) => parsed.rewrite_codes = codes,
            Err(error) => parsed.invalid.push((AUTO_REWRITE_CODE, error)),
        }
    }
    if let Some(value) = annotations.get(LISTEN_PORTS) {
        match listen_ports(value) {
            Ok(ports) => parsed.listen_ports = Some(ports),
            Err(error) => parsed.invalid.push((LISTEN_PORTS, error)),
        }
    }
    parsed.direct_access = flag(DIRECT_ACCESS, &mut parsed.invalid);
    if enable_group {
        parsed.group = annotations.get(EXIST_LB_ID).filter(|id| !id.trim().is_empty()).cloned();
    }
    parsed.tls_secret = annotations
        .get(TLS_SECRET)
        .filter(|name| !name.trim().is_empty())
        .cloned();
    parsed.unsupported = annotations
        .keys()
        .filter(|key| keys::classify(key) == keys::Class::Refused)
        .cloned()
        .collect();
    parsed
}

/// `"null"` (TKE writes it for "none") and `[]` are both an empty list.
fn rules(
    annotations: &Annotations,
    key: &'static str,
    invalid: &mut Vec<(&'static str, String)>,
) -> Option<Vec<RuleEntry>> {
    let value = annotations.get(key)?;
    match serde_json::from_str::<Option<Vec<RuleEntry>>>(value) {
        Ok(entries) => Some(entries.unwrap_or_default()),
        Err(error) => {
            invalid.push((key, format!("not a JSON list of rules: {error}")));
            None
        }
    }
}

fn rewrite_codes(value: &str) -> Result<RewriteCodes, String> {
    let json: RewriteCodeJson = serde_json::from_str(value).map_err(|error| format!("not valid JSON: {error}"))?;
    let check = |code: u16| {
        if REWRITE_CODES.contains(&code) {
            Ok(code)
        } else {
            Err(format!("code {code} is not one the CLB offers (301, 302, 307)"))
        }
    };
    let default = json.default_rewrite_code.map(check).transpose()?;
    let mut hosts = BTreeMap::new();
    for info in json.rewrite_code_infos {
        hosts.insert(info.host.to_ascii_lowercase(), check(info.rewrite_code)?);
    }
    Ok(RewriteCodes { default, hosts })
}

/// `[{"HTTP":80},{"HTTPS":443}]`.
fn listen_ports(value: &str) -> Result<Vec<(String, u16)>, String> {
    let entries: Vec<BTreeMap<String, u16>> =
        serde_json::from_str(value).map_err(|error| format!("not a JSON list of {{\"PROTOCOL\": port}}: {error}"))?;
    let mut ports = Vec::new();
    for entry in entries {
        for (protocol, port) in entry {
            let protocol = protocol.to_ascii_uppercase();
            if protocol != "HTTP" && protocol != "HTTPS" {
                return Err(format!("protocol {protocol:?} is not HTTP or HTTPS"));
            }
            ports.push((protocol, port));
        }
    }
    Ok(ports)
}
