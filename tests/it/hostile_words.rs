//! Words from bots are data, everywhere: a real bot whose replies, stderr
//! and names hold HTML, Markdown links and images, emphasis, table pipes,
//! ESC/OSC sequences, C1 controls, bidi overrides and invalid UTF-8 goes
//! through `match`, `grade`, `grade-all` (with its class tournament) and a
//! league, and none of it reaches a terminal, a feedback page, a grading
//! system's file, a CSV, the HTML report or a league page raw.
//!
//! Feedback pages are rendered with GitHub's own Markdown renderer
//! (`cmark-gfm`, raw HTML allowed, autolinks and tables on), and the HTML
//! it makes is checked for links, images, emphasis and scripts.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use referee::escape::terminal::is_special;

use crate::common::{run, stderr, stdout, Group};

/// What the hostile bot says, in every channel it has.
const WORDS: &str = "<img src=x onerror=alert(1)> <script>alert(2)</script> **pwned** \
                     _em_ [link](javascript:alert(3)) ![i](http://e.invalid/i.png) \
                     www.evil.example &lt;b&gt; | x | y |";

/// A tic-tac-toe bot that writes [`WORDS`] with terminal sequences to its
/// stderr, and answers its first turn with them (not a move: a forfeit
/// whose detail and line carry them), invalid UTF-8 and a C1 CSI included.
const HOSTILE_BOT: &str = r#"import sys
W = sys.argv[1] if len(sys.argv) > 1 else ""
sys.stderr.write(W + "\x1b]0;owned\x07\x1b[2J\x1b[31m red \u202eevil\u009b31m\n```\n# heading\n</pre><script>alert(4)</script>\n")
sys.stderr.flush()
for line in sys.stdin:
    if line.startswith("turn"):
        sys.stdout.buffer.write((W + "\x1b]8;;http://e.invalid\x1b\\click\x1b]8;;\x1b\\\u202e").encode() + b"\xff\x9b\n")
        sys.stdout.flush()
"#;

/// A bot's and a student's name with everything in it.
const NAME: &str = "eve <b>bold</b> [x](javascript:alert(5)) *em* \u{1b}[31mred\u{202e}";

/// Writes the hostile bot into `dir`: `bot.py`, and a `bot.toml` whose
/// name and description are hostile too.
fn hostile_bot(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    // The words are in the program: a submission's command words may not
    // hold a `/` (grading refuses what looks like a path outside it).
    let program = HOSTILE_BOT.replace(
        "W = sys.argv[1] if len(sys.argv) > 1 else \"\"",
        &format!("W = {WORDS:?}"),
    );
    std::fs::write(dir.join("bot.py"), program).unwrap();
    let toml = format!(
        "name = {name}\ndescription = {desc}\ncommand = [\"python3\", \"bot.py\"]\n",
        name = toml_string(NAME),
        desc = toml_string(&format!("{WORDS} \u{1b}]0;title\u{7}")),
    );
    std::fs::write(dir.join("bot.toml"), toml).unwrap();
    dir.join("bot.toml")
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Fails when `bytes` (named `what`) are not UTF-8 text free of every
/// character a terminal acts on (line feeds and tabs aside).
fn assert_printable(what: &str, bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).unwrap_or_else(|e| {
        panic!(
            "{what} is not UTF-8 ({e}): {:?}",
            String::from_utf8_lossy(bytes)
        )
    });
    if let Some(c) = text
        .chars()
        .find(|&c| is_special(c) && c != '\n' && c != '\t')
    {
        panic!("{what} holds a raw {:?}:\n{text}", c);
    }
}

/// Both streams of a command, printable.
fn assert_output_printable(what: &str, o: &Output) {
    assert_printable(&format!("{what}'s stdout"), &o.stdout);
    assert_printable(&format!("{what}'s stderr"), &o.stderr);
}

