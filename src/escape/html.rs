//! Text inside an HTML page (the report, the league's pages).

use std::borrow::Cow;

use serde::Serialize;

use super::terminal;

/// Text for an element's content or a quoted attribute value (either
/// quote): `&`, `<`, `>`, `"` and `'` as entities, so that nothing in it
/// opens a tag, ends an attribute or names an entity; and the characters
/// a terminal acts on visible as in [`terminal::text`], since a page's
/// source is read on terminals too and bidi overrides reorder a browser's
/// text as well.
///
/// Entities already in the text are escaped again (`&lt;` shows as
/// `&lt;`): the text is shown as it was sent.
///
/// ```
/// use referee::escape::html;
///
/// assert_eq!(
///     html::text("<img src=x onerror='alert(1)'> &lt;"),
///     "&lt;img src=x onerror=&#x27;alert(1)&#x27;&gt; &amp;lt;"
/// );
/// ```
pub fn text(s: &str) -> Cow<'_, str> {
    match terminal::text(s) {
        Cow::Borrowed(b) => html_escape::encode_quoted_attribute(b),
        Cow::Owned(o) => Cow::Owned(html_escape::encode_quoted_attribute(&o).into_owned()),
    }
}

/// `value` as JSON that is safe inside a `<script type="application/json">`
/// element: every `<`, `>` and `&` is a `\u` escape, so that no string in
/// it can close the element (`</script>`) or open a comment (`<!--`); and
/// every string has the characters a terminal acts on visible
/// ([`terminal::text`]), since the page shows them as text, where a bidi
/// override would reorder it. `JSON.parse` of the element's text gives the
/// value back with its strings so shown.
///
/// ```
/// let j = referee::escape::html::script_json(&["</script><!--\u{202e}"]);
/// assert_eq!(j, r#"["\u003c/script\u003e\u003c!--\\u{202e}"]"#);
/// ```
pub fn script_json<T: Serialize + ?Sized>(value: &T) -> String {
    // Plain structs of strings and numbers cannot fail to serialise.
    let mut v = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
    show_strings(&mut v);
    let raw = serde_json::to_string(&v).unwrap_or_else(|_| "null".to_string());
    let mut out = String::with_capacity(raw.len() + 64);
    for ch in raw.chars() {
        match ch {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// Every string in `v` (keys too) through [`terminal::text`].
fn show_strings(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(o) = terminal::text(s) {
                *s = o;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(show_strings),
        Value::Object(map) => {
            if map
                .keys()
                .any(|k| matches!(terminal::text(k), Cow::Owned(_)))
            {
                let old = std::mem::take(map);
                for (k, mut item) in old {
                    show_strings(&mut item);
                    map.insert(terminal::text(&k).into_owned(), item);
                }
            } else {
                map.values_mut().for_each(show_strings);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::escape::terminal::is_special;
    use proptest::prelude::*;

    /// Reverses the five entities [`text`] writes.
    fn unescape(s: &str) -> String {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#x27;", "'")
            .replace("&amp;", "&")
    }

    proptest! {
        #[test]
        fn no_markup_survives(s in crate::escape::terminal::props::hostile()) {
            let h = text(&s);
            prop_assert!(!h.contains(['<', '>', '"', '\'']));
            // Every `&` starts one of the entities written here, so none
            // of the text's own entities (`&lt;`) is read as one.
            for (i, _) in h.match_indices('&') {
                let rest = &h[i..];
                prop_assert!(
                    ["&lt;", "&gt;", "&quot;", "&#x27;", "&amp;"].iter().any(|e| rest.starts_with(e)),
                    "{}", rest
                );
            }
            prop_assert!(h.chars().all(|c| !is_special(c) || c == '\n' || c == '\t'));
            // The text comes back as it was shown on a terminal.
            prop_assert_eq!(unescape(&h), crate::escape::terminal::text(&s).into_owned());
        }

        #[test]
        fn script_json_round_trips_and_never_closes_the_element(
            v in prop::collection::vec(crate::escape::terminal::props::hostile(), 0..4)
        ) {
            let j = script_json(&v);
            prop_assert!(!j.contains(['<', '>', '&']));
            let back: Vec<String> = serde_json::from_str(&j).unwrap();
            let shown: Vec<String> = v.iter().map(|s| terminal::text(s).into_owned()).collect();
            prop_assert_eq!(back, shown);
        }
    }
}
