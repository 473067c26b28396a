//! Design bundles (spec/50 "Design server"): a static export (HTML, CSS,
//! images) imported under `<root>/.bee/design/NAME/` with its manifest
//! `bee-design.json`, the sources that implement its entries, and headless
//! Chromium captures kept as evidence. The CLI writes (`beectl design
//! import | map | capture`); the design MCP server only reads, through the
//! list, slice, verify and visual report here.
//!
//! Nothing here approves a design: a verified hash, an acyclic graph or a
//! matching screenshot is the result of that read, not acceptance.

use bee_daemon::storage::path_rule;
use bee_proto::mcp::coded as error;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The manifest's file name in a bundle.
pub const MANIFEST: &str = "bee-design.json";
/// Where a bundle keeps its captures.
const CAPTURES: &str = "captures/";
/// The largest bundle imported, and the most files.
const MAX_BUNDLE_BYTES: u64 = 64 * 1024 * 1024;
const MAX_BUNDLE_FILES: usize = 10_000;
/// A bundle's manifest names at most MAX_BUNDLE_FILES entries; it is read whole or refused.
const MANIFEST_LIMIT: u64 = 16 * 1024 * 1024;
/// A pixel differs when a channel moves more than this (of 255).
const CHANNEL_TOLERANCE: u8 = 8;
/// A capture is consistent with its reference when at most this share of
/// pixels differ.
const DIFFERING_SHARE: f64 = 0.001;
/// How long one capture may take, and its override in milliseconds (tests).
const CAPTURE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
const CAPTURE_TIMEOUT_ENV: &str = "BEE_CAPTURE_TIMEOUT_MS";
/// Slices of a design take 512..65,536 bytes.
pub const SLICE_BUDGET: std::ops::RangeInclusive<u64> = 512..=65_536;

/// Why a design operation failed: a stable code and a sentence.
pub type DesignError = bee_proto::mcp::CodedError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Screen,
    Component,
    Style,
    Asset,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Draft,
    Ready,
}

/// One entry of a bundle.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub id: String,
    pub kind: Kind,
    /// Relative to the bundle's directory.
    pub file: String,
    pub sha256: String,
    pub status: Status,
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// An asset entry whose image is this entry's reference rendering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The sources that implement it (`beectl design map`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceMap>,
    /// Screenshots taken by `beectl design capture`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<Capture>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceMap {
    /// Relative to the root.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capture {
    /// The PNG, relative to the bundle's directory.
    pub file: String,
    pub sha256: String,
    pub viewport: Viewport,
    pub captured_at_utc: String,
    /// `url` or `file`, and which.
    pub target: String,
    pub location: String,
    /// The entry's file as it was when captured.
    pub entry_sha256: String,
    /// The mapped sources as they were when captured.
    #[serde(default)]
    pub sources_sha256: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Viewport {
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    pub bundle: String,
    pub imported_at_utc: String,
    pub entries: Vec<Entry>,
}

/// A hand-written manifest in an export (entries without hashes).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Declared {
    entries: Vec<DeclaredEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DeclaredEntry {
    id: String,
    kind: Kind,
    file: String,
    #[serde(default)]
    status: Option<Status>,
    #[serde(default)]
    depends_on: Vec<String>,
    #[serde(default)]
    reference: Option<String>,
}

fn io(path: &Path, err: std::io::Error) -> DesignError {
    error("io", format!("{}: {err}", path.display()))
}

pub fn sha256(bytes: &[u8]) -> String {
    bee_daemon::context::artifacts::sha256(bytes)
}

/// `path` (absolute, or relative to `root`) resolved without links and
/// checked to be inside `root`.
pub fn inside(root: &Path, path: &str) -> Result<PathBuf, DesignError> {
    let candidate = if Path::new(path).is_absolute() { PathBuf::from(path) } else { root.join(path) };
    let canonical = std::fs::canonicalize(&candidate)
        .map_err(|err| error("path_not_found", format!("{}: {err}", candidate.display())))?;
    if !canonical.starts_with(root) {
        return Err(error("path_outside_root", format!("{path} is not inside the root {}", root.display())));
    }
    Ok(canonical)
}

/// `path` relative to `root`, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned()
}

/// `<root>/.bee/design`.
pub fn design_dir(root: &Path) -> PathBuf {
    root.join(DESIGN_DIR)
}

/// Where bundles are, relative to the root.
const DESIGN_DIR: &str = ".bee/design";
/// A bundle's own files (entries, captures) are read at most this large.
const BUNDLE_FILE_LIMIT: u64 = MAX_BUNDLE_BYTES;
/// A source mapped to an entry is read at most this large.
const SOURCE_LIMIT: u64 = MANIFEST_LIMIT;

