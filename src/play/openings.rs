//! Opening suites: a file of start positions, one per line, that a
//! tournament (`openings = "FILE"`) or a match (`--openings FILE`) plays
//! instead of, or before, its random plies.
//!
//! Each line is either a **position text** (the game's wire format, e.g.
//! `X...O....` in tic-tac-toe), or a **move list** from the start in the
//! game's notation (`4 4, 4 0` in UTTT, `A4 B0` in Notakto), as
//! `referee judge` reads it. `#` starts a comment (to the end of the line);
//! blank lines are skipped. Every line is checked before any game starts: a
//! line that is neither, an illegal move, a position of another number of
//! boards or an opening that already ends the game is an error naming
//! `file:line`.
//!
//! A schedule's round *r* (pair number / pairs per round; in a match, the
//! pair number) plays opening *r* of the suite, wrapping around at its end,
//! and both games of a pair play it, seats swapped. The suite is used in
//! file order, or shuffled once by the seed. A move-list opening is
//! recorded as the game's first moves (`opening` in games.jsonl, from the
//! usual start); a position opening becomes the game's `start`.

use std::any::Any;
use std::fmt;
use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;

use crate::game::{Game, GameKind, GameOptions};

/// Tag mixed into the seed that shuffles a suite.
const SHUFFLE_TAG: u64 = 0x7375_6974_6573;

/// A suite problem, worded as `file:line: what` (or `file: what`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct OpeningsError(pub String);

/// One opening: the start position and the moves played from it before
/// the bots take over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Opening<G: Game> {
    /// The position the game starts from.
    pub start: G,
    /// Moves forced on both bots from `start`.
    pub moves: Vec<G::Move>,
}

/// A checked opening suite.
pub struct Openings {
    path: PathBuf,
    sha256: String,
    shuffled: bool,
    kind: GameKind,
    /// The suite's line numbers, by opening.
    lines: Vec<usize>,
    /// The opening each round plays, as indices into the suite.
    order: Vec<usize>,
    /// The openings, a `Vec<Opening<G>>` of the suite's game.
    parsed: Box<dyn Any + Send + Sync>,
}

impl fmt::Debug for Openings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Openings")
            .field("path", &self.path)
            .field("game", &self.kind)
            .field("openings", &self.lines.len())
            .field("shuffled", &self.shuffled)
            .finish()
    }
}

/// The largest openings file read: a suite is at most some thousands of
/// short lines.
const MAX_SUITE: u64 = 16 << 20;

