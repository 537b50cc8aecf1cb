//! One differential case run whole: the echo pods, shunt and nginx started beside each other,
//! every probe sent to both, `/shadow`'s verdicts checked, and one readable report of every
//! difference.
//!
//! ```text
//! Case { YAML, nginx servers, certificates } ─▶ pods web/api/solver/loud/slow/flaky, secure over TLS (namespace shop)
//!   ├─ manifests (+ Services, TLS Secrets) ─▶ shunt serve --shadow-class nginx
//!   └─ servers (+ upstreams, certificate files) ─▶ nginx
//! each Probe ─▶ both ─▶ Seen ─diff─┐
//! /shadow verdicts ────────────────┴─▶ report: panics when not empty
//! ```

use std::fmt::Write as _;

use http::{HeaderValue, Response};
use serde_json::Value;

use super::{
    nginx::{self, Nginx, NginxConfig},
    observe::{ABSENT, POD_DATE, Seen, Side, differences},
    probe::{Clients, Listeners, Probe},
};
use crate::support::{
    Backend, Leaf, Manifests, RefusingPort, Shunt, TestCa, TlsBackend, echo, mk_backend_service, mk_service_on_ports,
    mk_string_secret, mk_tls_secret,
};

/// The namespace of every case's objects.
const NAMESPACE: &str = "shop";

/// A case's objects: Ingresses (and the ConfigMap) in YAML; the Services of the pods and the
/// Secrets of `certificates` are added.
pub struct Case {
    pub name: &'static str,
    pub manifests: &'static str,
    /// ingress-nginx's rendering of the same objects, written by hand: `server` blocks.
    pub nginx: &'static str,
    /// `(host, Secret name)`: a certificate for the host, in Secret `shop/<name>` for shunt and
    /// in `<host>.crt` / `<host>.key` for nginx.
    pub certificates: &'static [(&'static str, &'static str)],
    /// Flags for shunt beside `--shadow-class nginx` (ingress-nginx's own flags have their
    /// counterpart written into the case's `.conf`).
    pub args: &'static [&'static str],
}

