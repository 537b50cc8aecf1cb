//! A rule's `RequestMirror` filters to the contract's [`RequestMirrors`]: each mirror's
//! `backendRef` resolved as a backendRef is (a Service, another namespace's only with a
//! ReferenceGrant), and its share (`percent`, or `fraction` with a denominator of 100 unless
//! given). A mirror whose backend does not resolve is left out and gives the route's parents
//! `ResolvedRefs=False` with its reason; the rule still forwards.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use shunt_spec::{MAX_MIRRORS, MirrorTarget, RequestMirrors};

use super::{
    backends::{self, Referrer},
    grants::Grants,
    objects::{HTTPBackendRef, HTTPRouteFilter},
};
use crate::compile::{Backends, Resolved};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestMirror {
    #[serde(default)]
    pub backend_ref: HTTPBackendRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<Fraction>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Fraction {
    #[serde(default)]
    pub numerator: i32,
    /// 100 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denominator: Option<i32>,
}

/// A rule's mirrors, resolved.
#[derive(Debug, Default)]
pub struct RuleMirrors {
    pub mirrors: Option<RequestMirrors>,
    pub resolved: Vec<Arc<Resolved>>,
    /// Why some mirror's backend did not resolve (a `ResolvedRefs` reason).
    pub unresolved: Option<&'static str>,
}

/// The mirrors of a rule in `namespace` with `filters`; an error is what shunt cannot serve.
pub fn resolve(
    (referrer, namespace): (Referrer, &str),
    filters: &[HTTPRouteFilter],
    grants: &Grants<'_>,
    all: &mut Backends<'_>,
) -> Result<RuleMirrors, String> {
    let mut rule = RuleMirrors::default();
    let mut targets = Vec::new();
    let mirrors = filters.iter().filter(|filter| filter.type_ == "RequestMirror");
    for (at, filter) in mirrors.enumerate() {
        if at == MAX_MIRRORS {
            return Err(format!("more than {MAX_MIRRORS} RequestMirror filters in a rule"));
        }
        let mirror = filter
            .request_mirror
            .as_ref()
            .ok_or("RequestMirror without requestMirror")?;
        let (numerator, denominator) = share(mirror)?;
        match backends::one((referrer, namespace), &mirror.backend_ref, grants, all) {
            Ok(resolved) => {
                let target = MirrorTarget::share(resolved.id.clone(), numerator, denominator)
                    .ok_or_else(|| format!("mirror fraction {numerator}/{denominator}"))?;
                targets.push(target);
                rule.resolved.push(resolved);
            }
            Err(reason) => rule.unresolved = rule.unresolved.or(Some(reason)),
        }
    }
    rule.mirrors = (!targets.is_empty()).then_some(RequestMirrors { targets });
    Ok(rule)
}

/// `(numerator, denominator)` of the requests mirrored: all by default.
fn share(mirror: &RequestMirror) -> Result<(u32, u32), String> {
    let (numerator, denominator) = match (mirror.percent, &mirror.fraction) {
        (Some(_), Some(_)) => return Err("a mirror with both percent and fraction".to_string()),
        (Some(percent), None) => (percent, 100),
        (None, Some(fraction)) => (fraction.numerator, fraction.denominator.unwrap_or(100)),
        (None, None) => (1, 1),
    };
    match (u32::try_from(numerator), u32::try_from(denominator)) {
        (Ok(numerator), Ok(denominator)) if denominator > 0 && numerator <= denominator => Ok((numerator, denominator)),
        _ => Err(format!("mirror share {numerator}/{denominator}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mk(percent: Option<i32>, fraction: Option<(i32, Option<i32>)>) -> RequestMirror {
        RequestMirror {
            backend_ref: HTTPBackendRef::default(),
            percent,
            fraction: fraction.map(|(numerator, denominator)| Fraction { numerator, denominator }),
        }
    }

    #[test]
    fn a_share_is_all_a_percent_or_a_fraction_of_100_unless_given() {
        assert_eq!(share(&mk(None, None)), Ok((1, 1)));
        assert_eq!(share(&mk(Some(20), None)), Ok((20, 100)));
        assert_eq!(share(&mk(None, Some((25, Some(50))))), Ok((25, 50)));
        assert_eq!(share(&mk(None, Some((7, None)))), Ok((7, 100)));
        for bad in [
            mk(Some(101), None),
            mk(Some(-1), None),
            mk(None, Some((3, Some(2)))),
            mk(None, Some((1, Some(0)))),
            mk(Some(5), Some((1, None))),
        ] {
            assert!(share(&bad).is_err(), "{bad:?}");
        }
    }
}
