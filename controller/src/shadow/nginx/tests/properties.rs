//! Properties of what the profile parses.

use proptest::prelude::*;

use super::super::{annotations, paths::nginx_path};
use shunt_spec::PathKind;

proptest! {
    #[test]
    fn a_prefix_path_is_element_wise_unless_it_ends_in_a_slash(segments in prop::collection::vec("[a-z0-9._-]{1,8}", 1..4), slash in any::<bool>()) {
        let path = format!("/{}{}", segments.join("/"), if slash { "/" } else { "" });
        for kind in ["Prefix", "ImplementationSpecific", ""] {
            let (parsed, normalised) = nginx_path(Some(&path), kind).expect("a valid path");
            if slash {
                prop_assert_eq!(parsed, PathKind::CharPrefix);
                prop_assert_eq!(&normalised, &path);
            } else {
                prop_assert_eq!(parsed, PathKind::Prefix);
                prop_assert_eq!(&normalised, &path);
            }
        }
    }

    #[test]
    fn any_key_outside_the_table_is_refused_by_name(name in "[a-z][a-z-]{0,30}") {
        prop_assume!(!annotations::NO_EFFECT.contains(&name.as_str()));
        prop_assume!(!["ssl-redirect", "force-ssl-redirect", "backend-protocol", "proxy-http-version", "whitelist-source-range", "allowlist-source-range"].contains(&name.as_str()));
        let key = format!("{}{name}", annotations::PREFIX);
        let mut ingress = k8s_openapi::api::networking::v1::Ingress::default();
        ingress.metadata.annotations = Some([(key.clone(), "x".to_string())].into());
        prop_assert_eq!(annotations::parse(&ingress).refusals, vec![format!("UnsupportedAnnotation: {key}")]);
    }
}