/// What `/shadow` must say of a host.
pub enum Verdict {
    Identical,
    /// Refused with a reason starting with this text.
    Refused(&'static str),
    /// Not in `/shadow` at all: shunt serves none of the host, as ingress-nginx serves none.
    Absent,
}

/// `case!("name")`: the case in `cases/name.yaml` and `cases/name.conf`.
macro_rules! case {
    ($name:literal, $certificates:expr) => {
        $crate::nginx_diff::case::Case {
            name: $name,
            manifests: include_str!(concat!("cases/", $name, ".yaml")),
            nginx: include_str!(concat!("cases/", $name, ".conf")),
            certificates: $certificates,
            args: &[],
        }
    };
}
pub(crate) use case;

/// Runs `case`: every probe through both servers and every host's verdict; panics with all the
/// differences at once. Returns quietly when nginx is missing and not required.
pub async fn check(case: Case, probes: &[Probe], verdicts: &[(&str, Verdict)]) {
    let Some(binary) = nginx::binary() else { return };
    let ca = TestCa::new("nginx-diff");
    let pods = start_pods().await;
    // `down`: a Service whose one endpoint refuses connections (a pod that is not listening);
    // held bound for the whole case so no other test's listener can take the port.
    let refusing = RefusingPort::new();
    let down = std::net::SocketAddr::from(([127, 0, 0, 1], refusing.port()));
    // The HTTPS pod: a certificate for a name that is not its own, from a CA only a case with
    // `proxy-ssl-secret` trusts (Secret `shop/pods-ca`, nginx's `pods-ca.crt`; `other-ca` for
    // a CA that did not issue it).
    let (pods_ca, other_ca) = (TestCa::new("pods"), TestCa::new("other"));
    let secure = TlsBackend::start("secure", &pods_ca.issue(&["pod.cluster.internal"])).await;
    let trusted = [("pods-ca", ca_file(&pods_ca)), ("other-ca", ca_file(&other_ca))];
    let leaves: Vec<(&str, &str, Leaf)> = case
        .certificates
        .iter()
        .map(|(host, secret)| (*host, *secret, ca.issue(&[host])))
        .collect();

    // The auth service (`auth.rs`): `@AUTH@` in a case stands for its address.
    let auth = super::auth::pod().await;
    let at_auth = |text: &str| text.replace("@AUTH@", &auth.addr.to_string());
    let manifests = Manifests::new();
    manifests.write_text("case.yaml", &at_auth(case.manifests));
    let services: Vec<Value> = pods
        .iter()
        .flat_map(|pod| mk_backend_service(NAMESPACE, &pod.name, None, &[pod]))
        .chain(mk_service_on_ports(NAMESPACE, "secure", None, &[secure.addr.port()]))
        .chain(mk_service_on_ports(NAMESPACE, "down", None, &[down.port()]))
        // `empty`: a Service without endpoints.
        .chain(mk_service_on_ports(NAMESPACE, "empty", None, &[]))
        .chain(mk_backend_service(NAMESPACE, "mixed", None, &mixed(&pods)))
        .collect();
    let secrets: Vec<Value> = leaves
        .iter()
        .map(|(_, secret, leaf)| mk_tls_secret(NAMESPACE, secret, leaf))
        .chain(
            trusted
                .iter()
                .map(|(name, ca)| mk_string_secret(NAMESPACE, name, "Opaque", &[("ca.crt", &ca.chain_pem)])),
        )
        .collect();
    manifests.write("pods.yaml", &[&services, &secrets]);
    let args: Vec<&str> = ["--shadow-class", "nginx"]
        .into_iter()
        .chain(case.args.iter().copied())
        .collect();
    let shunt = Shunt::start(manifests.path(), &args).await;

    let default_leaf = ca.issue(&["ingress.local"]);
    let mut certificates = vec![("default".to_string(), &default_leaf)];
    certificates.extend(leaves.iter().map(|(host, _, leaf)| (host.to_string(), leaf)));
    certificates.extend(trusted.iter().map(|(name, ca)| (name.to_string(), ca)));
    let servers = at_auth(case.nginx);
    let config = NginxConfig {
        servers: &servers,
        upstreams: upstreams(&pods, secure.addr, down),
        certificates,
    };
    let nginx = Nginx::start(&binary, &config).await;

    let clients = Clients {
        http1: ca.client(),
        http2: ca.client().alpn(&[b"h2"]),
    };
    let mut report = String::new();
    for probe in probes {
        compare(probe, &nginx, &shunt, &clients, &mut report).await;
    }
    check_verdicts(&shunt, verdicts, &mut report).await;
    assert!(
        report.is_empty(),
        "case {}: nginx and shunt differ\n{report}\n--- nginx stderr ---\n{}",
        case.name,
        nginx.stderr()
    );
}

async fn compare(probe: &Probe, nginx: &Nginx, shunt: &Shunt, clients: &Clients, report: &mut String) {
    let to_nginx = Listeners {
        http: nginx.http,
        https: nginx.https,
    };
    let to_shunt = Listeners {
        http: shunt.http,
        https: shunt.https,
    };
    let started = std::time::Instant::now();
    let nginx_seen = Seen::of(&probe.send(to_nginx, clients).await, probe, Side::Nginx);
    let mut early: Vec<String> = too_soon("nginx", probe, started).into_iter().collect();

    let mut unmet: Vec<String> = probe
        .expected
        .iter()
        .filter_map(|(field, value)| {
            let got = nginx_seen.field(field).unwrap_or(ABSENT);
            (got != *value).then(|| {
                format!("    nginx itself: {field} is {got:?}, the rule says {value:?} (check the case's .conf)")
            })
        })
        .collect();
    let found = if probe.nginx_only {
        Vec::new()
    } else {
        let started = std::time::Instant::now();
        let shunt_seen = Seen::of(&probe.send(to_shunt, clients).await, probe, Side::Shunt);
        early.extend(too_soon("shunt", probe, started));
        differences(&nginx_seen, &shunt_seen)
    };
    unmet.extend(early);
    if found.is_empty() && unmet.is_empty() {
        return;
    }
    let _ = writeln!(report, "  {probe}");
    for line in unmet {
        let _ = writeln!(report, "{line}");
    }
    for difference in found {
        let _ = writeln!(
            report,
            "    {}: nginx {} | shunt {}",
            difference.field, difference.nginx, difference.shunt
        );
    }
}

/// Says so when `side` answered `probe` in whole sooner than its pace allows.
fn too_soon(side: &str, probe: &Probe, started: std::time::Instant) -> Option<String> {
    let least = probe.at_least?;
    let took = started.elapsed();
    (took < least).then(|| format!("    {side} answered in {took:?}, under the {least:?} the rule implies"))
}

async fn check_verdicts(shunt: &Shunt, verdicts: &[(&str, Verdict)], report: &mut String) {
    if verdicts.is_empty() {
        return;
    }
    let shadow: Value = shunt.admin("/shadow").await.json();
    for (host, expected) in verdicts {
        let entry = shadow["hosts"]
            .as_array()
            .and_then(|hosts| hosts.iter().find(|entry| entry["host"] == *host));
        if let Some(problem) = judge(entry, expected) {
            let _ = writeln!(report, "  /shadow {host}: {problem}");
        }
    }
}

/// What is wrong with a host's `/shadow` entry, if anything.
fn judge(entry: Option<&Value>, expected: &Verdict) -> Option<String> {
    let entry = match (entry, expected) {
        (None, Verdict::Absent) => return None,
        (None, _) => return Some("no verdict".to_string()),
        (Some(entry), Verdict::Absent) => return Some(format!("expected no verdict, got {entry}")),
        (Some(entry), _) => entry,
    };
    let reasons: Vec<&str> = entry["reasons"]
        .as_array()
        .map(|reasons| reasons.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let (met, wanted) = match expected {
        Verdict::Refused(reason) => (
            entry["verdict"] == "refused" && reasons.iter().any(|r| r.starts_with(reason)),
            format!("refused with {reason:?}"),
        ),
        _ => (entry["verdict"] == "identical", "identical".to_string()),
    };
    (!met).then(|| format!("expected {wanted}, got {} {reasons:?}", entry["verdict"]))
}

/// The pods every case may route to: `big` (see [`big`]), `web`, `api` and `solver` echo what they saw, `flaky` too
/// but with status 503 (`mixed` is it and `web`); `loud` also
/// answers with the fields nginx's proxy hides by default (`Server`, `Date`, `X-Pad`,
/// `X-Accel-*`) and one it passes (`X-Pod`); `slow` echoes after `?pause=MS` milliseconds;
/// `fails` echoes with the status `?status=NNN` asks for; `errors` is an error backend: it
/// echoes without the HTTP version, as ingress-nginx's error location speaks HTTP/1.0 to it
/// (no `proxy_http_version` there) and shunt 1.1, a difference docs/shadow.md states.
async fn start_pods() -> Vec<Backend> {
    let slow = Backend::http1("slow").handler(|request| async {
        let query = request.uri().query().unwrap_or_default();
        let pause = query.strip_prefix("pause=").and_then(|ms| ms.parse().ok()).unwrap_or(0);
        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        echo("slow".to_string(), request).await
    });
    let loud = Backend::http1("loud").handler(|request| async {
        let mut response = echo("loud".to_string(), request).await;
        let headers = response.headers_mut();
        for (name, value) in [
            ("server", "pod/1.0"),
            ("date", POD_DATE),
            ("x-pad", "avoid browser bug"),
            ("x-accel-buffering", "no"),
            ("x-accel-expires", "0"),
            ("x-pod", "yes"),
        ] {
            headers.insert(name, HeaderValue::from_static(value));
        }
        response
    });
    let flaky = Backend::http1("flaky").handler(|request| async {
        let mut response = echo("flaky".to_string(), request).await;
        *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
        response
    });
    let fails = Backend::http1("fails").handler(|request| async {
        let query = request.uri().query().unwrap_or_default();
        let status = query.strip_prefix("status=").and_then(|code| code.parse().ok());
        let mut response = echo("fails".to_string(), request).await;
        if let Some(status) = status.and_then(|code| http::StatusCode::from_u16(code).ok()) {
            *response.status_mut() = status;
        }
        response
    });
    let errors = Backend::http1("errors").handler(|request| async {
        let response = echo("errors".to_string(), request).await;
        let (parts, body) = response.into_parts();
        let bytes = http_body_util::BodyExt::collect(body)
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let mut report: Value = serde_json::from_slice(&bytes).unwrap_or_default();
        if let Some(report) = report.as_object_mut() {
            report.remove("version");
        }
        let mut parts = parts;
        parts.headers.remove(http::header::CONTENT_LENGTH);
        Response::from_parts(
            parts,
            crate::support::full(serde_json::to_vec(&report).unwrap_or_default()),
        )
    });
    vec![
        big().await,
        flaky.start().await,
        fails.start().await,
        errors.start().await,
        Backend::start("web").await,
        Backend::start("api").await,
        Backend::start("solver").await,
        loud.start().await,
        slow.start().await,
    ]
}

/// `big`: echoes with a `padding` of `?kib=N` KiB (none without), so an answer is as large as
/// a case needs (see [`Seen`]'s `pod padding`), and with `X-Accel-Buffering: V` for `&accel=V`.
async fn big() -> Backend {
    Backend::http1("big")
        .handler(|request| async {
            let query = request.uri().query().unwrap_or_default().to_string();
            let asked = |name: &str| {
                let prefix = format!("{name}=");
                query
                    .split('&')
                    .find_map(|pair| pair.strip_prefix(prefix.as_str()).map(str::to_string))
            };
            let kib: usize = asked("kib").and_then(|n| n.parse().ok()).unwrap_or(0);
            let accel = asked("accel");
            let response = echo("big".to_string(), request).await;
            let (parts, body) = response.into_parts();
            let bytes = http_body_util::BodyExt::collect(body)
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let mut report: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let padding: String = (0..kib * 1024).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            report["padding"] = Value::String(padding);
            let mut parts = parts;
            parts.headers.remove(http::header::CONTENT_LENGTH);
            if let Some(value) = accel.and_then(|value| HeaderValue::from_str(&value).ok()) {
                parts.headers.insert("x-accel-buffering", value);
            }
            Response::from_parts(
                parts,
                crate::support::full(serde_json::to_vec(&report).unwrap_or_default()),
            )
        })
        .start()
        .await
}

/// A CA's certificate as a file nginx reads (`NAME.crt`; the key file stays empty).
fn ca_file(ca: &TestCa) -> Leaf {
    Leaf {
        chain_pem: ca.pem(),
        key_pem: String::new(),
        der: ca.der(),
    }
}

/// One `upstream` per pod's Service (and the HTTPS pod `secure` at `secure`, `down`), named as
/// ingress-nginx's buildUpstreamName does (`namespace-service-port`); keepalive as
/// upstream-keepalive-connections (320, nginx.tmpl L534-539).
fn upstreams(pods: &[Backend], secure: std::net::SocketAddr, down: std::net::SocketAddr) -> String {
    let upstream = |name: &str, addr: std::net::SocketAddr| {
        format!("upstream {NAMESPACE}-{name}-80 {{\n    server {addr};\n    keepalive 320;\n}}\n")
    };
    let mut text: String = pods.iter().map(|pod| upstream(&pod.name, pod.addr)).collect();
    text.push_str(&upstream("secure", secure));
    text.push_str(&upstream("down", down));
    let servers: String = mixed(pods)
        .iter()
        .map(|pod| format!("    server {};\n", pod.addr))
        .collect();
    text.push_str(&format!(
        "upstream {NAMESPACE}-mixed-80 {{\n{servers}    keepalive 320;\n}}\n"
    ));
    text
}

/// The Service `mixed`: `flaky` (always 503) and `web`, for the retry rules.
fn mixed(pods: &[Backend]) -> Vec<&Backend> {
    pods.iter()
        .filter(|pod| pod.name == "flaky" || pod.name == "web")
        .collect()
}
