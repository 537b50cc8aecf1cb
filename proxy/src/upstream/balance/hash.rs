//! `upstream-hash-by`: the request's key (nginx's complex value) chooses the endpoint by
//! rendezvous hashing: each endpoint scores `mix(key, endpoint)` and the highest wins. A key
//! keeps its endpoint while that endpoint stays; adding one of N+1 takes about 1/(N+1) of the
//! keys, as resty.chash's ring does (balancer/chash.lua). The hashes are fixed functions, so
//! every proxy replica sends a key to the same pod.

use std::net::{IpAddr, SocketAddr};

use super::vars::RequestVars;
use crate::{spec::HashKey, spec::KeyPart, upstream::Upstream};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// The key's hash: FNV-1a over its parts' bytes in order, as over the joined string.
pub fn key_hash(key: &HashKey, vars: &RequestVars<'_>) -> u64 {
    let mut hash = FNV_OFFSET;
    let mut feed = |bytes: &[u8]| hash = fnv(hash, bytes);
    for part in &key.parts {
        match part {
            KeyPart::Text(text) => feed(text.as_bytes()),
            KeyPart::RequestUri => feed(vars.target.as_bytes()),
            KeyPart::Uri => feed(vars.path.as_bytes()),
            KeyPart::Args => feed(vars.args().as_bytes()),
            KeyPart::Host => feed(vars.host.as_bytes()),
            KeyPart::RemoteAddr => feed(vars.peer.to_canonical().to_string().as_bytes()),
            KeyPart::BinaryRemoteAddr => match vars.peer.to_canonical() {
                IpAddr::V4(v4) => feed(&v4.octets()),
                IpAddr::V6(v6) => feed(&v6.octets()),
            },
            KeyPart::Header(name) => feed(vars.header(name).as_deref().unwrap_or_default().as_bytes()),
            KeyPart::Cookie(name) => feed(vars.cookie(name).unwrap_or_default().as_bytes()),
        }
    }
    hash
}

impl Upstream {
    /// The endpoint `key` hashes to among those not in `tried`; `None` when all were.
    pub fn pick_hashed(&self, key: u64, tried: &[usize]) -> Option<usize> {
        (0..self.endpoints.len())
            .filter(|index| !tried.contains(index))
            .max_by_key(|&index| (score(key, self.endpoints[index].addr), index))
    }
}

/// FNV-1a of `bytes` continued from `hash` (start from [`text_hash`] or `FNV_OFFSET`).
fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
    }
    hash
}

/// One text's hash, as a key of that one part would hash.
pub(super) fn text_hash(bytes: &[u8]) -> u64 {
    fnv(FNV_OFFSET, bytes)
}

/// An endpoint's score for a key: the address's own hash mixed with the key's.
pub(super) fn score(key: u64, addr: SocketAddr) -> u64 {
    let id = match addr.ip() {
        IpAddr::V4(v4) => u128::from(v4.to_bits()),
        IpAddr::V6(v6) => v6.to_bits(),
    };
    let id = (id as u64) ^ ((id >> 64) as u64).rotate_left(17) ^ u64::from(addr.port()).rotate_left(48);
    mix(key ^ mix(id))
}

/// splitmix64's finaliser: every input bit reaches every output bit.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
#[path = "hash/tests.rs"]
mod tests;
