//! Reading JSONL logs a line at a time with a bound on the line length:
//! one reader for the spools, the provider logs and the transcripts.

use std::io::{self, BufRead, Read};

/// What the next line turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// No more bytes.
    End,
    /// A whole line, its newline included, is in the buffer.
    Complete,
    /// The last bytes of the input, without a newline (a write in progress,
    /// or a line a crash cut short); they are in the buffer.
    Partial,
    /// A line over the bound; it was skipped (not kept in the buffer).
    /// `complete` tells whether its newline was reached.
    Oversized { complete: bool },
}

/// Reads the next line into `line` (cleared first), at most `max` bytes of
/// it kept. Returns what it was and how many bytes of input it consumed.
pub fn next(reader: &mut impl BufRead, max: u64, line: &mut Vec<u8>) -> io::Result<(Line, u64)> {
    line.clear();
    let read = reader.take(max + 1).read_until(b'\n', line)? as u64;
    if read == 0 {
        return Ok((Line::End, 0));
    }
    if line.last() == Some(&b'\n') {
        return Ok((Line::Complete, read));
    }
    if read <= max {
        return Ok((Line::Partial, read));
    }
    // Over the bound: skip to the end of the line, holding at most a chunk.
    line.clear();
    let mut consumed = read;
    let mut chunk = Vec::new();
    loop {
        chunk.clear();
        let n = reader.take(1 << 20).read_until(b'\n', &mut chunk)? as u64;
        consumed += n;
        if n == 0 {
            return Ok((Line::Oversized { complete: false }, consumed));
        }
        if chunk.last() == Some(&b'\n') {
            return Ok((Line::Oversized { complete: true }, consumed));
        }
    }
}

/// Lines read in place from a buffer of the input, none copied: for
/// readers of whole logs, where copying each line costs more than finding
/// it. The same outcomes as [`next`].
pub struct Lines<R> {
    reader: R,
    buffer: Vec<u8>,
    /// The unread bytes are `buffer[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
    max: u64,
    /// Held while the buffer holds more than a large read ([`crate::storage::large`]).
    large: Option<crate::storage::large::LargeRead>,
}

/// Bytes read from the input at a time: few enough that they are still in
/// the core's cache while their lines are searched and parsed.
pub const CHUNK: usize = 1 << 18;
/// Most address space reserved up front for one long line; a reader with
/// a larger bound grows its buffer as vectors do.
const MOST_RESERVED: usize = 256 << 20;

impl<R: Read> Lines<R> {
    pub fn new(reader: R, max: u64) -> Lines<R> {
        Lines::with_buffer(reader, max, Vec::new())
    }

    /// [`Lines::new`] reading into `buffer`, a buffer an earlier reader
    /// gave back ([`Lines::into_buffer`]): a reader of many files zeroes
    /// its buffer once, not once a file.
    pub fn with_buffer(reader: R, max: u64, mut buffer: Vec<u8>) -> Lines<R> {
        // What a long line grew it to is not kept for the next input.
        buffer.truncate(CHUNK);
        buffer.shrink_to(CHUNK);
        buffer.resize(CHUNK, 0);
        Lines { reader, buffer, start: 0, end: 0, eof: false, max, large: None }
    }

    /// The buffer, for the next reader.
    /// Lines over the first `length` bytes `reader` has, read in one go
    /// into `buffer`'s spare room (never zeroed first) and never read
    /// again: a file read whole moves no partial line and grows no buffer.
    /// What the reader has beyond `length` is the next read's, as a file's
    /// growth after its length was taken is.
    pub fn whole(mut reader: R, max: u64, mut buffer: Vec<u8>, length: u64) -> io::Result<Lines<R>> {
        let large = crate::storage::large::if_large(length);
        buffer.clear();
        buffer.reserve(usize::try_from(length).unwrap_or(usize::MAX));
        (&mut reader).take(length).read_to_end(&mut buffer)?;
        let end = buffer.len();
        Ok(Lines { reader, buffer, start: 0, end, eof: true, max, large })
    }

    pub fn into_buffer(mut self) -> Vec<u8> {
        self.give_back_large();
        std::mem::take(&mut self.buffer)
    }

