//! The timeout breaker: a graded bot that times out on K games in a row is
//! stopped, and its remaining games are recorded as timeout forfeits
//! without being played, instead of each costing the full time limit.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::play::record::GameRecord;
use crate::play::runner::{Feed, Next};
use crate::play::schedule::Pairing;
use crate::protocol::ForfeitReason;

/// Counts the graded bot's timeouts in a row, over every game of a grading
/// run (all opponents), in the order the games finish.
#[derive(Debug)]
pub(crate) struct Breaker {
    /// Timeouts in a row that stop the bot; 0 never stops it.
    limit: u32,
    run: AtomicU32,
    tripped: AtomicBool,
    skipped: AtomicU64,
}

impl Breaker {
    /// A breaker that trips after `limit` timeouts in a row (0: never).
    pub(crate) fn new(limit: u32) -> Breaker {
        Breaker {
            limit,
            run: AtomicU32::new(0),
            tripped: AtomicBool::new(false),
            skipped: AtomicU64::new(0),
        }
    }

    /// Takes a finished game of the bot named `name` into account.
    pub(crate) fn record(&self, r: &GameRecord, name: &str) {
        if self.limit == 0 {
            return;
        }
        let Some(index) = r.players.iter().position(|p| p == name) else {
            return;
        };
        let timed_out = r.forfeit.as_ref().is_some_and(|f| {
            // A program that never answers in time at its first move
            // (a `startup` forfeit past its deadline) costs the start-up
            // allowance every game: it counts like a timeout.
            let late_start = f.reason == ForfeitReason::Startup && f.overrun_us > 0;
            (f.reason == ForfeitReason::Timeout || late_start) && f.seat.index() == index
        });
        if timed_out {
            if self.run.fetch_add(1, Ordering::SeqCst) + 1 >= self.limit {
                self.tripped.store(true, Ordering::SeqCst);
            }
        } else {
            self.run.store(0, Ordering::SeqCst);
        }
    }

    /// Whether the bot has been stopped.
    pub(crate) fn tripped(&self) -> bool {
        self.tripped.load(Ordering::SeqCst)
    }

    /// Counts games left unplayed because the breaker tripped.
    pub(crate) fn skip(&self, n: u64) {
        self.skipped.fetch_add(n, Ordering::SeqCst);
    }

    /// Why grading stopped early, if it did.
    pub(crate) fn reason(&self) -> Option<String> {
        self.tripped().then(|| {
            format!(
                "the bot timed out on {} games in a row and was stopped; its {} remaining \
                 games were not played and count as timeout forfeits (--max-timeouts)",
                self.limit,
                self.skipped.load(Ordering::SeqCst)
            )
        })
    }

    /// The detail of an unplayed game's forfeit.
    pub(crate) fn detail(&self) -> String {
        format!(
            "not played: the bot had timed out on {} games in a row",
            self.limit
        )
    }
}

/// A fixed list of games that ends once the breaker trips.
pub(crate) struct BreakerFeed<'a> {
    pub(crate) pairings: &'a [Pairing],
    pub(crate) next: AtomicUsize,
    pub(crate) breaker: &'a Breaker,
    /// The index of the first game known to have settled the verdict
    /// (`usize::MAX`: none yet): no later game is started.
    pub(crate) settled: AtomicUsize,
}

impl Feed for BreakerFeed<'_> {
    fn next(&self) -> Next {
        if self.breaker.tripped() {
            return Next::Done;
        }
        let i = self.next.fetch_add(1, Ordering::SeqCst);
        if i > self.settled.load(Ordering::SeqCst) {
            return Next::Done;
        }
        match self.pairings.get(i) {
            Some(p) => Next::Play(p.clone()),
            None => Next::Done,
        }
    }

    fn remaining(&self) -> u64 {
        let taken = self.next.load(Ordering::SeqCst);
        self.pairings.len().saturating_sub(taken) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameKind, Seat};
    use crate::play::record::Termination;
    use crate::protocol::Forfeit;

    fn game(student_seat: Seat, forfeit: Option<ForfeitReason>) -> GameRecord {
        let mut players = ["optimal".to_string(), "optimal".to_string()];
        players[student_seat.index()] = "student".into();
        GameRecord {
            id: 0,
            game: GameKind::TicTacToe,
            players,
            seed: 0,
            opening: vec![],
            start: String::new(),
            moves: vec![],
            times_us: vec![],
            winner: None,
            termination: match forfeit {
                Some(r) => Termination::Forfeit(r),
                None => Termination::Normal,
            },
            forfeit: forfeit.map(|r| Forfeit::new(r, "x").located(student_seat, 1, "")),
            final_position: String::new(),
            client: None,
            format: Vec::new(),
            rules: Default::default(),
        }
    }

    #[test]
    fn trips_after_k_timeouts_in_a_row_only() {
        let b = Breaker::new(3);
        let t = |s| game(s, Some(ForfeitReason::Timeout));
        b.record(&t(Seat::One), "student");
        b.record(&t(Seat::Two), "student");
        // A game played in time resets the count; other forfeits too.
        b.record(&game(Seat::One, None), "student");
        b.record(&t(Seat::One), "student");
        b.record(&game(Seat::Two, Some(ForfeitReason::Illegal)), "student");
        b.record(&t(Seat::One), "student");
        b.record(&t(Seat::One), "student");
        assert!(!b.tripped());
        b.record(&t(Seat::Two), "student");
        assert!(b.tripped());
        assert!(b.reason().is_some_and(|r| r.contains("3 games in a row")));
    }

    #[test]
    fn late_starts_count_and_failed_starts_do_not() {
        let b = Breaker::new(2);
        let late = || {
            let mut r = game(Seat::One, Some(ForfeitReason::Startup));
            if let Some(f) = &mut r.forfeit {
                f.overrun_us = 1;
            }
            r
        };
        b.record(&game(Seat::One, Some(ForfeitReason::Startup)), "student");
        b.record(&late(), "student");
        assert!(!b.tripped());
        b.record(&late(), "student");
        assert!(b.tripped());
    }

    #[test]
    fn the_opponents_timeouts_do_not_count_and_zero_never_trips() {
        let b = Breaker::new(1);
        let mut r = game(Seat::One, Some(ForfeitReason::Timeout));
        if let Some(f) = &mut r.forfeit {
            f.seat = Seat::Two;
        }
        b.record(&r, "student");
        assert!(!b.tripped());
        let never = Breaker::new(0);
        for _ in 0..10 {
            never.record(&game(Seat::One, Some(ForfeitReason::Timeout)), "student");
        }
        assert!(!never.tripped() && never.reason().is_none());
    }
}
