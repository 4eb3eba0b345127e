//! Text inside Markdown: the feedback pages, Gradescope's `results.json`
//! output and the other graders' copies of the page.
//!
//! Bot- and student-controlled text goes into a page in one of three
//! ways, and in none can it make a link, an image, emphasis, a heading, a
//! list, a new table row or cell, or raw HTML:
//! - [`text`]: running text, backslash-escaped wherever Markdown could
//!   read it (an escaped ASCII punctuation character is always literal),
//!   line breaks shown as `\n`; safe in a table cell and at the start of
//!   a line;
//! - [`code`]: an inline code span, whose content Markdown never reads,
//!   fenced by more backticks than the longest run inside it;
//! - [`block`]: a fenced code block for text of several lines (a stderr
//!   tail, a diff), fenced the same way.
//!
//! All three show the characters a terminal acts on as escapes
//! ([`super::terminal`]): a page is also read with `cat`.

use super::terminal;

/// The characters [`text`] escapes wherever they are: each starts or
/// ends emphasis, code, a link or an image, raw HTML, an entity, a table
/// cell, strikethrough, an ATX heading's closing run, math (`$` on
/// GitHub), an email autolink, or is the escape itself.
const ALWAYS: &[char] = &[
    '\\', '`', '*', '_', '[', ']', '<', '>', '&', '|', '~', '#', '@', '$',
];

