//! Process exit statuses shared by every report command.
//!
//! The contract allows exactly three: success, invalid usage and
//! "evidence unavailable / rejected input / runtime error / output cap".

/// The only exit statuses a Bee report command may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Success; the report may still carry issues.
    Success,
    /// The command line was not valid.
    InvalidUsage,
    /// Evidence unavailable, input rejected, runtime error or output cap.
    Unavailable,
}

/// The status a shell reports for a finished child: its exit code, or
/// 128 + the signal that ended it. Wrappers pass it on unchanged.
pub fn shell_status(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => (code & 0xff) as u8,
        (None, Some(signal)) => (128 + signal).clamp(0, 255) as u8,
        (None, None) => 1,
    }
}

impl Exit {
    /// The numeric status the process exits with.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::InvalidUsage => 4,
            Exit::Unavailable => 5,
        }
    }

    /// Maps a numeric status back; anything unknown is treated as unavailable.
    pub const fn from_code(code: u8) -> Exit {
        match code {
            0 => Exit::Success,
            4 => Exit::InvalidUsage,
            _ => Exit::Unavailable,
        }
    }
}
