//! Whose forwarding fields (`X-Forwarded-*`, `Forwarded`) the proxy keeps (`--trusted-proxies`).

use std::{net::IpAddr, str::FromStr};

use ipnet::IpNet;
use serde::Serialize;

/// CIDRs whose forwarding headers we keep. Empty by default: trust nobody.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn new(nets: Vec<IpNet>) -> Self {
        TrustedProxies(nets)
    }

    /// An IPv4-mapped IPv6 peer (dual-stack sockets) is matched as the IPv4 address it is.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.0.iter().any(|net| net.contains(&ip))
    }
}

impl FromStr for TrustedProxies {
    type Err = ipnet::AddrParseError;

    /// Comma-separated CIDRs or bare addresses.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let nets = s
            .split(',')
            .map(str::trim)
            .filter(|part| !part.is_empty())
            .map(|part| {
                part.parse::<IpNet>()
                    .or_else(|e| part.parse::<IpAddr>().map(IpNet::from).map_err(|_| e))
            })
            .collect::<Result<_, _>>()?;
        Ok(TrustedProxies(nets))
    }
}

#[cfg(test)]
mod tests;
