//! Path normalisation before routing, the way nginx does it: one path is matched and forwarded.
//!
//! The rule, applied to the path only (the query string is never touched):
//! - `%XX` escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`, RFC 3986 §2.3) are decoded;
//!   every other escape stays encoded, its hex digits uppercased;
//! - runs of `/` become one `/`;
//! - `.` and `..` segments are resolved (RFC 3986 §5.2.4), also when spelled `%2e`;
//! - refused: an escaped `/` or `\` (`%2F`, `%5C`), a NUL (raw or `%00`), an escape that is not
//!   `%` and two hex digits, a path not starting with `/`, and a `..` that climbs above `/`.
//!
//! Decoding only unreserved characters keeps the result stable: normalising it again changes
//! nothing, and no escape can turn into a segment separator after routing.

use std::{borrow::Cow, fmt::Write as _};

#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("path must start with /")]
    NotAbsolute,
    #[error("invalid percent escape in path")]
    InvalidEscape,
    #[error("encoded slash in path")]
    EncodedSlash,
    #[error("encoded backslash in path")]
    EncodedBackslash,
    #[error("nul byte in path")]
    Nul,
    #[error("path climbs above /")]
    AboveRoot,
}

/// The normalised path: borrowed when it already was normal (no allocation on the hot path).
pub fn normalize_path(path: &str) -> Result<Cow<'_, str>, PathError> {
    if is_normal(path.as_bytes())? {
        return Ok(Cow::Borrowed(path));
    }
    rewrite(path.as_bytes()).map(Cow::Owned)
}

/// Validates every byte and reports whether a rewrite is needed, without allocating.
fn is_normal(path: &[u8]) -> Result<bool, PathError> {
    if path.first() != Some(&b'/') {
        return Err(PathError::NotAbsolute);
    }
    let mut normal = true;
    let mut segment_start = 1;
    let mut i = 1;
    while i <= path.len() {
        let byte = path.get(i).copied();
        match byte {
            None | Some(b'/') => {
                let segment = &path[segment_start..i];
                // An empty segment is fine only as the last one (a trailing slash).
                if (segment.is_empty() && byte.is_some()) || segment == b"." || segment == b".." {
                    normal = false;
                }
                segment_start = i + 1;
            }
            Some(b'%') => {
                let (value, canonical) = escape_at(path, i)?;
                if is_unreserved(value) || !canonical {
                    normal = false;
                }
                i += 2;
            }
            Some(0) => return Err(PathError::Nul),
            Some(_) => {}
        }
        i += 1;
    }
    Ok(normal)
}

/// Decodes, then resolves segments. Only called for paths [`is_normal`] accepted as valid.
fn rewrite(path: &[u8]) -> Result<String, PathError> {
    let mut decoded = String::with_capacity(path.len());
    let mut i = 0;
    while i < path.len() {
        let byte = path[i];
        if byte == b'%' {
            let (value, _) = escape_at(path, i)?;
            if is_unreserved(value) {
                decoded.push(char::from(value));
            } else {
                let _ = write!(decoded, "%{value:02X}");
            }
            i += 3;
        } else {
            // Copy the run up to the next escape as is; it may hold non-ASCII UTF-8.
            let end = path[i..].iter().position(|&b| b == b'%').map_or(path.len(), |n| i + n);
            decoded.push_str(std::str::from_utf8(&path[i..end]).expect("a slice of a str cut at ASCII bytes"));
            i = end;
        }
    }

    let mut segments: Vec<&str> = Vec::new();
    let mut trailing_slash = false;
    // Skip the leading `/`: every segment after it is preceded by one.
    for segment in decoded[1..].split('/') {
        trailing_slash = matches!(segment, "" | "." | "..");
        match segment {
            "" | "." => {}
            ".." => {
                if segments.pop().is_none() {
                    return Err(PathError::AboveRoot);
                }
            }
            segment => segments.push(segment),
        }
    }
    let mut out = String::with_capacity(decoded.len());
    for segment in &segments {
        out.push('/');
        out.push_str(segment);
    }
    if trailing_slash || segments.is_empty() {
        out.push('/');
    }
    Ok(out)
}

/// The byte an escape at `at` encodes, and whether it is spelled canonically (uppercase hex).
/// Refuses escapes that could change the path's structure or its meaning to a file system.
fn escape_at(path: &[u8], at: usize) -> Result<(u8, bool), PathError> {
    let (Some(&high), Some(&low)) = (path.get(at + 1), path.get(at + 2)) else {
        return Err(PathError::InvalidEscape);
    };
    let (Some(h), Some(l)) = (hex_value(high), hex_value(low)) else {
        return Err(PathError::InvalidEscape);
    };
    let value = h << 4 | l;
    match value {
        b'/' => Err(PathError::EncodedSlash),
        b'\\' => Err(PathError::EncodedBackslash),
        0 => Err(PathError::Nul),
        _ => Ok((value, !high.is_ascii_lowercase() && !low.is_ascii_lowercase())),
    }
}

fn hex_value(digit: u8) -> Option<u8> {
    char::from(digit).to_digit(16).map(|v| v as u8)
}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

#[cfg(test)]
mod tests;
