//! Numbers written as ASCII digits without a formatter: lengths and chunk sizes in heads.

/// Gives `number`'s digits in `radix` (10 or 16, lowercase) to `push`, most significant first,
/// without a formatter.
#[inline]
pub fn digits(number: u64, radix: u64, mut push: impl FnMut(u8)) {
    debug_assert!(radix == 10 || radix == 16);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = number;
    loop {
        at -= 1;
        digits[at] = b"0123456789abcdef"[(rest % radix) as usize];
        rest /= radix;
        if rest == 0 {
            break;
        }
    }
    digits[at..].iter().for_each(|&digit| push(digit));
}
