//! Asking beed on behalf of a command, or deciding to work offline.

use bee_daemon::client::{self, Answer, ClientError};
use bee_proto::api::ApiErrorCode;
use std::io::Write as _;
use std::time::Duration;

/// POSTs `body` to `path` on the configured socket. `None` means "do it
/// here instead": beed is not running, serves another store, or did not
/// answer usefully (said on stderr, naming `fallback`).
pub fn post(path: &str, body: Vec<u8>, timeout: Duration, fallback: &str) -> Option<Answer> {
    let socket = bee_proto::paths::socket_path()?;
    match client::post(&socket, path, body, timeout) {
        Ok(answer) => Some(answer),
        Err(ClientError::NotRunning(_)) => None,
        Err(ClientError::Api { error: Some(error), .. }) if error.error_code == ApiErrorCode::StoreNotServed => None,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "beectl: {err}; {fallback}");
            None
        }
    }
}
