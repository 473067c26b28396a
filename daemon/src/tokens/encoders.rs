//! Token counting for `beectl token estimate`: the `utf16-ceil-div4`
//! heuristic and exact `o200k_base` / `cl100k_base` counts of ordinary text.
//!
//! Exact counts use tiktoken-rs's bundled rank data, turned at build time
//! into compact tables in the binary (`build.rs`) that load in
//! milliseconds, with the byte-pair merge here and our own pre-tokenizer:
//! the encodings' split patterns run on the linear-time `regex` crate,
//! with the one construct it lacks (`\s+(?!\S)`, "a whitespace run, minus
//! its last character when text follows") applied after the match. A
//! differential test holds the counts equal to `CoreBPE::encode_ordinary`
//! lengths. Splitting first also gives the work bound (sum of squared piece
//! lengths) before any byte-pair work starts.

use bee_proto::tokens::{Encoding, MAX_PIECE_BYTES, REGEX_OPERATION_MILLIS, TokenErrorCode, WORK_BOUND};
use rustc_hash::FxHashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use tiktoken_rs::Rank;

/// o200k_base's split pattern without its lookahead alternative.
const O200K_SPLIT: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// cl100k_base's split pattern: possessive quantifiers dropped (nothing in
/// the pattern could backtrack into them), lookahead alternative folded
/// into the final `\s+`.
const CL100K_SPLIT: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s+$",
    r"|\s*[\r\n]",
    r"|\s+",
);

/// Why a count failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountFailure {
    pub code: TokenErrorCode,
    /// 0-based input index, where one input is to blame.
    pub input: Option<usize>,
}

impl CountFailure {
    pub fn new(code: TokenErrorCode, input: Option<usize>) -> CountFailure {
        CountFailure { code, input }
    }
}

/// The ordinary ranks of each exact encoding, as `build.rs` wrote them.
static O200K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks"));
static CL100K_RANKS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks"));

/// The split pattern's piece at a position, where ASCII decides it.
type AsciiPiece = fn(&[u8], usize) -> Option<usize>;

/// An exact encoding, built once: ranks and the pre-tokenizer.
pub struct ExactEncoder {
    ranks: FxHashMap<&'static [u8], Rank>,
    split: regex::Regex,
    ascii_piece: AsciiPiece,
}

impl ExactEncoder {
    /// Builds `encoding` from the rank tables in the binary.
    pub fn build(encoding: Encoding) -> Option<ExactEncoder> {
        let (table, pattern, ascii_piece): (_, _, AsciiPiece) = match encoding {
            Encoding::O200kBase => (O200K_RANKS, O200K_SPLIT, ascii::o200k_piece),
            Encoding::Cl100kBase => (CL100K_RANKS, CL100K_SPLIT, ascii::cl100k_piece),
            Encoding::Heuristic => return None,
        };
        Some(ExactEncoder { ranks: ranks_of(table)?, split: regex::Regex::new(pattern).ok()?, ascii_piece })
    }

    /// The pre-token pieces of `text`, as byte ranges.
    pub fn pieces(&self, text: &str, deadline: Instant) -> Result<Vec<(usize, usize)>, TokenErrorCode> {
        self.split_pieces(text, deadline, self.ascii_piece)
    }

    /// The pieces of `text` as the split regex alone makes them: what the
    /// ASCII path is held to, piece by piece (tests, the fuzz target).
    pub fn regex_pieces(&self, text: &str, deadline: Instant) -> Result<Vec<(usize, usize)>, TokenErrorCode> {
        self.split_pieces(text, deadline, |_, _| None)
    }

    /// [`ExactEncoder::pieces`], ASCII's pieces decided by `ascii_piece`.
    fn split_pieces(
        &self,
        text: &str,
        deadline: Instant,
        ascii_piece: AsciiPiece,
    ) -> Result<Vec<(usize, usize)>, TokenErrorCode> {
        let bytes = text.as_bytes();
        let mut pieces = Vec::with_capacity(text.len() / 4 + 1);
        let mut at = 0;
        let slowest = Duration::from_millis(REGEX_OPERATION_MILLIS);
        while at < bytes.len() {
            // The pattern's own piece where ASCII decides it; the regex
            // where a character beyond ASCII could change it.
            let (start, mut end) = match ascii_piece(bytes, at) {
                Some(end) => (at, end),
                None => {
                    let started = Instant::now();
                    let Some(found) = self.split.find_at(text, at) else { break };
                    if started.elapsed() > slowest {
                        return Err(TokenErrorCode::EncodingTimeout);
                    }
                    (found.start(), found.end())
                }
            };
            if let Some(shorter) = lookahead_trim(text, start, end) {
                end = shorter;
            }
            pieces.push((start, end));
            at = end;
            if pieces.len() % 4096 == 0 && Instant::now() > deadline {
                return Err(TokenErrorCode::EncodingTimeout);
            }
        }
        Ok(pieces)
    }

