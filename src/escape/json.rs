//! JSON that a person may read on a terminal (`--json` output, the graders'
//! lines on standard output).
//!
//! serde already writes the C0 controls as `\u001b`; DEL, the C1 controls,
//! bidi overrides and the line separators stay raw in its output, and a
//! terminal acts on them. Here they are `\u` escapes too: the value read
//! back is the same, and the text is safe to print.

use serde::Serialize;

use super::terminal::is_special;

/// Writes every special character of `json` as a `\u` escape. Outside its
/// strings JSON is ASCII without controls, so every such character is
/// inside a string, where the escape means the same character.
fn escape_specials(json: String) -> String {
    if !json.chars().any(is_special) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_special(c) && c != '\n' {
            // Every special character is in the Basic Multilingual Plane.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `value` as one line of JSON, safe to print on a terminal.
///
/// ```
/// let j = referee::escape::json::to_string(&"\u{202e}\x1b").unwrap();
/// assert_eq!(j, r#""\u202e\u001b""#);
/// ```
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string(value).map(escape_specials)
}

/// `value` as one line of JSON in bytes, safe to print (a record of
/// `games.jsonl`). Mostly ASCII: the common case is one scan, no copy.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let bytes = serde_json::to_vec(value)?;
    if bytes.iter().all(|&b| b < 0x7f) {
        return Ok(bytes);
    }
    // serde_json writes UTF-8.
    match String::from_utf8(bytes) {
        Ok(text) => Ok(escape_specials(text).into_bytes()),
        Err(e) => Ok(e.into_bytes()),
    }
}

/// `value` as indented JSON, safe to print on a terminal.
pub fn to_string_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value).map(escape_specials)
}

#[cfg(test)]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_same_value_with_nothing_special(
            v in prop::collection::vec(crate::escape::terminal::props::hostile(), 0..4)
        ) {
            let bytes = String::from_utf8(to_vec(&v).unwrap()).unwrap();
            for j in [to_string(&v).unwrap(), to_string_pretty(&v).unwrap(), bytes] {
                prop_assert!(j.chars().all(|c| !is_special(c) || c == '\n'));
                let back: Vec<String> = serde_json::from_str(&j).unwrap();
                prop_assert_eq!(&back, &v);
            }
        }
    }
}
