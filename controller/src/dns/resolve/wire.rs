//! The DNS wire format, as much as a stub resolver needs (RFC 1035 §4): one question out, the
//! answer and authority sections back, with the names inside CNAME, NS and SOA data expanded so
//! answers from different servers compare equal.

use std::net::{Ipv4Addr, Ipv6Addr};

pub const A: u16 = 1;
pub const NS: u16 = 2;
pub const CNAME: u16 = 5;
pub const SOA: u16 = 6;
pub const TXT: u16 = 16;
pub const AAAA: u16 = 28;
pub const CAA: u16 = 257;

pub const NXDOMAIN: u8 = 3;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WireError {
    #[error("the answer is cut short")]
    Truncated,
    #[error("the answer's id or question does not match the query")]
    Mismatch,
    #[error("{0:?} is not a name a query can carry")]
    BadName(String),
}

/// One resource record, its data decoded where it holds names or addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Lowercase, fully qualified.
    pub name: String,
    pub rtype: u16,
    pub data: Data,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Data {
    V4(Ipv4Addr),
    V6(Ipv6Addr),
    /// CNAME or NS target; SOA's names then its five numbers.
    Names(Vec<String>, Vec<u32>),
    Raw(Vec<u8>),
}

/// An answer: its response code, whether it was truncated, and its records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub rcode: u8,
    pub truncated: bool,
    pub answers: Vec<Record>,
    pub authority: Vec<Record>,
}

/// A recursive query for `name` (fully qualified or not) of type `rtype`, class IN.
pub fn query(id: u16, name: &str, rtype: u16) -> Result<Vec<u8>, WireError> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(WireError::BadName(name.to_string()));
        }
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&rtype.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    Ok(out)
}

/// Parses the answer to the query with `id`.
pub fn parse(id: u16, bytes: &[u8]) -> Result<Message, WireError> {
    let header = bytes.get(..12).ok_or(WireError::Truncated)?;
    if u16::from_be_bytes([header[0], header[1]]) != id || header[2] & 0x80 == 0 {
        return Err(WireError::Mismatch);
    }
    let count = |at: usize| usize::from(u16::from_be_bytes([header[at], header[at + 1]]));
    let (questions, answers, authority) = (count(4), count(6), count(8));
    let mut at = 12;
    for _ in 0..questions {
        at = read_name(bytes, at)?.1 + 4;
    }
    let mut records = Vec::with_capacity(answers + authority);
    for _ in 0..answers + authority {
        let (record, next) = read_record(bytes, at)?;
        records.push(record);
        at = next;
    }
    let authority = records.split_off(answers);
    Ok(Message {
        rcode: header[3] & 0x0f,
        truncated: header[2] & 0x02 != 0,
        answers: records,
        authority,
    })
}

fn read_record(bytes: &[u8], at: usize) -> Result<(Record, usize), WireError> {
    let (name, at) = read_name(bytes, at)?;
    let fixed = bytes.get(at..at + 10).ok_or(WireError::Truncated)?;
    let rtype = u16::from_be_bytes([fixed[0], fixed[1]]);
    let length = usize::from(u16::from_be_bytes([fixed[8], fixed[9]]));
    let start = at + 10;
    let raw = bytes.get(start..start + length).ok_or(WireError::Truncated)?;
    let data = match (rtype, raw.len()) {
        (A, 4) => Data::V4(Ipv4Addr::new(raw[0], raw[1], raw[2], raw[3])),
        (AAAA, 16) => Data::V6(Ipv6Addr::from(
            <[u8; 16]>::try_from(raw).map_err(|_| WireError::Truncated)?,
        )),
        (CNAME | NS, _) => Data::Names(vec![read_name(bytes, start)?.0], Vec::new()),
        (SOA, _) => {
            let (mname, next) = read_name(bytes, start)?;
            let (rname, next) = read_name(bytes, next)?;
            let numbers = bytes.get(next..next + 20).ok_or(WireError::Truncated)?;
            let numbers = numbers
                .chunks(4)
                .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            Data::Names(vec![mname, rname], numbers)
        }
        _ => Data::Raw(raw.to_vec()),
    };
    Ok((Record { name, rtype, data }, start + length))
}

/// The name at `at` (following compression pointers) and the offset after it in place.
fn read_name(bytes: &[u8], mut at: usize) -> Result<(String, usize), WireError> {
    let mut name = String::new();
    let mut end = None;
    // Each pointer must go back, so a loop of pointers ends.
    let mut limit = at;
    loop {
        let length = *bytes.get(at).ok_or(WireError::Truncated)?;
        match length {
            0 => {
                if name.is_empty() {
                    name.push('.');
                }
                return Ok((name, end.unwrap_or(at + 1)));
            }
            l if l & 0xc0 == 0xc0 => {
                let low = *bytes.get(at + 1).ok_or(WireError::Truncated)?;
                let target = (usize::from(l & 0x3f) << 8) | usize::from(low);
                if target >= limit {
                    return Err(WireError::Truncated);
                }
                end.get_or_insert(at + 2);
                limit = target;
                at = target;
            }
            l => {
                let label = bytes.get(at + 1..at + 1 + usize::from(l)).ok_or(WireError::Truncated)?;
                name.push_str(&String::from_utf8_lossy(label).to_ascii_lowercase());
                name.push('.');
                at += 1 + usize::from(l);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_round_trips_through_an_answer_with_compressed_names() {
        let mut answer = query(7, "Shop.example.com", A).expect("a query");
        assert_eq!(answer.len(), 12 + 18 + 4);
        answer[2] |= 0x80;
        answer[7] = 2;
        // shop.example.com. (a pointer to the question's name) CNAME shunt.ns.svc.
        answer.extend_from_slice(&[0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 30, 0, 14]);
        let target = answer.len();
        answer.extend_from_slice(&[5, b's', b'h', b'u', b'n', b't', 2, b'n', b's', 3, b's', b'v', b'c', 0]);
        // shunt.ns.svc. (a pointer to the CNAME's data) A 10.96.0.50
        answer.extend_from_slice(&[0xc0, target as u8, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 10, 96, 0, 50]);
        let message = parse(7, &answer).expect("parses");
        assert_eq!(message.rcode, 0);
        assert_eq!(message.answers[0].name, "shop.example.com.");
        assert_eq!(
            message.answers[0].data,
            Data::Names(vec!["shunt.ns.svc.".into()], Vec::new())
        );
        assert_eq!(message.answers[1].name, "shunt.ns.svc.");
        assert_eq!(message.answers[1].data, Data::V4(Ipv4Addr::new(10, 96, 0, 50)));
        assert_eq!(parse(8, &answer), Err(WireError::Mismatch));
    }

    #[test]
    fn garbage_and_pointer_loops_are_errors_not_panics() {
        let mut looped = query(1, "a.b", A).expect("a query");
        looped[2] |= 0x80;
        looped[7] = 1;
        looped.extend_from_slice(&[0xc0, 30, 0, 1]);
        assert!(parse(1, &looped).is_err());
        for cut in 0..looped.len() {
            let _ = parse(1, &looped[..cut]);
        }
        assert!(query(1, "a..b", A).is_err());
    }
}
