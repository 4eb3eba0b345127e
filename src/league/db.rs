//! The league database: SQLite (bundled, nothing to install) in WAL mode,
//! so that `standings`, `serve` and `submit` read and write while `run`
//! plays. Every finished game is one transaction keyed by its pairing, so a
//! killed run loses no finished game and records none twice.
//!
//! The file carries an application id (`REFL`) and a schema version
//! (`PRAGMA user_version`); [`Db::open`] migrates an older schema and
//! refuses a foreign file or a newer one with a one-line error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

/// The database's file name in a league folder.
pub const DB_FILE: &str = "league.db";

/// `PRAGMA application_id` of a league database: "REFL".
const APPLICATION_ID: i64 = 0x5245_464C;

/// The schema this referee writes.
pub const SCHEMA_VERSION: i64 = 3;

/// Each migration takes the schema from its index to the next version.
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the first schema.
    "CREATE TABLE entries (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        anchor INTEGER NOT NULL,
        spec TEXT,
        sha256 TEXT,
        folder TEXT,
        submitted_at INTEGER NOT NULL,
        status TEXT NOT NULL,
        log TEXT NOT NULL DEFAULT '',
        decided_at INTEGER,
        UNIQUE (name, version)
    );
    CREATE TABLE pairings (
        id INTEGER PRIMARY KEY,
        phase TEXT NOT NULL,
        cycle INTEGER NOT NULL,
        p1 INTEGER NOT NULL REFERENCES entries(id),
        p2 INTEGER NOT NULL REFERENCES entries(id),
        seed INTEGER NOT NULL,
        opening_seed INTEGER NOT NULL,
        round INTEGER NOT NULL
    );
    CREATE TABLE games (
        pairing INTEGER PRIMARY KEY REFERENCES pairings(id),
        phase TEXT NOT NULL,
        p1 INTEGER NOT NULL,
        p2 INTEGER NOT NULL,
        winner INTEGER,
        termination TEXT NOT NULL,
        forfeit_seat INTEGER,
        plies INTEGER NOT NULL,
        finished_at INTEGER NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX games_p1 ON games (p1, pairing);
    CREATE INDEX games_p2 ON games (p2, pairing);
    CREATE TABLE ratings (
        cycle INTEGER NOT NULL,
        at INTEGER NOT NULL,
        entry INTEGER NOT NULL,
        rating REAL NOT NULL,
        lo REAL NOT NULL,
        hi REAL NOT NULL,
        games INTEGER NOT NULL,
        PRIMARY KEY (entry, cycle)
    );
    CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
    // 1 -> 2: the league page's queries (games of the last minute, the
    // next pairings) without a scan of every game.
    "CREATE INDEX games_finished ON games (finished_at);
    CREATE INDEX pairings_phase_cycle ON pairings (phase, cycle);",
    // 2 -> 3: whether UTTT's CodinGame rule decided a game (on boards
    // won), for the summaries; the games stored before are read once
    // (`backfill_by_rule`).
    "ALTER TABLE games ADD COLUMN by_rule INTEGER NOT NULL DEFAULT 0;",
];

/// The migration after which `backfill_by_rule` runs.
const BY_RULE_MIGRATION: usize = 2;

/// Sets `by_rule` of the games stored before the column existed, from
/// their records (only games under another rule than the standard one
/// can have been decided by it).
fn backfill_by_rule(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let decided: Vec<i64> = {
        let mut st =
            tx.prepare("SELECT pairing, record FROM games WHERE record LIKE '%\"rules\":%'")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        let mut ids = Vec::new();
        for row in rows {
            let (id, text) = row?;
            let rec: Option<crate::play::record::GameRecord> = serde_json::from_str(&text).ok();
            if rec.is_some_and(|r| r.decided_by_rule().is_some()) {
                ids.push(id);
            }
        }
        ids
    };
    for id in decided {
        tx.execute("UPDATE games SET by_rule = 1 WHERE pairing = ?1", [id])?;
    }
    Ok(())
}

/// What a database error says, in one line, naming the file.
fn fail(path: &Path, e: rusqlite::Error) -> anyhow::Error {
    let why = match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(
                f.code,
                rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt
            ) =>
        {
            "not a league database, or a damaged one (restore it from a backup: docs/league.md)"
                .to_string()
        }
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy => {
            "busy: another referee holds it for too long".to_string()
        }
        other => other.to_string().replace('\n', " "),
    };
    anyhow::anyhow!("{}: {why}", path.display())
}

