//! Ingress paths as ingress-nginx turns them into nginx locations
//! (internal/k8s/main.go, internal/ingress/controller/location.go).

use shunt_spec::PathKind;

use crate::compile::paths::{PathError, parse_path};

/// The table's (kind, path) for an nginx Ingress path. A missing or `ImplementationSpecific`
/// type is `Prefix` (main.go sets `defaultPathType`). A `Prefix` path `/p` becomes the
/// locations `= /p` and `/p/`: shunt's element-wise `Prefix`. A `Prefix` path `/p/` already
/// ends in `/`, so its locations are `/p/` and `= /p/`, and `/p` itself is not matched: a
/// character prefix.
pub fn nginx_path(path: Option<&str>, path_type: &str) -> Result<(PathKind, String), PathError> {
    let path_type = match path_type {
        "" | "ImplementationSpecific" => "Prefix",
        other => other,
    };
    let (kind, normalised) = parse_path(path, path_type)?;
    match (kind, path) {
        (PathKind::Prefix, Some(raw)) if raw.len() > 1 && raw.ends_with('/') => {
            Ok((PathKind::CharPrefix, raw.to_string()))
        }
        _ => Ok((kind, normalised)),
    }
}
