//! `league serve`: the league's read-only web page (axum).
//!
//! - `/`: the ladder (rank, name, rating with its interval, games, W/D/L,
//!   forfeits, version, last submission, a marker for bots being placed);
//! - `/student/NAME`: the student's versions with their admission status and
//!   log, the rating over time, the results against each opponent, and the
//!   recent games with links to their replays;
//! - `/game/ID`: a replay, in the HTML report's viewer;
//! - `/league`: the settings, the anchors, the game count, games/s and the
//!   next pairings;
//! - `/api/ladder`, `/api/student/NAME`: the same as JSON.
//!
//! Pages are rendered on the server and refresh themselves without a reload
//! (each fetches its own `?part=main` every few seconds). Nothing under the
//! league folder is served as a file: no submitted source leaves it. The
//! ladder is refitted by a thread of its own every [`REFIT_EVERY`] when
//! games or versions changed, so that no page waits for a fit.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde::{Deserialize, Serialize};

use super::db::{now, Db, Entry, RatingPoint};
use super::http::WebLimits;
use super::{LadderCache, LeagueSettings, Snapshot, LADDER};
use crate::escape::html::text as esc;

/// How often the ladder is refreshed while games arrive.
pub const REFIT_EVERY: Duration = Duration::from_secs(3);

/// The server's shared state.
struct Shared {
    settings: LeagueSettings,
    db: Mutex<Db>,
    /// The ladder and the entries it was fitted with, kept up to date by
    /// the refresher thread (a page never waits for a fit).
    ladder: std::sync::RwLock<Snapshot>,
}

impl Shared {
    fn ladder(&self) -> anyhow::Result<Snapshot> {
        let l = self
            .ladder
            .read()
            .map_err(|_| anyhow::anyhow!("lock poisoned"))?;
        Ok((l.0.clone(), l.1.clone()))
    }
}

/// `serve`'s refresher: its own connection and the ladder it keeps.
struct Refresher {
    db: Db,
    settings: LeagueSettings,
    cache: LadderCache,
}

impl Refresher {
    /// The ladder when it was refitted.
    fn refresh(&mut self) -> anyhow::Result<Option<Snapshot>> {
        let (snap, fresh) = self.cache.refresh(&self.db, &self.settings)?;
        Ok(fresh.then_some(snap))
    }
}

/// Serves the league in `dir` on `addr` within `limits` (connections,
/// and how long one may stall: [`super::http`]) until interrupted (Ctrl-C
/// or SIGTERM); `ready` is told the address once it listens.
pub fn serve(
    dir: &Path,
    addr: SocketAddr,
    limits: WebLimits,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    for (setting, value) in [
        ("max-connections", limits.max_connections),
        ("max-per-address", limits.max_per_address),
    ] {
        if value == 0 {
            return Err(crate::play::SettingError::new(setting, "must be at least 1").into());
        }
    }
    let (shared, mut refresher) = open(dir)?;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    std::thread::scope(|scope| {
        let (sh, st) = (shared.clone(), stop.clone());
        scope.spawn(move || {
            let stopped = || {
                st.load(std::sync::atomic::Ordering::Relaxed)
                    || crate::play::interrupt::interrupted().is_some()
            };
            while !stopped() {
                let until = Instant::now() + REFIT_EVERY;
                while Instant::now() < until && !stopped() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                // A failed read (a busy database) is retried next time.
                if let Ok(Some(fresh)) = refresher.refresh() {
                    if let Ok(mut l) = sh.ladder.write() {
                        *l = fresh;
                    }
                }
            }
        });
        let served = rt.block_on(async {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
            ready(listener.local_addr()?);
            super::http::serve(listener, router(shared.clone()), limits, || {
                crate::play::interrupt::interrupted().is_some()
            })
            .await;
            Ok::<(), anyhow::Error>(())
        });
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        served
    })
}

