//! How the workspace's source files depend on each other, read from the
//! source itself:
//!
//! - the daemon crate's rooms point one way, `server` → domains →
//!   `storage`: a domain (delivery, tokens, ledger, events, context) uses
//!   only `storage`, `rendered` and itself; `storage` and `client` use
//!   nothing else of the crate; nothing but `bin/` uses `server`;
//! - within every crate, no file depends on itself through others: the
//!   files form a one-way stack, so each can be read knowing only what is
//!   below it.
//!
//! A file depends on another when it names a path into it: `crate::a::b`,
//! `super::x`, `self::x`, a name a `use` brought in, or a child module it
//! declared (`mod child;` alone is no use of it). A path resolves to the
//! deepest file whose module it names. Code under `#[cfg(test)]` is left out:
//! a file's tests may reach its room through any door.
//!
//! A new import that breaks either rule fails here, with the files and lines
//! that did it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each room of the daemon crate and the rooms it may use (itself always allowed).
const ALLOWED: &[(&str, &[&str])] = &[
    ("storage", &[]),
    ("rendered", &[]),
    ("client", &[]),
    ("delivery", &["storage", "rendered"]),
    ("tokens", &["storage", "rendered"]),
    ("ledger", &["storage", "rendered"]),
    ("events", &["storage", "rendered"]),
    // The compressor counts and weighs tokens with the tokens room's own
    // o200k table (one copy of the ranks in the binary).
    ("context", &["storage", "tokens"]),
    // The audit verdicts it exports prove presentation as `beectl audit`
    // does: a stream client of beed's own socket.
    ("export", &["storage", "ledger", "delivery", "events", "client"]),
    ("server", &["storage", "rendered", "delivery", "tokens", "ledger", "events", "context", "export"]),
];

/// The source trees whose files must form a one-way stack.
const CRATES: &[&str] = &["proto/src", "daemon/src", "hook-client/src", "cli/src"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            into.push(path);
        }
    }
}

/// The room a file under `daemon/src` belongs to: its first path component,
/// without `.rs` (`ledger/agents/codex/mod.rs` → `ledger`, `rendered.rs` → `rendered`).
fn room_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.strip_suffix(".rs").unwrap_or(&first).to_owned()
}

// ---------------------------------------------------------------------------
// Reading a source file: tokens without comments and literals.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// The tokens of `source` that name paths, each with its line: comments,
/// string, byte-string and char literals are dropped (their text is not code).
fn tokens(source: &str) -> Vec<(usize, Token)> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let (mut at, mut line) = (0usize, 1usize);
    let count_lines = |from: usize, to: usize| bytes[from..to].iter().filter(|&&b| b == b'\n').count();
    while at < bytes.len() {
        let byte = bytes[at];
        let rest = &source[at..];
        if byte == b'\n' {
            line += 1;
            at += 1;
        } else if byte.is_ascii_whitespace() {
            at += 1;
        } else if rest.starts_with("//") {
            at += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            // Block comments nest.
            let (mut depth, mut end) = (0usize, at);
            while end < bytes.len() {
                if source[end..].starts_with("/*") {
                    depth += 1;
                    end += 2;
                } else if source[end..].starts_with("*/") {
                    depth -= 1;
                    end += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    end += 1;
                }
            }
            line += count_lines(at, end.min(bytes.len()));
            at = end;
        } else if let Some(end) = raw_string_end(rest) {
            line += count_lines(at, at + end);
            at += end;
        } else if byte == b'"' || (rest.starts_with("b\"")) {
            let mut end = at + if byte == b'b' { 2 } else { 1 };
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            line += count_lines(at, end.min(bytes.len()));
            at = end + 1;
        } else if byte == b'\'' || rest.starts_with("b'") {
            // A char literal ('x', '\n', '\u{1f}') or a lifetime ('a).
            let start = at + if byte == b'b' { 2 } else { 1 };
            if bytes.get(start) == Some(&b'\\') {
                // An escape: the quote after its first character closes it ('\'').
                at =
                    source.get(start + 2..).and_then(|rest| rest.find('\'')).map_or(bytes.len(), |i| start + 2 + i + 1);
            } else {
                let width = source[start..].chars().next().map_or(1, char::len_utf8);
                if bytes.get(start + width) == Some(&b'\'') {
                    at = start + width + 1;
                } else {
                    // A lifetime: its name is no path.
                    at = start;
                    while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                        at += 1;
                    }
                }
            }
        } else if byte.is_ascii_alphabetic() || byte == b'_' || byte == b'$' {
            let mut end = at + 1;
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            // `$crate` and raw identifiers' `r#` are their own words.
            out.push((line, Token::Ident(source[at..end].to_owned())));
            at = end;
        } else if rest.starts_with("::") {
            out.push((line, Token::PathSep));
            at += 2;
        } else {
            let c = rest.chars().next().unwrap();
            out.push((line, Token::Punct(c)));
            at += c.len_utf8();
        }
    }
    out
}