/// An admission's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Waiting for `run` to admit it.
    Pending,
    /// Admitted: plays when it is its student's newest admitted version.
    Admitted,
    /// Failed admission: never plays; the log says why.
    Rejected,
    /// Submitted after the freeze: stored, never played.
    Late,
}

impl Status {
    /// The word stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Admitted => "admitted",
            Status::Rejected => "rejected",
            Status::Late => "late",
        }
    }

    fn parse(s: &str) -> Status {
        match s {
            "admitted" => Status::Admitted,
            "rejected" => Status::Rejected,
            "late" => Status::Late,
            _ => Status::Pending,
        }
    }
}

/// A bot of the league: an anchor, or one version of a student's bot.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Row id.
    pub id: i64,
    /// The student's (or anchor's) name.
    pub name: String,
    /// The version, from 1 (0 for anchors).
    pub version: u32,
    /// Whether it is an anchor (a built-in).
    pub anchor: bool,
    /// An anchor's bot text.
    pub spec: Option<String>,
    /// A submission's content checksum.
    pub sha256: Option<String>,
    /// A submission's folder, relative to the league folder.
    pub folder: Option<String>,
    /// When it was submitted (unix seconds).
    pub submitted_at: i64,
    /// Its admission state.
    pub status: Status,
    /// The admission's log.
    pub log: String,
}

impl Entry {
    /// The name shown in games and tables: `alice#3`, or the anchor's name.
    pub fn label(&self) -> String {
        if self.anchor {
            self.name.clone()
        } else {
            format!("{}#{}", self.name, self.version)
        }
    }
}

/// One game in the summary form the ladder reads.
#[derive(Clone, Debug)]
pub struct GameRow {
    /// The pairing id (the game's id).
    pub id: i64,
    /// `ladder`, `admission`.
    pub phase: String,
    /// Entries by seat.
    pub players: [i64; 2],
    /// The winner's seat (1 or 2), `None` for a draw.
    pub winner: Option<u8>,
    /// How it ended.
    pub termination: String,
    /// The seat that forfeited.
    pub forfeit_seat: Option<u8>,
    /// Moves played.
    pub plies: u32,
    /// When it ended (unix seconds).
    pub finished_at: i64,
    /// Whether the rule, not a line, decided it (UTTT under CodinGame's
    /// rule: on boards won; [`crate::play::record::GameRecord::decided_by_rule`]).
    pub by_rule: bool,
}

/// A rating recorded at the start of a cycle.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RatingPoint {
    /// When (unix seconds).
    pub at: i64,
    /// The version rated.
    pub version: u32,
    /// The rating.
    pub rating: f64,
    /// Its 95 % interval.
    pub low: f64,
    /// Its 95 % interval.
    pub high: f64,
}

/// A scheduled game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduled {
    /// Its id (the game's id once played).
    pub id: i64,
    /// `ladder` or `admission`.
    pub phase: String,
    /// The cycle that scheduled it.
    pub cycle: i64,
    /// Entries by seat.
    pub players: [i64; 2],
    /// The game's seed.
    pub seed: u64,
    /// The opening's seed (shared by the two games of a pair).
    pub opening_seed: u64,
    /// The opening suite's round.
    pub round: u64,
}