/// The shared state with its first fit, and the refresher.
fn open(dir: &Path) -> anyhow::Result<(Arc<Shared>, Refresher)> {
    let league = super::League::open(dir)?;
    let mut refresher = Refresher {
        db: Db::open(league.db.path())?,
        settings: league.settings.clone(),
        cache: LadderCache::default(),
    };
    let first = refresher
        .refresh()?
        .ok_or_else(|| anyhow::anyhow!("no ladder"))?;
    let shared = Arc::new(Shared {
        settings: league.settings.clone(),
        db: Mutex::new(league.db),
        ladder: std::sync::RwLock::new(first),
    });
    Ok((shared, refresher))
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(ladder_page))
        .route("/student/{name}", get(student_page))
        .route("/game/{id}", get(game_page))
        .route("/league", get(league_page))
        .route("/api/ladder", get(ladder_json))
        .route("/api/student/{name}", get(student_json))
        .with_state(shared)
}

#[derive(Deserialize)]
struct Part {
    part: Option<String>,
}

/// An error page.
fn failure(status: StatusCode, text: &str) -> Response {
    (
        status,
        page(
            "referee league",
            &format!("<p class=\"err\">{}</p>", esc(text)),
            false,
        ),
    )
        .into_response()
}

fn html(body: String) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// A page, or its `<main>` alone for the refresh.
fn respond(title: &str, main: String, part: &Part) -> Response {
    if part.part.as_deref() == Some("main") {
        html(main)
    } else {
        html(page(title, &main, true))
    }
}

const CSS: &str = "body{font:15px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}\
header{background:#1f3b5a;color:#fff;padding:.6em 1em}header a{color:#fff;margin-right:1.2em}\
main{padding:1em;max-width:1100px}table{border-collapse:collapse;background:#fff}\
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:right}th{background:#eef}\
td.l,th.l{text-align:left}.placing{color:#a60}.rej{color:#b00}.ok{color:#070}\
pre{background:#fff;border:1px solid #ddd;padding:.5em;overflow:auto;max-height:20em}\
.err{color:#b00}.muted{color:#777}svg{background:#fff;border:1px solid #ddd}";

const REFRESH: &str =
    "setInterval(async()=>{try{const r=await fetch(location.pathname+'?part=main');\
if(r.ok){document.querySelector('main').innerHTML=await r.text();}}catch(e){}},4000);";

fn page(title: &str, main: &str, refresh: bool) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\"><title>{t}</title>\
         <style>{CSS}</style></head><body><header><a href=\"/\">Ladder</a>\
         <a href=\"/league\">League</a><span>{t}</span></header><main>{main}</main>{script}\
         </body></html>\n",
        t = esc(title),
        script = if refresh {
            format!("<script>{REFRESH}</script>")
        } else {
            String::new()
        }
    )
}

fn elo(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), |v| format!("{v:.0}"))
}

fn when(t: Option<i64>) -> String {
    match t {
        None => String::new(),
        Some(t) => {
            let ago = now() - t;
            if ago < 120 {
                format!("{ago} s ago")
            } else if ago < 7200 {
                format!("{} min ago", ago / 60)
            } else if ago < 2 * 86400 {
                format!("{} h ago", ago / 3600)
            } else {
                format!("{} days ago", ago / 86400)
            }
        }
    }
}

fn ladder_main(s: &Shared) -> anyhow::Result<String> {
    let (ladder, _) = s.ladder()?;
    let mut out = format!("<h1>{}</h1>", esc(&s.settings.title));
    if let Some(w) = &ladder.warning {
        let _ = write!(out, "<p class=\"err\">{}</p>", esc(w));
    }
    out.push_str(
        "<table id=\"ladder\"><thead><tr><th>#</th><th class=\"l\">name</th><th>rating</th>\
         <th>95 % interval</th><th>LOS ↓</th><th>games</th><th>W</th><th>D</th><th>L</th>\
         <th>forfeits</th><th>version</th><th class=\"l\">submitted</th></tr></thead><tbody>",
    );
    for r in &ladder.rows {
        let name = if r.anchor {
            format!("{} <span class=\"muted\">(anchor)</span>", esc(&r.name))
        } else {
            format!(
                "<a href=\"/student/{n}\">{n}</a>{p}",
                n = esc(&r.name),
                p = if r.placing {
                    " <span class=\"placing\" title=\"still being placed\">●&nbsp;placing</span>"
                } else {
                    ""
                }
            )
        };
        let _ = write!(
            out,
            "<tr data-name=\"{}\"><td>{}</td><td class=\"l\">{name}</td><td>{}</td>\
             <td>{} … {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&r.name),
            r.rank,
            elo(r.rating),
            elo(r.low),
            elo(r.high),
            r.los_next
                .map_or_else(String::new, |l| format!("{:.0} %", 100.0 * l)),
            r.games,
            r.wins,
            r.draws,
            r.losses,
            r.forfeits,
            if r.anchor {
                "–".into()
            } else {
                r.version.to_string()
            },
            when(r.last_submission)
        );
    }
    let _ = write!(
        out,
        "</tbody></table><p class=\"muted\">{} games rated; the first move is worth {:.0} Elo. \
         Ratings: one maximum-likelihood fit over every game of the versions playing now, \
         {} pinned at {:.0}.</p>",
        ladder.games,
        ladder.first_move,
        esc(s.settings.anchors.first().map_or("", |a| a.as_str())),
        s.settings.pin_rating
    );
    Ok(out)
}

