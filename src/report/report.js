"use strict";
(function () {
const D = JSON.parse(document.getElementById("data").textContent);
// The address as loaded: opening a game rewrites it (#replay=ID).
const HASH = location.hash;
const app = document.getElementById("app");
const COLORS = ["#1f6fd1", "#c0392b", "#27ae60", "#8e44ad", "#e67e22", "#16a085", "#7f8c8d", "#d35400", "#2c3e50", "#f1c40f"];
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === "text") e.textContent = attrs[k]; else if (k === "cls") e.className = attrs[k];
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), attrs[k]); else e.setAttribute(k, attrs[k]);
  }
  for (const c of kids) if (c != null) e.append(c);
  return e;
}
function svg(tag, attrs) {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  return e;
}
function section(title, wide) {
  const s = el("section", { cls: wide ? "wide" : "" }, el("h2", { text: title }));
  main.append(s); return s;
}
const fmtUs = (us) => us >= 1000 ? (us / 1000).toFixed(us >= 100000 ? 0 : 1) + " ms" : us + " µs";
const name = (i) => D.bots[i].name;

// ---- games: move application from any start position ----
const RULES = {
  tictactoe: {
    parse: (s) => ({ c: s.split("") }),
    text: (p) => p.c.join(""),
    play(p, m) {
      const x = p.c.filter((v) => v === "X").length, o = p.c.filter((v) => v === "O").length;
      const i = +m; if (!(i >= 0 && i < 9) || p.c[i] !== ".") throw new Error("bad move " + m);
      p.c[i] = x === o ? "X" : "O"; p.last = i;
    },
  },
  notakto: {
    parse: (s) => ({ b: s.split("/").map((t) => t.split("")) }),
    text: (p) => p.b.map((t) => t.join("")).join("/"),
    play(p, m) {
      const k = m.charCodeAt(0) - 65, i = +m.slice(1);
      if (!p.b[k] || !(i >= 0 && i < 9) || p.b[k][i] !== "." || lineOf(p.b[k], "X")) throw new Error("bad move " + m);
      p.b[k][i] = "X"; p.last = [k, i];
    },
  },
  uttt: {
    parse(s) { const [c, f, w] = s.split("/"); return { c: c.split(""), f: +f, w: w.split("") }; },
    text: (p) => p.c.join("") + "/" + p.f + "/" + p.w.join(""),
    play(p, m) {
      const b = +m[0], i = +m[1], k = b * 9 + i;
      if (m.length !== 2 || !(b >= 0 && b < 9 && i >= 0 && i < 9) || p.c[k] !== "." || p.w[b] !== "." || (p.f !== 9 && p.f !== b))
        throw new Error("bad move " + m);
      const x = p.c.filter((v) => v === "X").length, o = p.c.filter((v) => v === "O").length;
      const me = x === o ? "X" : "O";
      p.c[k] = me; p.last = k;
      const local = p.c.slice(b * 9, b * 9 + 9);
      if (lineOf(local, me)) p.w[b] = me; else if (!local.includes(".")) p.w[b] = "=";
      p.f = p.w[i] === "." ? i : 9;
    },
  },
};
const LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];
function lineOf(cells, v) { return LINES.some((l) => l.every((i) => cells[i] === v)); }

// Every position of a game, start first.
function positions(g) {
  const R = RULES[D.kinds[g.g]];
  const moves = g.m === "" ? [] : g.m.split(",");
  let p = R.parse(D.starts[g.s]);
  const out = [{ p: structuredClone(p), text: R.text(p) }];
  for (const m of moves) {
    try { R.play(p, m); } catch (e) { out.push({ p: structuredClone(p), text: R.text(p), err: e.message }); break; }
    out.push({ p: structuredClone(p), text: R.text(p) });
  }
  return { moves, list: out };
}

// ---- page ----
const head = el("header", {}, el("h1", { text: D.title === D.folder ? "referee report: " + D.title : D.title }),
  el("span", { text: `${D.games_total} games · ${D.bots.length} bots · ${D.kinds.join(", ")}` + (D.title === D.folder ? "" : ` · folder ${D.folder}`) }));
