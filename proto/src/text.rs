//! Text measures used by the labelled estimates.

/// Number of UTF-16 code units needed to encode `text`.
pub fn utf16_units(text: &str) -> u64 {
    text.chars().map(|c| c.len_utf16() as u64).sum()
}

/// Estimator `utf16-ceil-div4` version 1: ceil(UTF-16 code units / 4).
pub fn utf16_ceil_div4(text: &str) -> u64 {
    utf16_units(text).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_surrogate_pairs_as_two_units() {
        assert_eq!(utf16_units("a😀é"), 4);
        assert_eq!(utf16_ceil_div4(""), 0);
        assert_eq!(utf16_ceil_div4("a"), 1);
        assert_eq!(utf16_ceil_div4("abcd"), 1);
        assert_eq!(utf16_ceil_div4("abcde"), 2);
        assert_eq!(utf16_ceil_div4("Hello world!\n"), 4);
    }
}
