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

#[cfg(test)]
mod tests {
    use super::*;

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
