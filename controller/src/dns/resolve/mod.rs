//! A stub resolver that reads `/etc/resolv.conf` the way a pod's libc does (nameservers in
//! order, `search` list, `options ndots:N timeout:N attempts:N`), so `shunt dns check` sees what
//! callers see. std's resolver cannot be pointed at another resolv.conf (tests need that) nor
//! say which nameserver or search candidate answered; a DNS crate would add far more than this.
//!
//! ```text
//! name ─▶ candidates (ndots: absolute first or last) ─▶ each nameserver: UDP (TCP when truncated)
//! ```

use std::{
    net::{IpAddr, SocketAddr},
    path::Path,
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpStream, UdpSocket},
};

pub mod wire;

use self::wire::{Data, Message, WireError};

/// What a resolv.conf says, with libc's defaults for what it leaves out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvConf {
    /// At most three, as libc reads them; 127.0.0.1:53 when none is given.
    pub nameservers: Vec<SocketAddr>,
    pub search: Vec<String>,
    pub ndots: usize,
    pub timeout: Duration,
    pub attempts: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("nameserver {server}: {source}")]
    Io {
        server: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("nameserver {server}: no answer within {timeout:?}")]
    Timeout { server: SocketAddr, timeout: Duration },
    #[error("nameserver {server}: {source}")]
    Wire {
        server: SocketAddr,
        #[source]
        source: WireError,
    },
}

/// Where a name's addresses came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The candidate that answered (a search domain may have been appended).
    pub name: String,
    pub addresses: Vec<IpAddr>,
}

impl ResolvConf {
    pub fn read(path: &Path) -> Result<Self, ResolveError> {
        let text = std::fs::read_to_string(path).map_err(|source| ResolveError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Ok(Self::parse(&text))
    }

    /// `nameserver IP` lines (an `IP:PORT` too, which libc does not read, for tests), the last
    /// `search` or `domain` line, and `options`.
    pub fn parse(text: &str) -> Self {
        let mut conf = ResolvConf {
            nameservers: Vec::new(),
            search: Vec::new(),
            ndots: 1,
            timeout: Duration::from_secs(5),
            attempts: 2,
        };
        for line in text.lines() {
            let mut words = line.split(['#', ';']).next().unwrap_or_default().split_whitespace();
            match (words.next(), words.next()) {
                (Some("nameserver"), Some(server)) if conf.nameservers.len() < 3 => {
                    let parsed = server.parse::<IpAddr>().map(|ip| SocketAddr::new(ip, 53));
                    if let Ok(address) = parsed.or_else(|_| server.parse::<SocketAddr>()) {
                        conf.nameservers.push(address);
                    }
                }
                (Some("search" | "domain"), Some(first)) => {
                    conf.search = std::iter::once(first)
                        .chain(words)
                        .map(|d| d.trim_end_matches('.').to_string())
                        .collect();
                }
                (Some("options"), Some(first)) => {
                    for option in std::iter::once(first).chain(words) {
                        conf.option(option);
                    }
                }
                _ => {}
            }
        }
        if conf.nameservers.is_empty() {
            conf.nameservers.push(SocketAddr::from(([127, 0, 0, 1], 53)));
        }
        conf
    }

    fn option(&mut self, option: &str) {
        let Some((name, value)) = option.split_once(':') else {
            return;
        };
        let Ok(value) = value.parse::<u64>() else {
            return;
        };
        // libc's caps: ndots 15, timeout 30 s, attempts 5.
        match name {
            "ndots" => self.ndots = value.min(15) as usize,
            "timeout" => self.timeout = Duration::from_secs(value.clamp(1, 30)),
            "attempts" => self.attempts = value.clamp(1, 5) as usize,
            _ => {}
        }
    }

    /// The names libc tries for `name`, in order: with at least `ndots` dots the name as given
    /// first, else the search domains first; a trailing dot means the name alone.
    pub fn candidates(&self, name: &str) -> Vec<String> {
        if let Some(absolute) = name.strip_suffix('.') {
            return vec![format!("{absolute}.")];
        }
        let searched = self.search.iter().map(|domain| format!("{name}.{domain}."));
        let absolute = format!("{name}.");
        if name.matches('.').count() >= self.ndots {
            std::iter::once(absolute).chain(searched).collect()
        } else {
            searched.chain(std::iter::once(absolute)).collect()
        }
    }

    /// The addresses (A and AAAA, CNAMEs followed by the server) of the first candidate that
    /// has any; `None` when none has. An error only when no nameserver answered at all.
    pub async fn lookup_ip(&self, name: &str) -> Result<Option<Resolved>, ResolveError> {
        let mut last_error = None;
        let mut answered = false;
        for candidate in self.candidates(name) {
            let mut addresses = Vec::new();
            for rtype in [wire::A, wire::AAAA] {
                match self.query(&candidate, rtype).await {
                    Ok(message) => {
                        answered = true;
                        addresses.extend(message.answers.iter().filter_map(|record| match record.data {
                            Data::V4(ip) => Some(IpAddr::V4(ip)),
                            Data::V6(ip) => Some(IpAddr::V6(ip)),
                            _ => None,
                        }));
                    }
                    Err(error) => last_error = Some(error),
                }
            }
            if !addresses.is_empty() {
                return Ok(Some(Resolved {
                    name: candidate,
                    addresses,
                }));
            }
        }
        match (answered, last_error) {
            (false, Some(error)) => Err(error),
            _ => Ok(None),
        }
    }

    /// One query, to each nameserver in turn (`attempts` rounds) until one answers.
    pub async fn query(&self, name: &str, rtype: u16) -> Result<Message, ResolveError> {
        let mut last = None;
        for _ in 0..self.attempts {
            for server in &self.nameservers {
                match exchange(*server, name, rtype, self.timeout).await {
                    Ok(message) => return Ok(message),
                    Err(error) => last = Some(error),
                }
            }
        }
        Err(last.expect("at least one nameserver and one attempt"))
    }
}

/// One question to one server: UDP, then TCP when the answer is truncated.
pub async fn exchange(server: SocketAddr, name: &str, rtype: u16, timeout: Duration) -> Result<Message, ResolveError> {
    let io = |source| ResolveError::Io { server, source };
    let wire_error = |source| ResolveError::Wire { server, source };
    // Each RandomState is freshly seeded: an id an off-path spoofer cannot guess cheaply.
    let id = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), name) as u16;
    let question = wire::query(id, name, rtype).map_err(wire_error)?;
    let udp = async {
        let local: SocketAddr = if server.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            ([0u16; 8], 0).into()
        };
        let socket = UdpSocket::bind(local).await.map_err(io)?;
        socket.connect(server).await.map_err(io)?;
        socket.send(&question).await.map_err(io)?;
        let mut buffer = vec![0; 4096];
        loop {
            let read = socket.recv(&mut buffer).await.map_err(io)?;
            // A stray datagram (an old answer) is skipped, as libc does.
            if let Ok(message) = wire::parse(id, &buffer[..read]) {
                return Ok(message);
            }
        }
    };
    let message = tokio::time::timeout(timeout, udp)
        .await
        .map_err(|_| ResolveError::Timeout { server, timeout })??;
    if !message.truncated {
        return Ok(message);
    }
    let tcp = async {
        let mut stream = TcpStream::connect(server).await.map_err(io)?;
        let length = u16::try_from(question.len()).expect("a question is short");
        stream.write_all(&length.to_be_bytes()).await.map_err(io)?;
        stream.write_all(&question).await.map_err(io)?;
        let length = usize::from(stream.read_u16().await.map_err(io)?);
        let mut buffer = vec![0; length];
        stream.read_exact(&mut buffer).await.map_err(io)?;
        wire::parse(id, &buffer).map_err(wire_error)
    };
    tokio::time::timeout(timeout, tcp)
        .await
        .map_err(|_| ResolveError::Timeout { server, timeout })?
}