/// The length of a raw (byte) string literal at the start of `text`.
fn raw_string_end(text: &str) -> Option<usize> {
    let after_prefix = text.strip_prefix("br").or_else(|| text.strip_prefix('r'))?;
    let hashes = after_prefix.bytes().take_while(|&b| b == b'#').count();
    if after_prefix.as_bytes().get(hashes) != Some(&b'"') {
        return None;
    }
    let closing = format!("\"{}", "#".repeat(hashes));
    let body = text.len() - after_prefix.len() + hashes + 1;
    Some(body + text[body..].find(&closing).map_or(text.len() - body, |i| i + closing.len()))
}

// ---------------------------------------------------------------------------
// Which files a file uses.

/// One file's use of another: the line and the path as written.
#[derive(Debug, Clone)]
struct Use {
    line: usize,
    path: String,
}

/// A crate's files by module path (`[]` is the crate root).
struct Tree {
    files: BTreeMap<Vec<String>, String>,
}

impl Tree {
    /// Every `.rs` file under `src`, but `bin/` (each binary is a crate of its own).
    fn read(src: &Path) -> (Tree, Vec<(String, String)>) {
        let mut paths = Vec::new();
        rust_files(src, &mut paths);
        let mut files = BTreeMap::new();
        let mut sources = Vec::new();
        for path in paths {
            let relative = path.strip_prefix(src).unwrap().to_string_lossy().into_owned();
            if relative.starts_with("bin/") {
                continue;
            }
            files.insert(module_of(&relative), relative.clone());
            sources.push((relative, std::fs::read_to_string(&path).unwrap()));
        }
        (Tree { files }, sources)
    }

    /// The file a module path lands in: the deepest file module it names.
    fn file_of(&self, path: &[String]) -> Option<&String> {
        (0..=path.len()).rev().find_map(|n| self.files.get(&path[..n]))
    }
}