    /// Hands the large buffer back with the token (what is unread in it
    /// moves to a buffer of this reader's own).
    fn give_back_large(&mut self) {
        if let Some(mut large) = self.large.take() {
            let unread = &self.buffer[self.start..self.end];
            let mut own = Vec::with_capacity(CHUNK.max(unread.len()));
            own.extend_from_slice(unread);
            own.resize(own.len().max(CHUNK), 0);
            (self.end, self.start) = (unread.len(), 0);
            std::mem::swap(large.buffer(), &mut self.buffer);
            self.buffer = own;
        }
    }

    /// The next line (its newline included), what it was, and how many
    /// bytes of input it consumed. An oversized line's bytes are not kept.
    pub fn next_line(&mut self) -> io::Result<(Line, &[u8], u64)> {
        let limit = usize::try_from(self.max).unwrap_or(usize::MAX).saturating_add(1);
        // How far the buffered bytes are known to hold no newline.
        let mut searched = 0;
        loop {
            let unread = &self.buffer[self.start..self.end];
            if let Some(at) = memchr::memchr(b'\n', &unread[searched..]).map(|at| searched + at)
                && at < limit
            {
                let line = self.start..self.start + at + 1;
                self.start = line.end;
                return Ok((Line::Complete, &self.buffer[line.clone()], line.len() as u64));
            }
            searched = unread.len();
            if searched >= limit {
                return self.skip_oversized();
            }
            if self.eof {
                let rest = self.start..self.end;
                self.start = self.end;
                let kind = if rest.is_empty() { Line::End } else { Line::Partial };
                return Ok((kind, &self.buffer[rest.clone()], rest.len() as u64));
            }
            self.fill()?;
        }
    }