const main = el("main");
app.append(head, main);

// Leaderboard with Elo interval bars on a shared scale. An unbounded end
// (a perfect or a null score) comes as the string "+inf" or "-inf": the bar
// then runs off its edge of the scale, open-ended, and the text says inf.
// Many bots: the long tables take the page's width.
const MANY = D.bots.length > 8;
{
  const s = section("Leaderboard", MANY);
  const num = (e) => (typeof e === "number" ? e : e[0] === "-" ? -Infinity : Infinity);
  const txt = (e) => (typeof e === "number" ? (e > 0 ? "+" : "") + e : e);
  let lo = -100, hi = 100;
  for (const b of D.bots) for (const e of b.elo.map(num)) if (isFinite(e)) { lo = Math.min(lo, e); hi = Math.max(hi, e); }
  const span = Math.max(Math.abs(lo), Math.abs(hi)), pos = (e) => (50 + 50 * Math.max(-1, Math.min(1, num(e) / span))).toFixed(2) + "%";
  const t = el("table", { id: "leaderboard" }, el("thead", {}, el("tr", {},
    ...["#", "Bot", "Games", "W-D-L", "Points", "Elo", "95 % interval", "Avg move", "Forfeits"].map((h, i) => el("th", { cls: i === 1 ? "n" : "", text: h })))));
  const tb = el("tbody");
  D.bots.forEach((b, i) => {
    const open = !isFinite(num(b.elo[1])) || !isFinite(num(b.elo[2]));
    const bar = el("div", { cls: open ? "bar open" : "bar", title: `${txt(b.elo[1])} … ${txt(b.elo[2])}` }, el("u"), el("i"), el("b"));
    bar.children[1].style.left = pos(b.elo[1]);
    bar.children[1].style.width = `calc(${pos(b.elo[2])} - ${pos(b.elo[1])})`;
    bar.children[2].style.left = `calc(${pos(b.elo[0])} - 1px)`;
    tb.append(el("tr", {}, el("td", { text: i + 1 }), el("td", { cls: "n", text: b.name }), el("td", { text: b.games }),
      el("td", { text: b.wdl.join("-") }), el("td", { text: b.points }), el("td", { text: txt(b.elo[0]) }),
      el("td", {}, bar), el("td", { text: fmtUs(b.avg_us) }), el("td", { text: b.forfeits })));
  });
  t.append(tb); s.append(t, el("div", { cls: "muted", text: `Elo against the field, ranked by score (points per game); bars span ±${Math.round(span)}, and an interval with an unbounded end (a perfect or a null score) runs off the edge.` }));
}

// The run's settings and bots, as its folder keeps them.
{
  const s = section("Settings", MANY);
  s.id = "settings";
  const S = D.settings;
  if (S.note) s.append(el("div", { cls: "muted", text: S.note }));
  if (S.rows.length) s.append(el("table", { cls: "kv" }, ...S.rows.map(([k, v]) => el("tr", {}, el("td", { text: k }), el("td", { text: v })))));
  if (S.bots.length) {
    s.append(el("h2", { text: "Bots" }), el("div", { cls: "scroll list" }, el("table", { id: "botlist" },
      el("tr", {}, ...["Name", "Bot", "What it is"].map((h) => el("th", { cls: "n", text: h }))),
      ...S.bots.map((b) => el("tr", {}, el("td", { cls: "n", text: b.name }), el("td", { cls: "wrap", text: b.bot }), el("td", { cls: "wrap", text: b.description || "" }))))));
  }
}