/// The module path of a file relative to its crate's `src`.
fn module_of(relative: &str) -> Vec<String> {
    let without = relative.strip_suffix(".rs").unwrap_or(relative);
    let mut parts: Vec<String> = without.split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The files `source` (the file at `relative`) uses, each with where.
fn uses_of(tree: &Tree, relative: &str, source: &str) -> BTreeMap<String, Vec<Use>> {
    let tokens = tokens(source);
    let file_module = module_of(relative);
    // Inline modules open here: (name, the brace depth inside it, under test).
    let mut scopes: Vec<(String, usize, bool)> = Vec::new();
    // Names that stand for a path, per scope depth (use aliases, child modules).
    let mut aliases: Vec<BTreeMap<String, Vec<String>>> = vec![BTreeMap::new()];
    let mut depth = 0usize;
    let mut found: BTreeMap<String, Vec<Use>> = BTreeMap::new();
    let mut test_attribute = false;
    let mut i = 0;
    let module_here = |scopes: &[(String, usize, bool)]| {
        let mut module = file_module.clone();
        module.extend(scopes.iter().map(|(name, _, _)| name.clone()));
        module
    };
    let in_test = |scopes: &[(String, usize, bool)]| scopes.iter().any(|(_, _, test)| *test);
    while i < tokens.len() {
        let (line, token) = &tokens[i];
        match token {
            Token::Punct('#') => {
                // `#[cfg(test)]`: the next item is test code.
                let words: Vec<&Token> = tokens[i..].iter().take(7).map(|(_, t)| t).collect();
                if let [
                    _,
                    Token::Punct('['),
                    Token::Ident(cfg),
                    Token::Punct('('),
                    Token::Ident(test),
                    Token::Punct(')'),
                    Token::Punct(']'),
                ] = words.as_slice()
                    && cfg == "cfg"
                    && test == "test"
                {
                    test_attribute = true;
                    i += 7;
                    continue;
                }
                i += 1;
            }
            Token::Punct('{') => {
                depth += 1;
                aliases.push(BTreeMap::new());
                i += 1;
            }
            Token::Punct('}') => {
                depth = depth.saturating_sub(1);
                aliases.pop();
                if aliases.is_empty() {
                    aliases.push(BTreeMap::new());
                }
                if scopes.last().is_some_and(|(_, inside, _)| *inside > depth) {
                    scopes.pop();
                }
                i += 1;
            }
            Token::Punct(';') => {
                test_attribute = false;
                i += 1;
            }
            Token::Ident(word) if word == "mod" => {
                let test = std::mem::take(&mut test_attribute);
                let Some((_, Token::Ident(name))) = tokens.get(i + 1) else {
                    i += 1;
                    continue;
                };
                match tokens.get(i + 2).map(|(_, t)| t) {
                    Some(Token::Punct('{')) => {
                        scopes.push((name.clone(), depth + 1, test || in_test(&scopes)));
                        i += 2;
                    }
                    _ => {
                        let mut child = module_here(&scopes);
                        child.push(name.clone());
                        aliases.last_mut().unwrap().insert(name.clone(), child);
                        i += 3;
                    }
                }
            }
            Token::Ident(word) if word == "use" => {
                let test = std::mem::take(&mut test_attribute) || in_test(&scopes);
                let end = tokens[i..].iter().position(|(_, t)| *t == Token::Punct(';')).map_or(tokens.len(), |n| i + n);
                let mut leaves = Vec::new();
                use_tree(&tokens[i + 1..end], Vec::new(), &mut leaves);
                let here = module_here(&scopes);
                for (path, name) in leaves {
                    let Some(resolved) = resolve(&path, &here, &aliases) else { continue };
                    if !test {
                        note(tree, relative, &resolved, *line, &path, &mut found);
                    }
                    if let Some(name) = name.filter(|n| n != "*" && n != "_") {
                        aliases.last_mut().unwrap().insert(name, resolved);
                    }
                }
                i = end + 1;
            }
            Token::Ident(first) => {
                // A path in code: words joined by `::`, not preceded by `::`.
                let preceded = i > 0 && tokens[i - 1].1 == Token::PathSep;
                let mut path = vec![first.clone()];
                let mut next = i + 1;
                while let (Some((_, Token::PathSep)), Some((_, Token::Ident(word)))) =
                    (tokens.get(next), tokens.get(next + 1))
                {
                    path.push(word.clone());
                    next += 2;
                }
                let is_item =
                    matches!(first.as_str(), "fn" | "struct" | "enum" | "trait" | "impl" | "const" | "static" | "type");
                if is_item && test_attribute && depth == scopes.last().map_or(0, |(_, d, _)| *d) {
                    // `#[cfg(test)] fn helper()`: skip the item whole.
                    i = skip_item(&tokens, i);
                    test_attribute = false;
                    continue;
                }
                // A lone word is a value, a field or an item a `use` already
                // counted: a module is named in code only with `::` after it.
                if !preceded
                    && !in_test(&scopes)
                    && path.len() > 1
                    && let Some(resolved) = resolve(&path, &module_here(&scopes), &aliases)
                {
                    note(tree, relative, &resolved, *line, &path, &mut found);
                }
                i = next;
            }
            _ => i += 1,
        }
    }
    found
}

/// The index after the item starting at `start`: its body's closing brace, or its `;`.
fn skip_item(tokens: &[(usize, Token)], start: usize) -> usize {
    let mut depth = 0usize;
    for (n, (_, token)) in tokens.iter().enumerate().skip(start) {
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return n + 1;
                }
            }
            Token::Punct(';') if depth == 0 => return n + 1,
            _ => {}
        }
    }
    tokens.len()
}

/// The leaves of a `use` tree: each full path, and the name it binds.
fn use_tree(tokens: &[(usize, Token)], prefix: Vec<String>, leaves: &mut Vec<(Vec<String>, Option<String>)>) {
    // Split at top-level commas.
    let mut depth = 0usize;
    let mut start = 0;
    let mut parts = Vec::new();
    for (n, (_, token)) in tokens.iter().enumerate() {
        match token {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => depth -= 1,
            Token::Punct(',') if depth == 0 => {
                parts.push(&tokens[start..n]);
                start = n + 1;
            }
            _ => {}
        }
    }
    parts.push(&tokens[start..]);
    for part in parts {
        let mut path = prefix.clone();
        let mut n = 0;
        // A leading `::` names an outside crate.
        if part.first().is_some_and(|(_, t)| *t == Token::PathSep) {
            continue;
        }
        while n < part.len() {
            match &part[n].1 {
                Token::Ident(word) if word == "as" => {
                    if let Some((_, Token::Ident(alias))) = part.get(n + 1) {
                        let name = Some(alias.clone());
                        leaves.push((path.clone(), name));
                    }
                    path.clear();
                    break;
                }
                Token::Ident(word) => {
                    path.push(word.clone());
                    n += 1;
                }
                Token::PathSep => n += 1,
                Token::Punct('{') => {
                    let inner = &part[n + 1..part.len().saturating_sub(1)];
                    use_tree(inner, path.clone(), leaves);
                    path.clear();
                    break;
                }
                Token::Punct('*') => {
                    path.push("*".to_owned());
                    n += 1;
                }
                _ => n += 1,
            }
        }
        if path.len() > prefix.len() {
            let mut name = path.last().cloned();
            // `use a::b::{self}` binds `b`.
            if name.as_deref() == Some("self") {
                path.pop();
                name = path.last().cloned();
            }
            if path.last().map(String::as_str) == Some("*") {
                path.pop();
            }
            leaves.push((path, name));
        }
    }
}

