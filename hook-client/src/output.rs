//! Writing the hook's output to stdout and saying exactly what happened.

use bee_proto::delivery::ObservationKind;
use std::io::{self, Write};
use std::os::fd::AsFd;

/// What the write of the output did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    pub kind: ObservationKind,
    /// Bytes attempted (the whole output).
    pub attempted: u64,
}

/// Writes `bytes` to stdout unbuffered and flushes.
///
/// Goes straight to the descriptor (a duplicate of fd 1) so every count is a
/// count the kernel accepted, not one a buffer swallowed.
pub fn write_stdout(bytes: &[u8]) -> WriteOutcome {
    let attempted = bytes.len() as u64;
    let file = io::stdout().as_fd().try_clone_to_owned().map(std::fs::File::from);
    let Ok(mut file) = file else {
        return WriteOutcome { kind: ObservationKind::WriteFailed, attempted };
    };
    let mut written = 0usize;
    while written < bytes.len() {
        match file.write(&bytes[written..]) {
            Ok(0) => break,
            Ok(n) => written += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let flushed = file.flush().is_ok();
    let kind = if written == bytes.len() && flushed {
        ObservationKind::Delivered
    } else if written == 0 {
        ObservationKind::WriteFailed
    } else {
        ObservationKind::PartialWrite
    };
    WriteOutcome { kind, attempted }
}
