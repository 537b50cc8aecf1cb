//! Fields a request gains on its way upstream, kept beside the client's map instead of inserted
//! into it. An HTTP/1.1 head writes them after the client's fields, so the forwarding headers
//! cost no hashing, probing or growth of the map (an insert each would be); an
//! HTTP/2 request appends them to its copy of the map.

use http::{HeaderMap, HeaderName, HeaderValue};

/// Appended after the map's fields, in order. Whoever pushes a name the map must not also carry
/// removes it from the map first ([`AddedFields::replace`] does both).
#[derive(Clone, Debug, Default)]
pub struct AddedFields(Vec<(HeaderName, HeaderValue)>);

impl AddedFields {
    pub fn with_capacity(capacity: usize) -> Self {
        AddedFields(Vec::with_capacity(capacity))
    }

    /// Adds a field line after the map's and those pushed before.
    pub fn push(&mut self, name: HeaderName, value: HeaderValue) {
        self.0.push((name, value));
    }

    /// Makes `value` the only value of `name`: out of the map and out of what was added.
    pub fn replace(&mut self, headers: &mut HeaderMap, name: HeaderName, value: HeaderValue) {
        headers.remove(&name);
        self.0.retain(|(added, _)| *added != name);
        self.0.push((name, value));
    }

    /// Drops every value of `name` added so far.
    pub fn remove(&mut self, name: &HeaderName) {
        self.0.retain(|(added, _)| added != name);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&HeaderName, &HeaderValue)> {
        self.0.iter().map(|(name, value)| (name, value))
    }

    /// Appends every field to `headers` (the HTTP/2 request, or a test's view of the whole set).
    pub fn append_to(&self, headers: &mut HeaderMap) {
        for (name, value) in self.iter() {
            headers.append(name.clone(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
        headers.get_all(name).iter().map(|v| v.to_str().unwrap()).collect()
    }

    #[test]
    fn pushed_fields_follow_the_maps_own_values_in_order() {
        let mut headers = HeaderMap::new();
        headers.append("forwarded", HeaderValue::from_static("for=1.1.1.1"));
        let mut added = AddedFields::default();
        added.push(
            HeaderName::from_static("forwarded"),
            HeaderValue::from_static("for=2.2.2.2"),
        );
        added.push(HeaderName::from_static("x-a"), HeaderValue::from_static("1"));
        added.append_to(&mut headers);
        assert_eq!(values(&headers, "forwarded"), ["for=1.1.1.1", "for=2.2.2.2"]);
        assert_eq!(values(&headers, "x-a"), ["1"]);
    }

    #[test]
    fn replace_leaves_one_value_whether_it_was_in_the_map_or_added() {
        let mut headers = HeaderMap::new();
        headers.append("x-proto", HeaderValue::from_static("client"));
        let mut added = AddedFields::default();
        added.push(HeaderName::from_static("x-proto"), HeaderValue::from_static("ours"));
        added.replace(
            &mut headers,
            HeaderName::from_static("x-proto"),
            HeaderValue::from_static("route"),
        );
        assert!(headers.is_empty());
        added.append_to(&mut headers);
        assert_eq!(values(&headers, "x-proto"), ["route"]);
    }
}