/// `path` as written in module `here`, made absolute; `None` for a path
/// into another crate or a local name.
fn resolve(path: &[String], here: &[String], aliases: &[BTreeMap<String, Vec<String>>]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut absolute = match first.as_str() {
        "crate" => Vec::new(),
        "self" => here.to_vec(),
        "super" => {
            let mut module = here.to_vec();
            module.pop()?;
            let mut rest = rest;
            while rest.first().map(String::as_str) == Some("super") {
                module.pop()?;
                rest = &rest[1..];
            }
            module.extend(rest.iter().cloned());
            return Some(module);
        }
        name => aliases.iter().rev().find_map(|scope| scope.get(name)).cloned()?,
    };
    absolute.extend(rest.iter().cloned());
    Some(absolute)
}

fn note(
    tree: &Tree,
    relative: &str,
    resolved: &[String],
    line: usize,
    path: &[String],
    found: &mut BTreeMap<String, Vec<Use>>,
) {
    if let Some(target) = tree.file_of(resolved)
        && target != relative
    {
        found.entry(target.clone()).or_default().push(Use { line, path: path.join("::") });
    }
}

// ---------------------------------------------------------------------------
// Circles.

/// Every circle among the files of the crate at `src`: each as its files,
/// and one use for every step of it (`a.rs:12 uses crate::b::x`).
fn circles(src: &Path) -> Vec<String> {
    let (tree, sources) = Tree::read(src);
    let mut graph: BTreeMap<String, BTreeMap<String, Vec<Use>>> = BTreeMap::new();
    for (relative, source) in &sources {
        graph.insert(relative.clone(), uses_of(&tree, relative, source));
    }
    strongly_connected(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let members: BTreeSet<&String> = component.iter().collect();
            let mut steps = Vec::new();
            for from in &component {
                for (to, uses) in &graph[from] {
                    if members.contains(to) {
                        let first = &uses[0];
                        steps.push(format!("    {from}:{} uses `{}` ({to})", first.line, first.path));
                    }
                }
            }
            format!("a circle of {} files: {}\n{}", component.len(), component.join(", "), steps.join("\n"))
        })
        .collect()
}

/// Tarjan's strongly connected components of `graph`, each sorted.
fn strongly_connected(graph: &BTreeMap<String, BTreeMap<String, Vec<Use>>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeMap<String, Vec<Use>>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        components: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, node: &'a str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flat_map(|edges| edges.keys()) {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_owned());
                    if top == node {
                        break;
                    }
                }
                component.sort();
                self.components.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        components: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.components
}

// ---------------------------------------------------------------------------
// Rooms.

/// The violations of the room table in one file of `room`.
fn violations(room: &str, shown: &str, source: &str) -> Vec<String> {
    let Some((_, allowed)) = ALLOWED.iter().find(|(name, _)| *name == room) else {
        return vec![format!("{shown}: room `{room}` is not in the layering table; add it with what it may use")];
    };
    crate_paths(source)
        .into_iter()
        .filter(|(_, used)| used != room && !allowed.contains(&used.as_str()))
        .map(|(line, used)| format!("{shown}:{line}: `{room}` uses `crate::{used}`, which it may not"))
        .collect()
}

