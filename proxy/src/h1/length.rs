//! `Content-Length` values, read the same strict way in requests and responses (RFC 9110 §8.6).

/// Digits only (no sign, no spaces inside), without overflow.
pub fn parse_length(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, &b| {
        let digit = (b as char).to_digit(10)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })
}