    /// Tokens in one pre-token piece.
    fn piece_tokens(&self, piece: &[u8]) -> u64 {
        if self.ranks.contains_key(piece) { 1 } else { merged_tokens(piece, &self.ranks) }
    }

    /// Exact token count of each input, after checking the work bound.
    pub fn count(&self, inputs: &[String], deadline: Instant) -> Result<Vec<u64>, CountFailure> {
        let mut split = Vec::with_capacity(inputs.len());
        let mut work: u64 = 0;
        for (index, text) in inputs.iter().enumerate() {
            let pieces = self.pieces(text, deadline).map_err(|code| CountFailure::new(code, Some(index)))?;
            for &(start, end) in &pieces {
                let len = (end - start) as u64;
                work = work.saturating_add(len * len);
                if end - start > MAX_PIECE_BYTES {
                    return Err(CountFailure::new(TokenErrorCode::TokenizationLimit, Some(index)));
                }
            }
            split.push(pieces);
        }
        if work > WORK_BOUND {
            return Err(CountFailure::new(TokenErrorCode::TokenizationLimit, None));
        }
        let mut counts = Vec::with_capacity(inputs.len());
        for (index, (text, pieces)) in inputs.iter().zip(&split).enumerate() {
            let bytes = text.as_bytes();
            let mut tokens = 0;
            for (n, &(start, end)) in pieces.iter().enumerate() {
                tokens += self.piece_tokens(&bytes[start..end]);
                if n % 1024 == 0 && Instant::now() > deadline {
                    return Err(CountFailure::new(TokenErrorCode::EncodingTimeout, Some(index)));
                }
            }
            counts.push(tokens);
        }
        Ok(counts)
    }
}

