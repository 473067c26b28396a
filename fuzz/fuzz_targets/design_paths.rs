//! The design server's reads, whatever a committed manifest names: every
//! `file` (under the bundle) and `path` (under the root) in any JSON is
//! read by the one path rule (`bee_daemon::storage::path_rule::read_under`), and a read
//! that succeeds is a regular file under the root — never the secret kept
//! outside it, never through a link, never a device or a FIFO (which would
//! never end). A body that is not JSON is tried as one path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::LazyLock;

const SECRET: &[u8] = b"TOP SECRET OUTSIDE";

/// A checkout with a bundle, an outside secret, links to it and a FIFO.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap_or_else(|err| panic!("temp dir: {err}"));
    let base = std::fs::canonicalize(dir.path()).unwrap_or_else(|err| panic!("{err}"));
    let (root, outside) = (base.join("checkout"), base.join("outside"));
    let bundle = root.join(".bee/design/b");
    for made in [std::fs::create_dir_all(&bundle), std::fs::create_dir_all(root.join("src")), std::fs::create_dir_all(&outside)]
    {
        made.unwrap_or_else(|err| panic!("{err}"));
    }
    let writes = [
        (outside.join("secret.txt"), SECRET),
        (bundle.join("ok.html"), &b"<p>ok</p>"[..]),
        (root.join("src/ok.rs"), &b"pub fn ok() {}\n"[..]),
    ];
    for (path, text) in writes {
        std::fs::write(path, text).unwrap_or_else(|err| panic!("{err}"));
    }
    let links = [
        std::os::unix::fs::symlink(outside.join("secret.txt"), bundle.join("link.txt")),
        std::os::unix::fs::symlink(&outside, root.join("via")),
        std::os::unix::fs::symlink(&outside, bundle.join("out")),
    ];
    for linked in links {
        linked.unwrap_or_else(|err| panic!("{err}"));
    }
    let fifo = std::process::Command::new("mkfifo").arg(bundle.join("fifo.html")).status();
    assert!(fifo.is_ok_and(|status| status.success()), "mkfifo");
    Fixture { _dir: dir, root }
});

fn check(relative: &str) {
    if let Ok(bytes) = bee_daemon::storage::path_rule::read_under(&FIXTURE.root, relative, 1 << 20) {
        assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET), "{relative:?} read the secret outside the root");
    }
}

/// Every `file` and `path` string anywhere in `value`.
fn walk(value: &serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("file", serde_json::Value::String(file)) => check(&format!(".bee/design/b/{file}")),
                    ("path", serde_json::Value::String(path)) => check(path),
                    _ => walk(value),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(walk),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    match serde_json::from_slice::<serde_json::Value>(data) {
        Ok(manifest) => walk(&manifest),
        Err(_) => {
            if let Ok(path) = std::str::from_utf8(data) {
                check(path);
                check(&format!(".bee/design/b/{path}"));
            }
        }
    }
});
