//! The library's modules form no dependency circle.
//!
//! The graph is computed from the source text of every `.rs` file under
//! `src/` but the binary's (`main.rs`, `cli/`): each file belongs to its
//! module (`src/a.rs` and `src/a/mod.rs` are `a`, `src/a/b.rs` is `a::b`),
//! and every path that names a module of the crate (`crate::x::y`,
//! `super::x`, `self::x`, or a child module declared in the file) in a `use`
//! or in code is an edge to the module that defines the item. A name a
//! module re-exports (`pub use child::Item`) counts as defined by the child,
//! so going through a parent's re-export does not hide an edge.
//!
//! Granularity: two graphs are checked.
//! - **Top-level modules** (`bot`, `play`, `grade`, ...): every file counts
//!   towards its top-level module; an edge inside one top-level module does
//!   not count.
//! - **Second-level modules** (`bot::manifest`, `bot::sandbox`, ...; deeper
//!   files count towards their second-level ancestor, so `bot::uttt::search`
//!   is `bot::uttt`). Here a module's use of its own ancestor (`super::Bot`
//!   in `bot::external`, which `bot/mod.rs` re-exports) does not count: a
//!   parent's `mod.rs` is the front of its folder, it declares, re-exports
//!   and dispatches to its children, and they implement what it defines. A
//!   parent's use of a child counts, and so does every edge between
//!   siblings: `bot::sandbox` using `bot::manifest` while `bot::manifest`
//!   uses `bot::sandbox` is a circle, whether the path is
//!   `super::manifest::X` or `crate::bot::X` through a re-export.
//!
//! Code under `#[cfg(test)]` (items and modules) does not count: a test may
//! use a higher layer to build its fixtures. Comments, doc links and string
//! literals never count.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// One source file: its module and its text with comments, literals and
/// test-only items blanked out.
struct Source {
    module: Module,
    code: String,
}

/// Replaces comments and the contents of string and char literals with
/// spaces, so that braces and paths inside them are not seen.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, c: u8| out.push(if c == b'\n' { b'\n' } else { b' ' });
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
        } else if c == b'r'
            && matches!(b.get(i + 1), Some(b'"') | Some(b'#'))
            && (i == 0 || !is_ident(b[i - 1]))
        {
            // A raw string: r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push(b'"');
            i = j + 1;
            while i < b.len() {
                if b[i] == b'"' && (0..hashes).all(|k| b.get(i + 1 + k) == Some(&b'#')) {
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, b[i]);
                i += 1;
            }
            out.push(b'"');
        } else if c == b'"' {
            out.push(b'"');
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    blank(&mut out, b[i]);
                    i += 1;
                }
                if i < b.len() {
                    blank(&mut out, b[i]);
                    i += 1;
                }
            }
            out.push(b'"');
            i += 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                (i + 2..b.len()).find(|&k| b[k] == b'\'')
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    out.push(b'\'');
                    out.extend(std::iter::repeat_n(b' ', e - i - 1));
                    out.push(b'\'');
                    i = e + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Blanks every item under `#[cfg(test)]`; returns the names of the