/// The split patterns' pieces where ASCII alone decides them: each
/// function follows its pattern's alternatives in order, as the regex
/// (leftmost-first) takes them, and answers `None` as soon as a byte
/// beyond ASCII could be a letter, digit, mark or space that changes the
/// piece (the regex then decides). The differential test holds both to
/// the regex piece by piece.
mod ascii {
    /// An ASCII byte's class in the patterns' Unicode terms.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Class {
        /// The end of the text.
        End,
        /// Beyond ASCII: only the regex knows.
        Beyond,
        /// `\p{Lu}`.
        Upper,
        /// `\p{Ll}`.
        Lower,
        /// `\p{N}`.
        Digit,
        /// `\r` or `\n`.
        Newline,
        /// Any other `\s`: space, tab, vertical tab, form feed.
        Blank,
        /// Neither letter, digit nor space.
        Other,
    }

    fn class(bytes: &[u8], at: usize) -> Class {
        match bytes.get(at) {
            None => Class::End,
            Some(b'A'..=b'Z') => Class::Upper,
            Some(b'a'..=b'z') => Class::Lower,
            Some(b'0'..=b'9') => Class::Digit,
            Some(b'\r' | b'\n') => Class::Newline,
            Some(b' ' | b'\t' | 0x0b | 0x0c) => Class::Blank,
            Some(128..) => Class::Beyond,
            Some(_) => Class::Other,
        }
    }

    fn is_letter(class: Class) -> bool {
        matches!(class, Class::Upper | Class::Lower)
    }

    /// The end of the run of `wanted` classes from `at`; `None` when a byte
    /// beyond ASCII could continue it.
    fn run(bytes: &[u8], mut at: usize, wanted: impl Fn(Class) -> bool) -> Option<usize> {
        loop {
            match class(bytes, at) {
                Class::Beyond => return None,
                found if wanted(found) => at += 1,
                _ => return Some(at),
            }
        }
    }

    /// `(?i:'s|'t|'re|'ve|'m|'ll|'d)` at `at`: its end, `Some(at)` for none.
    fn contraction(bytes: &[u8], at: usize) -> Option<usize> {
        if bytes.get(at) != Some(&b'\'') {
            return Some(at);
        }
        // `s` and `k` fold to letters beyond ASCII (ſ, K).
        let lower = |at: usize| match class(bytes, at) {
            Class::Beyond => None,
            _ => Some(bytes.get(at).map_or(0, u8::to_ascii_lowercase)),
        };
        match lower(at + 1)? {
            b's' | b't' | b'm' | b'd' => Some(at + 2),
            first @ (b'r' | b'v' | b'l') => {
                let second = lower(at + 2)?;
                let pair = matches!((first, second), (b'r', b'e') | (b'v', b'e') | (b'l', b'l'));
                Some(if pair { at + 3 } else { at })
            }
            _ => Some(at),
        }
    }

    /// The whitespace alternatives from `at` (a space): `\s+$` when
    /// `to_end_first`, then `\s*[\r\n]` (up to the run's last line break),
    /// then `\s+`.
    fn spaces(bytes: &[u8], at: usize, to_end_first: bool) -> Option<usize> {
        let end = run(bytes, at, |c| matches!(c, Class::Newline | Class::Blank))?;
        if to_end_first && end == bytes.len() {
            return Some(end);
        }
        match bytes[at..end].iter().rposition(|b| matches!(b, b'\r' | b'\n')) {
            Some(last) => Some(at + last + 1),
            None => Some(end),
        }
    }

    /// ` ?[^\s\p{L}\p{N}]+[\r\n]*` at `at` (o200k's ends in `[\r\n/]*`:
    /// `slash`), when it matches.
    fn punctuation(bytes: &[u8], at: usize, slash: bool) -> Option<Option<usize>> {
        let from = if bytes[at] == b' ' { at + 1 } else { at };
        match class(bytes, from) {
            Class::Beyond => None,
            Class::Other => {
                let end = run(bytes, from, |c| c == Class::Other)?;
                // A byte beyond ASCII is no line break: the run stops there.
                let breaks =
                    bytes[end..].iter().take_while(|b| matches!(b, b'\r' | b'\n') || (slash && **b == b'/')).count();
                Some(Some(end + breaks))
            }
            _ => Some(None),
        }
    }

    /// `\p{N}{1,3}` at `at` (a digit).
    fn digits(bytes: &[u8], at: usize) -> Option<usize> {
        let mut end = at;
        while end < at + 3 {
            match class(bytes, end) {
                Class::Digit => end += 1,
                Class::Beyond => return None,
                _ => break,
            }
        }
        Some(end)
    }

    /// Where a letter run may begin after `[^\r\n\p{L}\p{N}]?` at `at`:
    /// `Some(None)` when no letter follows.
    fn letters_from(bytes: &[u8], at: usize) -> Option<Option<usize>> {
        let first = class(bytes, at);
        let from = if matches!(first, Class::Other | Class::Blank) { at + 1 } else { at };
        match class(bytes, from) {
            Class::Beyond => None,
            found if is_letter(found) => Some(Some(from)),
            _ => Some(None),
        }
    }

    /// cl100k_base's piece at `at` (`CL100K_SPLIT`).
    pub(super) fn cl100k_piece(bytes: &[u8], at: usize) -> Option<usize> {
        let first = class(bytes, at);
        if first == Class::Beyond {
            return None;
        }
        let contracted = contraction(bytes, at)?;
        if contracted > at {
            return Some(contracted);
        }
        if let Some(from) = letters_from(bytes, at)? {
            return run(bytes, from, is_letter);
        }
        if first == Class::Digit {
            return digits(bytes, at);
        }
        if let Some(end) = punctuation(bytes, at, false)? {
            return Some(end);
        }
        spaces(bytes, at, true)
    }

    /// o200k_base's piece at `at` (`O200K_SPLIT`).
    pub(super) fn o200k_piece(bytes: &[u8], at: usize) -> Option<usize> {
        let first = class(bytes, at);
        if first == Class::Beyond {
            return None;
        }
        if let Some(from) = letters_from(bytes, at)? {
            // Upper case then lower case; else the upper case alone.
            let uppers = run(bytes, from, |c| c == Class::Upper)?;
            let lowers = run(bytes, uppers, |c| c == Class::Lower)?;
            return contraction(bytes, lowers);
        }
        if first == Class::Digit {
            return digits(bytes, at);
        }
        if let Some(end) = punctuation(bytes, at, true)? {
            return Some(end);
        }
        spaces(bytes, at, false)
    }
}

