//! Text forms every writer above the play layer shares: tables in
//! referee's style, durations and points as people read them, CSV fields
//! safe for spreadsheets, and bot-controlled text made visible. The writers
//! themselves live with their owners (a tournament's standings in
//! `tournament::standings`, a match's text in `matches::output`, grading's
//! files in `grade`); drawing progress on a terminal is the command line's.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};

/// A table in referee's style, with this header.
pub(crate) fn table<S: ToString>(header: impl IntoIterator<Item = S>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(
        header
            .into_iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>(),
    );
    t
}

/// A duration in µs for tables: `850 µs`, `12.3 ms`, `1.20 s`.
pub fn format_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// Points as people write them: `250`, `12.5`.
pub fn format_points(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

/// `text` with its control characters other than line breaks and tabs
/// (ESC above all, which starts a terminal's escape sequences) written as
/// `\x1b`: bot-controlled text (stderr, a line it sent) shown in files a
/// person opens in a terminal or a spreadsheet cannot act on either.
pub(crate) fn visible(text: &str) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() && !matches!(c, '\n' | '\r' | '\t') {
            let n = c as u32;
            if n < 0x100 {
                out.push_str(&format!("\\x{n:02x}"));
            } else {
                out.push_str(&format!("\\u{{{n:x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a
/// line break, with quotes doubled. Line breaks are kept inside the quotes.
/// Control characters are made [`visible`], and a field a spreadsheet
/// would run as a formula (`=`, `+`, `-`, `@` first, not a number) gets a
/// leading `'`: student folder names and bots' stderr reach these files.
pub(crate) fn csv_field(s: &str) -> String {
    let mut s = visible(s);
    if s.starts_with(['=', '+', '-', '@']) && s.trim().parse::<f64>().is_err() {
        s.insert(0, '\'');
    }
    let s = s.as_str();
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV line (with its newline) from its fields.
pub(crate) fn csv_line<S: AsRef<str>>(fields: impl IntoIterator<Item = S>) -> String {
    let mut line = fields
        .into_iter()
        .map(|f| csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_csv() {
        assert_eq!(format_us(850.0), "850 µs");
        assert_eq!(format_us(12_300.0), "12.3 ms");
        assert_eq!(format_us(1_200_000.0), "1.20 s");
        assert_eq!(format_points(250.0), "250");
        assert_eq!(format_points(12.5), "12.5");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_line(["a", "b,c"]), "a,\"b,c\"\n");
        assert_eq!(csv_field("red\x1b[31m\x07"), "red\\x1b[31m\\x07");
        assert_eq!(csv_field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_field("-1.5"), "-1.5");
        assert_eq!(visible("tab\tnew\nline"), "tab\tnew\nline");
    }
}
