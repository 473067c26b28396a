//! A finished command answer: the exact bytes to print and the exit status.
//! Every report path (daemon or offline) ends in one of these, which is how
//! the two print the same bytes.

use bee_proto::delivery::CommandError;
use bee_proto::exit::Exit;
use serde::Serialize;

/// A finished answer: the exact bytes to print (JSON plus newline) and the exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub exit: Exit,
    pub bytes: Vec<u8>,
}

impl Rendered {
    /// Serializes `document` as one compact JSON line.
    pub fn json<T: Serialize>(exit: Exit, document: &T) -> Rendered {
        let mut bytes = serde_json::to_vec(document).unwrap_or_else(|err| {
            // Our documents hold only strings and integers; this is unreachable
            // in practice, but an answer is still owed.
            format!("{{\"status\":\"error\",\"errorCode\":\"io\",\"message\":\"{err}\"}}").into_bytes()
        });
        bytes.push(b'\n');
        Rendered { exit, bytes }
    }

    /// The invalid-usage answer (exit 4).
    pub fn invalid_usage(message: impl Into<String>) -> Rendered {
        Rendered::json(Exit::InvalidUsage, &CommandError::invalid_usage(message))
    }
}