/// The bytes of `relative` under `root` by the one path rule every read and
/// hash here takes ([`path_rule::read_under`]: relative and under the root,
/// no link on the path, a regular file, a size bound), checked at the read
/// whatever a manifest on disk says. A refusal names the rule, and never
/// the content or a hash of what was refused.
fn read_checked(root: &Path, relative: &Path, limit: u64) -> Result<Vec<u8>, DesignError> {
    let shown = relative.to_string_lossy();
    path_rule::read_under(root, &shown, limit).map_err(|code| refused(&shown, code))
}

fn refused(shown: &str, code: bee_proto::tokens::TokenErrorCode) -> DesignError {
    error("path_refused", format!("{shown}: {}", path_rule::refusal(code)))
}

/// A bundle's own file, by the path rule: `file` is relative to the bundle
/// (an absolute `file` replaces the whole path, which the rule refuses).
fn read_bundle_file(root: &Path, bundle: &str, file: &str) -> Result<Vec<u8>, DesignError> {
    read_checked(root, &Path::new(DESIGN_DIR).join(bundle).join(file), BUNDLE_FILE_LIMIT)
}

/// A mapped source's bytes, by the path rule.
fn read_source(root: &Path, path: &str) -> Result<Vec<u8>, DesignError> {
    read_checked(root, Path::new(path), SOURCE_LIMIT)
}

fn check_bundle_name(name: &str) -> Result<(), DesignError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(error("invalid_usage", format!("{name:?}: a bundle name is 1-64 of A-Z a-z 0-9 . _ -")))
    }
}

/// A bundle's manifest, read.
pub fn load(root: &Path, bundle: &str) -> Result<Manifest, DesignError> {
    check_bundle_name(bundle)?;
    let path = design_dir(root).join(bundle).join(MANIFEST);
    let bytes = match path_rule::read_under(root, &format!("{DESIGN_DIR}/{bundle}/{MANIFEST}"), MANIFEST_LIMIT) {
        Ok(bytes) => bytes,
        Err(bee_proto::tokens::TokenErrorCode::Missing) => {
            return Err(error("bundle_not_found", format!("no design bundle {bundle:?} (beectl design import)")));
        }
        Err(code) => return Err(refused(&path.display().to_string(), code)),
    };
    serde_json::from_slice(&bytes).map_err(|err| error("manifest_invalid", format!("{}: {err}", path.display())))
}

fn save(root: &Path, manifest: &Manifest) -> Result<(), DesignError> {
    let path = design_dir(root).join(&manifest.bundle).join(MANIFEST);
    let mut text = serde_json::to_string_pretty(manifest).map_err(|err| error("io", err.to_string()))?;
    text.push('\n');
    let change = crate::setup::file_change::FileChange {
        path: path.clone(),
        before: crate::setup::file_change::FileChange::read(&path).map_err(|m| error("io", m))?,
        after: Some(text),
    };
    change.write(false).map(|_| ()).map_err(|err| io(&path, err))
}

/// The bundles under the root, by name.
pub fn bundles(root: &Path) -> Result<Vec<String>, DesignError> {
    let dir = design_dir(root);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io(&dir, err)),
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join(MANIFEST).is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// The bundle a call means: the one named, or the only one there is.
pub fn pick(root: &Path, bundle: Option<&str>) -> Result<Manifest, DesignError> {
    if let Some(bundle) = bundle {
        return load(root, bundle);
    }
    match bundles(root)?.as_slice() {
        [one] => load(root, one),
        [] => Err(error("bundle_not_found", "no design bundle under the root (beectl design import)")),
        _ => Err(error("invalid_usage", "several bundles: name one (bundle)")),
    }
}

fn entry<'a>(manifest: &'a Manifest, id: &str) -> Result<&'a Entry, DesignError> {
    manifest
        .entries
        .iter()
        .find(|e| e.id == id)
        .ok_or_else(|| error("entry_not_found", format!("no entry {id:?} in bundle {}", manifest.bundle)))
}

// ----------------------------------------------------------------- import

/// Every regular file under `dir` (relative paths), refusing links.
fn files_under(dir: &Path) -> Result<Vec<String>, DesignError> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut total = 0;
    while let Some(next) = stack.pop() {
        for item in std::fs::read_dir(&next).map_err(|err| io(&next, err))? {
            let item = item.map_err(|err| io(&next, err))?;
            let path = item.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|err| io(&path, err))?;
            if meta.file_type().is_symlink() {
                return Err(error("path_link", format!("{} is a link: a bundle holds files only", path.display())));
            }
            if meta.is_dir() {
                stack.push(path);
            } else if meta.is_file() {
                total += meta.len();
                found.push(relative(dir, &path));
            }
        }
        if found.len() > MAX_BUNDLE_FILES || total > MAX_BUNDLE_BYTES {
            return Err(error(
                "bundle_too_large",
                format!("over {MAX_BUNDLE_FILES} files or {MAX_BUNDLE_BYTES} bytes"),
            ));
        }
    }
    found.sort();
    Ok(found)
}