/// test-only modules declared with `mod name;`.
fn drop_test_items(code: &mut String) -> Vec<String> {
    let mut test_mods = Vec::new();
    while let Some(at) = code.find("#[cfg(test)]") {
        let b = code.as_bytes();
        let mut i = at + "#[cfg(test)]".len();
        // Skip whitespace and further attributes.
        loop {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if b.get(i) == Some(&b'#') {
                while i < b.len() && b[i] != b']' {
                    i += 1;
                }
                i += 1;
            } else {
                break;
            }
        }
        let item = &code[i..];
        let is_use = item.starts_with("use ") || item.starts_with("pub use ");
        let mut j = i;
        let mut depth = 0usize;
        while j < b.len() {
            match b[j] {
                b'{' if !is_use => depth += 1,
                b'}' if !is_use => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                b';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        let end = (j + 1).min(b.len());
        let words: Vec<&str> = code[i..end]
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        if let Some(k) = words.iter().position(|w| *w == "mod") {
            if code[i..end].trim_end().ends_with(';') {
                if let Some(name) = words.get(k + 1) {
                    test_mods.push(name.to_string());
                }
            }
        }
        let blanked: String = code[at..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(at..end, &blanked);
    }
    test_mods
}

fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).expect("a file under src/");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    if last != "mod.rs" && last != "lib.rs" {
        parts.push(last.trim_end_matches(".rs").to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("readable src/")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The library's sources, test-only files and items left out.
fn library_sources() -> Vec<Source> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut sources = Vec::new();
    let mut test_only: BTreeSet<Module> = BTreeSet::new();
    for file in files {
        let module = module_of(&src, &file);
        if file == src.join("main.rs") || module.first().is_some_and(|m| m == "cli") {
            continue;
        }
        let text = fs::read_to_string(&file).expect("readable source");
        let mut code = strip(&text);
        for name in drop_test_items(&mut code) {
            let mut child = module.clone();
            child.push(name);
            test_only.insert(child);
        }
        sources.push(Source { module, code });
    }
    sources.retain(|s| !test_only.iter().any(|t| s.module.starts_with(t)));
    sources
}

/// Every path in `code` that may name a crate module, as segments:
/// `use` trees are expanded (`use a::{b, c::d}` gives `a::b` and
/// `a::c::d`), other code gives each `x::y::z` run of identifiers. Items
/// of `pub use` trees are flagged and carry the name they export.
fn paths(code: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tokens = tokenize(code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "use" && (i == 0 || tokens[i - 1] != "::") {
            let public = i > 0 && (tokens[i - 1] == "pub" || tokens[i - 1] == ")");
            let mut j = i + 1;
            let mut leaves = Vec::new();
            use_tree(&tokens, &mut j, Vec::new(), &mut leaves);
            out.extend(
                leaves
                    .into_iter()
                    .map(|(l, name)| (l, public.then_some(name))),
            );
            i = j;
            continue;
        }
        if is_word(&tokens[i]) && (i == 0 || (tokens[i - 1] != "::" && tokens[i - 1] != ".")) {
            let mut path = vec![tokens[i].clone()];
            let mut j = i + 1;
            while j + 1 < tokens.len() && tokens[j] == "::" && is_word(&tokens[j + 1]) {
                path.push(tokens[j + 1].clone());
                j += 2;
            }
            if path.len() > 1 {
                out.push((path, None));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

fn is_word(t: &str) -> bool {
    t.bytes().all(is_ident) && !t.is_empty() && !t.as_bytes()[0].is_ascii_digit()
}

fn tokenize(code: &str) -> Vec<String> {
    let b = code.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if is_ident(b[i]) {
            let start = i;
            while i < b.len() && is_ident(b[i]) {
                i += 1;
            }
            tokens.push(code[start..i].to_string());
        } else if b[i] == b':' && b.get(i + 1) == Some(&b':') {
            tokens.push("::".into());
            i += 2;
        } else if b[i].is_ascii_whitespace() {
            i += 1;
        } else {
            tokens.push((b[i] as char).to_string());
            i += 1;
        }
    }
    tokens
}

/// Parses one use tree at `tokens[*i]`, pushing each leaf's full path.
fn use_tree(
    tokens: &[String],
    i: &mut usize,
    prefix: Vec<String>,
    leaves: &mut Vec<(Vec<String>, String)>,
) {
    let mut path = prefix;
    loop {
        let Some(t) = tokens.get(*i) else { return };
        if t == "{" {
            *i += 1;
            loop {
                match tokens.get(*i).map(String::as_str) {
                    None => return,
                    Some("}") => {
                        *i += 1;
                        break;
                    }
                    Some(",") => *i += 1,
                    _ => use_tree(tokens, i, path.clone(), leaves),
                }
            }
            return;
        } else if t == "*" {
            *i += 1;
            leaves.push((path, "*".into()));
            return;
        } else if is_word(t) {
            if t == "self" && !path.is_empty() {
                *i += 1;
                let name = path.last().cloned().unwrap_or_default();
                leaves.push((path, name));
                return;
            }
            path.push(t.clone());
            *i += 1;
            match tokens.get(*i).map(String::as_str) {
                Some("::") => *i += 1,
                Some("as") => {
                    let alias = tokens.get(*i + 1).cloned().unwrap_or_default();
                    *i += 2;
                    leaves.push((path, alias));
                    return;
                }
                _ => {
                    leaves.push((path, t.clone()));
                    return;
                }
            }
        } else {
            // `;`, `,` or `}`: the end of this tree.
            if *i < tokens.len() && t == ";" {
                *i += 1;
            }
            return;
        }
    }
}

/// The crate's modules and where each re-exported name is defined.
struct Crate {
    modules: BTreeSet<Module>,
    reexports: BTreeMap<(Module, String), Module>,
}

impl Crate {
    /// The module of the item that `path`, seen from `from`, names; `None`
    /// when the path does not start inside the crate.
    fn resolve(&self, from: &Module, path: &[String]) -> Option<Module> {
        let (mut base, rest): (Module, &[String]) = match path.first()?.as_str() {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (from.clone(), &path[1..]),
            "super" => {
                let mut base = from.clone();
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    base.pop()?;
                    k += 1;
                }
                (base, &path[k..])
            }
            first => {
                let mut child = from.clone();
                child.push(first.to_string());
                if !self.modules.contains(&child) {
                    return None;
                }
                (from.clone(), path)
            }
        };
        let mut k = 0;
        while let Some(seg) = rest.get(k) {
            let mut next = base.clone();
            next.push(seg.clone());
            if self.modules.contains(&next) {
                base = next;
                k += 1;
            } else {
                break;
            }
        }
        // Follow re-exports to the defining module (a few hops at most).
        if let Some(name) = rest.get(k) {
            let mut seen = 0;
            while let Some(to) = self.reexports.get(&(base.clone(), name.clone())) {
                if *to == base || seen > 8 {
                    break;
                }
                base = to.clone();
                seen += 1;
            }
        }
        Some(base)
    }
}

/// The edges between modules at the given depth (1: top level, 2: second
/// level), without self-loops; at depth 2 an edge to one's own ancestor is
/// left out, and at depth 1 so is an edge inside one top-level module.
fn graph(sources: &[Source], depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<Module> = sources.iter().map(|s| s.module.clone()).collect();
    let mut krate = Crate {
        modules,
        reexports: BTreeMap::new(),
    };
    // Re-exports: resolve in rounds so chains settle.
    for _ in 0..3 {
        for s in sources {
            for (path, exported) in paths(&s.code) {
                let Some(name) = exported else { continue };
                if let Some(to) = krate.resolve(&s.module, &path) {
                    if to != s.module {
                        krate.reexports.insert((s.module.clone(), name), to);
                    }
                }
            }
        }
    }
    let name = |m: &Module| m[..m.len().min(depth)].join("::");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for s in sources {
        if s.module.is_empty() {
            continue; // lib.rs only declares the modules.
        }
        let from = name(&s.module);
        edges.entry(from.clone()).or_default();
        for (path, _) in paths(&s.code) {
            let Some(target) = krate.resolve(&s.module, &path) else {
                continue;
            };
            if target.is_empty() {
                continue;
            }
            let to = name(&target);
            let from_m = &s.module[..s.module.len().min(depth)];
            let to_m = &target[..target.len().min(depth)];
            let ancestor = from_m.starts_with(to_m);
            let same_top = from_m[0] == to_m[0];
            if to == from || (depth == 1 && same_top) || (depth > 1 && ancestor) {
                continue;
            }
            edges.entry(from.clone()).or_default().insert(to);
        }
    }
    edges
}

/// Every circle in the graph: one cycle through each strongly connected
/// component of more than one node, as the list of its nodes in order.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's algorithm, iterative enough for a few hundred nodes.
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        components: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.components.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    let nodes: Vec<&str> = edges
        .iter()
        .flat_map(|(k, v)| std::iter::once(k.as_str()).chain(v.iter().map(String::as_str)))
        .collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    // One cycle per component: a shortest way back to its smallest node.
    let mut found = Vec::new();
    for component in s.components {
        let inside: BTreeSet<&str> = component.iter().copied().collect();
        let start = *inside.iter().next().expect("a node");
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut last = None;
        'search: while let Some(v) = queue.pop_front() {
            for w in edges.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !inside.contains(w) {
                    continue;
                }
                if w == start {
                    last = Some(v);
                    break 'search;
                }
                if !parent.contains_key(w) {
                    parent.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        let mut cycle = Vec::new();
        let mut v = last.expect("a strongly connected component has a cycle");
        while v != start {
            cycle.push(v.to_string());
            v = parent[v];
        }
        cycle.push(start.to_string());
        cycle.reverse();
        found.push(cycle);
    }
    found
}

/// The circles as text: for each, one cycle and every edge among its
/// modules, so that whoever breaks it sees all the edges to choose from.
fn describe(found: &[Vec<String>], edges: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut text = String::new();
    for cycle in found {
        text += &format!(
            "  {} -> {}
",
            cycle.join(" -> "),
            cycle[0]
        );
        let members = component_of(&cycle[0], edges);
        for (from, to) in edges.iter().filter(|(k, _)| members.contains(*k)) {
            for to in to.iter().filter(|t| members.contains(*t)) {
                text += &format!("      {from} -> {to}\n");
            }
        }
    }
    text
}

/// The nodes both reachable from `start` and reaching it.
fn component_of(start: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<String> {
    let reach = |forward: bool| {
        let mut seen = BTreeSet::from([start.to_string()]);
        let mut todo = vec![start.to_string()];
        while let Some(v) = todo.pop() {
            let next: Vec<&String> = if forward {
                edges.get(&v).into_iter().flatten().collect()
            } else {
                edges
                    .iter()
                    .filter(|(_, to)| to.contains(&v))
                    .map(|(k, _)| k)
                    .collect()
            };
            for w in next {
                if seen.insert(w.clone()) {
                    todo.push(w.clone());
                }
            }
        }
        seen
    };
    reach(true).intersection(&reach(false)).cloned().collect()
}

#[test]
fn the_top_level_modules_form_no_circle() {
    let edges = graph(&library_sources(), 1);
    let found = cycles(&edges);
    assert!(
        found.is_empty(),
        "dependency circles between top-level modules of src/ (each: one cycle, \
         then every edge inside it):\n{}",
        describe(&found, &edges)
    );
}

#[test]
fn the_second_level_modules_form_no_circle() {
    let edges = graph(&library_sources(), 2);
    let found = cycles(&edges);
    assert!(
        found.is_empty(),
        "dependency circles between modules of src/ to depth 2 (each: one \
         cycle, then every edge inside it):\n{}",
        describe(&found, &edges)
    );
}

#[test]
fn the_graph_sees_a_circle_between_siblings() {
    // A miniature crate: `bot::sandbox` reaches `bot::manifest` through the
    // parent's re-export, and `bot::manifest` uses `bot::sandbox` directly.
    let source = |module: &str, code: &str| Source {
        module: module.split("::").map(String::from).collect(),
        code: strip(code),
    };
    let sources = [
        source(
            "bot",
            "pub mod manifest; pub mod sandbox; pub use manifest::Manifest; \
             pub use sandbox::{Sandbox, Mode as SandboxMode}; pub trait Bot {}",
        ),
        source(
            "bot::manifest",
            "use super::sandbox::Mode; pub struct Manifest;",
        ),
        source(
            "bot::sandbox",
            "use crate::bot::{Bot, Manifest}; // crate::game::Game in a comment\n\
             pub struct Sandbox; pub enum Mode {}",
        ),
        source(
            "game",
            "pub trait Game {} #[cfg(test)] mod tests { use crate::bot::Bot; }",
        ),
    ];
    let level2 = graph(&sources, 2);
    assert_eq!(
        cycles(&level2),
        [["bot::manifest".to_string(), "bot::sandbox".to_string()]]
    );
    // The child's use of its parent's trait is not an edge; the parent's
    // re-export of its child is.
    assert!(!level2["bot::sandbox"].contains("bot"));
    assert!(level2["bot"].contains("bot::sandbox"));
    // At the top level it is all `bot`; comments are not code.
    assert!(cycles(&graph(&sources, 1)).is_empty());
    assert!(level2
        .get("bot::sandbox")
        .is_some_and(|e| !e.contains("game")));
}

#[test]
fn the_cycle_finder_reports_each_circle() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a", "d"]),
        ("d", vec!["e"]),
        ("e", vec![]),
        ("x", vec!["y"]),
        ("y", vec!["x"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    let mut found = cycles(&edges);
    found.sort();
    assert_eq!(found, [vec!["a", "b", "c"], vec!["x", "y"]]);
    assert_eq!(
        describe(&found[1..], &edges),
        "  x -> y -> x\n      x -> y\n      y -> x\n"
    );
    let acyclic: BTreeMap<String, BTreeSet<String>> = edges
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().filter(|w| w != "a" && w != "x").collect()))
        .collect();
    assert!(cycles(&acyclic).is_empty());
}

/// ARCHITECTURE.md's module map matches the code: every row's module and
/// every file a row names exist, and every module of the library has a row.
#[test]
fn the_architecture_map_names_what_exists() {
    let root = crate::common::root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let mut cells = line.split(" | ");
        let head = cells.next().unwrap_or("").trim_start_matches("| ");
        let rest: String = cells.collect::<Vec<_>>().join(" | ");
        for module in ticked(head) {
            rows.push((module, rest.clone()));
        }
    }
    let mut problems = Vec::new();
    for (module, rest) in &rows {
        let dir = root.join("src").join(module.trim_end_matches('/'));
        let path = if module.ends_with('/') {
            dir.clone()
        } else {
            root.join("src").join(module)
        };
        if !path.exists() {
            problems.push(format!("`{module}` has a row but no src/{module}"));
            continue;
        }
        if module.ends_with('/') {
            for file in ticked(rest).into_iter().filter(|t| t.ends_with(".rs")) {
                // A file of the module (or of a folder below it).
                let found = dir.join(&file).exists()
                    || std::fs::read_dir(&dir).is_ok_and(|entries| {
                        entries
                            .flatten()
                            .any(|e| e.path().is_dir() && e.path().join(&file).exists())
                    });
                if !found {
                    problems.push(format!(
                        "`{module}` names `{file}`, which is not in src/{module}"
                    ));
                }
            }
        }
    }
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    for name in lib.lines().filter_map(|l| l.strip_prefix("pub mod ")) {
        let name = name.trim_end_matches(';');
        let listed = rows
            .iter()
            .any(|(m, _)| m.trim_end_matches('/').trim_end_matches(".rs") == name);
        if !listed {
            problems.push(format!("module `{name}` has no row in ARCHITECTURE.md"));
        }
    }
    assert!(
        problems.is_empty(),
        "ARCHITECTURE.md is out of date:\n{}",
        problems.join("\n")
    );
}

/// The `backticked` words of a Markdown cell.
fn ticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}