/// Running text, escaped with backslashes (CommonMark lets any ASCII
/// punctuation be, and an escaped one is always literal) where Markdown
/// could read it: every character of [`ALWAYS`]; the first character when
/// it is punctuation (a list, a quote, a heading); the `.` or `)` after
/// leading digits (an ordered list); the `:` of `://` and the `.` of
/// `www.` (GFM's autolinks). So `*bold*`, `[a](javascript:x)`, `![i](u)`,
/// `<b>`, `&lt;`, `# h`, `| cell`, `1. list`, `https://x` and `www.x.org`
/// are all shown as typed, and ordinary text (`bot.py`, `it failed:
/// exit 1`) reads as it is. Line breaks and the other characters a
/// terminal acts on are visible escapes ([`terminal::line`]), so the text
/// stays on its line (a table row, a list item).
///
/// ```
/// use referee::escape::markdown;
///
/// assert_eq!(markdown::text("**hi** <b>"), r"\*\*hi\*\* \<b\>");
/// assert_eq!(markdown::text("[x](javascript:y)"), r"\[x\](javascript:y)");
/// assert_eq!(markdown::text("a|b\nc"), r"a\|b\\nc");
/// assert_eq!(markdown::text("1. see https://www.x.org"), r"1\. see https\://www\.x.org");
/// assert_eq!(markdown::text("bot.py: exit 1"), "bot.py: exit 1");
/// ```
pub fn text(s: &str) -> String {
    let s = terminal::line(s);
    let b = s.as_bytes();
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.char_indices() {
        let escape = ALWAYS.contains(&c)
            || (i == 0 && c.is_ascii_punctuation())
            || (digits > 0 && i == digits && matches!(c, '.' | ')'))
            || (c == ':' && b[i + 1..].starts_with(b"//"))
            || (c == '.' && i >= 3 && b[i - 3..i].eq_ignore_ascii_case(b"www"));
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in s.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// An inline code span holding `s` exactly (a move, a position, a line a
/// bot sent): fenced by one backtick more than the longest run inside it,
/// padded with a space where the text starts or ends with a backtick or
/// a space (CommonMark strips one such space from each side), on one line
/// ([`terminal::line`]). Not for table cells: a `|` inside a code span
/// still splits a GFM table's cell; use [`text`] there.
///
/// ```
/// use referee::escape::markdown;
///
/// assert_eq!(markdown::code("e4"), "`e4`");
/// assert_eq!(markdown::code("a``b"), "```a``b```");
/// assert_eq!(markdown::code("`x"), "`` `x ``");
/// ```
pub fn code(s: &str) -> String {
    if s.is_empty() {
        // No code span is empty: this one shows one space.
        return "` `".to_string();
    }
    let s = terminal::line(s);
    let fence = "`".repeat(longest_run(&s, '`') + 1);
    // Text of spaces alone is kept whole by CommonMark.
    let all_spaces = s.chars().all(|c| c == ' ');
    let pad = if !all_spaces && (s.starts_with(['`', ' ']) || s.ends_with(['`', ' '])) {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// A fenced code block holding `s` (a stderr tail, a diff, a command), with
/// its trailing whitespace trimmed and a newline after the closing fence:
/// fenced by at least three backticks and one more than the longest run
/// inside, so that no line of it can close the block, with the characters
/// a terminal acts on visible ([`terminal::text`]).
///
/// ```
/// use referee::escape::markdown;
///
/// assert_eq!(markdown::block("a\n```\nb\n"), "````text\na\n```\nb\n````\n");
/// ```
pub fn block(s: &str) -> String {
    let s = terminal::text(s);
    let s = s.trim_end();
    let fence = "`".repeat(longest_run(s, '`').max(2) + 1);
    format!("{fence}text\n{s}\n{fence}\n")
}

#[cfg(test)]
mod props {
    //! A small reader of the Markdown constructs that matter, enough to
    //! check that escaped text holds none: it finds every character that
    //! CommonMark could read as markup, not escaped by a backslash.
    use super::*;
    use crate::escape::terminal::is_special;
    use crate::escape::terminal::props::hostile;
    use proptest::prelude::*;

    /// The characters of `t` (output of [`text`]) that are not
    /// backslash-escaped, with their byte offsets; `None` when a backslash
    /// escapes no punctuation (it would then be read as itself, and could
    /// hide what follows).
    fn unescaped(t: &str) -> Option<Vec<(usize, char)>> {
        let mut out = Vec::new();
        let mut chars = t.char_indices();
        while let Some((i, c)) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some((_, n)) if n.is_ascii_punctuation() => {}
                    _ => return None,
                }
            } else {
                out.push((i, c));
            }
        }
        Some(out)
    }

    /// Whether `t` holds Markdown a renderer could read as markup.
    fn markup(t: &str) -> Option<String> {
        let Some(plain) = unescaped(t) else {
            return Some("a lone backslash".into());
        };
        if let Some((_, c)) = plain.iter().find(|(_, c)| ALWAYS.contains(c)) {
            return Some(format!("{c:?} unescaped"));
        }
        if plain
            .first()
            .is_some_and(|&(i, c)| i == 0 && c.is_ascii_punctuation())
        {
            return Some("a leading punctuation character".into());
        }
        // The unescaped characters in a row, as a renderer sees them.
        let seen: String = plain
            .iter()
            .enumerate()
            .map(|(k, &(i, c))| {
                // A character after an escaped one does not continue a run.
                let joined = k == 0 || plain[k - 1].0 + plain[k - 1].1.len_utf8() == i;
                if joined {
                    c.to_string()
                } else {
                    format!("\u{0}{c}")
                }
            })
            .collect();
        let lower = seen.to_ascii_lowercase();
        if lower.contains("://") || lower.contains("www.") {
            return Some("an autolink".into());
        }
        let digits = t.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && matches!(t.as_bytes().get(digits), Some(b'.' | b')')) {
            return Some("an ordered list".into());
        }
        None
    }

    /// The inside of an inline code span, as CommonMark reads it: the
    /// opening run of backticks, then the first run of the same length.
    fn read_code_span(t: &str) -> Option<String> {
        let open = t.len() - t.trim_start_matches('`').len();
        let rest = &t[open..];
        let fence = "`".repeat(open);
        let mut from = 0;
        while let Some(i) = rest[from..].find(&fence) {
            let at = from + i;
            let run = rest[at..].len() - rest[at..].trim_start_matches('`').len();
            if run == open {
                let inner = &rest[..at];
                // One space is stripped from each side when both have one
                // and the content is not all spaces.
                let strip = inner.len() >= 2
                    && inner.starts_with(' ')
                    && inner.ends_with(' ')
                    && !inner.chars().all(|c| c == ' ');
                let inner = if strip {
                    &inner[1..inner.len() - 1]
                } else {
                    inner
                };
                return (at + run == rest.len()).then(|| inner.to_string());
            }
            from = at + run;
        }
        None
    }

    proptest! {
        #[test]
        fn text_leaves_no_markup_and_one_line(s in hostile()) {
            let t = text(&s);
            prop_assert_eq!(markup(&t), None, "{}", t);
            prop_assert!(!t.contains(['\n', '\r']));
            prop_assert!(t.chars().all(|c| !is_special(c)));
        }

        #[test]
        fn a_code_span_holds_exactly_its_text(s in hostile()) {
            let c = code(&s);
            prop_assert!(!c.contains(['\n', '\r']));
            let want = if s.is_empty() { " ".to_string() } else { terminal::line(&s).into_owned() };
            prop_assert_eq!(read_code_span(&c), Some(want), "{}", c);
        }

        #[test]
        fn no_line_of_a_block_closes_it(s in hostile()) {
            let b = block(&s);
            let lines: Vec<&str> = b.lines().collect();
            let fence = lines[0].trim_end_matches("text");
            prop_assert!(fence.len() >= 3 && fence.chars().all(|c| c == '`'));
            prop_assert_eq!(*lines.last().unwrap(), fence);
            for l in &lines[1..lines.len() - 1] {
                let run = l.trim_start().len() - l.trim_start().trim_start_matches('`').len();
                prop_assert!(run < fence.len(), "{} closes {}", l, fence);
            }
            prop_assert!(b.chars().all(|c| !is_special(c) || c == '\n' || c == '\t'));
        }
    }
}
