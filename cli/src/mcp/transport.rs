//! The stdio transport of `beectl mcp serve`: JSON-RPC messages one per
//! line, with the contract's frame limit. A frame over 512 KiB gets a
//! JSON-RPC error (its id when the frame names one early, as clients write
//! it) and the server reads on; a line that is not JSON, or not a JSON-RPC
//! message, gets the protocol's parse or invalid-request error. One writer
//! task owns stdout, so answers and these errors never interleave.
//!
//! Memory stays bounded whatever the client does: at most
//! [`MAX_CALLS_IN_FLIGHT`] requests are taken before their answers are
//! written, and while that many wait (a client that pipelines requests and
//! never reads its answers), stdin is not read at all.

use bee_proto::mcp::MAX_FRAME_BYTES;
use rmcp::model::{ClientNotification, JsonRpcMessage};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};

/// How much of an oversized frame is searched for its id.
const ID_SEARCH_BYTES: usize = 4096;

/// Requests taken and not answered yet, at most: the reader waits for an
/// answer to go out before it takes another.
pub const MAX_CALLS_IN_FLIGHT: usize = 8;

/// Lines for stdout, in the order they are to be written.
type Lines = mpsc::Sender<Vec<u8>>;

pub struct Stdio {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleServer>>,
    outgoing: Lines,
    /// A permit per request that may still be taken (see [`MAX_CALLS_IN_FLIGHT`]).
    in_flight: Arc<Semaphore>,
}

/// The transport over this process's stdin and stdout; its reader and
/// writer run as tasks of the current runtime.
pub fn stdio() -> Stdio {
    let (lines, mut to_write) = mpsc::channel::<Vec<u8>>(64);
    tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = to_write.recv().await {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    });
    let (messages, incoming) = mpsc::channel(MAX_CALLS_IN_FLIGHT);
    let errors = lines.clone();
    let in_flight = Arc::new(Semaphore::new(MAX_CALLS_IN_FLIGHT));
    let permits = in_flight.clone();
    tokio::spawn(async move {
        let mut stdin = tokio::io::BufReader::with_capacity(64 * 1024, tokio::io::stdin());
        loop {
            match read_frame(&mut stdin).await {
                Ok(Frame::End) | Err(_) => break,
                Ok(Frame::Oversized { bytes, id }) => {
                    let message = format!("the frame is {bytes} bytes; the limit is {MAX_FRAME_BYTES} (512 KiB)");
                    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": message,
                                       "data": {"errorCode": "frame_too_large"}}});
                    if send_line(&errors, &error).await.is_err() {
                        break;
                    }
                }
                Ok(Frame::Line(line)) if let Some(id) = call_without_object_arguments(&line) => {
                    let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602,
                        "message": "tools/call: arguments must be a JSON object (the tool's named arguments)",
                        "data": {"errorCode": "invalid_usage"}}});
                    if send_line(&errors, &error).await.is_err() {
                        break;
                    }
                }
                Ok(Frame::Line(line)) => match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(&line) {
                    Ok(message) => {
                        // A request waits for a place; its answer (or its
                        // cancellation, which may go unanswered) gives it back.
                        match &message {
                            JsonRpcMessage::Request(_) => match permits.acquire().await {
                                Ok(permit) => permit.forget(),
                                Err(_) => break,
                            },
                            JsonRpcMessage::Notification(notification)
                                if matches!(
                                    notification.notification,
                                    ClientNotification::CancelledNotification(_)
                                ) =>
                            {
                                give_back(&permits);
                            }
                            _ => {}
                        }
                        if messages.send(message).await.is_err() {
                            break;
                        }
                    }
                    Err(err) => {
                        let (code, id, what) = match serde_json::from_slice::<Value>(&line) {
                            Ok(value) => {
                                (-32600, value.get("id").cloned().unwrap_or(Value::Null), "not a JSON-RPC message")
                            }
                            Err(_) => (-32700, Value::Null, "not JSON"),
                        };
                        let error = json!({"jsonrpc": "2.0", "id": id,
                                           "error": {"code": code, "message": format!("{what}: {err}")}});
                        if send_line(&errors, &error).await.is_err() {
                            break;
                        }
                    }
                },
            }
        }
    });
    Stdio { incoming, outgoing: lines, in_flight }
}

/// A request's place given back: by its answer, or by its cancellation
/// (which may go unanswered), so the places never exceed the bound rather
/// than be counted twice for a cancelled request that was answered too.
fn give_back(places: &Semaphore) {
    if places.available_permits() < MAX_CALLS_IN_FLIGHT {
        places.add_permits(1);
    }
}

async fn send_line(lines: &Lines, value: &Value) -> Result<(), mpsc::error::SendError<Vec<u8>>> {
    let mut line = value.to_string().into_bytes();
    line.push(b'\n');
    lines.send(line).await
}

/// The id (`null` when it has none) of a `tools/call` whose `arguments`
/// are there and not an object: invalid params (-32602), not a method the
/// server lacks. `None` for every other line.
fn call_without_object_arguments(line: &[u8]) -> Option<Value> {
    // Cheap first: most lines are not such calls.
    if !line.windows(10).any(|w| w == b"tools/call") {
        return None;
    }
    let value = serde_json::from_slice::<Value>(line).ok()?;
    let misfit = value.get("method").and_then(Value::as_str) == Some("tools/call")
        && value.pointer("/params/arguments").is_some_and(|arguments| !arguments.is_object() && !arguments.is_null());
    misfit.then(|| value.get("id").cloned().unwrap_or(Value::Null))
}