/// An open league database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Db {
    /// Creates a new database at `path` (which must not exist).
    pub fn create(path: &Path) -> anyhow::Result<Db> {
        if path.exists() {
            anyhow::bail!("{}: already exists", path.display());
        }
        let conn = Connection::open(path).map_err(|e| fail(path, e))?;
        let db = Db {
            conn,
            path: path.to_path_buf(),
        };
        db.conn
            .pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| fail(path, e))?;
        db.prepare()?;
        Ok(db)
    }

    /// Opens the league database at `path`, migrating an older schema.
    pub fn open(path: &Path) -> anyhow::Result<Db> {
        if !path.is_file() {
            anyhow::bail!(
                "{}: no league database (`referee league init` makes one)",
                path.display()
            );
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| fail(path, e))?;
        let db = Db {
            conn,
            path: path.to_path_buf(),
        };
        let app: i64 = db
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(|e| fail(path, e))?;
        if app != APPLICATION_ID {
            anyhow::bail!(
                "{}: not a league database (another program's SQLite file)",
                path.display()
            );
        }
        db.prepare()?;
        Ok(db)
    }

    /// WAL, a busy timeout, foreign keys, and the schema brought up to date.
    fn prepare(&self) -> anyhow::Result<()> {
        let p = &self.path;
        self.conn
            .busy_timeout(Duration::from_secs(10))
            .map_err(|e| fail(p, e))?;
        let _: String = self
            .conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(|e| fail(p, e))?;
        // In WAL mode, NORMAL survives a killed process (only a power cut
        // can lose the last transactions).
        self.conn
            .pragma_update(None, "synchronous", "NORMAL")
            .map_err(|e| fail(p, e))?;
        self.conn
            .pragma_update(None, "foreign_keys", true)
            .map_err(|e| fail(p, e))?;
        let version: i64 = self
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(|e| fail(p, e))?;
        if version > SCHEMA_VERSION {
            anyhow::bail!(
                "{}: written by a newer referee (schema {version}; this one knows up to \
                 {SCHEMA_VERSION}): upgrade referee",
                p.display()
            );
        }
        for (v, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self.conn.unchecked_transaction().map_err(|e| fail(p, e))?;
            tx.execute_batch(sql).map_err(|e| fail(p, e))?;
            if v == BY_RULE_MIGRATION {
                backfill_by_rule(&tx).map_err(|e| fail(p, e))?;
            }
            tx.pragma_update(None, "user_version", v as i64 + 1)
                .map_err(|e| fail(p, e))?;
            tx.commit().map_err(|e| fail(p, e))?;
        }
        Ok(())
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, e: rusqlite::Error) -> anyhow::Error {
        fail(&self.path, e)
    }

    /// A value of the `state` table.
    pub fn state(&self, key: &str) -> anyhow::Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM state WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Sets a value of the `state` table.
    pub fn set_state(&self, key: &str, value: &str) -> anyhow::Result<()> {
        self.conn
            .execute(
                "INSERT INTO state (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Adds an anchor (once).
    pub fn add_anchor(&self, name: &str, spec: &str) -> anyhow::Result<()> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO entries (name, version, anchor, spec, submitted_at, status)
                 VALUES (?1, 0, 1, ?2, ?3, 'admitted')",
                params![name, spec, now()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Adds `name`'s next version: returns its number, or the number of the
    /// version already holding exactly this content.
    pub fn add_version(
        &self,
        name: &str,
        sha256: &str,
        folder: &str,
        status: Status,
    ) -> anyhow::Result<(u32, bool)> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        // The same content as the newest version is no new version (a
        // return to an older one is).
        let newest: Option<(u32, Option<String>)> = tx
            .query_row(
                "SELECT version, sha256 FROM entries WHERE name = ?1 AND anchor = 0
                 ORDER BY version DESC LIMIT 1",
                params![name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.err(e))?;
        if let Some((v, Some(sha))) = &newest {
            if sha == sha256 {
                return Ok((*v, false));
            }
        }
        let next: u32 = tx
            .query_row(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM entries WHERE name = ?1 AND anchor = 0",
                [name],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))?;
        tx.execute(
            "INSERT INTO entries (name, version, anchor, sha256, folder, submitted_at, status)
             VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6)",
            params![name, next, sha256, folder, now(), status.name()],
        )
        .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok((next, true))
    }

    /// Records an admission's verdict.
    pub fn decide(&self, id: i64, status: Status, log: &str) -> anyhow::Result<()> {
        self.conn
            .execute(
                "UPDATE entries SET status = ?2, log = ?3, decided_at = ?4 WHERE id = ?1",
                params![id, status.name(), log, now()],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Every entry, anchors first, then by name and version.
    pub fn entries(&self) -> anyhow::Result<Vec<Entry>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT id, name, version, anchor, spec, sha256, folder, submitted_at, status, log
                 FROM entries ORDER BY anchor DESC, id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    version: r.get(2)?,
                    anchor: r.get::<_, i64>(3)? != 0,
                    spec: r.get(4)?,
                    sha256: r.get(5)?,
                    folder: r.get(6)?,
                    submitted_at: r.get(7)?,
                    status: Status::parse(&r.get::<_, String>(8)?),
                    log: r.get(9)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Schedules games (one transaction; their `id`s are ignored); returns
    /// them with their ids.
    pub fn schedule(&self, games: &[Scheduled]) -> anyhow::Result<Vec<Scheduled>> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(games.len());
        {
            let mut st = tx
                .prepare(
                    "INSERT INTO pairings (phase, cycle, p1, p2, seed, opening_seed, round)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                )
                .map_err(|e| self.err(e))?;
            for g in games {
                st.execute(params![
                    g.phase,
                    g.cycle,
                    g.players[0],
                    g.players[1],
                    g.seed as i64,
                    g.opening_seed as i64,
                    g.round as i64
                ])
                .map_err(|e| self.err(e))?;
                out.push(Scheduled {
                    id: tx.last_insert_rowid(),
                    ..g.clone()
                });
            }
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(out)
    }

    /// Scheduled games of `phase` not played yet, in id order.
    pub fn unplayed(&self, phase: &str) -> anyhow::Result<Vec<Scheduled>> {
        self.unplayed_since(phase, 0)
    }

    /// Scheduled games of `phase` from cycle `cycle` on, not played yet.
    pub fn unplayed_since(&self, phase: &str, cycle: i64) -> anyhow::Result<Vec<Scheduled>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT p.id, p.phase, p.cycle, p.p1, p.p2, p.seed, p.opening_seed, p.round
                 FROM pairings p LEFT JOIN games g ON g.pairing = p.id
                 WHERE p.phase = ?1 AND p.cycle >= ?2 AND g.pairing IS NULL ORDER BY p.id",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![phase, cycle], |r| {
                Ok(Scheduled {
                    id: r.get(0)?,
                    phase: r.get(1)?,
                    cycle: r.get(2)?,
                    players: [r.get(3)?, r.get(4)?],
                    seed: r.get::<_, i64>(5)? as u64,
                    opening_seed: r.get::<_, i64>(6)? as u64,
                    round: r.get::<_, i64>(7)? as u64,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Drops scheduled, unplayed games (of bots no longer playing).
    pub fn unschedule(&self, ids: &[i64]) -> anyhow::Result<()> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        for id in ids {
            tx.execute(
                "DELETE FROM pairings WHERE id = ?1 AND id NOT IN (SELECT pairing FROM games)",
                [id],
            )
            .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// The last cycle scheduled (0 before the first).
    pub fn last_cycle(&self) -> anyhow::Result<i64> {
        self.conn
            .query_row(
                "SELECT COALESCE(MAX(cycle), 0) FROM pairings WHERE phase = 'ladder'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Stores a finished game; a game already stored is left as it is.
    pub fn store_game(
        &self,
        s: &Scheduled,
        rec: &crate::play::record::GameRecord,
    ) -> anyhow::Result<()> {
        let json = serde_json::to_string(rec)?;
        self.conn
            .execute(
                "INSERT OR IGNORE INTO games
                 (pairing, phase, p1, p2, winner, termination, forfeit_seat, plies, finished_at, record, by_rule)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    s.id,
                    s.phase,
                    s.players[0],
                    s.players[1],
                    rec.winner.map(|w| w.number() as i64),
                    rec.termination.to_string(),
                    rec.forfeit.as_ref().map(|f| f.seat.number() as i64),
                    rec.moves.len() as i64,
                    now(),
                    json,
                    rec.decided_by_rule().is_some()
                ],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    fn game_rows(&self, sql: &str, p: impl rusqlite::Params) -> anyhow::Result<Vec<GameRow>> {
        let mut st = self.conn.prepare_cached(sql).map_err(|e| self.err(e))?;
        let rows = st
            .query_map(p, |r| {
                Ok(GameRow {
                    id: r.get(0)?,
                    phase: r.get(1)?,
                    players: [r.get(2)?, r.get(3)?],
                    winner: r.get::<_, Option<i64>>(4)?.map(|w| w as u8),
                    termination: r.get(5)?,
                    forfeit_seat: r.get::<_, Option<i64>>(6)?.map(|w| w as u8),
                    plies: r.get::<_, i64>(7)? as u32,
                    finished_at: r.get(8)?,
                    by_rule: r.get(9)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Every game of `phase` after game `after`, in id order.
    pub fn games(&self, phase: &str, after: i64) -> anyhow::Result<Vec<GameRow>> {
        self.game_rows(
            "SELECT pairing, phase, p1, p2, winner, termination, forfeit_seat, plies, finished_at, by_rule
             FROM games WHERE phase = ?1 AND pairing > ?2 ORDER BY pairing",
            params![phase, after],
        )
    }

    /// The last `limit` games of entry `id` (any phase), newest first.
    pub fn games_of(&self, id: i64, limit: usize) -> anyhow::Result<Vec<GameRow>> {
        self.game_rows(
            "SELECT pairing, phase, p1, p2, winner, termination, forfeit_seat, plies, finished_at, by_rule
             FROM (SELECT * FROM games WHERE p1 = ?1
                   UNION ALL SELECT * FROM games WHERE p2 = ?1 AND p1 != ?1)
             ORDER BY pairing DESC LIMIT ?2",
            params![id, limit as i64],
        )
    }

    /// A game's whole record.
    pub fn record(&self, id: i64) -> anyhow::Result<Option<crate::play::record::GameRecord>> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT record FROM games WHERE pairing = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))?;
        match text {
            None => Ok(None),
            Some(t) => Ok(Some(serde_json::from_str(&t).map_err(|e| {
                anyhow::anyhow!("{}: game {id}: {e}", self.path.display())
            })?)),
        }
    }

    /// Games stored, of every phase.
    pub fn game_count(&self) -> anyhow::Result<i64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM games", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// Games that ended at or after `since` (unix seconds).
    pub fn games_finished_since(&self, since: i64) -> anyhow::Result<i64> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM games WHERE finished_at >= ?1",
                [since],
                |r| r.get(0),
            )
            .map_err(|e| self.err(e))
    }

    /// Records the ratings of a cycle, for the rating-over-time charts.
    pub fn record_ratings(
        &self,
        cycle: i64,
        rows: &[(i64, f64, f64, f64, u64)],
    ) -> anyhow::Result<()> {
        let tx = self.conn.unchecked_transaction().map_err(|e| self.err(e))?;
        let at = now();
        for (entry, r, lo, hi, games) in rows {
            tx.execute(
                "INSERT OR REPLACE INTO ratings (cycle, at, entry, rating, lo, hi, games)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![cycle, at, entry, r, lo, hi, *games as i64],
            )
            .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// The recorded ratings of the entries of `name` over time.
    pub fn rating_history(&self, name: &str) -> anyhow::Result<Vec<RatingPoint>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT r.at, e.version, r.rating, r.lo, r.hi FROM ratings r
                 JOIN entries e ON e.id = r.entry WHERE e.name = ?1 ORDER BY r.cycle, e.version",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([name], |r| {
                Ok(RatingPoint {
                    at: r.get(0)?,
                    version: r.get(1)?,
                    rating: r.get(2)?,
                    low: r.get(3)?,
                    high: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Results against each opponent of entry `id` in the ladder: (opponent,
    /// wins, draws, losses).
    pub fn head_to_head(&self, id: i64) -> anyhow::Result<Vec<(i64, u64, u64, u64)>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT opp, SUM(w), SUM(d), SUM(l) FROM (
                   SELECT p2 AS opp, winner = 1 AS w, winner IS NULL AS d, winner = 2 AS l
                     FROM games WHERE p1 = ?1 AND phase = 'ladder'
                   UNION ALL
                   SELECT p1, winner = 2, winner IS NULL, winner = 1
                     FROM games WHERE p2 = ?1 AND phase = 'ladder')
                 GROUP BY opp ORDER BY opp",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([id], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, i64>(2)? as u64,
                    r.get::<_, i64>(3)? as u64,
                ))
            })
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.err(e))
    }

    /// Runs `f` in one transaction (for bulk inserts: benchmarks, tests).
    pub fn in_transaction<T>(&self, f: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
        self.conn.execute_batch("BEGIN").map_err(|e| self.err(e))?;
        match f() {
            Ok(v) => {
                self.conn.execute_batch("COMMIT").map_err(|e| self.err(e))?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_older_schema_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(DB_FILE);
        let db = Db::create(&p).unwrap();
        db.add_version("ann", "aa", "s/aa", Status::Pending)
            .unwrap();
        let ann = db.entries().unwrap()[0].id;
        // A UTTT game under CodinGame's rule that filled every board (5
        // boards to 3), and one under the standard rule.
        let mut full = crate::play::record::sample(
            crate::game::GameKind::Uttt,
            ["ann", "ann"],
            Some(crate::game::Seat::One),
            &[],
        );
        full.rules = crate::game::Rules::CodinGame;
        let mut end: crate::game::Uttt = "O.XXX.XX.X.OOX.O.XOXOOOXXOXXXXO...O.OO.OOOX...OO.XOOOXOOO..X..O..XXX.XO.OXXXOXXXO/9/XX=XO.OXO"
            .parse()
            .unwrap();
        crate::game::Game::play(&mut end, crate::game::UtttMove::new(5, 0).unwrap()).unwrap();
        full.final_position = end.to_string();
        // The same board under the standard rule: a draw, not the rule's.
        let mut line = full.clone();
        line.rules = crate::game::Rules::Standard;
        line.winner = None;
        let pairing = |i: i64| Scheduled {
            id: i,
            phase: "ladder".into(),
            cycle: 1,
            players: [ann, ann],
            seed: 0,
            opening_seed: 0,
            round: 0,
        };
        let sched = db.schedule(&[pairing(0), pairing(0)]).unwrap();
        db.store_game(&sched[0], &full).unwrap();
        db.store_game(&sched[1], &line).unwrap();
        assert_eq!(
            db.games("ladder", 0)
                .unwrap()
                .iter()
                .map(|g| g.by_rule)
                .collect::<Vec<_>>(),
            [true, false]
        );
        // Back to schema 1, as the first league databases were.
        db.conn
            .execute_batch(
                "DROP INDEX games_finished; DROP INDEX pairings_phase_cycle;
                 ALTER TABLE games DROP COLUMN by_rule;",
            )
            .unwrap();
        db.conn.pragma_update(None, "user_version", 1).unwrap();
        drop(db);
        let db = Db::open(&p).unwrap();
        let v: i64 = db
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(v, SCHEMA_VERSION);
        let n: i64 = db
            .conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name IN ('games_finished', 'pairings_phase_cycle')",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 2);
        assert_eq!(db.entries().unwrap().len(), 1, "the data is kept");
        // The games stored before the column are read once for it.
        assert_eq!(
            db.games("ladder", 0)
                .unwrap()
                .iter()
                .map(|g| g.by_rule)
                .collect::<Vec<_>>(),
            [true, false]
        );
    }

    #[test]
    fn a_foreign_or_corrupt_file_is_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, b"this is not sqlite at all, just text that goes on").unwrap();
        let e = Db::open(&junk).err().unwrap().to_string();
        assert!(e.contains("not a league database"), "{e}");
        assert!(!e.contains('\n'));
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        let e = Db::open(&other).err().unwrap().to_string();
        assert!(e.contains("another program's SQLite file"), "{e}");
    }

    #[test]
    fn a_newer_schema_is_refused_and_versions_count_up() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(DB_FILE);
        let db = Db::create(&p).unwrap();
        assert_eq!(
            db.add_version("ann", "aa", "s/aa", Status::Pending)
                .unwrap(),
            (1, true)
        );
        assert_eq!(
            db.add_version("ann", "bb", "s/bb", Status::Pending)
                .unwrap(),
            (2, true)
        );
        assert_eq!(
            db.add_version("ann", "bb", "s/bb", Status::Pending)
                .unwrap(),
            (2, false)
        );
        assert_eq!(
            db.add_version("ann", "aa", "s/aa", Status::Pending)
                .unwrap(),
            (3, true)
        );
        assert_eq!(
            db.add_version("bob", "aa", "s/aa", Status::Pending)
                .unwrap(),
            (1, true)
        );
        db.conn.pragma_update(None, "user_version", 99).unwrap();
        drop(db);
        let e = Db::open(&p).err().unwrap().to_string();
        assert!(e.contains("newer referee"), "{e}");
    }
}