async fn ladder_page(State(s): State<Arc<Shared>>, Query(part): Query<Part>) -> Response {
    match ladder_main(&s) {
        Ok(main) => respond(&s.settings.title, main, &part),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    }
}

async fn ladder_json(State(s): State<Arc<Shared>>) -> Response {
    match s.ladder() {
        Ok((l, _)) => axum::Json(&*l).into_response(),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    }
}

/// What a student page shows, as data.
#[derive(Serialize)]
struct StudentData {
    name: String,
    versions: Vec<VersionData>,
    history: Vec<RatingPoint>,
    opponents: Vec<(String, u64, u64, u64)>,
    games: Vec<GameData>,
}

#[derive(Serialize)]
struct VersionData {
    version: u32,
    status: String,
    submitted_at: i64,
    playing: bool,
    log: String,
}

#[derive(Serialize)]
struct GameData {
    id: i64,
    phase: String,
    players: [String; 2],
    result: String,
    plies: u32,
    finished_at: i64,
}

fn student_data(s: &Shared, name: &str) -> anyhow::Result<Option<StudentData>> {
    let (ladder, entries) = s.ladder()?;
    let mine: Vec<&Entry> = entries
        .iter()
        .filter(|e| !e.anchor && e.name == name)
        .collect();
    if mine.is_empty() {
        return Ok(None);
    }
    let labels: HashMap<i64, String> = entries.iter().map(|e| (e.id, e.label())).collect();
    let playing = ladder
        .rows
        .iter()
        .find(|r| !r.anchor && r.name == name)
        .map(|r| r.entry);
    let db = s.db.lock().map_err(|_| anyhow::anyhow!("lock poisoned"))?;
    let mut games = Vec::new();
    let mut opponents: HashMap<String, (u64, u64, u64)> = HashMap::new();
    for e in &mine {
        for g in db.games_of(e.id, 30)? {
            games.push(g);
        }
        for (opp, w, d, l) in db.head_to_head(e.id)? {
            let k = opponents
                .entry(labels.get(&opp).cloned().unwrap_or_default())
                .or_default();
            k.0 += w;
            k.1 += d;
            k.2 += l;
        }
    }
    games.sort_by_key(|g| std::cmp::Reverse(g.id));
    games.truncate(30);
    let history = db.rating_history(name)?;
    let mut opponents: Vec<(String, u64, u64, u64)> = opponents
        .into_iter()
        .map(|(k, (w, d, l))| (k, w, d, l))
        .collect();
    opponents.sort();
    Ok(Some(StudentData {
        name: name.to_string(),
        versions: mine
            .iter()
            .rev()
            .map(|e| VersionData {
                version: e.version,
                status: e.status.name().into(),
                submitted_at: e.submitted_at,
                playing: playing == Some(e.id),
                log: e.log.clone(),
            })
            .collect(),
        history,
        opponents,
        games: games
            .iter()
            .map(|g| GameData {
                id: g.id,
                phase: g.phase.clone(),
                players: g
                    .players
                    .map(|p| labels.get(&p).cloned().unwrap_or_default()),
                result: match (g.winner, g.forfeit_seat) {
                    (_, Some(f)) => format!("player {f} forfeits ({})", g.termination),
                    (Some(w), None) => format!("player {w} wins"),
                    (None, None) => "draw".into(),
                },
                plies: g.plies,
                finished_at: g.finished_at,
            })
            .collect(),
    }))
}

