//! A route's custom error pages as the request path reads them: the listed statuses as a bit
//! set, the error backend's upstream, and the location's fields parsed once per table build.

use std::sync::Arc;

use http::HeaderValue;

use crate::{spec::ErrorPages, upstream::Upstream};

/// Built from [`ErrorPages`] with the error backend's upstream from the table.
#[derive(Debug)]
pub struct ErrorRoute {
    /// Bit `status - 400` for each listed status.
    codes: [u64; 4],
    /// `None`: the built-in default server, which answers 404 to anything.
    pub upstream: Option<Arc<Upstream>>,
    /// The pod's answers are replaced too, not only the proxy's own errors.
    pub intercept: bool,
    /// `X-Namespace`, `X-Ingress-Name`, `X-Service-Name`, `X-Service-Port`, in that order.
    pub location: [HeaderValue; 4],
}

impl ErrorRoute {
    /// The route for `pages`, or why its location cannot be sent as fields.
    pub fn new(pages: &ErrorPages, upstream: Option<Arc<Upstream>>) -> Result<Self, String> {
        let mut codes = [0u64; 4];
        for &code in &pages.codes {
            let bit = code
                .checked_sub(400)
                .filter(|bit| *bit < 200)
                .ok_or_else(|| format!("error page status {code} is not in 400-599"))?;
            codes[usize::from(bit / 64)] |= 1 << (bit % 64);
        }
        let location = &pages.location;
        let value = |text: &str| {
            HeaderValue::from_str(text).map_err(|_| format!("error page field {text:?} is not a field value"))
        };
        Ok(ErrorRoute {
            codes,
            upstream,
            intercept: pages.intercept,
            location: [
                value(&location.namespace)?,
                value(&location.ingress_name)?,
                value(&location.service_name)?,
                value(&location.service_port)?,
            ],
        })
    }

    /// Whether an answer with `status` goes to the error backend.
    #[inline]
    pub fn lists(&self, status: http::StatusCode) -> bool {
        let bit = status.as_u16().wrapping_sub(400);
        bit < 200 && self.codes[usize::from(bit / 64)] & (1 << (bit % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ErrorLocation;

    fn pages(codes: Vec<u16>) -> ErrorPages {
        ErrorPages {
            codes,
            backend: None,
            intercept: true,
            location: ErrorLocation {
                namespace: "ns".into(),
                ingress_name: "web".into(),
                service_name: "app".into(),
                service_port: "80".into(),
            },
        }
    }

    #[test]
    fn listed_statuses_and_only_those_go_to_the_error_backend() {
        let route = ErrorRoute::new(&pages(vec![400, 404, 463, 464, 503, 599]), None).unwrap();
        for status in 100..=999u16 {
            let listed = [400, 404, 463, 464, 503, 599].contains(&status);
            assert_eq!(
                route.lists(http::StatusCode::from_u16(status).unwrap()),
                listed,
                "{status}"
            );
        }
    }

    #[test]
    fn a_status_outside_400_to_599_or_a_field_with_a_newline_is_refused() {
        assert!(ErrorRoute::new(&pages(vec![399]), None).is_err());
        assert!(ErrorRoute::new(&pages(vec![600]), None).is_err());
        let mut bad = pages(vec![404]);
        bad.location.ingress_name = "a\nb".into();
        assert!(ErrorRoute::new(&bad, None).is_err());
    }
}