/// Reads a suite file whole, at most [`MAX_SUITE`] bytes of it.
fn read_suite(path: &Path) -> Result<Vec<u8>, OpeningsError> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| OpeningsError(format!("{}: cannot read it: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_SUITE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| OpeningsError(format!("{}: cannot read it: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_SUITE {
        return Err(OpeningsError(format!(
            "{}: larger than {} MiB, so not read as an openings suite (a suite is a few \
             thousand lines at most; is it the right file?)",
            path.display(),
            MAX_SUITE >> 20
        )));
    }
    Ok(bytes)
}

impl Openings {
    /// Reads and checks the suite at `path` for game `kind` with `options`;
    /// `shuffle` orders it by `seed` instead of file order.
    pub fn load(
        kind: GameKind,
        options: &GameOptions,
        path: &Path,
        shuffle: bool,
        seed: u64,
    ) -> Result<Openings, OpeningsError> {
        // Capped: `--openings /dev/zero` must not fill memory.
        let bytes = read_suite(path)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| OpeningsError(format!("{}: not UTF-8 text", path.display())))?;
        crate::with_game!(kind, G => Openings::parse::<G>(path, &text, options, shuffle, seed))
    }

    /// Checks the suite `text` (read from `path`, named in messages).
    pub(crate) fn parse<G: Game>(
        path: &Path,
        text: &str,
        options: &GameOptions,
        shuffle: bool,
        seed: u64,
    ) -> Result<Openings, OpeningsError> {
        let mut openings: Vec<Opening<G>> = Vec::new();
        let mut lines = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let o = parse_line::<G>(line, options)
                .map_err(|e| OpeningsError(format!("{}:{}: {e}", path.display(), i + 1)))?;
            openings.push(o);
            lines.push(i + 1);
        }
        if openings.is_empty() {
            return Err(OpeningsError(format!(
                "{}: no openings (every line is blank or a # comment)",
                path.display()
            )));
        }
        let mut order: Vec<usize> = (0..openings.len()).collect();
        if shuffle {
            order.shuffle(&mut crate::seed::rng(crate::seed::derive(
                seed,
                &[SHUFFLE_TAG],
            )));
        }
        let sha256 = {
            use sha2::Digest;
            format!("{:x}", sha2::Sha256::digest(text.as_bytes()))
        };
        Ok(Openings {
            path: path.to_path_buf(),
            sha256,
            shuffled: shuffle,
            kind: G::KIND,
            lines,
            order,
            parsed: Box::new(openings),
        })
    }

    /// SHA-256 of its text: a run folder keeps it, so that a resumed run
    /// refuses a suite that changed.
    pub(crate) fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The suite's file name, without its folder (as the report shows it).
    pub(crate) fn file_name(&self) -> String {
        self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Whether it is played shuffled (by the seed) rather than in file order.
    pub(crate) fn shuffled(&self) -> bool {
        self.shuffled
    }

    /// Number of openings.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The suite line that round `round` plays.
    #[cfg(test)]
    pub(crate) fn line_of(&self, round: u64) -> usize {
        self.lines[self.index(round)]
    }

    fn index(&self, round: u64) -> usize {
        self.order[(round % self.order.len() as u64) as usize]
    }

    /// The opening of round `round`, if the suite is of game `G`.
    pub(crate) fn get<G: Game>(&self, round: u64) -> Option<&Opening<G>> {
        let all = self.parsed.downcast_ref::<Vec<Opening<G>>>()?;
        all.get(self.index(round))
    }
}

