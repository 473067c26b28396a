//! The daemon crate's rooms and which way their dependencies point:
//! `server` → domains → `storage`. A domain (delivery, tokens, ledger,
//! events) uses only `storage`, `rendered` and itself; `storage` and `client`
//! use nothing else of the crate; nothing but `bin/` uses `server`.
//!
//! Read from the source's `crate::` paths, so a new import that breaks the
//! direction fails here, with the file and line that did it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

/// Each room and the rooms it may use (itself always allowed).
const ALLOWED: &[(&str, &[&str])] = &[
    ("storage", &[]),
    ("rendered", &[]),
    ("client", &[]),
    ("delivery", &["storage", "rendered"]),
    ("tokens", &["storage", "rendered"]),
    ("ledger", &["storage", "rendered"]),
    ("events", &["storage", "rendered"]),
    ("artifacts", &["storage"]),
    ("skills", &["storage"]),
    ("plans", &["storage"]),
    ("representation", &[]),
    ("compression", &["storage"]),
    // The audit verdicts it exports prove presentation as `beectl audit`
    // does: a stream client of beed's own socket.
    ("export", &["storage", "ledger", "delivery", "events", "client"]),
    (
        "server",
        &["storage", "rendered", "delivery", "tokens", "ledger", "events", "artifacts", "skills", "plans", "export"],
    ),
];

fn daemon_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../daemon/src")
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
/// without `.rs` (`ledger/logs/codex.rs` → `ledger`, `rendered.rs` → `rendered`).
fn room_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.strip_suffix(".rs").unwrap_or(&first).to_owned()
}

/// Every `crate::ROOM` a source uses, with its line number (comments skipped).
fn crate_paths(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            // `bee_daemon::` and other crates' `crate::` are not ours; `$crate` neither.
            let preceded = rest[..at].chars().last().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
            if !preceded && !name.is_empty() {
                found.push((number + 1, name));
            }
            rest = after;
        }
    }
    found
}

/// The violations in one file of `room`.
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

#[test]
fn dependencies_point_from_server_to_domains_to_storage() {
    let src = daemon_src();
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
