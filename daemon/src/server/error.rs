//! Why beed did not start (or stopped with an error): one error for the
//! lifecycle and the socket it binds, so neither reaches back into the other.

use std::io;
use std::path::PathBuf;

use crate::delivery::store::StoreError;

/// Why beed did not start (or stopped with an error).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{}; cannot place Bee's files", bee_proto::paths::NO_HOME)]
    NoHome,
    #[error("another beed is already running on {socket}{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AlreadyRunning { socket: PathBuf, pid: Option<u32> },
    #[error("{0} exists and is not a socket; refusing to replace it")]
    NotASocket(PathBuf),
    #[error("{0} must name a loopback address, not {1}")]
    NotLoopback(&'static str, std::net::SocketAddr),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),
}