fn kind_of(file: &str) -> Kind {
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".html") || lower.ends_with(".htm") {
        if file.split('/').any(|part| part == "components") { Kind::Component } else { Kind::Screen }
    } else if lower.ends_with(".css") {
        Kind::Style
    } else {
        Kind::Asset
    }
}

/// An entry's id: its path without the extension for markup and styles,
/// whole for assets (so `home.html` and `home.png` stay apart).
fn id_of(file: &str, kind: Kind) -> String {
    match kind {
        Kind::Asset => file.to_owned(),
        _ => file.rsplit_once('.').map_or(file, |(stem, _)| stem).to_owned(),
    }
}

/// The bundle files a markup or style file refers to (`href`, `src`,
/// `url(…)`, `@import`), resolved against its own directory.
fn references(file: &str, text: &str, files: &HashSet<&str>) -> Vec<String> {
    static PATTERN: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(pattern) = PATTERN
        .get_or_init(|| {
            regex::Regex::new(
                r#"(?i)(?:href|src)\s*=\s*["']([^"'#?]+)|url\(\s*["']?([^"')#?]+)|@import\s+["']([^"']+)"#,
            )
            .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let base = file.rsplit_once('/').map_or("", |(dir, _)| dir);
    let mut found = Vec::new();
    for captures in pattern.captures_iter(text) {
        let Some(target) = captures.iter().skip(1).flatten().next().map(|m| m.as_str().trim()) else { continue };
        if target.contains("://") || target.starts_with("data:") || target.starts_with('/') {
            continue;
        }
        let mut parts: Vec<&str> = if base.is_empty() { Vec::new() } else { base.split('/').collect() };
        for part in target.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                other => parts.push(other),
            }
        }
        let resolved = parts.join("/");
        if files.contains(resolved.as_str()) && resolved != file && !found.contains(&resolved) {
            found.push(resolved);
        }
    }
    found
}

/// `beectl design import DIR --bundle NAME`: copies the export into the
/// bundle's directory and writes its manifest; an export's own
/// `bee-design.json` names the entries, else they are derived from the
/// files. A re-import keeps the mappings and captures of ids that remain.
pub fn import(root: &Path, dir: &str, bundle: &str) -> Result<Manifest, DesignError> {
    check_bundle_name(bundle)?;
    let source = inside(root, dir)?;
    let target = design_dir(root).join(bundle);
    if source.starts_with(design_dir(root)) {
        return Err(error("invalid_usage", "import from an export, not from Bee's own design directory"));
    }
    let files = files_under(&source)?;
    if let Some(taken) = files.iter().find(|f| f.starts_with(CAPTURES)) {
        return Err(error(
            "invalid_usage",
            format!("{taken}: a bundle's {CAPTURES} directory holds Bee's screenshots; rename it in the export"),
        ));
    }
    let file_set: HashSet<&str> = files.iter().map(String::as_str).collect();
    let read = |file: &str| std::fs::read(source.join(file)).map_err(|err| io(&source.join(file), err));
    let mut entries = Vec::new();
    if file_set.contains(MANIFEST) {
        let text = String::from_utf8(read(MANIFEST)?).map_err(|_| error("manifest_invalid", "not UTF-8"))?;
        let declared: Declared =
            serde_json::from_str(&text).map_err(|err| error("manifest_invalid", format!("{MANIFEST}: {err}")))?;
        for d in declared.entries {
            if !plain_relative(&d.file) || !file_set.contains(d.file.as_str()) {
                return Err(error("path_not_found", format!("entry {}: {} is not in the export", d.id, d.file)));
            }
            let bytes = read(&d.file)?;
            entries.push(Entry {
                id: d.id,
                kind: d.kind,
                sha256: sha256(&bytes),
                file: d.file,
                status: d.status.unwrap_or(Status::Draft),
                depends_on: d.depends_on,
                reference: d.reference,
                sources: Vec::new(),
                captures: Vec::new(),
            });
        }
    } else {
        for file in &files {
            let kind = kind_of(file);
            let bytes = read(file)?;
            let depends: Vec<String> = match kind {
                Kind::Asset => Vec::new(),
                _ => references(file, &String::from_utf8_lossy(&bytes), &file_set)
                    .iter()
                    .map(|f| id_of(f, kind_of(f)))
                    .collect(),
            };
            let reference = match kind {
                Kind::Screen | Kind::Component => {
                    let png = format!("{}.png", file.rsplit_once('.').map_or(file.as_str(), |(s, _)| s));
                    file_set.contains(png.as_str()).then_some(png)
                }
                _ => None,
            };
            entries.push(Entry {
                id: id_of(file, kind),
                kind,
                file: file.clone(),
                sha256: sha256(&bytes),
                status: Status::Draft,
                depends_on: depends,
                reference,
                sources: Vec::new(),
                captures: Vec::new(),
            });
        }
    }
    let mut ids = HashSet::new();
    for e in &entries {
        if !ids.insert(e.id.as_str()) {
            return Err(error("manifest_invalid", format!("two entries have the id {:?}", e.id)));
        }
    }
    // What a re-import keeps: mappings, and captures (judged stale against
    // the new hashes by the visual report).
    if let Ok(previous) = load(root, bundle) {
        for e in &mut entries {
            if let Some(old) = previous.entries.iter().find(|p| p.id == e.id) {
                e.sources = old.sources.clone();
                e.captures = old.captures.clone();
            }
        }
    }
    for dir in [root.join(".bee"), design_dir(root), target.clone()] {
        bee_daemon::storage::files::ensure_private_dir(&dir).map_err(|err| io(&dir, err))?;
    }
    for file in files.iter().filter(|f| f.as_str() != MANIFEST) {
        let to = target.join(file);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(|err| io(parent, err))?;
            std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700)).map_err(|err| io(parent, err))?;
        }
        let bytes = read(file)?;
        write_private(&to, &bytes)?;
    }
    // What an earlier import copied and this export no longer has goes.
    if let Ok(present) = files_under(&target) {
        for stale in present
            .iter()
            .filter(|f| f.as_str() != MANIFEST && !f.starts_with(CAPTURES) && !file_set.contains(f.as_str()))
        {
            std::fs::remove_file(target.join(stale)).map_err(|err| io(&target.join(stale), err))?;
        }
    }
    let manifest = Manifest {
        schema_version: 1,
        bundle: bundle.to_owned(),
        imported_at_utc: bee_proto::time::now_rfc3339(),
        entries,
    };
    save(root, &manifest)?;
    Ok(manifest)
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), DesignError> {
    bee_daemon::storage::files::write_private(path, bytes).map_err(|err| io(path, err))
}