/// The rating over time as a small line chart.
fn chart(history: &[RatingPoint]) -> String {
    if history.len() < 2 {
        return "<p class=\"muted\">Not enough ladder cycles yet for a chart.</p>".into();
    }
    let (w, h) = (600.0, 160.0);
    let lo = history.iter().map(|x| x.low).fold(f64::INFINITY, f64::min);
    let hi = history
        .iter()
        .map(|x| x.high)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = (hi - lo).max(1.0);
    let n = history.len() as f64 - 1.0;
    let pt = |i: usize, v: f64| {
        format!(
            "{:.1},{:.1}",
            10.0 + (w - 20.0) * i as f64 / n,
            10.0 + (h - 20.0) * (hi - v) / span
        )
    };
    let line: Vec<String> = history
        .iter()
        .enumerate()
        .map(|(i, x)| pt(i, x.rating))
        .collect();
    let band: Vec<String> = history
        .iter()
        .enumerate()
        .map(|(i, x)| pt(i, x.high))
        .chain(history.iter().enumerate().rev().map(|(i, x)| pt(i, x.low)))
        .collect();
    format!(
        "<svg id=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">\
         <polygon points=\"{}\" fill=\"#cde\"/><polyline points=\"{}\" fill=\"none\" \
         stroke=\"#1f6fd1\" stroke-width=\"2\"/><text x=\"12\" y=\"22\" font-size=\"12\">{:.0}</text>\
         <text x=\"12\" y=\"{}\" font-size=\"12\">{:.0}</text></svg>",
        band.join(" "),
        line.join(" "),
        hi,
        h - 12.0,
        lo
    )
}

fn student_main(s: &Shared, name: &str) -> anyhow::Result<Option<String>> {
    let Some(d) = student_data(s, name)? else {
        return Ok(None);
    };
    let mut out = format!("<h1>{}</h1><h2>Versions</h2>", esc(&d.name));
    out.push_str(
        "<table id=\"versions\"><thead><tr><th>version</th><th class=\"l\">status</th>\
         <th class=\"l\">submitted</th></tr></thead><tbody>",
    );
    for v in &d.versions {
        let cls = match v.status.as_str() {
            "rejected" => "rej",
            "admitted" => "ok",
            _ => "muted",
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"l {cls}\">{}{}</td><td class=\"l\">{}</td></tr>",
            v.version,
            esc(&v.status),
            if v.playing { " (playing)" } else { "" },
            when(Some(v.submitted_at))
        );
    }
    out.push_str("</tbody></table>");
    for v in &d.versions {
        if !v.log.is_empty() {
            let _ = write!(
                out,
                "<h3>Version {} admission log</h3><pre class=\"log\">{}</pre>",
                v.version,
                esc(&v.log)
            );
        }
    }
    let _ = write!(out, "<h2>Rating over time</h2>{}", chart(&d.history));
    out.push_str(
        "<h2>Against each opponent</h2><table id=\"opponents\"><thead><tr>\
         <th class=\"l\">opponent</th><th>W</th><th>D</th><th>L</th></tr></thead><tbody>",
    );
    for (o, w, dr, l) in &d.opponents {
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td>{w}</td><td>{dr}</td><td>{l}</td></tr>",
            esc(o)
        );
    }
    out.push_str(
        "</tbody></table><h2>Recent games</h2><table id=\"games\"><thead><tr><th>game</th>\
         <th class=\"l\">phase</th><th class=\"l\">player 1</th><th class=\"l\">player 2</th>\
         <th class=\"l\">result</th><th>moves</th><th class=\"l\">ended</th><th></th></tr>\
         </thead><tbody>",
    );
    for g in &d.games {
        let _ = write!(
            out,
            "<tr><td>{id}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td>\
             <td><a class=\"replay\" href=\"/game/{id}\">replay</a></td></tr>",
            esc(&g.phase),
            esc(&g.players[0]),
            esc(&g.players[1]),
            esc(&g.result),
            g.plies,
            when(Some(g.finished_at)),
            id = g.id
        );
    }
    out.push_str("</tbody></table>");
    Ok(Some(out))
}

