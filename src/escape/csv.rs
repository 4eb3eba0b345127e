//! CSV files (standings, gradebooks, a league's standings): written by the
//! `csv` crate, one record per line, and no cell a spreadsheet runs.
//!
//! A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` as a
//! formula (`=HYPERLINK(...)` sends data away, `=cmd|...` ran programs in
//! old Excel), and some also after a leading tab or CR. Such a cell, unless
//! it is a plain number (`-1.5`), gets a leading `'`, which spreadsheets
//! read as "text" and do not show; spaces before the character count as
//! nothing. Line breaks and the characters a terminal acts on are shown as
//! escapes ([`super::terminal::line`]): a student's folder name or a bot's
//! stderr cannot start another record, even for a reader that splits the
//! file at newlines rather than parsing its quotes.

use std::borrow::Cow;

use super::terminal;

/// Whether `s` is a plain decimal number (`12`, `-1.5`, `+3e-2`), or
/// Rust's text of an unbounded one (`-inf`, `NaN`, which data tools read
/// as numbers): a cell that no spreadsheet runs.
fn is_number(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    if ["inf", "infinity", "nan"]
        .iter()
        .any(|w| s.eq_ignore_ascii_case(w))
    {
        return true;
    }
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(int) && digits(frac) && !(int.is_empty() && frac.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// One cell's text: a leading `'` when a spreadsheet would run it as a
/// formula, and line breaks and special characters as visible escapes.
///
/// ```
/// use referee::escape::csv;
///
/// assert_eq!(csv::cell("=HYPERLINK(\"http://x\")"), "'=HYPERLINK(\"http://x\")");
/// assert_eq!(csv::cell("-1.5"), "-1.5");
/// assert_eq!(csv::cell("two\nlines"), "two\\nlines");
/// ```
pub fn cell(s: &str) -> Cow<'_, str> {
    let lead = s.trim_start_matches(' ');
    let formula = lead.starts_with(['=', '+', '-', '@', '\t', '\r']) && !is_number(lead.trim());
    let shown = terminal::line(s);
    if formula {
        Cow::Owned(format!("'{shown}"))
    } else {
        shown
    }
}

/// One CSV record with its newline, each field through [`cell`] and quoted
/// by the `csv` crate where it must be (a comma, a quote).
///
/// ```
/// use referee::escape::csv;
///
/// assert_eq!(csv::line(["a", "b,c", "say \"hi\""]), "a,\"b,c\",\"say \"\"hi\"\"\"\n");
/// ```
pub fn line<I, S>(fields: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    let cells: Vec<String> = fields
        .into_iter()
        .map(|f| cell(f.as_ref()).into_owned())
        .collect();
    // Writing to memory cannot fail; a record of no fields is an empty line.
    let _ = w.write_record(&cells);
    let bytes = w.into_inner().unwrap_or_default();
    let mut text = String::from_utf8(bytes).unwrap_or_default();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod props {
    use super::*;
    use crate::escape::terminal::is_special;
    use proptest::prelude::*;

    #[test]
    fn numbers_stay_numbers_and_formulas_do_not() {
        for n in [
            "0", "-1", "+2.5", "-.5", "1e9", "-3E-2", "12.", "-inf", "NaN",
        ] {
            assert!(is_number(n), "{n}");
            assert_eq!(cell(n), n);
        }
        for f in [
            "=1+1",
            "+1+1",
            "-1+cmd|' /C calc'!A0",
            "@SUM(A1)",
            "\t=1",
            "\r=1",
            "  =1",
            "-",
            "-infx",
            "+e5",
            "-1e",
            "-.",
        ] {
            assert!(cell(f).starts_with('\''), "{f}");
        }
    }

    fn fields() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(
            prop_oneof![
                crate::escape::terminal::props::hostile(),
                "[=+@\\-\t\r][ -~]{0,10}",
                "[,\"\r\n a]{0,8}",
            ],
            1..6,
        )
    }

    proptest! {
        #[test]
        fn one_record_per_line_that_reads_back(cells in fields()) {
            let text = line(&cells);
            prop_assert_eq!(text.matches('\n').count(), 1);
            prop_assert!(!text.contains('\r'));
            prop_assert!(text.chars().all(|c| !is_special(c) || c == '\n'));
            let mut r = ::csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
            let rec = r.records().next().unwrap().unwrap();
            prop_assert_eq!(rec.len(), cells.len());
            for (got, sent) in rec.iter().zip(&cells) {
                let want = cell(sent);
                prop_assert_eq!(got, want.as_ref());
                let lead = got.trim_start_matches(' ');
                prop_assert!(
                    !lead.starts_with(['=', '+', '-', '@']) || is_number(lead.trim()),
                    "{} runs as a formula", got
                );
            }
        }
    }
}