// -------------------------------------------------------------------- map

/// `beectl design map ID --source PATH[#SYMBOL]`.
pub fn map(root: &Path, bundle: Option<&str>, id: &str, source: &str) -> Result<(Manifest, SourceMap), DesignError> {
    let mut manifest = pick(root, bundle)?;
    entry(&manifest, id)?;
    let (path, symbol) = match source.split_once('#') {
        Some((path, symbol)) if !symbol.is_empty() => (path, Some(symbol.to_owned())),
        _ => (source, None),
    };
    let resolved = inside(root, path)?;
    if !resolved.is_file() {
        return Err(error("path_not_found", format!("{path} is not a regular file")));
    }
    let mapped = SourceMap { path: relative(root, &resolved), symbol };
    if let Some(symbol) = &mapped.symbol {
        resolve_symbol(root, &mapped.path, symbol)?;
    }
    let Some(target) = manifest.entries.iter_mut().find(|e| e.id == id) else {
        return Err(error("entry_not_found", format!("no entry {id:?}")));
    };
    if !target.sources.contains(&mapped) {
        target.sources.push(mapped.clone());
    }
    save(root, &manifest)?;
    Ok((manifest, mapped))
}

/// A symbol's lines in a source file, by its outline (a real parser).
fn resolve_symbol(root: &Path, path: &str, symbol: &str) -> Result<(usize, usize), DesignError> {
    let bytes = read_source(root, path)?;
    let text = String::from_utf8(bytes).map_err(|_| error("symbol_unresolvable", format!("{path}: not UTF-8 text")))?;
    let outline = crate::mcp::outline::outline(path, &text)
        .ok_or_else(|| error("symbol_unresolvable", format!("{path}: no outline for this kind of file")))?;
    outline
        .iter()
        .find(|s| s.name == symbol)
        .map(|s| (s.start_line, s.end_line))
        .ok_or_else(|| error("symbol_not_found", format!("{path} has no top-level symbol {symbol:?}")))
}

// ---------------------------------------------------------------- capture