// Crosstable: the row bot's score against the column bot, as a heat map;
// many bots take the page's width, smaller cells, and scroll in the card.
{
  const s = section("Crosstable (row's score against column)", MANY);
  const t = el("table", { cls: MANY ? "heat many" : "heat", id: "cross" }, el("tr", {}, el("th", { cls: "n", text: "" }), ...D.bots.map((b, i) => el("th", { text: i + 1, title: b.name }))));
  D.cross.forEach((row, i) => {
    const tr = el("tr", {}, el("th", { cls: "n", text: `${i + 1}. ${name(i)}` }));
    row.forEach(([w, d, l], j) => {
      const n = w + d + l, td = el("td");
      if (i === j) td.style.background = "#ddd";
      else if (n) {
        const sc = (w + d / 2) / n;
        td.textContent = (100 * sc).toFixed(0) + "%"; td.title = `${name(i)} vs ${name(j)}: ${w}-${d}-${l}`;
        td.style.background = `hsl(${Math.round(sc * 120)},65%,${80 - 25 * Math.abs(sc - 0.5)}%)`;
      }
      tr.append(td);
    });
    t.append(tr);
  });
  s.append(el("div", { cls: "scroll tall", id: "crosswrap" }, t));
}

// Score as the games went on.
{
  const s = section("Points as the games went on", true);
  const W = 1100, H = 260, L = 50, B = 24;
  const maxX = Math.max(1, D.games.length), maxY = Math.max(1, ...D.series.map((v) => v.length ? v[v.length - 1][1] : 0));
  const g = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: "100%", height: H });
  const X = (x) => L + (W - L - 10) * x / maxX, Y = (y) => H - B - (H - B - 10) * y / maxY;
  for (let k = 0; k <= 4; k++) {
    const y = maxY * k / 4;
    g.append(svg("line", { x1: L, x2: W - 10, y1: Y(y), y2: Y(y), stroke: "#e3e6ec" }));
    const tx = svg("text", { x: L - 6, y: Y(y) + 4, "text-anchor": "end", "font-size": 11, fill: "#667" }); tx.textContent = Math.round(y); g.append(tx);
  }
  const xt = svg("text", { x: W - 10, y: H - 6, "text-anchor": "end", "font-size": 11, fill: "#667" }); xt.textContent = `game ${maxX}`; g.append(xt);
  const leg = el("div", { cls: "legend" });
  D.series.forEach((v, i) => {
    const c = COLORS[i % COLORS.length];
    g.append(svg("polyline", { fill: "none", stroke: c, "stroke-width": 2, points: [[0, 0], ...v].map(([x, y]) => X(x).toFixed(1) + "," + Y(y).toFixed(1)).join(" ") }));
    const sw = el("span", {}, el("b", { text: "■ " }), name(i)); sw.firstChild.style.color = c; leg.append(sw);
  });
  s.append(g, leg);
}

