//! beed's unix socket: the single-instance lock beside it, binding it 0600
//! (or inheriting it from systemd), replacing a stale one, and accepting
//! only peers running as the daemon's own user.

use std::io::{self, Read, Seek, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use super::error::StartError;
use crate::storage::files;

/// Holds `<socket>.lock` exclusively for the daemon's lifetime.
pub(super) fn take_instance_lock(socket: &Path) -> Result<std::fs::File, StartError> {
    let mut lock_path = socket.as_os_str().to_owned();
    lock_path.push(".lock");
    let mut lock = files::open_private_file(Path::new(&lock_path))?;
    match lock.try_lock() {
        Ok(()) => {
            lock.set_len(0)?;
            write!(lock, "{}", std::process::id())?;
            Ok(lock)
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = lock.rewind().and_then(|_| lock.read_to_string(&mut pid));
            Err(StartError::AlreadyRunning { socket: socket.to_owned(), pid: pid.trim().parse().ok() })
        }
        Err(std::fs::TryLockError::Error(err)) => Err(err.into()),
    }
}

/// The listening socket: inherited from systemd, or bound here.
pub(super) fn listen(socket: &Path) -> Result<(tokio::net::UnixListener, bool), StartError> {
    let mut inherited = listenfd::ListenFd::from_env();
    if let Some(std_listener) = inherited.take_unix_listener(0)? {
        std_listener.set_nonblocking(true)?;
        return Ok((tokio::net::UnixListener::from_std(std_listener)?, true));
    }
    match std::fs::symlink_metadata(socket) {
        Ok(meta) if meta.file_type().is_socket() => {
            if std::os::unix::net::UnixStream::connect(socket).is_ok() {
                return Err(StartError::AlreadyRunning { socket: socket.to_owned(), pid: None });
            }
            tracing::info!(socket = %socket.display(), "replacing a stale socket");
            std::fs::remove_file(socket)?;
        }
        Ok(_) => return Err(StartError::NotASocket(socket.to_owned())),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(err.into()),
    }
    let listener = tokio::net::UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    Ok((listener, false))
}

/// Accepts only peers running as the daemon's own user.
pub(super) struct SameUserListener {
    pub(super) inner: tokio::net::UnixListener,
    pub(super) uid: u32,
}

impl axum::serve::Listener for SameUserListener {
    type Io = tokio::net::UnixStream;
    type Addr = tokio::net::unix::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => match stream.peer_cred() {
                    Ok(cred) if cred.uid() == self.uid => return (stream, addr),
                    Ok(cred) => tracing::warn!(peer_uid = cred.uid(), "refused a peer of another user"),
                    Err(err) => tracing::warn!(error = %err, "refused a peer without credentials"),
                },
                Err(err) => {
                    // Out of descriptors and the like: back off instead of spinning.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// Raises the open-file limit to its hard maximum: every connection costs a
/// descriptor, and the default soft limit (often 1,024) is what a flood on
/// the loopback listener would otherwise exhaust. The soft limit reached.
pub(super) fn raise_open_file_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    // An unlimited hard limit still has the kernel's ceiling; 1 Mi is plenty.
    let target = limit.maximum.unwrap_or(1 << 20);
    if limit.current.is_some_and(|current| current < target)
        && let Err(err) = setrlimit(Resource::Nofile, Rlimit { current: Some(target), maximum: limit.maximum })
    {
        tracing::warn!(error = %err, "cannot raise the open-file limit");
    }
    getrlimit(Resource::Nofile).current
}
