//! The `/metrics` body: the registry in the OpenMetrics text format, gzipped when the scraper
//! accepts it (Prometheus always does). At 10,000 active routes the text is megabytes of
//! repeated names, which gzip shrinks about twentyfold.

use std::io::Write;

use flate2::{Compression, write::GzEncoder};
use http::{HeaderMap, header};
use prometheus_client::{encoding::text::encode, registry::Registry};

/// What `/metrics` sends.
pub struct Scrape {
    pub body: Vec<u8>,
    /// `Some("gzip")` when `body` is gzipped.
    pub content_encoding: Option<&'static str>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    #[error("encoding metrics")]
    Encode(#[source] std::fmt::Error),
    #[error("compressing metrics: {0}")]
    Compress(#[source] std::io::Error),
}

/// Encodes `registry` for a request with `headers`.
pub fn scrape(registry: &Registry, headers: &HeaderMap) -> Result<Scrape, ScrapeError> {
    let mut text = String::new();
    encode(&mut text, registry).map_err(ScrapeError::Encode)?;
    if !headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .any(|value| value.to_str().is_ok_and(accepts_gzip))
    {
        return Ok(Scrape {
            body: text.into_bytes(),
            content_encoding: None,
        });
    }
    // The fastest level: the text is repetitive enough that it still shrinks ~20x, and the
    // encoding runs on the admin listener's runtime, so it should not hold it for long.
    let mut encoder = GzEncoder::new(Vec::with_capacity(text.len() / 8), Compression::fast());
    encoder.write_all(text.as_bytes()).map_err(ScrapeError::Compress)?;
    Ok(Scrape {
        body: encoder.finish().map_err(ScrapeError::Compress)?,
        content_encoding: Some("gzip"),
    })
}

/// True when an `Accept-Encoding` value (RFC 9110 §12.5.3) lists `gzip` (or `x-gzip`, or `*`)
/// with a weight other than 0.
pub fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|coding| {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim();
        let named = ["gzip", "x-gzip", "*"]
            .iter()
            .any(|gzip| name.eq_ignore_ascii_case(gzip));
        named && parts.all(|param| !is_zero_weight(param))
    })
}

/// `q=0`, `q=0.`, `q=0.000`: the coding is refused.
fn is_zero_weight(param: &str) -> bool {
    let Some((key, weight)) = param.split_once('=') else {
        return false;
    };
    key.trim().eq_ignore_ascii_case("q") && {
        let weight = weight.trim();
        let rest = weight
            .strip_prefix('0')
            .map(|rest| rest.strip_prefix('.').unwrap_or(rest));
        rest.is_some_and(|digits| digits.chars().all(|c| c == '0'))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use flate2::read::GzDecoder;
    use http::HeaderValue;
    use prometheus_client::metrics::counter::Counter;
    use proptest::prelude::*;

    use super::*;

    fn mk_registry() -> Registry {
        let mut registry = Registry::default();
        let counter = Counter::<u64>::default();
        counter.inc();
        registry.register("scraped", "test", counter);
        registry
    }

    fn mk_headers(accept_encoding: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(accept_encoding).expect("a valid header"),
        );
        headers
    }

    #[test]
    fn a_scraper_that_accepts_gzip_gets_the_same_text_gzipped() {
        let registry = mk_registry();
        let plain = scrape(&registry, &HeaderMap::new()).expect("encoded");
        assert_eq!(plain.content_encoding, None);
        let gzipped = scrape(&registry, &mk_headers("gzip")).expect("encoded");
        assert_eq!(gzipped.content_encoding, Some("gzip"));
        let mut text = Vec::new();
        GzDecoder::new(&gzipped.body[..])
            .read_to_end(&mut text)
            .expect("valid gzip");
        assert_eq!(text, plain.body);
        assert!(String::from_utf8_lossy(&text).contains("scraped_total 1"));
    }

    #[test]
    fn accept_encoding_lists_are_read_with_their_weights() {
        for (value, expected) in [
            ("gzip", true),
            ("GZIP", true),
            ("identity, gzip;q=0.5", true),
            ("deflate, gzip", true),
            ("x-gzip", true),
            ("*", true),
            ("gzip;q=0", false),
            ("gzip; q=0.000", false),
            ("gzip;q=0.001", true),
            ("br, deflate", false),
            ("identity", false),
            ("", false),
            ("gzipped", false),
        ] {
            assert_eq!(accepts_gzip(value), expected, "{value:?}");
        }
    }

    proptest! {
        #[test]
        fn any_accept_encoding_value_is_read_without_panicking(value in ".{0,64}") {
            let _ = accepts_gzip(&value);
        }

        #[test]
        fn gzip_anywhere_in_a_list_without_a_zero_weight_is_accepted(
            before in proptest::collection::vec("(br|deflate|identity)(;q=0\\.[0-9])?", 0..4),
            after in proptest::collection::vec("(br|deflate|identity)(;q=0\\.[0-9])?", 0..4),
            weight in "(;q=(1|0\\.[1-9]|0\\.0[1-9]))?",
        ) {
            let list = before.iter().map(String::as_str)
                .chain([format!("gzip{weight}").as_str()])
                .chain(after.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(", ");
            prop_assert!(accepts_gzip(&list), "{}", list);
        }
    }
}
