//! One large read at a time: a reader about to hold more than
//! [`LARGE_READ_BYTES`] of one record (a long line, a large document, a
//! large database) waits for the token, so the memory that reading takes
//! is bounded by one record's bound, not by the number of readers times it.
//!
//! The token carries the one large buffer: a long line is read into it,
//! and it is handed on to the next large read instead of being freed and
//! allocated again (an allocator may hold freed memory a while before it
//! gives it back, and two such buffers would then be resident at once).
//! [`give_back_memory`] frees it when a pass is done.

use std::sync::{Mutex, MutexGuard};

/// A read holding more than this at once takes the token.
pub const LARGE_READ_BYTES: u64 = 16 << 20;

static TOKEN: Mutex<Vec<u8>> = Mutex::new(Vec::new());

/// Held while a large read is in memory; the next one waits for it.
pub struct LargeRead {
    buffer: MutexGuard<'static, Vec<u8>>,
}

impl LargeRead {
    /// The one large buffer (empty, or as the last large read left it).
    pub fn buffer(&mut self) -> &mut Vec<u8> {
        &mut self.buffer
    }
}

/// Frees the large buffer, once no large read holds it.
pub fn give_back_memory() {
    *large_read().buffer = Vec::new();
}

impl std::fmt::Debug for LargeRead {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("LargeRead")
    }
}

/// Waits for the token. A reader that failed while holding it has given
/// it back all the same: the buffer it guards holds nothing to trust.
pub fn large_read() -> LargeRead {
    LargeRead { buffer: TOKEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner) }
}

/// The token when a read of `bytes` is large, else nothing.
pub fn if_large(bytes: u64) -> Option<LargeRead> {
    (bytes > LARGE_READ_BYTES).then(large_read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_large_read_at_a_time_and_small_ones_never_wait() {
        let held = large_read();
        assert!(if_large(LARGE_READ_BYTES).is_none(), "a small read takes no token");
        let waited = std::thread::scope(|scope| {
            let other = scope.spawn(|| {
                let started = std::time::Instant::now();
                drop(large_read());
                started.elapsed()
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(held);
            other.join().unwrap_or_default()
        });
        assert!(waited >= std::time::Duration::from_millis(40), "{waited:?}");
    }
}