/// `path` as a `file://` URL, every byte outside the unreserved set and `/`
/// percent-encoded (a space, `#` or `?` in a name would change the URL).
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(byte) {
            url.push(char::from(*byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

/// Where the headless browser is: `BEE_CHROMIUM`, else the first of
/// chromium, chromium-browser, google-chrome on the PATH.
fn browser() -> Result<PathBuf, DesignError> {
    if let Some(path) = std::env::var_os("BEE_CHROMIUM").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(error("browser_unavailable", "no headless Chromium: install chromium, or set BEE_CHROMIUM"))
}

/// `beectl design capture ID --url URL | --file HTML`: a headless Chromium
/// screenshot stored in the bundle as evidence, with what it was of.
pub fn capture(
    root: &Path,
    bundle: Option<&str>,
    id: &str,
    url: Option<&str>,
    file: Option<&str>,
    viewport: Viewport,
) -> Result<(Manifest, Capture), DesignError> {
    let mut manifest = pick(root, bundle)?;
    let current = entry(&manifest, id)?.clone();
    let (target, location, address) = match (url, file) {
        (Some(url), None) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(error("invalid_usage", "--url takes an http:// or https:// address"));
            }
            ("url", url.to_owned(), url.to_owned())
        }
        (None, Some(file)) => {
            let path = inside(root, file)?;
            ("file", relative(root, &path), file_url(&path))
        }
        _ => return Err(error("invalid_usage", "give one of --url and --file")),
    };
    if !(16..=8192).contains(&viewport.width) || !(16..=8192).contains(&viewport.height) {
        return Err(error("invalid_usage", "the viewport is 16..8192 pixels each way"));
    }
    let bundle_dir = design_dir(root).join(&manifest.bundle);
    let captures = bundle_dir.join(CAPTURES.trim_end_matches('/'));
    bee_daemon::storage::files::ensure_private_dir(&captures).map_err(|err| io(&captures, err))?;
    let stamp = uuid::Uuid::new_v4().simple().to_string();
    let png = captures.join(format!("{}-{}.png", id.replace('/', "_"), &stamp[..12]));
    let profile = tempfile::tempdir().map_err(|err| error("io", err.to_string()))?;
    let mut command = std::process::Command::new(browser()?);
    command.args([
        "--headless=new",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--hide-scrollbars",
    ]);
    // Chromium refuses to start its sandbox as root (containers, CI).
    if rustix::process::geteuid().is_root() {
        command.arg("--no-sandbox");
    }
    command
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={},{}", viewport.width, viewport.height))
        .arg(format!("--screenshot={}", png.display()))
        .arg(&address)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Its own process group, so that stopping it stops its renderers too.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|err| error("browser_unavailable", format!("the browser: {err}")))?;
    // A page that never finishes loading must not hang the command.
    let limit = std::env::var(CAPTURE_TIMEOUT_ENV)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(CAPTURE_TIMEOUT, std::time::Duration::from_millis);
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait().map_err(|err| error("capture_failed", err.to_string()))? {
            Some(status) => break status,
            None if std::time::Instant::now() > deadline => {
                if let Some(group) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                return Err(error(
                    "capture_failed",
                    format!("the browser took longer than {} ms; stopped", limit.as_millis()),
                ));
            }
            None => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    };
    let bytes = match std::fs::read(&png) {
        Ok(bytes) if status.success() => bytes,
        _ => return Err(error("capture_failed", format!("the browser wrote no screenshot ({status})"))),
    };
    std::fs::set_permissions(&png, std::fs::Permissions::from_mode(0o600)).map_err(|err| io(&png, err))?;
    let entry_bytes = read_bundle_file(root, &manifest.bundle, &current.file)?;
    let sources_sha256 = current
        .sources
        .iter()
        .filter_map(|s| read_source(root, &s.path).ok().map(|b| (s.path.clone(), sha256(&b))))
        .collect();
    let capture = Capture {
        file: relative(&bundle_dir, &png),
        sha256: sha256(&bytes),
        viewport,
        captured_at_utc: bee_proto::time::now_rfc3339(),
        target: target.to_owned(),
        location,
        entry_sha256: sha256(&entry_bytes),
        sources_sha256,
    };
    if let Some(e) = manifest.entries.iter_mut().find(|e| e.id == id) {
        e.captures.push(capture.clone());
    }
    save(root, &manifest)?;
    Ok((manifest, capture))
}

// ------------------------------------------------------------ read tools

/// `bee_design_list`: bundles, entries, status, dependencies (no markup).
pub fn list(root: &Path) -> Result<Value, DesignError> {
    let mut out = Vec::new();
    for name in bundles(root)? {
        let manifest = load(root, &name)?;
        let entries: Vec<Value> = manifest
            .entries
            .iter()
            .map(|e| {
                json!({"id": e.id, "kind": e.kind, "status": e.status, "dependsOn": e.depends_on,
                       "reference": e.reference, "mappedSources": e.sources.len(), "captures": e.captures.len()})
            })
            .collect();
        out.push(json!({"bundle": name, "path": relative(root, &design_dir(root).join(&name)),
                        "importedAtUtc": manifest.imported_at_utc, "entries": entries}));
    }
    Ok(json!({"bundles": out}))
}