// Replay viewer.
const replay = section("Replay");
replay.id = "replay";
let cur = null, missing = null;
// Opens game g (at its end if `atEnd`) and puts its link in the address,
// so that the address can be shared.
function showGame(g, atEnd) {
  const { moves, list } = positions(g);
  cur = { g, moves, list, i: atEnd ? list.length - 1 : 0 };
  missing = null;
  try { history.replaceState(null, "", "#replay=" + g.id); } catch (e) { /* an address that cannot change */ }
  drawReplay();
}
// Opens the game a `#replay=ID` address names; whether it names one.
function openFromHash(h) {
  const r = /replay=(\d+)/.exec(h);
  if (!r) return false;
  const g = D.games.find((x) => String(x.id) === r[1]);
  if (g) showGame(g, true); else { cur = null; missing = r[1]; drawReplay(); }
  replay.scrollIntoView();
  return true;
}
window.addEventListener("hashchange", () => openFromHash(location.hash));
const moveText = (kind, m) => kind === "uttt" ? m[0] + " " + m.slice(1) : m;
function cell(v, extra) { const d = el("div", { cls: (v === "." ? "" : v) + (extra || ""), text: v === "." ? "" : v }); return d; }
// `win`: the winning line's cells (tictactoe) or boards (uttt), from the
// Rust rules (Game::winning_line), shown on the final position.
function drawBoard(kind, p, win) {
  if (kind === "tictactoe") {
    const b = el("div", { cls: "board" }); b.style.gridTemplateColumns = "repeat(3,auto)";
    p.c.forEach((v, i) => b.append(cell(v, (p.last === i ? " last" : "") + (win.includes(i) ? " win" : "")))); return b;
  }
  if (kind === "notakto") {
    const w = el("div");
    p.b.forEach((cells, k) => {
      const b = el("div", { cls: "board" + (lineOf(cells, "X") ? " dead" : "") }); b.style.gridTemplateColumns = "repeat(3,auto)";
      cells.forEach((v, i) => b.append(cell(v, p.last && p.last[0] === k && p.last[1] === i ? " last" : "")));
      w.append(el("div", { style: "display:inline-block" }, el("div", { cls: "lbl", text: String.fromCharCode(65 + k) }), b));
    });
    return w;
  }
  const u = el("div", { cls: "uttt" });
  for (let b = 0; b < 9; b++) {
    const lb = el("div", { cls: "board" + (p.f === b || (p.f === 9 && p.w[b] === "." && !cur.end) ? " forced" : "") + (win.includes(b) ? " win" : "") });
    lb.style.gridTemplateColumns = "repeat(3,auto)";
    for (let i = 0; i < 9; i++) lb.append(cell(p.c[b * 9 + i], p.last === b * 9 + i ? " last" : ""));
    if (p.w[b] !== ".") lb.append(el("div", { cls: "mark " + p.w[b], text: p.w[b] === "=" ? "=" : p.w[b] }));
    u.append(lb);
  }
  return u;
}
function drawReplay() {
  replay.replaceChildren(el("h2", { text: "Replay" }));
  if (!cur) {
    replay.append(el("div", { cls: "muted", text: missing ? `Game ${missing} is not in this report.` : "Pick a game in the list below." }));
    return;
  }
  const { g, moves, list, i } = cur, kind = D.kinds[g.g];
  cur.end = i === list.length - 1;
  replay.dataset.game = g.id;
  const res = (g.w ? `${name(g.p[g.w - 1])} (player ${g.w}) wins` : "draw") + (g.rd ? ` ${g.rd}` : "");
  const nav = el("div", {},
    el("button", { id: "first", text: "« first", onclick: () => step(-1e9) }), el("button", { id: "prev", text: "◀ back", onclick: () => step(-1) }),
    el("button", { id: "next", text: "forward ▶", onclick: () => step(1) }), el("button", { id: "last", text: "last »", onclick: () => step(1e9) }),
    el("span", { id: "ply", text: `move ${i} / ${moves.length}` }));
  const info = el("div", { cls: "info" },
    el("div", {}, el("b", { text: `Game ${g.id} · ${kind}` })),
    el("div", { text: `X/player 1: ${name(g.p[0])} · player 2: ${name(g.p[1])}` }),
    el("div", { text: `Result: ${res} (${D.terms[g.t]})` }),
    el("div", {}, el("a", { id: "replaylink", href: "#replay=" + g.id, text: "link to this game" })));
  if (i > 0) {
    const k = i - 1, timed = k - g.o;
    const mt = moveText(kind, moves[k]);
    info.append(el("div", { text: `Move ${i}: ${mt}` + (timed >= 0 && timed < g.ms.length ? ` in ${fmtUs(g.ms[timed])}` : " (opening)") }));
  }
  if (list[i].err) info.append(el("div", { text: "Cannot replay: " + list[i].err }));
  if (g.f && cur.end) {
    const f = g.f;
    info.append(el("h2", { text: `Forfeit: player ${f.seat} (${name(g.p[f.seat - 1])}), ${f.reason} at move ${f.move_number}` }),
      el("div", { text: `${f.detail} · ${fmtUs(f.time_us)}` + (f.overrun_us ? `, ${fmtUs(f.overrun_us)} over` : "") + (f.exit_status ? " · " + f.exit_status : "") }),
      el("div", { text: "Line received:" }), el("pre", { id: "fline", text: f.line == null ? "(none)" : f.line }),
      el("div", { text: "stderr tail:" }), el("pre", { id: "fstderr", text: f.stderr_tail || "(empty)" }));
  }
  // Every move: who played it (seats alternate from the side to move at
  // the start, which the Rust rules give) and how long it took.
  const first = D.movers[g.s] === 2 ? 1 : 0, mark = kind === "notakto" ? ["P1", "P2"] : ["X", "O"];
  const rows = moves.map((m, k) => {
    const seat = (first + k) % 2, timed = k - g.o;
    const t = timed >= 0 && timed < g.ms.length ? fmtUs(g.ms[timed]) : k < g.o ? "opening" : "";
    return el("tr", { cls: k + 1 === i ? "sel" : "", onclick: () => { cur.i = k + 1; drawReplay(); } },
      el("td", { text: k + 1 }), el("td", { cls: "n", text: `${name(g.p[seat])} (${mark[seat]})` }),
      el("td", { cls: "n", text: moveText(kind, m) }), el("td", { text: t }));
  });
  const table = el("table", { id: "moves" }, el("tr", {}, ...["#", "Player", "Move", "Time"].map((h, j) => el("th", { cls: j === 1 || j === 2 ? "n" : "", text: h }))), ...rows);
  const win = cur.end && g.wl ? g.wl : [];
  const box = el("div", { cls: "scroll list" }, table);
  replay.append(nav, el("div", {}, el("div", { id: "board", style: "display:inline-block", "data-pos": list[i].text }, drawBoard(kind, list[i].p, win)), info), box);
  // The current move in view in its list, without moving the page.
  const sel = table.querySelector("tr.sel");
  if (sel) box.scrollTop = Math.max(0, sel.offsetTop - box.clientHeight / 2);
}
function step(d) { if (!cur) return; cur.i = Math.max(0, Math.min(cur.list.length - 1, cur.i + d)); drawReplay(); }
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "SELECT") return;
  if (e.key === "ArrowRight") { step(1); e.preventDefault(); } else if (e.key === "ArrowLeft") { step(-1); e.preventDefault(); }
});
drawReplay();

