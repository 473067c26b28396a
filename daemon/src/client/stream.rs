//! A stream client for the audit: connects to `/stream` (over beed's unix
//! socket, or a loopback `ws://` URL), reads the replay and, for a while,
//! live messages, and reports which event ids it saw.

use bee_proto::events::STREAM_PATH;
use serde_json::Value;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

/// Where the stream is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamTarget {
    /// beed's unix socket.
    Socket(PathBuf),
    /// `ws://HOST:PORT/PATH` on loopback (what a dashboard connects to),
    /// with the read secret the listener asks for (none when reads are open).
    Url { url: String, secret: Option<String> },
}

/// What a client received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Received {
    /// Ids in the `initial` replay.
    pub replayed: Vec<i64>,
    /// Ids of `event` messages after it.
    pub live: Vec<i64>,
}

impl Received {
    pub fn ids(&self) -> HashSet<i64> {
        self.replayed.iter().chain(&self.live).copied().collect()
    }

    /// The ids of the replay, and every id received.
    pub fn into_parts(self) -> (Vec<i64>, HashSet<i64>) {
        let ids = self.ids();
        (self.replayed, ids)
    }
}

/// Connects, reads the replay, then live messages until `linger` passes
/// (or until an id in `until_seen` arrives). With `session`, the stream is
/// that session's alone (`?session=ID`): its own replay and live events,
/// whatever other sessions send. Errors say what failed.
pub fn read(
    target: &StreamTarget,
    session: Option<&str>,
    linger: Duration,
    until_seen: Option<i64>,
) -> Result<Received, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| format!("no runtime: {err}"))?;
    runtime.block_on(async {
        tokio::time::timeout(linger + Duration::from_secs(3), read_async(target, session, linger, until_seen))
            .await
            .map_err(|_| "the stream sent no replay in time".to_owned())?
    })
}

/// `url` asking for `session`'s stream alone, when one is given.
fn for_session(url: &str, session: Option<&str>) -> String {
    match session {
        None => url.to_owned(),
        Some(session) => {
            let joiner = if url.contains('?') { '&' } else { '?' };
            let value: String = form_urlencoded::byte_serialize(session.as_bytes()).collect();
            format!("{url}{joiner}{}={value}", bee_proto::events::STREAM_SESSION_PARAM)
        }
    }
}

async fn read_async(
    target: &StreamTarget,
    session: Option<&str>,
    linger: Duration,
    until_seen: Option<i64>,
) -> Result<Received, String> {
    match target {
        StreamTarget::Socket(socket) => {
            let stream = tokio::net::UnixStream::connect(socket)
                .await
                .map_err(|err| format!("stream: cannot connect to {}: {err}", socket.display()))?;
            let url = for_session(&format!("ws://beed{STREAM_PATH}"), session);
            let (socket, _) = tokio_tungstenite::client_async(url, stream)
                .await
                .map_err(|err| format!("stream: handshake failed: {err}"))?;
            collect(socket, linger, until_seen).await
        }
        StreamTarget::Url { url, secret } => {
            let authority = url
                .strip_prefix("ws://")
                .and_then(|rest| rest.split('/').next())
                .ok_or_else(|| format!("stream: {url} is not a ws:// URL"))?;
            let stream = tokio::net::TcpStream::connect(authority)
                .await
                .map_err(|err| format!("stream: cannot connect to {authority}: {err}"))?;
            let url = for_session(url, session);
            let mut request =
                tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url.as_str())
                    .map_err(|err| format!("stream: {url} is not a stream URL: {err}"))?;
            if let Some(secret) = secret
                && let Ok(bearer) = format!("Bearer {secret}").parse()
            {
                request.headers_mut().insert("Authorization", bearer);
            }
            let (socket, _) = tokio_tungstenite::client_async(request, stream)
                .await
                .map_err(|err| format!("stream: handshake failed: {err}"))?;
            collect(socket, linger, until_seen).await
        }
    }
}

async fn collect<S>(
    mut socket: tokio_tungstenite::WebSocketStream<S>,
    linger: Duration,
    until_seen: Option<i64>,
) -> Result<Received, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use futures_util::StreamExt;
    let mut received = Received::default();
    let mut initial = false;
    let deadline = tokio::time::Instant::now() + linger;
    loop {
        let next = if initial {
            match tokio::time::timeout_at(deadline, socket.next()).await {
                Ok(next) => next,
                Err(_) => break,
            }
        } else {
            socket.next().await
        };
        let text = match next {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Close(_))) | None => break,
            Some(Ok(_)) => continue,
            Some(Err(err)) => return Err(format!("stream: {err}")),
        };
        let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else { continue };
        let id = |event: &Value| event.get("id").and_then(Value::as_i64);
        match message.get("type").and_then(Value::as_str) {
            Some("initial") => {
                initial = true;
                received.replayed =
                    message.get("data").and_then(Value::as_array).into_iter().flatten().filter_map(id).collect();
            }
            Some("event") => received.live.extend(message.get("data").and_then(id)),
            _ => {}
        }
        if until_seen.is_some_and(|wanted| received.ids().contains(&wanted)) {
            break;
        }
    }
    let _ = socket.close(None).await;
    if !initial {
        return Err("stream: closed before its replay".to_owned());
    }
    Ok(received)
}