    /// Moves the unread bytes to the front, grows the buffer if they fill
    /// it, and reads more.
    fn fill(&mut self) -> io::Result<()> {
        self.buffer.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.buffer.len() {
            // A line longer than a chunk: room for the longest line is
            // reserved once (address space only: a page costs memory when
            // bytes are read into it), so the buffer is never copied into a
            // larger one while the line grows, and holds what was read, no
            // more — never the doubled copies a growing vector leaves.
            let longest = usize::try_from(self.max).unwrap_or(usize::MAX).saturating_add(1 + CHUNK);
            let grown = self.buffer.len() + CHUNK;
            if self.large.is_none()
                && let Some(mut large) = crate::storage::large::if_large(grown as u64)
            {
                // The line goes on in the one large buffer.
                let big = large.buffer();
                big.clear();
                big.extend_from_slice(&self.buffer[..self.end]);
                std::mem::swap(&mut self.buffer, big);
                self.large = Some(large);
            }
            if longest <= MOST_RESERVED && self.buffer.capacity() < grown {
                self.buffer.reserve_exact(longest.saturating_sub(self.buffer.len()));
            }
            self.buffer.resize(grown, 0);
        }
        let read = loop {
            match self.reader.read(&mut self.buffer[self.end..]) {
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        self.end += read;
        self.eof = read == 0;
        Ok(())
    }

    /// Skips the rest of a line over the bound, holding at most a chunk.
    fn skip_oversized(&mut self) -> io::Result<(Line, &[u8], u64)> {
        let mut consumed = 0u64;
        loop {
            let unread = &self.buffer[self.start..self.end];
            if let Some(at) = memchr::memchr(b'\n', unread) {
                consumed += at as u64 + 1;
                self.start += at + 1;
                return Ok((Line::Oversized { complete: true }, &[], consumed));
            }
            consumed += unread.len() as u64;
            // Nothing of the line is kept: the buffer starts empty again,
            // back at a chunk's size however far the line grew it.
            (self.start, self.end) = (0, 0);
            if self.eof {
                return Ok((Line::Oversized { complete: false }, &[], consumed));
            }
            self.give_back_large();
            self.buffer.truncate(CHUNK);
            self.buffer.shrink_to(CHUNK);
            self.fill()?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line `lines` gives, up to and with the one that ends it.
    fn every_line<R: Read>(mut lines: Lines<R>) -> Vec<(Line, Vec<u8>, u64)> {
        let mut found = Vec::new();
        loop {
            let (kind, line, read) = lines.next_line().unwrap();
            found.push((kind, line.to_vec(), read));
            if matches!(kind, Line::End | Line::Partial | Line::Oversized { complete: false }) {
                return found;
            }
        }
    }

    /// [`Lines`] and [`next`] agree on any input, bound and read size.
    #[test]
    fn lines_in_place_agree_with_next() {
        /// Hands out at most `step` bytes a read, as pipes and files may.
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(out.len()).min(self.0.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let inputs: [&[u8]; 6] = [
            b"",
            b"\n",
            b"short\nthis one is far too long\nok\ncut",
            b"no newline and too long",
            b"exactly10\n0123456789\n01234567890\n\n\nend\n",
            &[b'x'; 3 * CHUNK + 7],
        ];
        let mut big = vec![b'y'; 2 * CHUNK];
        big.extend_from_slice(b"\nafter\n");
        // A line long enough to be skipped over several fills, then more.
        let mut longer = vec![b'z'; 5 * CHUNK + 3];
        longer.extend_from_slice(b"\nafter\nand a cut");
        for input in inputs.iter().copied().chain([&big[..], &longer[..]]) {
            // A bound over a chunk: the buffer grows before a line is
            // found too long, and skipping the rest must not read past it.
            for max in [0, 1, 5, 10, 11, CHUNK as u64 + 5, 1 << 30] {
                let steps: &[usize] = if input.len() < 100 { &[1, 3, 4096, usize::MAX] } else { &[4096, usize::MAX] };
                for &step in steps {
                    let mut expected = Vec::new();
                    let mut reader = io::BufReader::new(input);
                    let mut line = Vec::new();
                    loop {
                        let (kind, read) = next(&mut reader, max, &mut line).unwrap();
                        let kept = if matches!(kind, Line::Oversized { .. }) { Vec::new() } else { line.clone() };
                        expected.push((kind, kept, read));
                        if matches!(kind, Line::End | Line::Partial | Line::Oversized { complete: false }) {
                            break;
                        }
                    }
                    let found = every_line(Lines::new(Trickle(input, step), max));
                    assert_eq!(found, expected, "max {max}, step {step}, input of {} bytes", input.len());
                    // Read whole, in one go: the same lines.
                    let whole = Lines::whole(Trickle(input, step), max, b"old".to_vec(), input.len() as u64);
                    let read_whole = every_line(whole.unwrap());
                    assert_eq!(read_whole, expected, "whole: max {max}, step {step}, {} bytes", input.len());
                }
            }
        }
        // What the reader has past the length given (a file that grew) is
        // left for the next read: its first bytes here are a partial line.
        let mut grown = Lines::whole(&b"one\ntwo\nthree\n"[..], 100, Vec::new(), 6).unwrap();
        assert_eq!(grown.next_line().unwrap(), (Line::Complete, &b"one\n"[..], 4));
        assert_eq!(grown.next_line().unwrap(), (Line::Partial, &b"tw"[..], 2));
    }

    #[test]
    fn complete_partial_oversized_and_end() {
        let input = b"short\nthis one is far too long\nok\ncut".to_vec();
        let mut reader = io::BufReader::new(&input[..]);
        let mut line = Vec::new();
        assert_eq!(next(&mut reader, 10, &mut line).unwrap(), (Line::Complete, 6));
        assert_eq!(line, b"short\n");
        assert_eq!(next(&mut reader, 10, &mut line).unwrap(), (Line::Oversized { complete: true }, 25));
        assert_eq!(next(&mut reader, 10, &mut line).unwrap(), (Line::Complete, 3));
        assert_eq!(next(&mut reader, 10, &mut line).unwrap(), (Line::Partial, 3));
        assert_eq!(line, b"cut");
        assert_eq!(next(&mut reader, 10, &mut line).unwrap(), (Line::End, 0));
        let mut reader = io::BufReader::new(&b"no newline and too long"[..]);
        assert_eq!(next(&mut reader, 5, &mut line).unwrap(), (Line::Oversized { complete: false }, 23));
    }
}
