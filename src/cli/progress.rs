//! Progress on the terminal: the [`Observer`] of the command line, by one
//! policy for every command: a bar on a terminal, a plain line every few
//! seconds otherwise (logs, CI), nothing when silenced (`--json`).

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use referee::play::Observer;

/// Writes `line` to stderr, ignoring failure: a closed stderr (the reader
/// of a pipe gone, as after Ctrl-C in `referee ... 2>&1 | tail`) must never
/// stop a run or keep it from stopping, as `eprintln!`'s panic would.
///
/// What it writes is shown as a terminal must show it
/// ([`referee::escape::terminal::text`]): notes carry bots' and students'
/// names, replies and stderr.
pub fn say(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", referee::escape::terminal::text(line));
}

/// The progress policy of the command line.
pub struct Progress {
    mode: Mode,
    state: Mutex<State>,
}

enum Mode {
    Bar(indicatif::ProgressBar),
    Lines {
        every: Duration,
    },
    /// Notes only: no bar, no timed lines.
    Notes,
    Quiet,
}

struct State {
    label: String,
    total: Option<u64>,
    done: u64,
    start_done: u64,
    started: Instant,
    last_line: Instant,
    /// `done` when the last line was printed.
    last_done: u64,
    status: String,
}

impl Progress {
    /// A bar when stderr is a terminal, lines every 5 s otherwise; nothing
    /// at all when `quiet`.
    pub fn new(quiet: bool) -> Progress {
        let mode = if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bar(indicatif::ProgressBar::hidden())
        } else {
            Mode::Lines {
                every: Duration::from_secs(5),
            }
        };
        Progress::with_mode(mode)
    }

    /// Plain lines every `every`, whatever stderr is (for `--rating-interval`
    /// style output and for tests).
    #[cfg(test)]
    pub(crate) fn lines(every: Duration) -> Progress {
        Progress::with_mode(Mode::Lines { every })
    }

    /// Only the notes a run sends (a match's line every `--rating-interval`
    /// games), one per line, with no bar and no timed progress lines.
    pub fn notes() -> Progress {
        Progress::with_mode(Mode::Notes)
    }

    fn with_mode(mode: Mode) -> Progress {
        Progress {
            mode,
            state: Mutex::new(State {
                label: String::new(),
                total: None,
                done: 0,
                start_done: 0,
                started: Instant::now(),
                last_line: Instant::now(),
                last_done: 0,
                status: String::new(),
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn line(s: &State) -> String {
        let secs = s.started.elapsed().as_secs_f64().max(1e-9);
        let rate = (s.done - s.start_done) as f64 / secs;
        // Slow steps (students) need decimals to show a rate at all.
        let rate_text = if rate < 10.0 {
            format!("{rate:.2}")
        } else {
            format!("{rate:.0}")
        };
        let mut text = match s.total {
            Some(total) => {
                let eta = if rate > 0.0 && total >= s.done {
                    format!("{:.0}s", (total - s.done) as f64 / rate)
                } else {
                    "?".into()
                };
                format!(
                    "referee: {}/{} {}, {rate_text}/s, {secs:.0}s elapsed, ETA {eta}",
                    s.done, total, s.label
                )
            }
            None => format!(
                "referee: {} {}, {rate_text}/s, {secs:.0}s elapsed",
                s.done, s.label
            ),
        };
        if !s.status.is_empty() {
            text.push_str(": ");
            text.push_str(&s.status);
        }
        text
    }
}

impl Observer for Progress {
    fn begin(&self, label: &str, total: Option<u64>, done: u64) {
        let mut s = self.state();
        s.label = label.to_string();
        s.total = total;
        s.done = done;
        s.start_done = done;
        s.started = Instant::now();
        s.last_line = Instant::now();
        s.last_done = done;
        s.status.clear();
        if let Mode::Bar(bar) = &self.mode {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            match total {
                Some(t) => bar.set_length(t),
                None => bar.unset_length(),
            }
            let template = if total.is_some() {
                "{bar:40} {pos}/{len} {prefix}  {per_sec}  {elapsed} elapsed, ETA {eta}  {msg}"
            } else {
                "{spinner} {pos} {prefix}  {per_sec}  {msg}"
            };
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar.set_prefix(referee::escape::terminal::line(label).into_owned());
            bar.set_position(done);
            bar.reset_eta();
        }
    }

    fn advance(&self, n: u64) {
        let mut s = self.state();
        s.done += n;
        match &self.mode {
            Mode::Bar(bar) => bar.inc(n),
            Mode::Lines { every } => {
                if s.last_line.elapsed() >= *every {
                    s.last_line = Instant::now();
                    s.last_done = s.done;
                    say(&Progress::line(&s));
                }
            }
            Mode::Notes | Mode::Quiet => {}
        }
    }

    fn tick(&self) {
        let mut s = self.state();
        if let Mode::Lines { every } = &self.mode {
            if s.last_line.elapsed() >= *every {
                s.last_line = Instant::now();
                s.last_done = s.done;
                say(&Progress::line(&s));
            }
        }
    }

    fn status(&self, text: &str) {
        let mut s = self.state();
        text.clone_into(&mut s.status);
        if let Mode::Bar(bar) = &self.mode {
            bar.set_message(referee::escape::terminal::line(text).into_owned());
        }
    }

    fn note(&self, text: &str) {
        match &self.mode {
            Mode::Bar(bar) => bar.suspend(|| say(&format!("referee: {text}"))),
            Mode::Lines { .. } | Mode::Notes => say(&format!("referee: {text}")),
            Mode::Quiet => {}
        }
    }

    fn end(&self) {
        let s = self.state();
        match &self.mode {
            Mode::Bar(bar) => bar.finish_and_clear(),
            Mode::Lines { .. } if s.done > s.start_done && s.done > s.last_done => {
                say(&Progress::line(&s))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_tell_count_rate_eta_and_status() {
        let p = Progress::lines(Duration::from_secs(3600));
        p.begin("games", Some(10), 2);
        p.advance(3);
        p.status("+35 Elo");
        let line = Progress::line(&p.state());
        assert!(line.starts_with("referee: 5/10 games, "), "{line}");
        assert!(
            line.contains("ETA") && line.ends_with(": +35 Elo"),
            "{line}"
        );
        p.end();
    }
}