/// `id` and its dependencies, dependencies first (each once); a missing
/// dependency is listed, a cycle stops where it closes.
fn closure(manifest: &Manifest, id: &str) -> (Vec<String>, Vec<String>) {
    fn visit(
        manifest: &Manifest,
        id: &str,
        seen: &mut HashSet<String>,
        order: &mut Vec<String>,
        missing: &mut Vec<String>,
    ) {
        if !seen.insert(id.to_owned()) {
            return;
        }
        match manifest.entries.iter().find(|e| e.id == id) {
            Some(e) => {
                for dep in &e.depends_on {
                    visit(manifest, dep, seen, order, missing);
                }
                order.push(id.to_owned());
            }
            None => missing.push(id.to_owned()),
        }
    }
    let (mut seen, mut order, mut missing) = (HashSet::new(), Vec::new(), Vec::new());
    visit(manifest, id, &mut seen, &mut order, &mut missing);
    (order, missing)
}

/// `bee_design_slice`: the entry's markup or style and its dependencies'
/// (dependencies first), assets by metadata only, and the sources mapped
/// to it, within `budget` bytes; `complete: false` says what is missing or
/// did not fit.
pub fn slice(root: &Path, bundle: Option<&str>, id: &str, budget: u64) -> Result<Value, DesignError> {
    if !SLICE_BUDGET.contains(&budget) {
        return Err(error("invalid_usage", format!("budgetBytes: {}..{}", SLICE_BUDGET.start(), SLICE_BUDGET.end())));
    }
    let manifest = pick(root, bundle)?;
    let wanted = entry(&manifest, id)?.clone();
    let (order, mut missing) = closure(&manifest, id);
    let mut parts: Vec<Value> = Vec::new();
    for member in &order {
        let Ok(e) = entry(&manifest, member) else { continue };
        match read_bundle_file(root, &manifest.bundle, &e.file) {
            Ok(bytes) if sha256(&bytes) != e.sha256 => missing.push(format!("{} (its file changed since import)", e.id)),
            Ok(bytes) => match (e.kind, String::from_utf8(bytes.clone())) {
                (Kind::Asset, _) | (_, Err(_)) => parts.push(
                    json!({"id": e.id, "kind": e.kind, "file": e.file, "sha256": e.sha256, "bytes": bytes.len(), "binary": true}),
                ),
                (_, Ok(text)) => {
                    parts.push(json!({"id": e.id, "kind": e.kind, "file": e.file, "sha256": e.sha256, "text": text}))
                }
            },
            Err(err) => missing.push(format!("{} ({})", e.id, err.message)),
        }
    }
    for source in &wanted.sources {
        let text = match read_source(root, &source.path).map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => {
                missing.push(format!("source {} (not UTF-8 text)", source.path));
                continue;
            }
            Err(err) => {
                missing.push(format!("source {} ({})", source.path, err.message));
                continue;
            }
        };
        let body = match &source.symbol {
            Some(symbol) => match resolve_symbol(root, &source.path, symbol) {
                Ok((start, end)) => text.lines().skip(start - 1).take(end + 1 - start).collect::<Vec<_>>().join("\n"),
                Err(_) => {
                    missing.push(format!("source {}#{symbol}", source.path));
                    continue;
                }
            },
            None => text,
        };
        parts.push(json!({"source": source.path, "symbol": source.symbol, "text": body}));
    }
    // Fit: the entry itself first, then its dependencies nearest first,
    // then the sources; what does not fit is named.
    let envelope = |included: &[Value], omitted: &[String], missing: &[String]| {
        json!({"id": id, "bundle": manifest.bundle, "complete": omitted.is_empty() && missing.is_empty(),
               "budgetBytes": budget, "parts": included, "omitted": omitted, "missing": missing})
    };
    let mut priority: Vec<usize> = Vec::new();
    if let Some(own) = parts.iter().position(|p| p["id"] == json!(id)) {
        priority.push(own);
    }
    priority.extend((0..parts.len()).rev().filter(|i| parts[*i]["id"] != json!(id)));
    let mut kept = vec![false; parts.len()];
    let mut omitted = Vec::new();
    for index in priority {
        kept[index] = true;
        let included: Vec<Value> = parts.iter().zip(&kept).filter(|(_, k)| **k).map(|(p, _)| p.clone()).collect();
        if envelope(&included, &omitted, &missing).to_string().len() + 200 > budget as usize {
            kept[index] = false;
            let name = parts[index].get("id").or_else(|| parts[index].get("source")).cloned().unwrap_or(Value::Null);
            omitted.push(name.as_str().unwrap_or_default().to_owned());
        }
    }
    let included: Vec<Value> = parts.iter().zip(&kept).filter(|(_, k)| **k).map(|(p, _)| p.clone()).collect();
    Ok(envelope(&included, &omitted, &missing))
}

