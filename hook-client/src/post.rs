//! Handing one observation to beed within the deadline, else to the spool.
//!
//! The request is one fixed HTTP/1.1 POST over the unix socket, written with
//! std alone: pulling in an async runtime and an HTTP stack would cost this
//! once-per-prompt binary start-up time and size for a single request whose
//! answer we only need the status line and protocol header of.
//! The post runs on a helper thread so that even a blocking `connect` cannot
//! hold the hook past its deadline; when the process exits the thread goes
//! with it, and a request beed already received may still commit — the spool
//! copy is then a duplicate that ingestion recognises by event id.

use bee_proto::api::{PROTOCOL_HEADER, PROTOCOL_VERSION};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long the hook waits for beed after its output is flushed.
pub const DEADLINE: Duration = Duration::from_millis(100);

/// What became of the observation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// beed committed it (or already had it).
    Accepted,
    /// beed refused it for good (store at capacity): spooling would not help.
    Refused(String),
    /// beed was down, slow, of another protocol, or failing.
    Unavailable(String),
}

/// Posts `body` to `path` on beed at `socket`, waiting until `deadline` at most.
pub fn post(socket: PathBuf, path: &'static str, body: Vec<u8>, deadline: Instant) -> Delivery {
    match exchange(socket, "POST", path, body, deadline, 64 * 1024) {
        Ok(answer) => classify_answer(&answer),
        Err(failure) => Delivery::Unavailable(failure.to_string()),
    }
}

/// Why an exchange with beed did not produce an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExchangeFailure {
    /// Nothing listening, or the connection failed.
    Unreachable(String),
    /// No whole answer by the deadline.
    Late,
}

impl std::fmt::Display for ExchangeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeFailure::Unreachable(why) => write!(f, "beed is not reachable: {why}"),
            ExchangeFailure::Late => write!(f, "beed did not answer within {DEADLINE:?}"),
        }
    }
}

/// Sends one request and returns beed's whole raw answer (at most
/// `max_answer` bytes), from a helper thread so that nothing outlives `deadline`.
pub fn exchange(
    socket: PathBuf,
    method: &'static str,
    path: &'static str,
    body: Vec<u8>,
    deadline: Instant,
    max_answer: u64,
) -> Result<Vec<u8>, ExchangeFailure> {
    let (done, result) = mpsc::channel();
    let spawned = std::thread::Builder::new().name("bee-post".into()).spawn(move || {
        let _ = done.send(exchange_now(&socket, method, path, &body, deadline, max_answer));
    });
    if let Err(err) = spawned {
        return Err(ExchangeFailure::Unreachable(format!("cannot start the post: {err}")));
    }
    let left = deadline.saturating_duration_since(Instant::now());
    result.recv_timeout(left).unwrap_or(Err(ExchangeFailure::Late))
}

fn exchange_now(
    socket: &Path,
    method: &str,
    path: &str,
    body: &[u8],
    deadline: Instant,
    max_answer: u64,
) -> Result<Vec<u8>, ExchangeFailure> {
    let unavailable = |what: &str, err: std::io::Error| match err.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => ExchangeFailure::Late,
        _ => ExchangeFailure::Unreachable(format!("{what}: {err}")),
    };
    let mut stream = UnixStream::connect(socket).map_err(|err| unavailable("connecting", err))?;
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    stream
        .set_write_timeout(Some(left))
        .and_then(|_| stream.set_read_timeout(Some(left)))
        .map_err(|err| unavailable("socket", err))?;
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: beed\r\n{PROTOCOL_HEADER}: {PROTOCOL_VERSION}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).map_err(|err| unavailable("sending to beed", err))?;
    let mut answer = Vec::with_capacity(512);
    // Connection: close — the answer ends where the stream does. Bounded.
    (&mut stream).take(max_answer).read_to_end(&mut answer).map_err(|err| unavailable("reading beed's answer", err))?;
    Ok(answer)
}

/// The status code and body of a raw HTTP/1.1 answer.
pub fn status_and_body(answer: &[u8]) -> Option<(u16, &[u8])> {
    let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let status = std::str::from_utf8(&answer[..head_end]).ok()?.split(' ').nth(1)?.parse().ok()?;
    Some((status, &answer[head_end + 4..]))
}

/// Reads the status and protocol header of an HTTP/1.1 answer.
pub fn classify_answer(answer: &[u8]) -> Delivery {
    let head_end = answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(answer.len());
    let head = String::from_utf8_lossy(&answer[..head_end]);
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|code| code.parse::<u16>().ok());
    let protocol_ok = lines.any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.trim().eq_ignore_ascii_case(PROTOCOL_HEADER) && value.trim() == PROTOCOL_VERSION.to_string()
        })
    });
    match status {
        _ if !protocol_ok => Delivery::Unavailable("beed speaks another protocol".into()),
        Some(code) => classify_status(code),
        None => Delivery::Unavailable("beed's answer was not HTTP".into()),
    }
}

/// What an answer of `status` from beed's own protocol means for a record.
pub fn classify_status(status: u16) -> Delivery {
    match status {
        200 => Delivery::Accepted,
        507 => Delivery::Refused("delivery store is at capacity".into()),
        code => Delivery::Unavailable(format!("beed answered {code}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_classified_by_status_and_protocol() {
        let ok = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nbee-protocol: 1\r\n\r\n{}";
        assert_eq!(classify_answer(ok), Delivery::Accepted);
        let other = b"HTTP/1.1 200 OK\r\nbee-protocol: 2\r\n\r\n{}";
        assert!(matches!(classify_answer(other), Delivery::Unavailable(_)));
        let full = b"HTTP/1.1 507 Insufficient Storage\r\nBee-Protocol: 1\r\n\r\n{}";
        assert!(matches!(classify_answer(full), Delivery::Refused(_)));
        assert!(matches!(classify_answer(b""), Delivery::Unavailable(_)));
        assert!(matches!(classify_answer(b"\xff\xff garbage"), Delivery::Unavailable(_)));
    }
}
