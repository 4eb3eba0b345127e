//! Output: everything referee shows people, in one place. Libraries return
//! data and report progress through an [`Observer`]; the command line turns
//! data into tables with the functions here, writes CSV with [`csv_field`],
//! shows durations with [`format_us`], and draws progress with [`Progress`]
//! (a bar on a terminal, a line every few seconds otherwise, nothing with
//! `--json`).

pub mod feedback;
pub mod grade;
pub mod matches;
mod progress;
pub mod standings;

pub use progress::{say, Log, Observer, Progress, Silent};

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

/// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a
/// line break, with quotes doubled. Line breaks are kept inside the quotes.
pub(crate) fn csv_field(s: &str) -> String {
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
    }
}
