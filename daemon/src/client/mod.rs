//! Clients of a running beed: this module is the socket client `beectl`
//! asks beed with; [`stream`] is the stream client the audit uses for its
//! presentation receipt.
//!
//! Every answer is checked for the daemon's protocol version before its body
//! is trusted; "not running" is told apart from "running but failing" so the
//! caller can decide to read the store offline.
//!
//! May use: `bee_proto` only.

pub mod stream;

use bee_proto::api::{ApiError, EXIT_CODE_HEADER, PROTOCOL_HEADER, PROTOCOL_VERSION};
use bee_proto::exit::Exit;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{Method, Request};
use hyper_util::client::legacy::Client;
use hyperlocal::{UnixClientExt, UnixConnector};
use std::path::Path;
use std::time::Duration;

/// Largest answer accepted from the daemon.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// Why the daemon gave no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("beed is not running (no socket at {0})")]
    NotRunning(String),
    #[error("beed speaks protocol {found:?}; this build speaks {PROTOCOL_VERSION}")]
    ProtocolMismatch { found: Option<String> },
    #[error("beed answered {status}: {message}")]
    Api { status: u16, error: Option<ApiError>, message: String },
    #[error("talking to beed failed: {0}")]
    Transport(String),
}

/// A successful answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// Exit status for report answers; `None` on other answers.
    pub exit: Option<Exit>,
    pub body: Vec<u8>,
}

/// `GET path` from the daemon at `socket`, waiting at most `timeout`.
pub fn get(socket: &Path, path: &str, timeout: Duration) -> Result<Answer, ClientError> {
    request(socket, Method::GET, path, None, timeout)
}

/// `POST path` with a JSON `body` to the daemon at `socket`, waiting at most `timeout`.
pub fn post(socket: &Path, path: &str, body: Vec<u8>, timeout: Duration) -> Result<Answer, ClientError> {
    request(socket, Method::POST, path, Some(body), timeout)
}

fn request(
    socket: &Path,
    method: Method,
    path: &str,
    body: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Answer, ClientError> {
    if !socket.exists() {
        return Err(ClientError::NotRunning(socket.display().to_string()));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| ClientError::Transport(err.to_string()))?;
    runtime.block_on(async {
        tokio::time::timeout(timeout, send(socket, method, path, body))
            .await
            .map_err(|_| ClientError::Transport(format!("no answer within {timeout:?}")))?
    })
}

async fn send(socket: &Path, method: Method, path: &str, body: Option<Vec<u8>>) -> Result<Answer, ClientError> {
    let client: Client<UnixConnector, Full<Bytes>> = Client::unix();
    let uri: hyper::Uri = hyperlocal::Uri::new(socket, path).into();
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(PROTOCOL_HEADER, PROTOCOL_VERSION)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body.unwrap_or_default())))
        .map_err(|err| ClientError::Transport(err.to_string()))?;
    let response = client.request(request).await.map_err(|err| {
        if is_connect_refused(&err) {
            ClientError::NotRunning(socket.display().to_string())
        } else {
            ClientError::Transport(err.to_string())
        }
    })?;
    let status = response.status();
    let protocol = response.headers().get(PROTOCOL_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if protocol.as_deref() != Some(PROTOCOL_VERSION.to_string().as_str()) {
        return Err(ClientError::ProtocolMismatch { found: protocol });
    }
    let exit = response
        .headers()
        .get(EXIT_CODE_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u8>().ok())
        .map(Exit::from_code);
    let body = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|err| ClientError::Transport(err.to_string()))?
        .to_bytes()
        .to_vec();
    if !status.is_success() {
        let error: Option<ApiError> = serde_json::from_slice(&body).ok();
        let message = error.as_ref().map_or_else(|| String::from_utf8_lossy(&body).into_owned(), |e| e.message.clone());
        return Err(ClientError::Api { status: status.as_u16(), error, message });
    }
    Ok(Answer { exit, body })
}

fn is_connect_refused(err: &hyper_util::client::legacy::Error) -> bool {
    if !err.is_connect() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return matches!(io.kind(), std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound);
        }
        source = cause.source();
    }
    true
}
