//! Which Ingresses are ours (classes, shadowed classes) and the options of the compile.

use clap::Args;
use shunt_spec::defaults;

use super::parse::parse_namespaced;
use crate::compile::CompileOptions;

#[derive(Clone, Debug, Args)]
pub struct ClassArgs {
    /// IngressClasses with this `spec.controller` are ours.
    #[arg(long, default_value = "shunt.dev/ingress-controller")]
    pub controller_name: String,
    /// Class names that are ours even without an IngressClass object; repeatable.
    #[arg(long = "ingress-class", default_value = "shunt")]
    pub ingress_classes: Vec<String>,
    /// Also serve Ingresses that name no class.
    #[arg(long)]
    pub watch_ingress_without_class: bool,
    /// Also serve Ingresses of this other class (e.g. the cloud load balancer's); repeatable.
    /// `NAME=qcloud` compiles them as TKE's CLB serves them, `NAME=nginx` as ingress-nginx does
    /// (classes `qcloud` and `nginx` do by default).
    // `FromStr`, not clap's default `From<&str>`, which would take `NAME=PROFILE` as a name.
    #[arg(long = "shadow-class", value_name = "NAME[=PROFILE]", value_parser = str::parse::<crate::compile::ShadowClass>)]
    pub shadow_classes: Vec<crate::compile::ShadowClass>,
    /// Compile a class of ours (status written) with a profile: `NAME=nginx` keeps its
    /// ingress-nginx annotations' meaning; repeatable.
    #[arg(long = "class-profile", value_name = "NAME=PROFILE", value_parser = parse_class_profile)]
    pub class_profiles: Vec<crate::compile::ShadowClass>,
    /// Also serve the HTTPRoutes of Gateways of this GatewayClass of another implementation,
    /// writing no status for them; a route shunt cannot reproduce is refused; repeatable.
    #[arg(long = "shadow-gateway-class", value_name = "NAME", value_parser = parse_gateway_class)]
    pub shadow_gateway_classes: Vec<String>,
    /// A `kubernetes.io/tls` Secret serving a shadowed qcloud host's HTTPS (the host as the
    /// Ingress writes it); repeatable.
    #[arg(long = "shadow-tls", value_parser = parse_shadow_tls, value_name = "HOST=NAMESPACE/NAME")]
    pub shadow_tls: Vec<(String, (String, String))>,
    /// The redirect code of qcloud `auto-rewrite` when `auto-rewrite-code` gives none (TKE does
    /// not document it precisely).
    #[arg(long, default_value_t = defaults::QCLOUD_AUTO_REWRITE_CODE, value_parser = parse_rewrite_code)]
    pub shadow_rewrite_code: u16,
    /// ingress-nginx's ConfigMap, read by the nginx profile (its keys change answers); missing
    /// means ingress-nginx's defaults.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME", default_value = "ingress-nginx/ingress-nginx-controller")]
    pub nginx_configmap: (String, String),
    /// ingress-nginx's `--default-backend-service`: the Service (its first port) answering the
    /// nginx profile's custom error pages where no `default-backend` annotation names one;
    /// without it, ingress-nginx's built-in server answers them with 404.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub nginx_default_backend: Option<(String, String)>,
    /// `kubernetes.io/tls` Secret (NAMESPACE/NAME) for SNI names no Ingress covers and clients
    /// without SNI; a self-signed certificate for `shunt-default.invalid` otherwise.
    #[arg(long, value_parser = parse_namespaced, value_name = "NAMESPACE/NAME")]
    pub default_ssl_certificate: Option<(String, String)>,
}

impl ClassArgs {
    /// Flags that cannot go together: each class-less Ingress has one claimant.
    pub fn check(&self) -> anyhow::Result<()> {
        let qcloud = (self.shadow_classes.iter()).find(|class| class.profile == crate::compile::Profile::Qcloud);
        if let (true, Some(qcloud)) = (self.watch_ingress_without_class, qcloud) {
            anyhow::bail!(
                "--watch-ingress-without-class and --shadow-class {qcloud} both claim Ingresses without a class \
                 (TKE serves them as qcloud): drop one"
            );
        }
        Ok(())
    }

    pub fn compile_options(&self) -> CompileOptions {
        CompileOptions {
            controller_name: self.controller_name.clone(),
            ingress_classes: self.ingress_classes.clone(),
            watch_ingress_without_class: self.watch_ingress_without_class,
            shadow_classes: self.shadow_classes.clone(),
            class_profiles: self.class_profiles.clone(),
            shadow_gateway_classes: self.shadow_gateway_classes.clone(),
            shadow: crate::shadow::ShadowOptions {
                default_rewrite_code: self.shadow_rewrite_code,
                tls: self.shadow_tls.iter().cloned().collect(),
                nginx_configmap: self.nginx_configmap.clone(),
                nginx_default_backend: self.nginx_default_backend.clone(),
            },
            default_certificate: self.default_ssl_certificate.clone(),
            now: None,
            // The proxy's flag: `serve` and `run` set it (`ProxyArgs::gateway_ports`).
            gateway_ports: Default::default(),
        }
    }
}

fn parse_shadow_tls(s: &str) -> Result<(String, (String, String)), String> {
    let (host, secret) = s
        .split_once('=')
        .ok_or_else(|| format!("expected HOST=NAMESPACE/NAME, got {s:?}"))?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("{s:?}: empty or malformed host"));
    }
    Ok((
        host.trim_end_matches('.').to_ascii_lowercase(),
        parse_namespaced(secret)?,
    ))
}

fn parse_rewrite_code(s: &str) -> Result<u16, String> {
    match s.parse::<u16>() {
        Ok(code @ (301 | 302 | 307)) => Ok(code),
        _ => Err(format!("{s:?}: the CLB redirects with 301, 302 or 307")),
    }
}

/// `NAME=PROFILE`: the profile must be named (a bare name would mean the Ingress spec's).
fn parse_class_profile(s: &str) -> Result<crate::compile::ShadowClass, String> {
    if !s.contains('=') {
        return Err(format!("expected NAME=PROFILE, got {s:?}"));
    }
    s.parse()
}

/// A GatewayClass name: a DNS subdomain (at most 253 characters, lowercase).
fn parse_gateway_class(s: &str) -> Result<String, String> {
    let valid = (1..=253).contains(&s.len())
        && s.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    match valid {
        true => Ok(s.to_string()),
        false => Err(format!("{s:?}: not a GatewayClass name (a lowercase DNS subdomain)")),
    }
}
