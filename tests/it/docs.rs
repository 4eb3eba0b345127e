//! docs/commands.md is held to `--help`: every option a command has is on
//! its page, and the page names no option that does not exist.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{root, run, stdout};

/// The long options of a `--help` text: the `--flag` that starts an option
/// line (not those quoted in descriptions).
fn help_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-h, ").unwrap_or(l);
            let l = l.strip_prefix("-V, ").unwrap_or(l);
            let rest = l.strip_prefix("--")?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            (!name.is_empty() && name != "help" && name != "version").then_some(name)
        })
        .collect()
}

/// Every `--flag` written anywhere in `text`.
fn mentioned_flags(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let before = rest[..i].chars().last();
        rest = &rest[i + 2..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if name.chars().next().is_some_and(|c| c.is_ascii_lowercase()) {
            out.insert(name.trim_end_matches('-').to_string());
        }
    }
    out
}

/// The subcommands `referee --help` lists.
fn commands() -> Vec<String> {
    subcommands(&stdout(&run(&["--help"])))
}

/// The subcommands a `--help` text lists.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect()
}

/// The sections of docs/commands.md by heading (`## \`referee X\``), and the
/// text of the bot options section.
fn sections(doc: &str) -> (BTreeMap<String, String>, String) {
    let mut out = BTreeMap::new();
    let mut bot_options = String::new();
    for part in doc.split("\n## ").skip(1) {
        let (heading, body) = part.split_once('\n').unwrap_or((part, ""));
        if let Some(cmd) = heading
            .strip_prefix("`referee ")
            .and_then(|h| h.strip_suffix('`'))
        {
            out.insert(cmd.to_string(), body.to_string());
        } else if heading == "Bot options" {
            bot_options = body.to_string();
        }
    }
    (out, bot_options)
}

#[test]
fn the_command_reference_matches_help() {
    let doc = std::fs::read_to_string(root().join("docs/commands.md")).expect("docs/commands.md");
    let (sections, bot_options) = sections(&doc);
    let bot_flags = mentioned_flags(&bot_options);
    assert!(bot_flags.contains("sandbox") && bot_flags.contains("reuse"));
    let cmds = commands();
    assert!(cmds.len() >= 15, "commands: {cmds:?}");
    let mut all = BTreeSet::new();
    let mut helps = BTreeMap::new();
    for cmd in &cmds {
        let help = stdout(&run(&[cmd, "--help"]));
        let mut flags = help_flags(&help);
        // A command with subcommands (`league`): its page covers theirs.
        for sub in subcommands(&help) {
            flags.extend(help_flags(&stdout(&run(&[cmd, &sub, "--help"]))));
        }
        all.extend(flags.iter().cloned());
        helps.insert(cmd.clone(), flags);
    }
    let mut problems = Vec::new();
    for cmd in &cmds {
        let Some(body) = sections.get(cmd) else {
            problems.push(format!("`referee {cmd}` has no section"));
            continue;
        };
        let help = &helps[cmd];
        let mut documented = mentioned_flags(body);
        if body.contains("(#bot-options)") {
            documented.extend(bot_flags.iter().cloned());
        }
        for f in help.difference(&documented) {
            problems.push(format!(
                "`referee {cmd}`: --{f} is in --help but not on the page"
            ));
        }
        for f in documented.difference(&all) {
            problems.push(format!(
                "`referee {cmd}`: --{f} is on the page but no command has it"
            ));
        }
        // The usage line names only the command's own options.
        let usage = body.split("```").nth(1).unwrap_or("");
        for f in mentioned_flags(usage).difference(help) {
            problems.push(format!(
                "`referee {cmd}`: usage names --{f}, not an option of it"
            ));
        }
    }
    for s in sections.keys() {
        if !cmds.contains(s) {
            problems.push(format!("section `referee {s}` is not a command"));
        }
    }
    assert!(
        problems.is_empty(),
        "docs/commands.md drifted:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_flag_readers_read_what_they_should() {
    let help = "Options:\n      --games <N>  Games (with --sprt)\n  -h, --help  Print help\n";
    assert_eq!(help_flags(help), BTreeSet::from(["games".to_string()]));
    let text = "`--sandbox[=best-effort]`, x--y, --tmp-mb N and --- and --Capital";
    assert_eq!(
        mentioned_flags(text),
        BTreeSet::from(["sandbox".to_string(), "tmp-mb".to_string()])
    );
}

/// Every example command in the docs and the README that plays under
/// CodinGame's time profile gives a built-in `optimal` a time budget: an
/// untimed `optimal` (20 000 iterations, about 125 ms a move) against a
/// bot held to CodinGame's 100 ms would not be a fair example.
#[test]
fn codingame_examples_time_both_sides_alike() {
    let mut files = vec![root().join("README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let mut seen = 0;
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines() {
            if !(line.contains("referee ") && line.contains("--time-profile codingame")) {
                continue;
            }
            seen += 1;
            for word in line.split_whitespace() {
                let word = word.trim_matches(|c| c == '"' || c == '`');
                if word == "optimal" || word.starts_with("optimal:") {
                    assert!(
                        word.contains("time_ms="),
                        "{}: `{word}` is untimed in: {line}",
                        f.display()
                    );
                }
            }
        }
    }
    assert!(seen > 0, "no example under CodinGame's time profile");
}
