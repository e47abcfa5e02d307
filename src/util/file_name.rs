//! Names that keep well in file names, run directory names and cassette keys.

/// `text` with every character other than ASCII letters, digits, `-` and `_` replaced by
/// `-` (so it is safe in a path component on every platform).
pub fn safe_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_safe_characters_remain() {
        assert_eq!(
            super::safe_name("read_file/v2 (fs).é"),
            "read_file-v2--fs---"
        );
        assert_eq!(super::safe_name("weather-2"), "weather-2");
    }
}