/// One line of a suite: a position, or moves from the start.
fn parse_line<G: Game>(line: &str, options: &GameOptions) -> Result<Opening<G>, String> {
    let start = G::start(options);
    let as_position = line.parse::<G>();
    if let Ok(pos) = as_position {
        if pos.options() != start.options() {
            return Err(format!(
                "a position of {}, but this run plays {}",
                G::describe_options(&pos.options()),
                G::describe_options(&start.options())
            ));
        }
        if pos.is_over() {
            return Err(format!("the game is already over in position {pos}"));
        }
        return Ok(Opening {
            start: pos,
            moves: Vec::new(),
        });
    }
    let texts = G::split_moves(line).map_err(|e| e.to_string())?;
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(texts.len());
    for (i, m) in texts.iter().enumerate() {
        let at = |why: String| format!("move {} (index {i}) '{m}': {why}", i + 1);
        let mv = match G::parse_move(m) {
            Ok(mv) => mv,
            // Not even the first word is a move: say what both readings
            // found wrong.
            Err(e) if i == 0 => {
                let p = as_position.err().map_or(String::new(), |e| e.to_string());
                return Err(format!("neither a position ({p}) nor a move list ({e})"));
            }
            Err(e) => return Err(at(e.to_string())),
        };
        pos.play(mv).map_err(|e| at(e.reason))?;
        if pos.is_over() {
            return Err(at(
                "it ends the game (an opening must leave a game to play)".into(),
            ));
        }
        moves.push(mv);
    }
    Ok(Opening { start, moves })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Notakto, TicTacToe, Uttt};

    fn parse<G: Game>(text: &str) -> Result<Openings, OpeningsError> {
        Openings::parse::<G>(Path::new("s.txt"), text, &GameOptions::default(), false, 1)
    }

    #[test]
    fn positions_move_lists_comments_and_blank_lines() {
        let o =
            parse::<TicTacToe>("# a suite\n\n4 0   # centre, corner\nX...O....\n  8\n").unwrap();
        assert_eq!(o.len(), 3);
        let a = o.get::<TicTacToe>(0).unwrap();
        assert_eq!(a.start, TicTacToe::new());
        assert_eq!(a.moves.len(), 2);
        let b = o.get::<TicTacToe>(1).unwrap();
        assert_eq!(b.start.to_string(), "X...O....");
        assert!(b.moves.is_empty());
        // Rounds wrap around the suite; the line numbers are the file's.
        assert_eq!(o.get::<TicTacToe>(3), o.get::<TicTacToe>(0));
        assert_eq!((o.line_of(0), o.line_of(1), o.line_of(5)), (3, 4, 5));
        // A suite of one game is not one of another.
        assert!(o.get::<Uttt>(0).is_none());
        let u = parse::<Uttt>("4 4, 4 0\n4 4 4 0\n").unwrap();
        assert_eq!(u.get::<Uttt>(0).unwrap().moves.len(), 2);
        let n = parse::<Notakto>("A4 B0\n........./....X..../.........\n").unwrap();
        assert_eq!(n.get::<Notakto>(1).unwrap().start.ply(), 1);
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = |g: &str, text: &str| -> String {
            match g {
                "ttt" => parse::<TicTacToe>(text).unwrap_err().0,
                "notakto" => parse::<Notakto>(text).unwrap_err().0,
                _ => parse::<Uttt>(text).unwrap_err().0,
            }
        };
        let m = e("ttt", "4\n\n4 4\n");
        assert!(m.starts_with("s.txt:3: move 2 (index 1) '4':"), "{m}");
        let m = e("ttt", "0\nhello\n");
        assert!(m.starts_with("s.txt:2: neither a position ("), "{m}");
        let m = e("ttt", "0 3 1 4\n0 3 1 4 2\n");
        assert!(
            m.starts_with("s.txt:2: move 5 (index 4) '2': it ends the game"),
            "{m}"
        );
        let m = e("ttt", "XXXOO....\n");
        assert!(m.starts_with("s.txt:1: the game is already over"), "{m}");
        let m = e("notakto", "........./.........\n");
        assert!(
            m.starts_with("s.txt:1: a position of 2 boards, but this run plays 3 boards"),
            "{m}"
        );
        let m = e("uttt", "4 4, 4 9\n");
        assert!(m.starts_with("s.txt:1: move 2 (index 1)"), "{m}");
        let m = e("ttt", "# nothing\n\n");
        assert_eq!(m, "s.txt: no openings (every line is blank or a # comment)");
        let m = Openings::load(
            GameKind::Uttt,
            &GameOptions::default(),
            Path::new("/no/such"),
            false,
            1,
        )
        .unwrap_err()
        .0;
        assert!(m.starts_with("/no/such: cannot read it"), "{m}");
    }

    #[test]
    fn shuffled_by_the_seed_once() {
        let text: String = (0..9).map(|c| format!("{c}\n")).collect();
        let shuffled = |seed| {
            let o = Openings::parse::<TicTacToe>(
                Path::new("s"),
                &text,
                &GameOptions::default(),
                true,
                seed,
            )
            .unwrap();
            (0..9).map(|r| o.line_of(r)).collect::<Vec<_>>()
        };
        let a = shuffled(1);
        assert_eq!(a, shuffled(1));
        assert_ne!(a, shuffled(2));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=9).collect::<Vec<_>>());
        assert_ne!(a, sorted);
    }

    /// Openings with their positions.
    type Found<G> = Vec<(Vec<<G as Game>::Move>, G)>;

    /// Every `plies`-move opening from the start that does not end the
    /// game, one per class of positions equal up to the game's symmetries
    /// (the first found, in move-generation order), with its position.
    fn every_opening<G: Game>(opts: &GameOptions, plies: usize) -> (usize, Found<G>) {
        fn walk<G: Game>(
            pos: &G,
            line: &mut Vec<G::Move>,
            left: usize,
            seen: &mut std::collections::HashSet<G>,
            all: &mut usize,
            out: &mut Found<G>,
        ) {
            if left == 0 {
                *all += 1;
                if seen.insert(pos.canonical().0) {
                    out.push((line.clone(), pos.clone()));
                }
                return;
            }
            for m in pos.legal_moves() {
                let mut next = pos.clone();
                next.play_unchecked(m);
                if next.is_over() {
                    continue;
                }
                line.push(m);
                walk(&next, line, left - 1, seen, all, out);
                line.pop();
            }
        }
        let (mut seen, mut all, mut out) = (Default::default(), 0, Vec::new());
        walk(
            &G::start(opts),
            &mut Vec::new(),
            plies,
            &mut seen,
            &mut all,
            &mut out,
        );
        (all, out)
    }

    fn join<M: fmt::Display>(moves: &[M]) -> String {
        moves
            .iter()
            .map(|m| m.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The bundled suites in openings/ are exactly what their headers say
    /// (REFEREE_WRITE_SUITES=1 rewrites them), and load as suites.
    #[test]
    fn bundled_suites_are_what_their_headers_say() {
        use crate::grade::Solved;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("openings");
        let opts = GameOptions::default();

        let (all, uttt) = every_opening::<Uttt>(&opts, 2);
        let mut text = format!(
            "# Every 2-ply opening of Ultimate tic-tac-toe, one line per class of positions\n\
             # that are equal up to the 8 symmetries of the board (rotations and\n\
             # reflections, applied to the big board and every small board at once): the\n\
             # {all} two-move starts fall into the {} classes below. Each line is a move\n\
             # list, `board cell, board cell`, as `referee judge uttt` reads it; the first\n\
             # start found in move-generation order stands for its class.\n\
             #\n\
             # Two moves decide nothing in UTTT (no small board can be won yet), so every\n\
             # line is a playable, roughly balanced start; a match plays each one twice,\n\
             # seats swapped. Written and checked by the test\n\
             # openings::tests::bundled_suites_are_what_their_headers_say\n\
             # (REFEREE_WRITE_SUITES=1 cargo test --lib bundled_suites rewrites it).\n",
            uttt.len()
        );
        for (moves, _) in &uttt {
            text.push_str(&join(moves));
            text.push('\n');
        }
        check_suite::<Uttt>(&dir.join("uttt-2ply.txt"), &text, uttt.len());

        let (all, nk) = every_opening::<Notakto>(&opts, 2);
        let wins = nk.iter().filter(|(_, p)| p.solve() > 0).count();
        let winners = if wins == nk.len() {
            "every one is a win for player 1, the player to move (Notakto on 3 boards\n\
             # is a first-player win, and no first two moves change that)"
                .to_string()
        } else {
            format!("{wins} for player 1, {} for player 2", nk.len() - wins)
        };
        let text_head = format!(
            "# Every 2-ply opening of Notakto on 3 boards, one line per class of positions\n\
             # that are equal up to symmetry (each board's 8 rotations and reflections, and\n\
             # the order of the boards): the {all} two-move starts fall into the {} classes\n\
             # below. Each line is a move list (board letter and cell), as `referee judge\n\
             # notakto` reads it; the first start found in move-generation order stands for\n\
             # its class. The comment says who wins with perfect play, by the built-in\n\
             # solver: {winners}.\n\
             # Each line is played twice, seats swapped, so between equals a pair is even,\n\
             # and a bot that throws away a won position shows at once.\n\
             # Written and checked by the test\n\
             # openings::tests::bundled_suites_are_what_their_headers_say\n\
             # (REFEREE_WRITE_SUITES=1 cargo test --lib bundled_suites rewrites it).\n",
            nk.len(),
        );
        let mut text = text_head;
        for (moves, pos) in &nk {
            let winner = if pos.solve() > 0 { 1 } else { 2 };
            text.push_str(&format!("{:<8} # player {winner} wins\n", join(moves)));
        }
        check_suite::<Notakto>(&dir.join("notakto-3boards-2ply.txt"), &text, nk.len());
    }

    fn check_suite<G: Game>(path: &Path, want: &str, count: usize) {
        if std::env::var_os("REFEREE_WRITE_SUITES").is_some() {
            std::fs::write(path, want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "{} is not what its header says; rewrite it with REFEREE_WRITE_SUITES=1",
            path.display()
        );
        let o = Openings::load(G::KIND, &GameOptions::default(), path, false, 1).unwrap();
        assert_eq!(o.len(), count);
    }
}
