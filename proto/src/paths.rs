//! Where Bee keeps things: `${BEE_HOME:-$HOME}/.bee/…`, socket override `BEE_SOCKET`.

use std::ffi::OsString;
use std::path::PathBuf;

/// Environment variable naming the directory that contains `.bee/`.
pub const BEE_HOME_ENV: &str = "BEE_HOME";
/// Environment variable overriding the daemon socket path.
pub const BEE_SOCKET_ENV: &str = "BEE_SOCKET";

/// What every command says when neither variable names a home for `.bee/`.
pub const NO_HOME: &str = "neither BEE_HOME nor HOME is set";

/// The directory that contains `.bee/`: `BEE_HOME`, else `HOME`.
pub fn bee_home() -> Option<PathBuf> {
    non_empty_env(BEE_HOME_ENV).or_else(|| non_empty_env("HOME")).map(PathBuf::from)
}

/// `${BEE_HOME:-$HOME}/.bee`.
pub fn bee_dir() -> Option<PathBuf> {
    bee_home().map(|home| home.join(".bee"))
}

/// Bee's settings: `${BEE_HOME:-$HOME}/.bee/config.toml`.
pub fn config_file() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("config.toml"))
}

/// The exporter's state, written by beed: `${BEE_HOME:-$HOME}/.bee/export/state.json`.
pub fn export_state_file() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("export").join("state.json"))
}

/// The exporter's running totals of past hours and of backfill, kept so a
/// send reads only what changed: `${BEE_HOME:-$HOME}/.bee/export/counters.json`.
pub fn export_counters_file() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("export").join("counters.json"))
}

/// What each export destination was last sent, kept apart from the
/// counters' state: `${BEE_HOME:-$HOME}/.bee/export/sent.json`.
pub fn export_sent_file() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("export").join("sent.json"))
}

/// The daemon socket: `BEE_SOCKET`, else `${BEE_HOME:-$HOME}/.bee/run/beed.sock`.
pub fn socket_path() -> Option<PathBuf> {
    non_empty_env(BEE_SOCKET_ENV).map(PathBuf::from).or_else(|| bee_dir().map(|dir| dir.join("run").join("beed.sock")))
}

/// A file beside the daemon socket (in `run/`): the loopback listener's read
/// secret and dashboard URL live there.
pub fn beside_socket(file_name: &str) -> Option<PathBuf> {
    socket_path()?.parent().map(|run| run.join(file_name))
}

/// Where the stores live: `${BEE_HOME:-$HOME}/.bee/usage`.
pub fn usage_dir() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("usage"))
}

/// The default delivery store: `${BEE_HOME:-$HOME}/.bee/usage/delivery-v1`.
pub fn default_delivery_store() -> Option<PathBuf> {
    usage_dir().map(|dir| dir.join("delivery-v1"))
}

/// Where hooks spool what the daemon could not take: `${BEE_HOME:-$HOME}/.bee/spool`.
/// Where Bee keeps backups of files it changed (`~/.bee/backups`): never
/// beside them, where they would be committed by accident.
pub fn backups_dir() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("backups"))
}

/// Where `beectl setup` keeps its receipts (`~/.bee/setup`): what it
/// changed, so that `--undo` takes out exactly that.
pub fn setup_dir() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("setup"))
}

pub fn spool_dir() -> Option<PathBuf> {
    bee_dir().map(|dir| dir.join("spool"))
}

fn non_empty_env(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|value| !value.is_empty())
}

/// The ledger: `${BEE_HOME:-$HOME}/.bee/usage/ledger-v1`.
pub fn default_ledger_store() -> Option<PathBuf> {
    usage_dir().map(|dir| dir.join("ledger-v1"))
}

/// The events store: `${BEE_HOME:-$HOME}/.bee/usage/events-v1`.
pub fn default_events_store() -> Option<PathBuf> {
    usage_dir().map(|dir| dir.join("events-v1"))
}
