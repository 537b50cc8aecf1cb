//! The CoreDNS version the rules need: `rewrite … answer auto` arrived in CoreDNS 1.8.4
//! (coredns/coredns#4473, "plugin/rewrite: streamline the ResponseRule handling"); an older
//! CoreDNS refuses the whole Corefile, which would take cluster DNS down with it. The address-only
//! form adds a `view` block, which needs CoreDNS 1.10.0.

use std::{fmt, str::FromStr};

/// The oldest CoreDNS that loads every rule shunt writes.
pub const MIN_COREDNS: CorednsVersion = CorednsVersion {
    major: 1,
    minor: 8,
    patch: 4,
};

/// The oldest CoreDNS with the `view` plugin (CoreDNS 1.10.0 release notes, coredns/coredns#5538),
/// which keeps every query type but A and AAAA of a served name away from the rules.
pub const VIEW_COREDNS: CorednsVersion = CorednsVersion {
    major: 1,
    minor: 10,
    patch: 0,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CorednsVersion {
    major: u32,
    minor: u32,
    patch: u32,
}

// === impl CorednsVersion ===

impl CorednsVersion {
    /// The version in an image reference's tag: `registry.k8s.io/coredns/coredns:v1.11.1`,
    /// `…/coredns:1.8.4-tke.1`, `mcr…/coredns:v1.9.4-hotfix.20230612`. `None` without a tag
    /// (a digest only) or when the tag does not start with a version.
    pub fn from_image(image: &str) -> Option<Self> {
        let image = image.split_once('@').map_or(image, |(name, _digest)| name);
        let last = image.rsplit('/').next().unwrap_or(image);
        let (_, tag) = last.split_once(':')?;
        tag.parse().ok()
    }

    pub fn is_supported(self) -> bool {
        self >= MIN_COREDNS
    }

    /// Whether the address-only form (a `view` block) loads.
    pub fn has_view(self) -> bool {
        self >= VIEW_COREDNS
    }
}

impl FromStr for CorednsVersion {
    type Err = String;

    /// `1.8.4`, `v1.8.4`, `1.9` (patch 0), with any `-suffix` or `+build` after it.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("{s:?} is not a CoreDNS version like 1.11.1");
        let digits = s.strip_prefix('v').unwrap_or(s);
        let end = digits.find(['-', '+']).unwrap_or(digits.len());
        let mut parts = digits[..end].split('.');
        let mut next = |required: bool| match parts.next() {
            Some(part) if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) => {
                part.parse::<u32>().map_err(|_| bad())
            }
            None if !required => Ok(0),
            _ => Err(bad()),
        };
        let version = CorednsVersion {
            major: next(true)?,
            minor: next(true)?,
            patch: next(false)?,
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(version)
    }
}

impl fmt::Display for CorednsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn v(s: &str) -> CorednsVersion {
        s.parse().expect("a version")
    }

    #[test]
    fn image_tags_of_the_usual_distributions_parse() {
        let cases = [
            ("registry.k8s.io/coredns/coredns:v1.11.1", "1.11.1"),
            ("ccr.ccs.tencentyun.com/tkeimages/coredns:1.8.4-tke.1", "1.8.4"),
            (
                "mcr.microsoft.com/oss/kubernetes/coredns:v1.9.4-hotfix.20230612",
                "1.9.4",
            ),
            ("rancher/mirrored-coredns-coredns:1.10.1", "1.10.1"),
            ("localhost:5000/coredns:1.12", "1.12.0"),
            ("coredns/coredns:1.8.3@sha256:abcd", "1.8.3"),
        ];
        for (image, version) in cases {
            assert_eq!(CorednsVersion::from_image(image), Some(v(version)), "{image}");
        }
        for image in [
            "coredns/coredns",
            "coredns/coredns:latest",
            "localhost:5000/coredns",
            "x@sha256:ab",
        ] {
            assert_eq!(CorednsVersion::from_image(image), None, "{image}");
        }
    }

    #[test]
    fn versions_before_1_8_4_are_unsupported_and_before_1_10_have_no_view() {
        assert!(!v("1.8.3").is_supported());
        assert!(!v("1.7.0").is_supported());
        assert!(v("1.8.4").is_supported());
        assert!(v("1.10.0").is_supported(), "compared as numbers, not text");
        assert!(v("2.0").is_supported());
        assert!(!v("1.9.4").has_view());
        assert!(v("1.10.0").has_view());
        assert!(v("1.13.1").has_view());
        for bad in ["", "v", "1", "1.x", "1.2.3.4", "-1.2", "1..2"] {
            assert!(bad.parse::<CorednsVersion>().is_err(), "{bad:?}");
        }
    }

    proptest! {
        #[test]
        fn any_image_string_parses_or_not_without_panicking(s in "\\PC{0,60}") {
            let _ = CorednsVersion::from_image(&s);
        }

        #[test]
        fn versions_round_trip(major in 0u32..100, minor in 0u32..100, patch in 0u32..100) {
            let version = CorednsVersion { major, minor, patch };
            prop_assert_eq!(version.to_string().parse::<CorednsVersion>(), Ok(version));
        }
    }
}