async fn student_page(
    State(s): State<Arc<Shared>>,
    UrlPath(name): UrlPath<String>,
    Query(part): Query<Part>,
) -> Response {
    match student_main(&s, &name) {
        Ok(Some(main)) => respond(&format!("{}: {name}", s.settings.title), main, &part),
        Ok(None) => failure(
            StatusCode::NOT_FOUND,
            &format!("no student '{name}' in this league"),
        ),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    }
}

async fn student_json(State(s): State<Arc<Shared>>, UrlPath(name): UrlPath<String>) -> Response {
    match student_data(&s, &name) {
        Ok(Some(d)) => axum::Json(d).into_response(),
        Ok(None) => failure(
            StatusCode::NOT_FOUND,
            &format!("no student '{name}' in this league"),
        ),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    }
}

async fn game_page(State(s): State<Arc<Shared>>, UrlPath(id): UrlPath<String>) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return failure(StatusCode::NOT_FOUND, "a game is named by its number");
    };
    let rec = match s.db.lock() {
        Ok(db) => db.record(id),
        Err(_) => Err(anyhow::anyhow!("lock poisoned")),
    };
    match rec {
        Ok(Some(rec)) => {
            let title = format!("{}: game {id}", s.settings.title);
            html(crate::report::ReportData::from_records(&title, &[rec]).to_html())
        }
        Ok(None) => failure(
            StatusCode::NOT_FOUND,
            &format!("no game {id} in this league"),
        ),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    }
}

fn league_main(s: &Shared) -> anyhow::Result<String> {
    let (ladder, entries) = s.ladder()?;
    let labels: HashMap<i64, String> = entries.iter().map(|e| (e.id, e.label())).collect();
    let db = s.db.lock().map_err(|_| anyhow::anyhow!("lock poisoned"))?;
    let total = db.game_count()?;
    let recent = db.games_finished_since(now() - 60)?;
    // A run plays what an earlier one left first: what is not played is
    // in the last cycle or two.
    let next = db.unplayed_since(LADDER, db.last_cycle()? - 1)?;
    let frozen = db.state("frozen_at")?;
    drop(db);
    let st = &s.settings;
    let mut out = format!("<h1>{}</h1><table id=\"settings\"><tbody>", esc(&st.title));
    let rows: Vec<(&str, String)> = vec![
        ("game", st.game.to_string()),
        ("per-move limit", format!("{} ms", st.time_ms)),
        ("anchors", st.anchors.join(", ")),
        (
            "pinned",
            format!(
                "{} = {:.0}",
                st.anchors.first().map_or("", |a| a),
                st.pin_rating
            ),
        ),
        ("games stored", total.to_string()),
        ("ladder games rated", ladder.games.to_string()),
        (
            "games/s (last minute)",
            format!("{:.2}", recent as f64 / 60.0),
        ),
        ("pairs per bot and cycle", st.degree.to_string()),
        ("placement", format!("{} games", st.placement_games)),
        ("first move", format!("{:.0} Elo", ladder.first_move)),
        (
            "admissions",
            if frozen.is_some() {
                "frozen".into()
            } else {
                "open".to_string()
            },
        ),
    ];
    for (k, v) in rows {
        let _ = write!(
            out,
            "<tr><th class=\"l\">{k}</th><td class=\"l\">{}</td></tr>",
            esc(&v)
        );
    }
    out.push_str(
        "</tbody></table><h2>Next pairings</h2><table id=\"next\"><thead><tr><th>game</th>\
         <th class=\"l\">player 1</th><th class=\"l\">player 2</th></tr></thead><tbody>",
    );
    for g in next.iter().take(50) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            g.id,
            esc(labels.get(&g.players[0]).map_or("", |s| s)),
            esc(labels.get(&g.players[1]).map_or("", |s| s))
        );
    }
    let _ = write!(
        out,
        "</tbody></table><p class=\"muted\">{} games scheduled and not played yet.</p>",
        next.len()
    );
    Ok(out)
}

async fn league_page(State(s): State<Arc<Shared>>, Query(part): Query<Part>) -> Response {
    match league_main(&s) {
        Ok(main) => respond(&s.settings.title, main, &part),
        Err(e) => failure(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e:#}")),
    }
}
