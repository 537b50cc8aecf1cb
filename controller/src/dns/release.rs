//! Which shunt release owns a block of CoreDNS rules: `NAMESPACE/NAME` (its Service, or
//! `--release`), so two releases managing one Corefile each edit only their own block.

use std::{fmt, str::FromStr};

/// The marker words every shunt block starts and ends with; the identity follows them.
pub const BEGIN_MARKER: &str = "# BEGIN shunt";
pub const END_MARKER: &str = "# END shunt";

/// A release identity. Both parts are DNS-1123 labels, so the markers and the key stay one
/// token each.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    namespace: String,
    name: String,
}

/// A line that is one of shunt's markers, with the identity it carries (`None`: a block
/// written before releases had identities).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker<'a> {
    Begin(Option<&'a str>),
    End(Option<&'a str>),
}

// === impl Release ===

impl Release {
    pub fn new(namespace: &str, name: &str) -> Result<Self, String> {
        for (what, value) in [("namespace", namespace), ("name", name)] {
            if !is_dns_label(value) {
                return Err(format!(
                    "release {what} {value:?} is not a DNS-1123 label (a-z, 0-9 and '-', at most 63)"
                ));
            }
        }
        Ok(Release {
            namespace: namespace.to_string(),
            name: name.to_string(),
        })
    }

    pub fn begin_marker(&self) -> String {
        format!("{BEGIN_MARKER} {self}")
    }

    pub fn end_marker(&self) -> String {
        format!("{END_MARKER} {self}")
    }

    /// The `coredns-custom` key: `NAMESPACE.NAME.override` (CoreDNS imports `*.override`).
    pub fn override_key(&self) -> String {
        format!("{}.{}.override", self.namespace, self.name)
    }
}

impl FromStr for Release {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((namespace, name)) => Release::new(namespace, name),
            None => Err(format!("expected NAMESPACE/NAME, got {s:?}")),
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

// === impl Marker ===

impl<'a> Marker<'a> {
    /// `# BEGIN shunt`, `# BEGIN shunt ns/name` (and the same for END), surrounding whitespace
    /// ignored; anything else (`# BEGIN shuntx`, prose) is no marker.
    pub fn parse(line: &'a str) -> Option<Self> {
        let line = line.trim();
        let (rest, begin) = match (line.strip_prefix(BEGIN_MARKER), line.strip_prefix(END_MARKER)) {
            (Some(rest), _) => (rest, true),
            (_, Some(rest)) => (rest, false),
            _ => return None,
        };
        let identity = match rest.strip_prefix([' ', '\t']) {
            _ if rest.is_empty() => None,
            Some(identity) if !identity.trim().is_empty() => Some(identity.trim()),
            _ => return None,
        };
        Some(if begin {
            Marker::Begin(identity)
        } else {
            Marker::End(identity)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_carry_the_release_and_old_ones_carry_none() {
        let release: Release = "shunt-system/shunt".parse().expect("valid");
        assert_eq!(release.begin_marker(), "# BEGIN shunt shunt-system/shunt");
        assert_eq!(release.override_key(), "shunt-system.shunt.override");
        assert_eq!(
            Marker::parse("    # BEGIN shunt shunt-system/shunt"),
            Some(Marker::Begin(Some("shunt-system/shunt")))
        );
        assert_eq!(Marker::parse("\t# END shunt"), Some(Marker::End(None)));
        assert_eq!(Marker::parse("# BEGIN shuntx"), None);
        assert_eq!(
            Marker::parse("# BEGIN shunt  "),
            Some(Marker::Begin(None)),
            "trailing blanks"
        );
        assert_eq!(Marker::parse("rewrite name exact a b"), None);
    }

    #[test]
    fn a_release_is_two_dns_labels() {
        assert!("a/b".parse::<Release>().is_ok());
        for bad in ["a", "a/b/c", "/b", "a/", "A/b", "a b/c", "a/-b"] {
            assert!(bad.parse::<Release>().is_err(), "{bad}");
        }
    }
}