/// Every file under `dir`, printable (the HTML report, CSVs, JSON,
/// Markdown, the games), but the copies of TOML configuration a run keeps:
/// TOML has no escape for a bidi character in a literal string, and they
/// are read back by referee, not shown.
fn assert_files_printable(dir: &Path) {
    for entry in walk(dir) {
        if entry.extension().is_some_and(|e| e == "toml") {
            continue;
        }
        assert_printable(
            &entry.display().to_string(),
            &std::fs::read(&entry).unwrap(),
        );
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The HTML report keeps its two scripts and no markup a bot wrote.
fn assert_report_safe(path: &Path) {
    let html = std::fs::read_to_string(path).unwrap();
    assert_printable(&path.display().to_string(), html.as_bytes());
    assert_eq!(html.matches("<script").count(), 2, "{}", path.display());
    for bad in ["<img", "<b>", "<script>alert", "alert(2)</script>"] {
        assert!(!html.contains(bad), "{} holds {bad}", path.display());
    }
}

/// `markdown` as GitHub renders it (raw HTML let through, autolinks and
/// tables on), or `None` where cmark-gfm is not installed.
fn render(markdown: &str) -> Option<String> {
    let mut child = match Command::new("cmark-gfm")
        .args([
            "--unsafe",
            "-e",
            "table",
            "-e",
            "autolink",
            "-e",
            "strikethrough",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(_) => {
            crate::common::skipped(
                "rendering feedback with cmark-gfm: it is not installed (apt-get install \
                 cmark-gfm; .ci/run installs it)",
            );
            return None;
        }
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(markdown.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    Some(String::from_utf8(out.stdout).unwrap())
}

/// A feedback page in Markdown holds no link, image, emphasis, raw HTML or
/// extra table cell a bot wrote, once rendered.
fn assert_markdown_safe(what: &str, markdown: &str) {
    assert_printable(what, markdown.as_bytes());
    let Some(html) = render(markdown) else {
        return;
    };
    for bad in [
        "<img",
        "<script",
        "<a ",
        "<em>",
        "<del>",
        "<b>",
        "<strong>pwned",
        "<h1>heading",
    ] {
        assert!(
            !html.contains(bad),
            "{what} renders {bad}:\n{html}\n---\n{markdown}"
        );
    }
    // Our own bold words are the verdict's; a bot's `**pwned**` stays text.
    if markdown.contains("pwned") {
        assert!(html.contains("**pwned**"), "{what}:\n{html}");
    }
    // Every row of every table has its header's number of cells.
    for table in html.split("<table>").skip(1) {
        let table = table.split("</table>").next().unwrap();
        let cells = |t: &str, tag: &str| {
            t.matches(&format!("<{tag}>")).count() + t.matches(&format!("<{tag} ")).count()
        };
        let header = cells(table, "th");
        for row in table.split("<tr>").skip(2) {
            assert_eq!(cells(row, "td"), header, "{what}: a row of\n{table}");
        }
    }
}

#[test]
fn a_hostile_bot_in_a_match_reaches_neither_terminal_nor_report() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = hostile_bot(&tmp.path().join("eve"));
    let out = tmp.path().join("run");
    let o = run(&[
        "match",
        "tictactoe",
        manifest.to_str().unwrap(),
        "random",
        "--games",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_output_printable("match", &o);
    let text = stdout(&o) + &stderr(&o);
    // The forfeits are there, shown.
    assert!(text.contains("\\x1b"), "{text}");
    let report = out.join("report.html");
    if !report.exists() {
        let o = run(&["report", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_report_safe(&report);
    // The record keeps the reply as sent, escaped to ASCII and cut.
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    assert!(games.contains(r#"|\\x1b]8;;http"#), "{games}");
    assert_files_printable(&out);
}

#[test]
fn a_hostile_submission_reaches_no_grading_output_raw() {
    let tmp = tempfile::tempdir().unwrap();
    // `grade` of one folder, with every grading system's output.
    let sub = tmp.path().join("sub");
    hostile_bot(&sub);
    let files = tmp.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    let f = |n: &str| files.join(n).to_str().unwrap().to_string();
    for last in ["--coderunner", "--autolab", "--github-classroom"] {
        let o = run(&[
            "grade",
            "tictactoe",
            sub.to_str().unwrap(),
            "--games",
            "2",
            "--feedback",
            &f("feedback.md"),
            "--gradescope",
            &f("results.json"),
            "--prairielearn",
            &f("pl.json"),
            last,
        ]);
        assert_output_printable("grade", &o);
        // The last line is the grading system's JSON (or base64) and reads.
        let line = stdout(&o).lines().last().unwrap_or("").to_string();
        if last != "--github-classroom" {
            serde_json::from_str::<serde_json::Value>(&line)
                .unwrap_or_else(|e| panic!("{last}: {e}: {line}\n{}{}", stdout(&o), stderr(&o)));
        }
    }
    assert_files_printable(&files);
    let page = std::fs::read_to_string(files.join("feedback.md")).unwrap();
    assert!(page.contains("Forfeit"), "{page}");
    assert_markdown_safe("feedback.md", &page);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(files.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(results["output_format"], "md");
    assert_markdown_safe("results.json output", results["output"].as_str().unwrap());
    for t in results["tests"].as_array().unwrap() {
        let text = t["output"].as_str().unwrap();
        assert!(!text.chars().any(|c| is_special(c) && c != '\n'), "{text}");
    }
    let pl: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(files.join("pl.json")).unwrap()).unwrap();
    assert_markdown_safe("PrairieLearn output", pl["output"].as_str().unwrap());

    // `grade-all` of a class whose student folder has a hostile name, with
    // the class tournament's report.
    let class = tmp.path().join("class");
    hostile_bot(&class.join(NAME));
    std::fs::create_dir_all(class.join("=HYPERLINK(\"http:x\")")).unwrap();
    std::fs::write(
        class.join("=HYPERLINK(\"http:x\")/bot.py"),
        "import sys\nfor l in sys.stdin:\n    if l.startswith('turn'):\n        \
         print(l.split()[1].index('.'), flush=True)\n",
    )
    .unwrap();
    let out = tmp.path().join("grades");
    let o = run(&[
        "grade-all",
        "tictactoe",
        class.to_str().unwrap(),
        "--games",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--tournament",
        "--prairielearn",
        "--github-classroom",
        "--autolab",
        "--coderunner",
    ]);
    assert_output_printable("grade-all", &o);
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    assert_files_printable(&out);
    for md in walk(&out.join("feedback")) {
        let text = std::fs::read_to_string(&md).unwrap();
        assert_markdown_safe(&md.display().to_string(), &text);
    }
    // One record per student in the CSVs, and no cell a spreadsheet runs.
    for name in ["gradebook.csv", "grades.csv"] {
        let text = std::fs::read_to_string(out.join(name)).unwrap();
        assert_eq!(text.lines().count(), 3, "{name}:\n{text}");
        let mut r = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        for rec in r.records() {
            for cell in rec.unwrap().iter() {
                let lead = cell.trim_start();
                assert!(
                    !lead.starts_with(['=', '+', '@']) && !lead.starts_with("-1+"),
                    "{name}: {cell}"
                );
            }
        }
        assert!(text.contains("'=HYPERLINK"), "{name}:\n{text}");
    }
    assert_report_safe(&out.join("tournament").join("report.html"));
}

/// A GET over plain HTTP/1.1: the answer's body.
fn get(addr: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut bytes = Vec::new();
    let _ = s.read_to_end(&mut bytes);
    let text = String::from_utf8(bytes).unwrap();
    // The body: the header lines end in CRLF, as HTTP wants.
    text.split_once("\r\n\r\n")
        .map_or(text.clone(), |x| x.1.to_string())
}

#[test]
fn a_hostile_submission_to_a_league_shows_on_no_page_raw() {
    let tmp = tempfile::tempdir().unwrap();
    let l = tmp.path().join("league");
    let d = l.to_str().unwrap();
    let ok = |args: &[&str]| {
        let o = run(args);
        assert_output_printable(&format!("{args:?}"), &o);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o
    };
    crate::common::league_init(&l);
    let eve = tmp.path().join("eve");
    hostile_bot(&eve);
    // Its words are its stderr and replies: the admission log keeps them.
    std::fs::remove_file(eve.join("bot.toml")).unwrap();
    ok(&["league", "submit", d, "eve", eve.to_str().unwrap()]);
    ok(&["league", "run", d, "--games", "4"]);
    ok(&["league", "standings", d]);
    let mut server = Group::spawn(crate::common::referee().args([
        "league",
        "serve",
        d,
        "--listen",
        "127.0.0.1:0",
    ]));
    let addr = server.address().to_string();
    let page = get(&addr, "/student/eve");
    assert!(page.contains("admission log"), "{page}");
    assert_printable("/student/eve", page.as_bytes());
    for bad in ["<img", "<script>alert", "<b>"] {
        assert!(!page.contains(bad), "/student/eve holds {bad}:\n{page}");
    }
    assert!(page.contains("&lt;img src=x"), "{page}");
}
