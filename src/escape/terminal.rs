//! Text for a terminal, a log or a plain text file.
//!
//! A terminal acts on some characters instead of showing them: ESC starts
//! CSI sequences (colours, cursor moves, clearing the screen) and OSC ones
//! (a window title, a hyperlink, a clipboard write), BEL rings, BS and CR
//! move back over what was shown, and U+009B is CSI on its own on some
//! terminals. Bidi embeddings, overrides and isolates make text read in
//! another order than it is written (a "Trojan Source" name). All of these
//! are written here as visible escapes: `\x1b`, `\r`, `\u{202e}`.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` acts on a terminal, or reorders what it shows, rather than
/// being shown: the C0 controls (line feed and tab among them), DEL, the
/// C1 controls, the bidi marks, embeddings, overrides and isolates, and
/// the Unicode line and paragraph separators.
pub fn is_special(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
                // Invisible: zero widths, word joiners, the byte-order mark
                // (which readers of a CSV file or a terminal drop or hide).
                | '\u{200b}'..='\u{200d}'
                | '\u{2060}'..='\u{2064}'
                | '\u{feff}'
        )
}

/// Writes `c` as its escape: `\n`, `\r`, `\t`, `\x1b` below U+0100,
/// `\u{202e}` above.
fn push_escape(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x100 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `s` with every character for which `escaped` holds written as its
/// escape; borrowed when there is none (the common case costs no copy).
fn escape_where(s: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some((first, _)) = s.char_indices().find(|&(_, c)| escaped(c)) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if escaped(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Text of several lines (a stderr tail, a log): every special character
/// ([`is_special`]) visible, except the line feeds and tabs that lay it
/// out. A CR is shown (`\r`): on a terminal it would move back over the
/// line and hide what came before it.
///
/// ```
/// use referee::escape::terminal;
///
/// assert_eq!(terminal::text("ok\n\x1b]0;owned\x07\r"), "ok\n\\x1b]0;owned\\x07\\r");
/// assert_eq!(terminal::text("abc\u{202e}fed"), "abc\\u{202e}fed");
/// ```
pub fn text(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| is_special(c) && c != '\n' && c != '\t')
}

/// One line (a name, a reply, a table cell): every special character
/// visible, line feeds and tabs included, so nothing it holds starts
/// another line.
///
/// ```
/// assert_eq!(referee::escape::terminal::line("a\nb\tc"), "a\\nb\\tc");
/// ```
pub fn line(s: &str) -> Cow<'_, str> {
    escape_where(s, is_special)
}

/// Bytes that may not be UTF-8 (what a program wrote) as text of several
/// lines: the valid parts as [`text`], each byte of an invalid sequence as
/// `\xff` (rather than a replacement character, so that what was sent can
/// be told).
pub fn bytes_text(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    for chunk in raw.utf8_chunks() {
        out.push_str(&text(chunk.valid()));
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

/// How much of a reply [`reply`] keeps, in characters.
pub const REPLY_CHARS: usize = 200;

/// A raw line a bot sent, as kept in records and quoted in messages
/// (`received "..."`): printable ASCII as itself, `\` and `"` escaped,
/// `\n`, `\r`, `\t`, and every other byte (controls, non-ASCII, invalid
/// UTF-8) as `\xNN`; cut with `…` after `max_chars` characters. Pure
/// ASCII, so it reads the same in any file and on any terminal.
///
/// ```
/// use referee::escape::terminal;
///
/// assert_eq!(terminal::reply(b"4\x1b[2J\"\xff"), "4\\x1b[2J\\\"\\xff");
/// ```
pub fn reply(raw: &[u8]) -> String {
    let mut out = String::new();
    for &b in raw {
        if out.len() >= REPLY_CHARS {
            out.push('…');
            break;
        }
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\x{b:02x}");
            }
        }
    }
    out
}

/// One line of a program's printed output with its whitespace marked, for
/// a diff a person compares by eye: `·` for each trailing space, `→` for a
/// tab, `⏎` where the line lacks its newline (the last one), and every
/// other special character visible as in [`line`]. A final `\n` (or
/// `\r\n`) is the line's end and is not shown.
///
/// ```
/// use referee::escape::terminal;
///
/// assert_eq!(terminal::marked("a b  \n"), "a b··");
/// assert_eq!(terminal::marked("a\tb\t\n"), "a→b→");
/// assert_eq!(terminal::marked("end\x1b[2J"), "end\\x1b[2J⏎");
/// ```
pub fn marked(s: &str) -> String {
    let (body, newline) = match s.strip_suffix('\n') {
        Some(b) => (b.strip_suffix('\r').unwrap_or(b), true),
        None => (s, false),
    };
    let kept = body.trim_end_matches([' ', '\t']);
    let mut out = String::with_capacity(body.len() + 4);
    for c in kept.chars() {
        match c {
            '\t' => out.push('→'),
            c if is_special(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    for c in body[kept.len()..].chars() {
        out.push(if c == '\t' { '→' } else { '·' });
    }
    if !newline {
        out.push('⏎');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_the_documented_ones() {
        assert_eq!(text("plain é ✓"), "plain é ✓");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(
            text("\x00\x07\x08\x7f\u{85}\u{9b}"),
            "\\x00\\x07\\x08\\x7f\\x85\\x9b"
        );
        assert_eq!(text("a\r\nb"), "a\\r\nb");
        assert_eq!(line("a\r\nb"), "a\\r\\nb");
        assert_eq!(
            line("\u{202a}\u{202e}\u{2066}\u{2069}\u{200f}\u{2028}"),
            "\\u{202a}\\u{202e}\\u{2066}\\u{2069}\\u{200f}\\u{2028}"
        );
        assert_eq!(bytes_text(b"ok\xff\xfe\n\x1b"), "ok\\xff\\xfe\n\\x1b");
        assert_eq!(reply(b"a\tb\x00\xff"), "a\\tb\\x00\\xff");
        let long = vec![b'x'; 1000];
        assert_eq!(reply(&long).chars().count(), 201);
    }
}

#[cfg(test)]
pub(crate) mod props {
    //! Whatever a bot sends, nothing a terminal acts on gets through.
    use super::*;
    use proptest::prelude::*;

    /// Hostile text: every character class a terminal acts on, mixed with
    /// ordinary text, markup and long runs.
    pub(crate) fn hostile() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            any::<char>().prop_map(String::from),
            (0u32..0x100).prop_map(|n| char::from_u32(n).map(String::from).unwrap_or_default()),
            Just("\x1b[2J\x1b[31m".to_string()),
            Just("\x1b]0;owned\x07".to_string()),
            Just("\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\".to_string()),
            Just("\u{9b}31m\u{9d}0;t\u{9c}".to_string()),
            Just("\u{202e}gnp.exe\u{202c}\u{2066}\u{2069}".to_string()),
            Just("\r\n\r".to_string()),
            Just("<script>alert(1)</script>".to_string()),
            Just("[x](javascript:alert(1))![i](http://x/y.png)".to_string()),
            Just("``` ``nested`` `".to_string()),
            Just("&lt;b&gt; &amp; &#60;".to_string()),
            Just("=HYPERLINK(\"http://x\")".to_string()),
            "[a-z ]{0,20}",
            "x{200,3000}",
        ];
        prop::collection::vec(piece, 0..12).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn text_keeps_only_line_feeds_and_tabs(s in hostile()) {
            let t = text(&s);
            prop_assert!(t.chars().all(|c| !is_special(c) || c == '\n' || c == '\t'));
            // Nothing is lost: the lines are the input's lines.
            prop_assert_eq!(t.matches('\n').count(), s.matches('\n').count());
        }

        #[test]
        fn line_keeps_nothing_special(s in hostile()) {
            let l = line(&s);
            prop_assert!(l.chars().all(|c| !is_special(c)));
            prop_assert_eq!(line(&l), l.clone(), "escaping is idempotent");
            prop_assert!(marked(&s).chars().all(|c| !is_special(c)));
        }

        #[test]
        fn bytes_of_any_kind_come_out_printable(raw in prop::collection::vec(any::<u8>(), 0..600)) {
            let t = bytes_text(&raw);
            prop_assert!(t.chars().all(|c| !is_special(c) || c == '\n' || c == '\t'));
            let r = reply(&raw);
            prop_assert!(r.trim_end_matches('…').bytes().all(|b| (0x20..0x7f).contains(&b)));
            prop_assert!(r.chars().count() <= 205);
            if raw.len() <= 50 {
                prop_assert!(!r.ends_with('…'));
            }
        }
    }
}