// How games ended.
{
  const s = section("How games ended");
  const t = el("table");
  const tot = Math.max(1, D.games_total);
  for (const [k, n] of D.terminations) {
    const bar = el("div", { cls: "bar" }, el("i")); bar.firstChild.style.left = "0"; bar.firstChild.style.width = (100 * n / tot) + "%";
    t.append(el("tr", {}, el("td", { cls: "n", text: k }), el("td", { text: n }), el("td", { text: (100 * n / tot).toFixed(1) + "%" }), el("td", {}, bar)));
  }
  const wins = [0, 0, 0]; for (const g of D.games) wins[g.w]++;
  t.append(el("tr", {}, el("td", { cls: "n", text: "player 1 / draw / player 2" }), el("td", { text: `${wins[1]} / ${wins[0]} / ${wins[2]}` })));
  s.append(t);
}

// Game list: filtered, 50 rows a page, rows built only for the page shown.
const PAGE = 50;
let shown = D.games, page = 0;
{
  const s = section("Games", true);
  const opt = (v, t) => el("option", { value: v, text: t });
  const fb = el("select", { id: "fbot" }, opt("", "any bot"), ...D.bots.map((b, i) => opt(i, b.name)));
  const fr = el("select", { id: "fres" }, opt("", "any result"), opt("1", "player 1 wins"), opt("2", "player 2 wins"), opt("0", "draw"),
    opt("w", "chosen bot wins"), opt("l", "chosen bot loses"));
  const ft = el("select", { id: "fterm" }, opt("", "any ending"), ...D.terms.map((t, i) => opt(i, t)));
  const count = el("span", { cls: "muted" });
  const body = el("tbody");
  const pager = el("div", {}, el("button", { text: "◀", onclick: () => { page--; render(); } }), el("span", { id: "page" }), el("button", { text: "▶", onclick: () => { page++; render(); } }));
  function apply() {
    const b = fb.value === "" ? -1 : +fb.value, r = fr.value, t = ft.value === "" ? -1 : +ft.value;
    shown = D.games.filter((g) => {
      if (b >= 0 && g.p[0] !== b && g.p[1] !== b) return false;
      if (t >= 0 && g.t !== t) return false;
      if (r === "0" || r === "1" || r === "2") return g.w === +r;
      if ((r === "w" || r === "l") && b >= 0) { const won = g.w && g.p[g.w - 1] === b; return r === "w" ? won : g.w !== 0 && !won; }
      return true;
    });
    page = 0; render();
  }
  function render() {
    const pages = Math.max(1, Math.ceil(shown.length / PAGE)); page = Math.max(0, Math.min(pages - 1, page));
    count.textContent = `${shown.length} of ${D.games.length} games`;
    pager.children[1].textContent = ` page ${page + 1} / ${pages} `;
    body.replaceChildren(...shown.slice(page * PAGE, page * PAGE + PAGE).map((g) => {
      const n = g.m === "" ? 0 : g.m.split(",").length;
      const tr = el("tr", { "data-id": g.id, onclick: () => { showGame(g, false); replay.scrollIntoView(); } },
        el("td", { text: g.id }), el("td", { cls: "n", text: D.kinds[g.g] }), el("td", { cls: "n", text: name(g.p[0]) }), el("td", { cls: "n", text: name(g.p[1]) }),
        el("td", { text: g.w === 1 ? "1-0" : g.w === 2 ? "0-1" : "½-½" }), el("td", { cls: "n", text: D.terms[g.t] }), el("td", { text: n }),
        el("td", { text: fmtUs(g.ms.reduce((a, b) => a + b, 0)) }));
      return tr;
    }));
  }
  for (const x of [fb, fr, ft]) x.addEventListener("change", apply);
  const t = el("table", { id: "games" }, el("thead", {}, el("tr", {}, ...["Id", "Game", "Player 1", "Player 2", "Result", "Ending", "Moves", "Time"].map((h, i) => el("th", { cls: i && i < 4 || i === 5 ? "n" : "", text: h })))), body);
  s.append(el("div", {}, fb, fr, ft, count), t, pager);
  render();
}

