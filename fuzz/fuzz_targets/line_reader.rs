//! The bounded line reader, in place and line by line, agrees on any input,
//! any bound and any read size: bounds around every size that matters (0,
//! 1, small ones, a read chunk and one either side of it), reads of a
//! byte to a whole buffer, and a file read whole. It never panics, and a
//! line over the bound is never given out. Run with `-max_len=800000` so
//! inputs reach past a chunk, and `-rss_limit_mb=256`.
#![no_main]

use bee_daemon::storage::lines::{self, CHUNK, Line, Lines};
use libfuzzer_sys::fuzz_target;
use std::io::{self, Read};

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

fn every_line<R: Read>(mut lines: Lines<R>, max: u64) -> Vec<(Line, Vec<u8>, u64)> {
    let mut found = Vec::new();
    loop {
        let (kind, line, read) = lines.next_line().unwrap();
        assert!(line.len() as u64 <= max.saturating_add(1), "a line over the bound was given out");
        found.push((kind, line.to_vec(), read));
        if matches!(kind, Line::End | Line::Partial | Line::Oversized { complete: false }) {
            return found;
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let [pick, step, input @ ..] = data else { return };
    let chunk = CHUNK as u64;
    let bounds = [0, 1, 2, 7, 64, chunk - 1, chunk, chunk + 1, 2 * chunk + 3];
    let max = bounds[usize::from(*pick) % bounds.len()];
    let step = [1, 3, 4096, CHUNK - 1, usize::MAX][usize::from(*step) % 5];
    let mut expected = Vec::new();
    let mut reader = io::BufReader::new(input);
    let mut line = Vec::new();
    loop {
        let (kind, read) = lines::next(&mut reader, max, &mut line).unwrap();
        let kept = if matches!(kind, Line::Oversized { .. }) { Vec::new() } else { line.clone() };
        expected.push((kind, kept, read));
        if matches!(kind, Line::End | Line::Partial | Line::Oversized { complete: false }) {
            break;
        }
    }
    assert_eq!(every_line(Lines::new(Trickle(input, step), max), max), expected);
    let whole = Lines::whole(Trickle(input, step), max, Vec::new(), input.len() as u64).unwrap();
    assert_eq!(every_line(whole, max), expected);
});