/// Every `crate::ROOM` a source names, with its line number (comments and
/// literals skipped).
fn crate_paths(source: &str) -> Vec<(usize, String)> {
    let tokens = tokens(source);
    tokens
        .windows(3)
        .filter_map(|window| match window {
            [(line, Token::Ident(krate)), (_, Token::PathSep), (_, Token::Ident(room))] if krate == "crate" => {
                Some((*line, room.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn dependencies_point_from_server_to_domains_to_storage() {
    let src = workspace().join("daemon/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 20, "found only {} files under {}", files.len(), src.display());
    let mut problems = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        if relative.starts_with("bin") || relative == Path::new("lib.rs") {
            continue;
        }
        let source = std::fs::read_to_string(file).unwrap();
        problems.extend(violations(&room_of(relative), &relative.display().to_string(), &source));
    }
    assert!(problems.is_empty(), "the daemon crate's layering is broken:\n{}", problems.join("\n"));
}

#[test]
fn the_check_catches_a_domain_reaching_into_the_server() {
    let source = "use crate::storage::sqlite;\nuse crate::server::events::EventsState; // why\nfn f() { crate::client::get(); }\n";
    assert_eq!(
        violations("events", "events/x.rs", source),
        vec![
            "events/x.rs:2: `events` uses `crate::server`, which it may not".to_owned(),
            "events/x.rs:3: `events` uses `crate::client`, which it may not".to_owned(),
        ]
    );
    assert!(violations("server", "server/x.rs", "use crate::ledger::store::Ledger;").is_empty());
    assert_eq!(violations("server", "server/x.rs", "use crate::client::post;").len(), 1);
    assert_eq!(violations("storage", "storage/x.rs", "use crate::ledger::store::Ledger;").len(), 1);
    assert_eq!(violations("newroom", "newroom/x.rs", "").len(), 1, "an unlisted room is named");
    // Other crates' paths are not ours.
    assert!(
        violations("storage", "storage/x.rs", "use bee_daemon::server;\nmacro_rules! m { () => { $crate::x } }")
            .is_empty()
    );
}

#[test]
fn no_file_depends_on_itself_through_others() {
    let mut problems = Vec::new();
    for krate in CRATES {
        let src = workspace().join(krate);
        problems.extend(circles(&src).into_iter().map(|circle| format!("{krate}: {circle}")));
    }
    assert!(problems.is_empty(), "files in a circle:\n{}", problems.join("\n"));
}

/// Writes `files` (relative path, text) under a fresh temporary `src`.
fn tree_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn the_check_catches_a_circle_built_in_a_temporary_tree() {
    // A one-way stack: `ledger/mod.rs` declares and re-exports, `store`
    // uses `schema`, nothing uses back.
    let stack = tree_of(&[
        ("lib.rs", "pub mod ledger;\n"),
        ("ledger/mod.rs", "pub mod schema;\npub mod store;\npub use store::Ledger;\n"),
        (
            "ledger/schema.rs",
            "pub const HOUR_MS: i64 = 3_600_000;\n#[cfg(test)]\nmod tests { use crate::ledger::store::Ledger; }\n",
        ),
        (
            "ledger/store.rs",
            "use super::schema::HOUR_MS;\npub struct Ledger;\n// crate::ledger::rollup in a comment\nconst S: &str = \"crate::ledger\";\n",
        ),
    ]);
    assert_eq!(circles(stack.path()), Vec::<String>::new());

    // Then `schema` reaches back up into `store`, through a `use` group.
    let circle = tree_of(&[
        ("lib.rs", "pub mod ledger;\n"),
        ("ledger/mod.rs", "pub mod schema;\npub mod store;\n"),
        ("ledger/schema.rs", "use crate::ledger::{store::{self, Ledger}};\npub const HOUR_MS: i64 = 3_600_000;\n"),
        ("ledger/store.rs", "use super::schema;\npub struct Ledger;\nfn f() -> i64 { schema::HOUR_MS }\n"),
    ]);
    let found = circles(circle.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("a circle of 2 files: ledger/schema.rs, ledger/store.rs"), "{}", found[0]);
    assert!(found[0].contains("ledger/schema.rs:1 uses `crate::ledger::store`"), "{}", found[0]);
    assert!(found[0].contains("ledger/store.rs:1 uses `super::schema`"), "{}", found[0]);

    // A parent that uses its child, and a child that uses its parent's item.
    let parent_child = tree_of(&[
        ("lib.rs", "mod logs;\n"),
        ("logs/mod.rs", "mod claude;\npub fn hash() {}\nfn f() { claude::parse(); }\n"),
        ("logs/claude.rs", "pub fn parse() { super::hash(); }\n"),
    ]);
    let found = circles(parent_child.path());
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("logs/claude.rs:1 uses `super::hash` (logs/mod.rs)"), "{}", found[0]);
    assert!(found[0].contains("logs/mod.rs:3 uses `claude::parse` (logs/claude.rs)"), "{}", found[0]);
}

#[test]
fn literals_and_lifetimes_are_no_paths() {
    let source = "fn f<'a>(x: &'a str) -> char { let _ = r#\"crate::a\"#; let _ = b'\\''; '\\u{1f}' }\nuse crate::b;\n";
    assert_eq!(crate_paths(source), vec![(2, "b".to_owned())]);
}