// A shared link (#replay=ID) opens its game at the end.
openFromHash(HASH);

// Self-test for the browser test: `#selftest=ID,...` replays each game
// through the buttons and writes what the page shows into #selftest as
// JSON, with the address each opened game set and the page's widths.
const m = /selftest=([\d,]*)/.exec(HASH);
if (m) {
  const out = { leaderboard: [...document.querySelectorAll("#leaderboard tbody tr")].map((r) => [...r.children].slice(0, 6).map((c) => c.textContent)), games: [] };
  const pos = () => document.getElementById("board").dataset.pos;
  for (const id of m[1].split(",").filter((x) => x)) {
    const g = D.games.find((x) => String(x.id) === id);
    if (!g) { out.games.push({ id, missing: true }); continue; }
    const row = document.querySelector(`#games tr[data-id="${g.id}"]`);
    if (row) row.click(); else showGame(g);
    const r = { id, hash: location.hash, positions: [pos()] };
    for (let k = 0; k < cur.moves.length; k++) { document.getElementById("next").click(); r.positions.push(pos()); }
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowLeft" }));
    r.back = pos();
    document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight" }));
    r.fline = document.getElementById("fline")?.textContent ?? null;
    r.fstderr = document.getElementById("fstderr")?.textContent ?? null;
    r.moves = document.querySelectorAll("#moves tr").length - 1;
    out.games.push(r);
  }
  const de = document.documentElement, cw = document.getElementById("crosswrap");
  out.layout = { page: de.scrollWidth, view: de.clientWidth, cells: document.querySelectorAll("#cross td").length,
    cross: [cw.clientWidth, cw.scrollWidth], card: cw.parentElement.getBoundingClientRect().right };
  app.append(el("pre", { id: "selftest", text: JSON.stringify(out) }));
}
// Since navigation start: reading the file, parsing the page and its data, and drawing it.
document.body.setAttribute("data-ready-ms", performance.now().toFixed(1));
})();
