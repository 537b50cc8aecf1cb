//! `--gateway-port PORT=ADDR`: a Gateway listener port other than 80 and 443, and the address
//! shunt serves it on. Gateway listeners on a port without one stay refused (`PortUnavailable`).

use std::{collections::BTreeSet, net::SocketAddr};

/// More extra listeners than this is a mistake, not a configuration (each is a socket per worker).
pub const MAX_GATEWAY_PORTS: usize = 64;

/// One `PORT=ADDR`: PORT is the Gateway listener's `port`, ADDR where shunt listens for it.
pub fn parse_gateway_port(s: &str) -> Result<(u16, SocketAddr), String> {
    let (port, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("expected PORT=ADDR (e.g. 8080=0.0.0.0:8080), got {s:?}"))?;
    let port: u16 = match port.parse() {
        Ok(0) | Err(_) => return Err(format!("{s:?}: PORT must be a number from 1 to 65535")),
        Ok(port) => port,
    };
    if port == 80 || port == 443 {
        return Err(format!("{s:?}: port {port} is served on --http-addr / --https-addr"));
    }
    let addr = addr
        .parse()
        .map_err(|_| format!("{s:?}: ADDR must be an IP:PORT socket address"))?;
    Ok((port, addr))
}

/// The flag's values, checked as a whole: each port once, at most [`MAX_GATEWAY_PORTS`].
pub fn check(ports: &[(u16, SocketAddr)]) -> Result<(), String> {
    if ports.len() > MAX_GATEWAY_PORTS {
        return Err(format!(
            "--gateway-port given {} times; at most {MAX_GATEWAY_PORTS}",
            ports.len()
        ));
    }
    let mut seen = BTreeSet::new();
    match ports.iter().find(|(port, _)| !seen.insert(*port)) {
        Some((port, _)) => Err(format!("--gateway-port names port {port} twice")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_port_and_an_address_parse() {
        let parsed = parse_gateway_port("8080=127.0.0.1:18080").unwrap();
        assert_eq!(parsed, (8080, "127.0.0.1:18080".parse().unwrap()));
        for bad in [
            "8080",
            "80=0.0.0.0:80",
            "443=0.0.0.0:1",
            "0=0.0.0.0:1",
            "x=0.0.0.0:1",
            "8080=host:1",
            "8080=",
        ] {
            assert!(parse_gateway_port(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_port_named_twice_is_refused() {
        let addr: SocketAddr = "127.0.0.1:1".parse().unwrap();
        assert!(check(&[(8080, addr), (8090, addr)]).is_ok());
        assert!(check(&[(8080, addr), (8080, addr)]).unwrap_err().contains("twice"));
        let many: Vec<_> = (1000..1000 + MAX_GATEWAY_PORTS as u16 + 1)
            .map(|port| (port, addr))
            .collect();
        assert!(check(&many).is_err());
    }

    proptest! {
        #[test]
        fn any_input_parses_or_is_refused_without_panicking(s in "\\PC{0,40}") {
            let _ = parse_gateway_port(&s);
        }

        #[test]
        fn what_parses_is_what_was_written(port in 1u16.., ip in any::<[u8; 4]>(), at in any::<u16>()) {
            let addr = SocketAddr::from((ip, at));
            let parsed = parse_gateway_port(&format!("{port}={addr}"));
            if port == 80 || port == 443 {
                prop_assert!(parsed.is_err());
            } else {
                prop_assert_eq!(parsed, Ok((port, addr)));
            }
        }
    }
}