#[cfg(test)]
mod tests {
    use super::*;

    const POD: &str = "search shop.svc.cluster.local svc.cluster.local cluster.local\n\
                       nameserver 169.254.20.10\noptions ndots:5 # kubelet's\n";

    #[test]
    fn a_pods_resolv_conf_tries_the_search_list_first() {
        let conf = ResolvConf::parse(POD);
        assert_eq!(conf.nameservers, [SocketAddr::from(([169, 254, 20, 10], 53))]);
        assert_eq!(conf.ndots, 5);
        assert_eq!(
            conf.candidates("shop.example.com"),
            [
                "shop.example.com.shop.svc.cluster.local.",
                "shop.example.com.svc.cluster.local.",
                "shop.example.com.cluster.local.",
                "shop.example.com.",
            ]
        );
        assert_eq!(conf.candidates("shop.example.com."), ["shop.example.com."]);
    }

    #[test]
    fn enough_dots_try_the_name_first_and_defaults_fill_the_rest() {
        let conf = ResolvConf::parse(
            "nameserver 127.0.0.2:1053\nsearch a.local\noptions ndots:1 timeout:2 attempts:9 rotate\n",
        );
        assert_eq!(conf.nameservers, [SocketAddr::from(([127, 0, 0, 2], 1053))]);
        assert_eq!(conf.candidates("x.example"), ["x.example.", "x.example.a.local."]);
        assert_eq!((conf.timeout, conf.attempts), (Duration::from_secs(2), 5));
        let empty = ResolvConf::parse("");
        assert_eq!(empty.nameservers, [SocketAddr::from(([127, 0, 0, 1], 53))]);
        assert_eq!(empty.candidates("host"), ["host."]);
    }
}
