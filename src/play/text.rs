//! Text forms every writer above the play layer shares: tables in
//! referee's style, and durations and points as people read them (text a
//! bot or a student controls is escaped by `crate::escape`). The writers
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(format_us(850.0), "850 µs");
        assert_eq!(format_us(12_300.0), "12.3 ms");
        assert_eq!(format_us(1_200_000.0), "1.20 s");
        assert_eq!(format_points(250.0), "250");
        assert_eq!(format_points(12.5), "12.5");
    }
}
