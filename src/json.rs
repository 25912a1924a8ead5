//! JSON text's nesting, measured before parsing: serde_json's parser recurses
//! once per level, so a text from a file is measured first (without recursion)
//! and refused or parsed by the caller, which knows its limit.

/// The deepest nesting of objects and arrays in JSON `text`, found without
/// recursion (brackets inside strings are text); the text need not be valid
/// JSON.
pub fn depth(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::depth;

    #[test]
    fn depth_counts_objects_and_arrays_but_not_brackets_in_strings() {
        assert_eq!(depth("1"), 0);
        assert_eq!(depth(r#"{"a":[1,{"b":[]}]}"#), 4);
        assert_eq!(depth(r#"{"a":"{{{[[[\"{{"}"#), 1);
        assert_eq!(depth(&"[".repeat(100_000)), 100_000);
    }
}