enum Frame {
    Line(Vec<u8>),
    Oversized { bytes: usize, id: Value },
    End,
}

/// The next line of `reader`, held only up to the frame limit: beyond it
/// only its first bytes are kept (for its id), the rest read past and counted.
async fn read_frame(reader: &mut (impl AsyncBufReadExt + Unpin)) -> std::io::Result<Frame> {
    let mut line = Vec::new();
    let mut bytes = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if bytes == 0 { Frame::End } else { frame(line, bytes) });
        }
        let (chunk, used, ended) = match available.iter().position(|b| *b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        bytes += chunk.len();
        let keep = if bytes > MAX_FRAME_BYTES {
            line.truncate(ID_SEARCH_BYTES);
            ID_SEARCH_BYTES.saturating_sub(line.len()).min(chunk.len())
        } else {
            chunk.len()
        };
        line.extend_from_slice(&chunk[..keep]);
        reader.consume(used);
        if !ended {
            continue;
        }
        if bytes <= MAX_FRAME_BYTES && line.iter().all(u8::is_ascii_whitespace) {
            // A blank line is no frame: read on.
            (line, bytes) = (Vec::new(), 0);
            continue;
        }
        return Ok(frame(line, bytes));
    }
}

/// A whole line (`bytes` long; `held` all of it, or only its start when it
/// is over the limit) as a frame.
fn frame(mut held: Vec<u8>, bytes: usize) -> Frame {
    if bytes > MAX_FRAME_BYTES {
        return Frame::Oversized { bytes, id: frame_id(&held) };
    }
    if held.last() == Some(&b'\r') {
        held.pop();
    }
    Frame::Line(held)
}

/// The top-level `"id"` of a frame's beginning, when it names one there (a
/// number or a string), else `null`.
fn frame_id(prefix: &[u8]) -> Value {
    let (mut depth, mut in_string, mut escaped, mut key_start) = (0usize, false, false, None);
    let mut last_key: Option<(usize, usize)> = None;
    for (i, &b) in prefix.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => {
                    in_string = false;
                    if let Some(start) = key_start.take() {
                        last_key = Some((start, i));
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                // A string at depth 1 right after `{` or `,` is a key.
                let before = prefix[..i].iter().rev().find(|c| !c.is_ascii_whitespace());
                if depth == 1 && matches!(before, Some(b'{') | Some(b',')) {
                    key_start = Some(i + 1);
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b':' if depth == 1 => {
                if let Some((start, end)) = last_key.take()
                    && &prefix[start..end] == b"id"
                {
                    let rest = &prefix[i + 1..];
                    let end = rest.iter().position(|c| matches!(c, b',' | b'}')).unwrap_or(rest.len());
                    return serde_json::from_slice::<Value>(&rest[..end])
                        .ok()
                        .filter(|id| id.is_number() || id.is_string())
                        .unwrap_or(Value::Null);
                }
            }
            _ => {}
        }
    }
    Value::Null
}

impl Transport<RoleServer> for Stdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let lines = self.outgoing.clone();
        let in_flight = self.in_flight.clone();
        async move {
            let answers = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let sent = lines.send(line).await.map_err(|_| std::io::Error::other("stdout is closed"));
            // The answer is queued for stdout: its request's place is free.
            if answers {
                give_back(&in_flight);
            }
            sent
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// How long one tool call may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(bee_proto::mcp::TOOL_TIMEOUT_SECONDS);
/// Overrides [`TOOL_TIMEOUT`] in milliseconds (tests, very slow machines).
const TOOL_TIMEOUT_ENV: &str = "BEE_MCP_TOOL_TIMEOUT_MS";

/// How long a tool call may take: 15 s, or `BEE_MCP_TOOL_TIMEOUT_MS`.
pub(crate) fn tool_timeout() -> Duration {
    std::env::var(TOOL_TIMEOUT_ENV).ok().and_then(|ms| ms.parse().ok()).map_or(TOOL_TIMEOUT, Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_frames_id_is_found_at_its_start() {
        assert_eq!(frame_id(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"#), json!(7));
        assert_eq!(frame_id(br#"{"id":"a-1","method":"m"}"#), json!("a-1"));
        assert_eq!(frame_id(br#"{"params":{"id":3},"method":"m","id":9}"#), json!(9), "only the top-level id");
        assert_eq!(frame_id(br#"{"method":"m","params":{"text":"\"id\":4"#), Value::Null);
        assert_eq!(frame_id(b"not json at all"), Value::Null);
    }

    #[tokio::test]
    async fn frames_over_the_limit_are_read_past_and_the_next_is_whole() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"pad\":\"{}\"}}}}",
            "x".repeat(MAX_FRAME_BYTES)
        );
        let input = format!("{big}\n\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}}\n");
        let mut reader = tokio::io::BufReader::with_capacity(1024, input.as_bytes());
        match read_frame(&mut reader).await.unwrap() {
            Frame::Oversized { bytes, id } => assert_eq!((bytes, id), (big.len(), json!(1))),
            _ => panic!("not oversized"),
        }
        match read_frame(&mut reader).await.unwrap() {
            Frame::Line(line) => assert_eq!(line, br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#),
            _ => panic!("no line"),
        }
        assert!(matches!(read_frame(&mut reader).await.unwrap(), Frame::End));
    }
}