/// `bee_design_verify`: per check, hash, dependency (exists, acyclic) and
/// mapping (file, symbol) integrity of a bundle's entries (or one's).
pub fn verify(root: &Path, bundle: Option<&str>, id: Option<&str>) -> Result<Value, DesignError> {
    let manifest = pick(root, bundle)?;
    let members: Vec<&Entry> = match id {
        Some(id) => {
            let (order, _) = closure(&manifest, id);
            manifest.entries.iter().filter(|e| order.contains(&e.id)).collect()
        }
        None => manifest.entries.iter().collect(),
    };
    let cyclic = cycles(&manifest);
    let mut checks = Vec::new();
    let mut check = |entry: &str, name: &str, ok: bool, detail: String| {
        checks.push(json!({"entry": entry, "check": name, "ok": ok, "detail": detail}));
    };
    for e in members {
        match read_bundle_file(root, &manifest.bundle, &e.file).map(|b| sha256(&b)) {
            Ok(actual) if actual == e.sha256 => check(&e.id, "hash", true, format!("{} matches", e.file)),
            Ok(actual) => {
                check(&e.id, "hash", false, format!("{}: sha256 {actual}, the manifest says {}", e.file, e.sha256))
            }
            Err(err) => check(&e.id, "hash", false, err.message),
        }
        for dep in &e.depends_on {
            let exists = manifest.entries.iter().any(|x| &x.id == dep);
            check(&e.id, "dependency_exists", exists, dep.clone());
        }
        check(
            &e.id,
            "dependency_acyclic",
            !cyclic.contains(&e.id),
            if cyclic.contains(&e.id) { "on a dependency cycle".to_owned() } else { "no cycle through it".to_owned() },
        );
        if let Some(reference) = &e.reference {
            let ok = manifest.entries.iter().any(|x| &x.id == reference && x.kind == Kind::Asset);
            check(&e.id, "reference_exists", ok, reference.clone());
        }
        for source in &e.sources {
            let read = read_source(root, &source.path);
            let file_ok = read.is_ok();
            check(&e.id, "mapping_file", file_ok, read.err().map_or_else(|| source.path.clone(), |err| err.message));
            if let Some(symbol) = &source.symbol {
                let found = file_ok && resolve_symbol(root, &source.path, symbol).is_ok();
                check(&e.id, "mapping_symbol", found, format!("{}#{symbol}", source.path));
            }
        }
    }
    let failed = checks.iter().filter(|c| c["ok"] == json!(false)).count();
    Ok(json!({"bundle": manifest.bundle, "passed": checks.len() - failed, "failed": failed, "checks": checks,
              "note": "integrity of the files and the manifest only: not a screenshot comparison, not an approval"}))
}

/// The ids on a dependency cycle.
fn cycles(manifest: &Manifest) -> HashSet<String> {
    let edges: HashMap<&str, &Vec<String>> = manifest.entries.iter().map(|e| (e.id.as_str(), &e.depends_on)).collect();
    let mut on_cycle = HashSet::new();
    for start in edges.keys() {
        // Whether `start` reaches itself.
        let mut stack: Vec<&str> = edges[start].iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        while let Some(next) = stack.pop() {
            if next == *start {
                on_cycle.insert((*start).to_owned());
                break;
            }
            if seen.insert(next)
                && let Some(deps) = edges.get(next)
            {
                stack.extend(deps.iter().map(String::as_str));
            }
        }
    }
    on_cycle
}

/// An RGBA image.
struct Image {
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

fn decode_png(bytes: &[u8]) -> Result<Image, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|err| err.to_string())?;
    let mut buffer = vec![0; reader.output_buffer_size().ok_or("an image too large to decode")?];
    let info = reader.next_frame(&mut buffer).map_err(|err| err.to_string())?;
    let pixels = (info.width as usize) * (info.height as usize);
    let data = &buffer[..info.buffer_size()];
    let rgba = match info.color_type {
        png::ColorType::Rgba => data.to_vec(),
        png::ColorType::Rgb => data.chunks_exact(3).flat_map(|p| [p[0], p[1], p[2], 255]).collect(),
        png::ColorType::Grayscale => data.iter().flat_map(|g| [*g, *g, *g, 255]).collect(),
        png::ColorType::GrayscaleAlpha => data.chunks_exact(2).flat_map(|p| [p[0], p[0], p[0], p[1]]).collect(),
        png::ColorType::Indexed => return Err("an indexed image after expansion".to_owned()),
    };
    if rgba.len() != pixels * 4 {
        return Err("an image whose pixels do not match its size".to_owned());
    }
    Ok(Image { width: info.width, height: info.height, rgba })
}