/// `\s+(?!\S)`: a whitespace-only match with no line break that text follows
/// gives back its last character (when it has more than one).
fn lookahead_trim(text: &str, start: usize, end: usize) -> Option<usize> {
    if end >= text.len() {
        return None;
    }
    let piece = &text[start..end];
    if !piece.chars().all(char::is_whitespace) || piece.contains(['\r', '\n']) {
        return None;
    }
    let last = piece.chars().next_back()?;
    let trimmed = end - last.len_utf8();
    (trimmed > start).then_some(trimmed)
}

/// The ranks of a table `build.rs` wrote (count, then length and bytes per
/// token in rank order), each token's bytes borrowed from the binary; `None`
/// for a table that does not parse (never the case for the two built in).
fn ranks_of(table: &'static [u8]) -> Option<FxHashMap<&'static [u8], Rank>> {
    let (count, mut rest) = table.split_first_chunk::<4>()?;
    let count = Rank::from_le_bytes(*count);
    let mut ranks = FxHashMap::with_capacity_and_hasher(usize::try_from(count).ok()?, Default::default());
    // A token's rank is its place in the table (`build.rs`).
    for rank in 0..count {
        let (&len, after) = rest.split_first()?;
        let (bytes, after) = after.split_at_checked(usize::from(len))?;
        ranks.insert(bytes, rank);
        rest = after;
    }
    rest.is_empty().then_some(ranks)
}

/// o200k_base as tiktoken's own encoder (token by token, for the context
/// compressor), built from the table in the binary: tiktoken-rs's
/// `o200k_base()` would link its own 3.6 MB text of the same ranks into
/// every binary that calls it.
pub fn o200k_core_bpe() -> Option<tiktoken_rs::CoreBPE> {
    let ranks = ranks_of(O200K_RANKS)?;
    let specials = [(tiktoken_rs::ENDOFTEXT.to_owned(), 199_999), (tiktoken_rs::ENDOFPROMPT.to_owned(), 200_018)];
    tiktoken_rs::CoreBPE::new(
        ranks.into_iter().map(|(bytes, rank)| (bytes.to_vec(), rank)).collect(),
        specials.into_iter().collect(),
        tiktoken_rs::O200K_BASE_PAT_STR,
    )
    .ok()
}

/// The tokens byte-pair merging makes of `piece` (not a token itself):
/// the adjacent pair whose joined bytes rank lowest (the first, on a tie)
/// is joined, again and again, until no joined pair is a token.
fn merged_tokens(piece: &[u8], ranks: &FxHashMap<&'static [u8], Rank>) -> u64 {
    if piece.len() < 2 {
        return piece.len() as u64;
    }
    let rank_of = |bytes: &[u8]| ranks.get(bytes).copied().unwrap_or(Rank::MAX);
    // Each part's start, and the rank of it joined with the next part.
    let mut parts: Vec<(usize, Rank)> = (0..piece.len() - 1).map(|at| (at, rank_of(&piece[at..at + 2]))).collect();
    parts.push((piece.len() - 1, Rank::MAX));
    parts.push((piece.len(), Rank::MAX));
    // The rank of part `at` joined with the next two, once those two are one.
    let joined = |parts: &[(usize, Rank)], at: usize| match parts.get(at + 3) {
        Some(&(end, _)) => rank_of(&piece[parts[at].0..end]),
        None => Rank::MAX,
    };
    loop {
        let mut lowest = (Rank::MAX, 0);
        for (at, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < lowest.0 {
                lowest = (rank, at);
            }
        }
        let (rank, at) = lowest;
        if rank == Rank::MAX {
            break;
        }
        if at > 0 {
            parts[at - 1].1 = joined(&parts, at - 1);
        }
        parts[at].1 = joined(&parts, at);
        parts.remove(at + 1);
    }
    parts.len() as u64 - 1
}

/// Encoders built on first use and kept: in beed for its lifetime.
#[derive(Default)]
pub struct Encoders {
    o200k: OnceLock<Option<Arc<ExactEncoder>>>,
    cl100k: OnceLock<Option<Arc<ExactEncoder>>>,
}

impl Encoders {
    pub fn get(&self, encoding: Encoding) -> Option<Arc<ExactEncoder>> {
        let slot = match encoding {
            Encoding::O200kBase => &self.o200k,
            Encoding::Cl100kBase => &self.cl100k,
            Encoding::Heuristic => return None,
        };
        slot.get_or_init(|| ExactEncoder::build(encoding).map(Arc::new)).clone()
    }

    /// Counts each input with `encoding`, within `deadline`.
    pub fn count(&self, encoding: Encoding, inputs: &[String], deadline: Instant) -> Result<Vec<u64>, CountFailure> {
        match encoding {
            Encoding::Heuristic => Ok(inputs.iter().map(|text| bee_proto::text::utf16_ceil_div4(text)).collect()),
            exact => {
                let encoder = self.get(exact).ok_or(CountFailure::new(TokenErrorCode::EncodingUnavailable, None))?;
                encoder.count(inputs, deadline)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: reproducible random text without a dependency.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
    }

    /// Fragments that stress the split patterns: CJK, emoji (with ZWJ and
    /// skin tones), combining marks, CRLF, whitespace runs, contractions in
    /// both cases, digit runs, punctuation, special-looking strings.
    const FRAGMENTS: &[&str] = &[
        "the",
        "The",
        "QUICK",
        "fox",
        "don't",
        "I'LL",
        "we've",
        "it'S",
        "o'Neil",
        "'s",
        "'",
        "''",
        " ",
        "  ",
        "   ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "\n\n",
        " \n ",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "1",
        "12",
        "123",
        "1234567",
        "3.14",
        "1,000",
        "٣٤٥",
        "Ⅻ",
        "日本語",
        "中文字符",
        "한국어",
        "Здравствуй",
        "ελληνικά",
        "עברית",
        "مرحبا",
        "😀",
        "👩‍💻",
        "👍🏽",
        "🇺🇳",
        "e\u{301}",
        "a\u{308}\u{304}",
        "\u{301}",
        "ǅ",
        "ﬁ",
        "!",
        "?!",
        "...",
        "//",
        "/*",
        "*/",
        "->",
        "::",
        "{}",
        "()",
        "#[derive]",
        "fn main()",
        "=>",
        "<|endoftext|>",
        "<|fim_prefix|>",
        "\u{feff}",
        "\u{0}",
        "\u{7f}",
        "\u{1f}",
        "~",
        "$",
        "€",
        "—",
    ];

    fn random_text(random: &mut Random) -> String {
        let pieces = random.next() % 24;
        let mut text = String::new();
        for _ in 0..pieces {
            text.push_str(random.pick(FRAGMENTS));
        }
        text
    }

    #[test]
    fn exact_counts_equal_tiktoken_encode_ordinary() {
        let encoders = Encoders::default();
        for (encoding, bpe) in [
            (Encoding::O200kBase, tiktoken_rs::o200k_base().unwrap()),
            (Encoding::Cl100kBase, tiktoken_rs::cl100k_base().unwrap()),
        ] {
            let encoder = encoders.get(encoding).unwrap();
            let mut random = Random(0x9e37_79b9_7f4a_7c15 ^ encoding as u64);
            for case in 0..4_000 {
                let text = random_text(&mut random);
                let ours = encoder.count(std::slice::from_ref(&text), far()).unwrap()[0];
                let theirs = bpe.encode_ordinary(&text).len() as u64;
                assert_eq!(ours, theirs, "{encoding:?} case {case}: {text:?}");
            }
        }
    }

    /// The tables in the binary hold every ordinary token of tiktoken's own
    /// encoders (the specials left out); a table cut short anywhere does
    /// not parse.
    #[test]
    fn the_rank_tables_are_tiktokens_ordinary_tokens() {
        for (table, bpe) in
            [(O200K_RANKS, tiktoken_rs::o200k_base().unwrap()), (CL100K_RANKS, tiktoken_rs::cl100k_base().unwrap())]
        {
            let ranks = ranks_of(table).unwrap();
            for (bytes, rank) in ranks.iter().step_by(97) {
                assert_eq!(bpe.decode_bytes(&[*rank]).unwrap(), *bytes);
            }
            let specials = bpe.special_tokens();
            assert!(specials.iter().all(|special| !ranks.contains_key(special.as_bytes())));
            for cut in [0, 3, 7, table.len() / 2, table.len() - 1] {
                assert!(ranks_of(&table[..cut]).is_none(), "cut at {cut}");
            }
        }
    }

    /// The ASCII fast path splits every text as the regex alone does,
    /// piece by piece: ASCII of every class, the characters beyond it that
    /// the patterns treat apart (ſ and K fold to s and k, U+00A0 and U+0085
    /// are spaces, Arabic digits, marks, CJK), contractions, line breaks.
    #[test]
    fn the_ascii_path_splits_as_the_regex_does() {
        const ALPHABET: &[&str] = &[
            "a", "Z", "q", "'", "s", "S", "t", "ll", "LL", "re", "Ve", "d", "m", "k", "ſ", "K", " ", "  ", "\t", "\n",
            "\r\n", "\u{0b}", "\u{0c}", "\u{a0}", "\u{85}", "7", "42", "٣", "!", "/", "?!", "_", "é", "É", "\u{301}",
            "中", "😀", "\u{0}", "\u{7f}", "-", ".", "#",
        ];
        let encoders = Encoders::default();
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let encoder = encoders.get(encoding).unwrap();
            let mut random = Random(0x5eed_0a5c_1100_0000 ^ encoding as u64);
            for case in 0..60_000 {
                let len = random.next() % 12;
                let text: String = (0..len).map(|_| random.pick(ALPHABET)).collect();
                let fast = encoder.pieces(&text, far()).unwrap();
                let regex = encoder.regex_pieces(&text, far()).unwrap();
                assert_eq!(fast, regex, "{encoding:?} case {case}: {text:?}");
            }
        }
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    #[test]
    fn worked_examples() {
        let encoders = Encoders::default();
        let o200k = encoders.count(Encoding::O200kBase, &["Hello world!".into()], far()).unwrap();
        assert_eq!(o200k, vec![3]);
        let cl = encoders
            .count(Encoding::Cl100kBase, &["Hello world!\n".into(), "Review the tests.\n".into()], far())
            .unwrap();
        assert_eq!(cl, vec![3, 4]);
        let h = encoders.count(Encoding::Heuristic, &["Hello world!\n".into()], far()).unwrap();
        assert_eq!(h, vec![4]);
    }

    #[test]
    fn the_core_encoder_from_the_table_encodes_as_tiktokens_own() {
        let ours = o200k_core_bpe().unwrap();
        let theirs = tiktoken_rs::o200k_base().unwrap();
        let mut random = Random(0x51f1_5eed);
        for _ in 0..2_000 {
            let text = random_text(&mut random);
            assert_eq!(ours.encode_ordinary(&text), theirs.encode_ordinary(&text), "{text:?}");
        }
    }

    #[test]
    fn special_looking_text_is_ordinary() {
        let encoders = Encoders::default();
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let bpe = match encoding {
                Encoding::O200kBase => tiktoken_rs::o200k_base().unwrap(),
                _ => tiktoken_rs::cl100k_base().unwrap(),
            };
            let text = "<|endoftext|> and <|fim_prefix|>";
            let ours = encoders.count(encoding, &[text.into()], far()).unwrap();
            assert_eq!(ours, vec![bpe.encode_ordinary(text).len() as u64]);
            assert!(ours[0] > 1);
        }
    }

    #[test]
    fn the_work_bound_refuses_before_any_byte_pair_work() {
        let encoders = Encoders::default();
        let long_piece = "x".repeat(MAX_PIECE_BYTES + 1);
        let err = encoders.count(Encoding::O200kBase, &["ok".into(), long_piece], far()).unwrap_err();
        assert_eq!(err, CountFailure::new(TokenErrorCode::TokenizationLimit, Some(1)));
        // 1,024 pieces of 8,192 bytes: each allowed, the sum of squares is not.
        let many: Vec<String> = (0..1025).map(|_| "y".repeat(8_192)).collect();
        let err = encoders.count(Encoding::Cl100kBase, &many, far()).unwrap_err();
        assert_eq!(err.code, TokenErrorCode::TokenizationLimit);
    }

    #[test]
    fn an_expired_deadline_cancels() {
        let encoders = Encoders::default();
        let text = "word ".repeat(100_000);
        let err = encoders.count(Encoding::O200kBase, &[text], Instant::now()).unwrap_err();
        assert_eq!(err.code, TokenErrorCode::EncodingTimeout);
    }
}
