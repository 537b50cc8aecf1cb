//! A real CoreDNS on a loopback port, as a cluster runs it (`file` for `cluster.local` standing in
//! for the `kubernetes` plugin, `reload` on), with a second CoreDNS as the upstream for public
//! names; queried over UDP with hickory's client.
//!
//! ```text
//! DnsClient ─UDP─▶ cluster CoreDNS (Corefile file; shunt's block) ─┬▶ file: cluster.local zone
//!                                                                  └▶ forward ─▶ stub CoreDNS (template: 192.0.2.1)
//! ```

use std::{
    net::{IpAddr, SocketAddr},
    path::{Path, PathBuf},
    str::FromStr,
    time::{Duration, Instant},
};

use hickory_client::{
    client::{Client, ClientHandle},
    proto::{
        op::ResponseCode,
        rr::{DNSClass, Name, RData, RecordType},
        runtime::TokioRuntimeProvider,
        udp::UdpClientStream,
    },
};

use super::{Guarded, control_plane::free_port};

/// What the stub upstream answers for every public name.
pub const PUBLIC_V4: &str = "192.0.2.1";
pub const PUBLIC_V6: &str = "2001:db8::1";
/// Where the cluster zone puts shunt's Service.
pub const SHUNT_V4: &str = "10.96.0.10";
pub const SHUNT_V6: &str = "fd00::10";
const STARTUP: Duration = Duration::from_secs(20);

/// A running CoreDNS; killed when dropped.
pub struct CoreDns {
    pub addr: SocketAddr,
    /// The Corefile it reads (and re-reads, with `reload`).
    pub corefile: PathBuf,
    _process: Guarded,
}

impl CoreDns {
    /// CoreDNS `binary` on a free port with the Corefile `make(port)` returns, once it answers.
    pub fn start(binary: &Path, dir: &Path, name: &'static str, make: impl FnOnce(u16) -> String) -> CoreDns {
        let port = free_port();
        let corefile = dir.join(format!("{name}.Corefile"));
        std::fs::write(&corefile, make(port)).expect("writing a Corefile");
        let args = ["-conf".to_string(), corefile.display().to_string()];
        let process = Guarded::spawn(name, binary, &args, dir);
        let started = Instant::now();
        while !std::fs::read_to_string(&process.log).is_ok_and(|log| log.contains("CoreDNS-")) {
            assert!(process.alive(), "{name} exited:\n{}", process.log_tail(20));
            assert!(started.elapsed() < STARTUP, "{name} not up:\n{}", process.log_tail(20));
            std::thread::sleep(Duration::from_millis(50));
        }
        CoreDns {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            corefile,
            _process: process,
        }
    }

    /// The upstream for public names: any A or AAAA query gets [`PUBLIC_V4`] or [`PUBLIC_V6`].
    pub fn start_stub(binary: &Path, dir: &Path) -> CoreDns {
        CoreDns::start(binary, dir, "coredns-stub", |port| {
            format!(
                ".:{port} {{\n    bind 127.0.0.1\n\
                 \x20   template IN A {{\n        answer \"{{{{ .Name }}}} 60 IN A {PUBLIC_V4}\"\n    }}\n\
                 \x20   template IN AAAA {{\n        answer \"{{{{ .Name }}}} 60 IN AAAA {PUBLIC_V6}\"\n    }}\n}}\n"
            )
        })
    }
}

/// A cluster Corefile on `port`: `block` (shunt's rules, possibly empty) first, the zone file for
/// `cluster.local`, then the stub upstream; re-read every 2 s.
pub fn cluster_corefile(port: u16, block: &str, zone: &Path, upstream: SocketAddr) -> String {
    format!(
        ".:{port} {{\n{block}    bind 127.0.0.1\n    errors\n    file {zone} cluster.local\n\
         \x20   forward . {upstream}\n    reload 2s 1s\n}}\n",
        zone = zone.display(),
    )
}

/// The `cluster.local` zone: shunt's Service `shunt.NAMESPACE.svc` and one other Service.
pub fn write_zone(dir: &Path, namespace: &str) -> PathBuf {
    let zone = format!(
        "$ORIGIN cluster.local.\n\
         @ 3600 IN SOA ns.cluster.local. admin.cluster.local. 1 7200 3600 1209600 30\n\
         @ 3600 IN NS ns.cluster.local.\n\
         ns 3600 IN A 10.96.0.2\n\
         shunt.{namespace}.svc 30 IN A {SHUNT_V4}\n\
         shunt.{namespace}.svc 30 IN AAAA {SHUNT_V6}\n\
         other.{namespace}.svc 30 IN A 10.96.0.11\n"
    );
    let path = dir.join("cluster.local.zone");
    std::fs::write(&path, zone).expect("writing the zone");
    path
}

/// One DNS answer, reduced to what the tests compare.
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub code: ResponseCode,
    /// (owner name, address) of each A or AAAA record.
    pub records: Vec<(String, IpAddr)>,
}

/// Asks `server` for `name`'s `kind` (A or AAAA) records.
pub async fn query(server: SocketAddr, name: &str, kind: RecordType) -> Answer {
    let stream = UdpClientStream::builder(server, TokioRuntimeProvider::default()).build();
    let (mut client, background) = Client::connect(stream).await.expect("a DNS client");
    let background = tokio::spawn(background);
    let name = Name::from_str(name).expect("a DNS name");
    let response = client.query(name.clone(), DNSClass::IN, kind).await;
    background.abort();
    let response = response.unwrap_or_else(|e| panic!("querying {server} for {name} {kind}: {e}"));
    let records = response
        .answers()
        .iter()
        .filter_map(|record| match record.data() {
            RData::A(a) => Some((record.name().to_ascii(), IpAddr::V4(a.0))),
            RData::AAAA(aaaa) => Some((record.name().to_ascii(), IpAddr::V6(aaaa.0))),
            _ => None,
        })
        .collect();
    Answer {
        code: response.response_code(),
        records,
    }
}