/// `bee_visual_report`: a decision from stored evidence only (the latest
/// capture of `id` against the manifest, its sources and its reference
/// image); runs no browser.
pub fn visual_report(root: &Path, bundle: Option<&str>, id: &str) -> Result<Value, DesignError> {
    let manifest = pick(root, bundle)?;
    let e = entry(&manifest, id)?;
    let mut findings = Vec::new();
    let mut limitations = vec![
        "a read of stored evidence: no browser ran for this report",
        "captures were taken on this machine by beectl design capture; a client's own evidence is untrusted",
        "a matching screenshot is not a design approval",
    ];
    let current = read_bundle_file(root, &manifest.bundle, &e.file).ok().map(|b| sha256(&b));
    if current.as_deref() != Some(e.sha256.as_str()) {
        findings.push(
            json!({"kind": "design_changed", "detail": format!("{} does not match the manifest's sha256", e.file)}),
        );
    }
    let Some(latest) = e.captures.last() else {
        findings.push(json!({"kind": "missing_capture", "detail": "no capture of this entry (beectl design capture)"}));
        return Ok(
            json!({"id": id, "decision": "insufficient_evidence", "findings": findings, "limitations": limitations}),
        );
    };
    let capture_bytes = read_bundle_file(root, &manifest.bundle, &latest.file).ok();
    let capture_ok = capture_bytes.as_ref().is_some_and(|b| sha256(b) == latest.sha256);
    if !capture_ok {
        findings.push(json!({"kind": "mismatched_capture", "capture": latest.file,
                             "detail": "the capture's file is gone or does not match its recorded sha256"}));
    }
    let mut stale = false;
    if current.as_deref() != Some(latest.entry_sha256.as_str()) {
        stale = true;
        findings.push(json!({"kind": "stale_capture", "capture": latest.file,
                             "detail": format!("{} changed after the capture", e.file)}));
    }
    for source in &e.sources {
        let now = read_source(root, &source.path).ok().map(|b| sha256(&b));
        if now.as_ref() != latest.sources_sha256.get(&source.path) {
            stale = true;
            findings.push(json!({"kind": "stale_capture", "capture": latest.file,
                                 "detail": format!("{} changed after the capture (or was mapped since)", source.path)}));
        }
    }
    let reference = e.reference.as_ref().and_then(|r| manifest.entries.iter().find(|x| &x.id == r));
    let mut decision = if !capture_ok || stale { "insufficient_evidence" } else { "no_reference" };
    match (reference, capture_bytes.filter(|_| capture_ok)) {
        (None, _) => limitations.push("no reference image: no pixel comparison"),
        (Some(_), None) => {}
        (Some(reference), Some(capture)) => {
            let reference_bytes = read_bundle_file(root, &manifest.bundle, &reference.file).ok();
            match reference_bytes.filter(|b| sha256(b) == reference.sha256) {
                None => {
                    findings.push(json!({"kind": "mismatched_reference", "detail": format!("{} is gone or changed since import", reference.file)}));
                    decision = "insufficient_evidence";
                }
                Some(reference_bytes) => match (decode_png(&reference_bytes), decode_png(&capture)) {
                    (Ok(want), Ok(got)) if (want.width, want.height) != (got.width, got.height) => {
                        findings.push(json!({"kind": "size_mismatch", "reference": [want.width, want.height], "capture": [got.width, got.height]}));
                        if decision == "no_reference" {
                            decision = "differs";
                        }
                    }
                    (Ok(want), Ok(got)) => {
                        let total = (want.width as u64) * (want.height as u64);
                        let differing = want
                            .rgba
                            .chunks_exact(4)
                            .zip(got.rgba.chunks_exact(4))
                            .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > CHANNEL_TOLERANCE))
                            .count() as u64;
                        let share = if total == 0 { 0.0 } else { differing as f64 / total as f64 };
                        findings.push(
                            json!({"kind": "pixel_difference", "reference": reference.file, "capture": latest.file,
                                             "differingPixels": differing, "totalPixels": total,
                                             "differingShare": (share * 1e6).round() / 1e6,
                                             "channelTolerance": CHANNEL_TOLERANCE}),
                        );
                        if decision == "no_reference" {
                            decision = if share <= DIFFERING_SHARE { "consistent_with_reference" } else { "differs" };
                        }
                    }
                    (want, got) => {
                        findings.push(json!({"kind": "unreadable_image", "detail": format!("reference: {:?}; capture: {:?}", want.err(), got.err())}));
                        decision = "insufficient_evidence";
                    }
                },
            }
        }
    }
    Ok(json!({"id": id, "decision": decision, "capture": latest, "findings": findings, "limitations": limitations}))
}

/// Whether `path` is a plain relative path (no `..`, not absolute).
pub fn plain_relative(path: &str) -> bool {
    Path::new(path).components().all(|c| matches!(c, Component::Normal(_)))
}
