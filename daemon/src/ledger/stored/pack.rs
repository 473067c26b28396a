//! The stored form of response writes from schema 8 on: the writes one
//! commit adds to one hour, packed into one blob (`response_pack`), their
//! identities one narrow row each (`response_write`, see `responses`).
//!
//! A row per write cost the first pass over a large history most of its
//! time: each row is a b-tree insert of a dozen columns, and a second index
//! found writes by response. A pack is one insert per hour; its sessions and
//! models are spelled once, its counters as varints.
//!
//! Layout (format 1), all integers unsigned LEB128 unless said otherwise:
//!
//! ```text
//! format (1 byte) · writes
//! per write: flags (1 byte: bit 0 final, bits 1–5 the provider's number,
//!            so Codex, number 1, is bit 1, or all five set when its
//!            number is 31 or more; bit 6 copied, bit 7 the agent's own figure
//!            follows) · with all five set, the provider's number (1 byte)
//!            · key hash (8 bytes, little-endian)
//!            · ms after the pack's hour · key (length, UTF-8) · session · model
//!            · nine counters (value + 1; 0 when unreported)
//!            · with bit 7, the agent's own figure in its unit (an `f64`, 8 bytes, little-endian)
//! session, model: 0 none · 2n + 1 a new string (length, UTF-8), numbered
//!                 from 1 in order · 2n the string numbered n
//! ```
//!
//! Bits 6 and 7 were never set before schema 14 (a decoder of before
//! refuses them): a pack written before reads as it always did. No agent
//! was numbered 31 before there were more than 31 (a decoder of before
//! refuses the five bits set, as an agent it does not know).
//!
//! Its integers, strings and reader serve the packs of an hour's usage
//! parts too (`part_pack`).
//!
//! A pack is checked by its checksum before it is decoded, and the decoder
//! still trusts nothing: any body either decodes within these bounds or is
//! refused as damaged.

use bee_proto::ledger::Provider;
use bee_proto::ledger::bounds::{MAX_CALL_TOKENS, MAX_TEXT_BYTES};
use bee_proto::usage::Counters;
use std::sync::Arc;

use crate::ledger::stored::schema::HOUR_MS;
use crate::ledger::stored::validate::is_own_figure;

/// The layout this module writes and reads.
const FORMAT: u8 = 1;

/// The fewest bytes a write takes: flags, hash, time, a one-byte key and
/// its length, two absent strings, nine absent counters.
const MIN_WRITE_BYTES: usize = 1 + 8 + 1 + 2 + 2 + 9;

const FINAL: u8 = 1;
/// The provider's number ([`Provider::number`]), shifted one bit left.
const PROVIDER: u8 = 0b0011_1110;
/// The provider numbers the flags hold; from [`PROVIDER_FOLLOWS`] on, a
/// byte after the flags holds it.
const PROVIDER_FOLLOWS: u8 = PROVIDER >> 1;
/// The write is a copy its session holds of another's response.
const COPIED: u8 = 0b0100_0000;
/// The agent's own figure of the response follows the counters.
const OWN_FIGURE: u8 = 0b1000_0000;

/// One write as a pack holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedWrite {
    pub provider: Provider,
    /// The hash writes of one response share ([`crate::ledger::stored::responses::ResponseWrite::key_hash`]).
    pub key_hash: i64,
    pub key: String,
    /// Shared by the writes that name the same session (or model): a pack
    /// spells each once.
    pub session_id: Option<Arc<str>>,
    pub model: Option<Arc<str>>,
    pub at_ms: i64,
    pub tokens: Counters,
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    pub is_final: bool,
    /// What the agent wrote beside the response, in its unit (see
    /// [`crate::ledger::stored::responses::ResponseWrite::own_figure`]).
    pub own_figure: Option<f64>,
    /// A copy its session holds of another session's response.
    pub copied: bool,
}

/// A write, borrowed from wherever it was read: what a pack holds of it,
/// and what the merge of a response's writes reads.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    pub provider: Provider,
    pub key_hash: i64,
    pub key: &'a str,
    /// The write's own shared copies: a merge hands them on as they are.
    pub session_id: Option<&'a Arc<str>>,
    pub model: Option<&'a Arc<str>>,
    pub at_ms: i64,
    pub tokens: &'a Counters,
    pub context_tokens: Option<u64>,
    pub context_window: Option<u64>,
    pub is_final: bool,
    pub own_figure: Option<f64>,
    pub copied: bool,
}

/// Why a pack's body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    #[error("pack format {0} is not one this version reads")]
    Format(u8),
    #[error("pack ends inside a write")]
    Truncated,
    #[error("pack's {0} is out of bounds")]
    OutOfBounds(&'static str),
    #[error("pack's {0} is not UTF-8")]
    NotUtf8(&'static str),
    #[error("pack has bytes after its last write")]
    Trailing,
}

/// Packs `writes`, all of the hour starting at `hour_ms` (writes outside
/// it or outside Bee's bounds are the caller's error, refused here rather
/// than stored in a form no reader accepts).
pub fn encode<'a>(hour_ms: i64, writes: &[Entry<'a>]) -> Result<Vec<u8>, PackError> {
    let mut body = Vec::with_capacity(16 + writes.len() * 96);
    body.push(FORMAT);
    varint(&mut body, writes.len() as u64);
    let mut strings = Strings::default();
    for write in writes {
        let offset = write.at_ms.checked_sub(hour_ms).filter(|at| (0..HOUR_MS).contains(at));
        let offset = offset.ok_or(PackError::OutOfBounds("time"))?;
        if write.key.is_empty() || write.key.len() > MAX_TEXT_BYTES {
            return Err(PackError::OutOfBounds("key"));
        }
        let figure = match write.own_figure {
            Some(figure) if !is_own_figure(write.provider, figure) => return Err(PackError::OutOfBounds("own figure")),
            figure => figure,
        };
        let number = write.provider.number();
        let flags = if write.is_final { FINAL } else { 0 }
            | (number.min(PROVIDER_FOLLOWS) << 1) & PROVIDER
            | if write.copied { COPIED } else { 0 }
            | if figure.is_some() { OWN_FIGURE } else { 0 };
        body.push(flags);
        if number >= PROVIDER_FOLLOWS {
            body.push(number);
        }
        body.extend_from_slice(&write.key_hash.to_le_bytes());
        varint(&mut body, offset as u64);
        text(&mut body, write.key);
        for name in [write.session_id, write.model] {
            strings.write(&mut body, name.map(|name| &**name))?;
        }
        for counter in write.tokens.values().into_iter().chain([write.context_tokens, write.context_window]) {
            match counter {
                Some(n) if n > MAX_CALL_TOKENS => return Err(PackError::OutOfBounds("counter")),
                Some(n) => varint(&mut body, n + 1),
                None => varint(&mut body, 0),
            }
        }
        if let Some(figure) = figure {
            body.extend_from_slice(&figure.to_le_bytes());
        }
    }
    Ok(body)
}

/// The writes of a pack of the hour starting at `hour_ms`.
pub fn decode(hour_ms: i64, body: &[u8]) -> Result<Vec<PackedWrite>, PackError> {
    let (mut reader, count) = Reader::opening(body, FORMAT, MIN_WRITE_BYTES, "count of writes")?;
    let mut names = Names::default();
    // Each string shared by the writes that name it, as they were before.
    let mut shared: Vec<Arc<str>> = Vec::new();
    let mut writes = Vec::with_capacity(count);
    for _ in 0..count {
        let flags = reader.byte()?;
        let number = match (flags & PROVIDER) >> 1 {
            PROVIDER_FOLLOWS => reader.byte()?,
            number => number,
        };
        // Every bit of the flags means something: only the provider's number
        // can be one no version names (or one the flags could have held).
        let provider = Provider::from_number(number).filter(|_| number >= (flags & PROVIDER) >> 1);
        let Some(provider) = provider else {
            return Err(PackError::OutOfBounds("flags"));
        };
        let key_hash = i64::from_le_bytes(reader.array()?);
        let offset = reader.varint()?;
        if offset >= HOUR_MS as u64 {
            return Err(PackError::OutOfBounds("time"));
        }
        let key = reader.text("key")?;
        if key.is_empty() {
            return Err(PackError::OutOfBounds("key"));
        }
        let mut named = [None, None];
        for slot in &mut named {
            *slot = match reader.name(&mut names)? {
                None => None,
                Some(number) => {
                    if let Some(name) = names.get(number).filter(|_| number == shared.len()) {
                        shared.push(Arc::from(name));
                    }
                    shared.get(number).cloned()
                }
            };
        }
        let mut counters = [None; 9];
        for counter in &mut counters {
            *counter = match reader.varint()? {
                0 => None,
                n if n - 1 > MAX_CALL_TOKENS => return Err(PackError::OutOfBounds("counter")),
                n => Some(n - 1),
            };
        }
        let [input, cached, creation, read, output, reasoning, total, context_tokens, context_window] = counters;
        let [session_id, model] = named;
        let own_figure = match flags & OWN_FIGURE {
            0 => None,
            _ => Some(f64::from_le_bytes(reader.array()?)).filter(|&figure| is_own_figure(provider, figure)),
        };
        if flags & OWN_FIGURE != 0 && own_figure.is_none() {
            return Err(PackError::OutOfBounds("own figure"));
        }
        writes.push(PackedWrite {
            provider,
            key_hash,
            key: key.to_owned(),
            session_id,
            model,
            at_ms: hour_ms + offset as i64,
            tokens: Counters {
                input_tokens: input,
                cached_input_tokens: cached,
                cache_creation_input_tokens: creation,
                cache_read_input_tokens: read,
                output_tokens: output,
                reasoning_output_tokens: reasoning,
                total_tokens: total,
            },
            context_tokens,
            context_window,
            is_final: flags & FINAL != 0,
            own_figure,
            copied: flags & COPIED != 0,
        });
    }
    reader.finished()?;
    Ok(writes)
}

/// The strings a pack spells, each numbered (from 1) where first written
/// and named by its number after.
#[derive(Default)]
pub(crate) struct Strings<'a> {
    numbers: crate::ledger::FastMap<&'a str, u64>,
}

impl<'a> Strings<'a> {
    /// Writes `name`: none, a new string, or the number of one written before.
    pub(crate) fn write(&mut self, out: &mut Vec<u8>, name: Option<&'a str>) -> Result<(), PackError> {
        match name {
            None => varint(out, 0),
            Some(name) if name.len() > MAX_TEXT_BYTES => return Err(PackError::OutOfBounds("session or model")),
            Some(name) => match self.numbers.get(name) {
                Some(&number) => varint(out, number * 2),
                None => {
                    let number = self.numbers.len() as u64 + 1;
                    self.numbers.insert(name, number);
                    varint(out, number * 2 + 1);
                    text(out, name);
                }
            },
        }
        Ok(())
    }
}

pub(crate) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(crate) fn text(out: &mut Vec<u8>, text: &str) {
    varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

/// The strings a decoder has read so far, in the order they were spelled.
#[derive(Default)]
pub(crate) struct Names<'a> {
    spelled: Vec<&'a str>,
    seen: std::collections::HashSet<&'a str, foldhash::quality::RandomState>,
}

impl<'a> Names<'a> {
    /// The string numbered `number` by [`Reader::name`].
    pub(crate) fn get(&self, number: usize) -> Option<&'a str> {
        self.spelled.get(number).copied()
    }
}

/// Where a decoder is in a pack's body.
pub(crate) struct Reader<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A pack's opening: its format byte, which must be `format`, and its
    /// count of entries. A count the bytes cannot hold (each entry takes
    /// at least `min_bytes`) is refused before anything is allocated for it.
    pub(crate) fn opening(
        body: &'a [u8],
        format: u8,
        min_bytes: usize,
        count_of: &'static str,
    ) -> Result<(Reader<'a>, usize), PackError> {
        let mut reader = Reader { body, at: 0 };
        let found = reader.byte()?;
        if found != format {
            return Err(PackError::Format(found));
        }
        let count = reader.varint()?;
        match usize::try_from(count) {
            Ok(count) if count <= body.len() / min_bytes.max(1) => Ok((reader, count)),
            _ => Err(PackError::OutOfBounds(count_of)),
        }
    }

    /// Refuses bytes after the last entry.
    pub(crate) fn finished(&self) -> Result<(), PackError> {
        if self.at == self.body.len() { Ok(()) } else { Err(PackError::Trailing) }
    }

    /// A session or model as [`Strings::write`] wrote it: none, or its
    /// number in `names` (from 0), which a new string joins.
    pub(crate) fn name(&mut self, names: &mut Names<'a>) -> Result<Option<usize>, PackError> {
        match self.varint()? {
            0 => Ok(None),
            odd if odd % 2 == 1 => {
                let name = self.text("session or model")?;
                if odd / 2 != names.spelled.len() as u64 + 1 {
                    return Err(PackError::OutOfBounds("string number"));
                }
                // A string spelled twice: no pack Bee writes says that.
                if !names.seen.insert(name) {
                    return Err(PackError::OutOfBounds("string spelled twice"));
                }
                names.spelled.push(name);
                Ok(Some(names.spelled.len() - 1))
            }
            even => usize::try_from(even / 2 - 1)
                .ok()
                .filter(|&at| at < names.spelled.len())
                .map(Some)
                .ok_or(PackError::OutOfBounds("string number")),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PackError> {
        let bytes = self.body.get(self.at..self.at.checked_add(n).ok_or(PackError::Truncated)?);
        let bytes = bytes.ok_or(PackError::Truncated)?;
        self.at += n;
        Ok(bytes)
    }

    pub(crate) fn byte(&mut self) -> Result<u8, PackError> {
        Ok(self.take(1)?[0])
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], PackError> {
        self.take(N)?.try_into().map_err(|_| PackError::Truncated)
    }

    /// One LEB128 integer: at most ten bytes, its last one no wider than
    /// the bit a `u64` has left, and no longer than it needs to be (so
    /// one value has one spelling).
    pub(crate) fn varint(&mut self) -> Result<u64, PackError> {
        // Read from the slice itself: every pack's every count and time
        // goes through here.
        let rest = self.body.get(self.at..).unwrap_or_default();
        let mut value = 0u64;
        for (at, &byte) in rest.iter().take(10).enumerate() {
            if at == 9 && byte > 1 {
                return Err(PackError::OutOfBounds("integer"));
            }
            value |= u64::from(byte & 0x7f) << (7 * at);
            if byte & 0x80 == 0 {
                if at > 0 && byte == 0 {
                    return Err(PackError::OutOfBounds("integer"));
                }
                self.at += at + 1;
                return Ok(value);
            }
        }
        Err(if rest.len() < 10 { PackError::Truncated } else { PackError::OutOfBounds("integer") })
    }

    fn text(&mut self, what: &'static str) -> Result<&'a str, PackError> {
        let len = self.varint()?;
        if len > MAX_TEXT_BYTES as u64 {
            return Err(PackError::OutOfBounds(what));
        }
        std::str::from_utf8(self.take(len as usize)?).map_err(|_| PackError::NotUtf8(what))
    }
}

/// For the fuzz target: decodes any bytes as a pack (without panicking),
/// and a pack that decodes encodes back to the same bytes.
pub fn decodes_exactly(body: &[u8]) -> Result<(), String> {
    let hour_ms = 1_700_000_000_000 / HOUR_MS * HOUR_MS;
    let Ok(writes) = decode(hour_ms, body) else { return Ok(()) };
    let entries: Vec<Entry<'_>> = writes.iter().map(PackedWrite::entry).collect();
    match encode(hour_ms, &entries) {
        Ok(again) if again == body => Ok(()),
        Ok(again) => Err(format!("decoded {writes:?}, encoded again as {again:?}")),
        Err(err) => Err(format!("decoded {writes:?}, refused to encode again: {err}")),
    }
}

impl PackedWrite {
    /// This write, borrowed as an [`Entry`] to pack again.
    pub fn entry(&self) -> Entry<'_> {
        Entry {
            provider: self.provider,
            key_hash: self.key_hash,
            key: &self.key,
            session_id: self.session_id.as_ref(),
            model: self.model.as_ref(),
            at_ms: self.at_ms,
            tokens: &self.tokens,
            context_tokens: self.context_tokens,
            context_window: self.context_window,
            is_final: self.is_final,
            own_figure: self.own_figure,
            copied: self.copied,
        }
    }
}

/// `body` with a byte changed (`how` 0), cut short there (1) or a byte
/// inserted there (else): how the damaged-pack tests damage a pack.
#[cfg(test)]
pub(crate) fn damaged(mut body: Vec<u8>, at: proptest::sample::Index, byte: u8, how: u8) -> Vec<u8> {
    let at = at.index(body.len());
    match how {
        0 => body[at] = byte,
        1 => body.truncate(at),
        _ => body.insert(at, byte),
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const HOUR: i64 = 1_764_583_200_000;

    fn counter() -> impl Strategy<Value = Option<u64>> {
        prop_oneof![Just(None), (0u64..=MAX_CALL_TOKENS).prop_map(Some), (0u64..300).prop_map(Some)]
    }

    /// An agent's cost: none, a round one, or any within Bee's bounds.
    fn cost() -> impl Strategy<Value = Option<f64>> {
        use crate::ledger::stored::validate::MAX_AGENT_COST_USD;
        prop_oneof![Just(None), Just(Some(0.0)), (0.0..=MAX_AGENT_COST_USD).prop_map(Some)]
    }

    fn written() -> impl Strategy<Value = PackedWrite> {
        let name = prop_oneof![Just(None), "[a-c]{1,3}".prop_map(Some), "\\PC{0,12}".prop_map(Some)];
        (
            (proptest::sample::select(Provider::ALL), any::<i64>(), "\\PC{1,40}", name.clone(), name, 0..HOUR_MS),
            proptest::collection::vec(counter(), 9),
            (any::<bool>(), cost(), any::<bool>()),
        )
            .prop_map(
                |((provider, key_hash, key, session_id, model, offset), c, (is_final, own_figure, copied))| {
                    PackedWrite {
                        provider,
                        key_hash,
                        key,
                        session_id: session_id.map(Into::into),
                        model: model.map(Into::into),
                        at_ms: HOUR + offset,
                        tokens: Counters {
                            input_tokens: c[0],
                            cached_input_tokens: c[1],
                            cache_creation_input_tokens: c[2],
                            cache_read_input_tokens: c[3],
                            output_tokens: c[4],
                            reasoning_output_tokens: c[5],
                            total_tokens: c[6],
                        },
                        context_tokens: c[7],
                        context_window: c[8],
                        is_final,
                        // Warp's and Aider's figures are whole tokens.
                        own_figure: own_figure.map(|f| if provider.own_unit().is_tokens() { f.round() } else { f }),
                        copied,
                    }
                },
            )
    }

    fn encoded(writes: &[PackedWrite]) -> Vec<u8> {
        encode(HOUR, &writes.iter().map(PackedWrite::entry).collect::<Vec<_>>()).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000))]

        /// Any writes Bee stores come back as they were, and their pack
        /// is the one spelling of them.
        #[test]
        fn writes_come_back_as_they_were_packed(writes in proptest::collection::vec(written(), 0..40)) {
            let body = encoded(&writes);
            prop_assert_eq!(decode(HOUR, &body), Ok(writes));
            prop_assert_eq!(decodes_exactly(&body), Ok(()));
        }

        /// A pack with a byte changed, cut short or grown either decodes to
        /// writes that pack back to exactly those bytes, or is refused.
        #[test]
        fn a_damaged_pack_is_refused_or_read_as_exactly_what_it_says(
            writes in proptest::collection::vec(written(), 1..8),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            how in 0..3u8,
        ) {
            let body = damaged(encoded(&writes), at, byte, how);
            prop_assert_eq!(decodes_exactly(&body), Ok(()));
        }
    }

    #[test]
    fn sessions_and_models_are_spelled_once_per_pack() {
        let write = |key: &str| PackedWrite {
            provider: Provider::Claude,
            key_hash: 1,
            key: key.to_owned(),
            session_id: Some("0f6c3a52-5a7e-4cbb-9a51-3f1f1f0f2d11".into()),
            model: Some("claude-sonnet-4-5-20250929".into()),
            at_ms: HOUR,
            tokens: Counters::default(),
            context_tokens: None,
            context_window: None,
            is_final: true,
            own_figure: None,
            copied: false,
        };
        let one = encoded(&[write("a")]).len();
        let two = encoded(&[write("a"), write("b")]).len();
        assert_eq!(two - one, 1 + 8 + 1 + 2 + 2 + 9, "the second write names both by number");
    }

    #[test]
    fn hostile_bodies_are_refused_without_allocating_for_them() {
        let cases: [(&[u8], PackError); 7] = [
            (&[], PackError::Truncated),
            (&[2, 0], PackError::Format(2)),
            // A billion writes claimed in three bytes.
            (&[1, 0x80, 0x94, 0xeb, 0xdc, 0x03], PackError::OutOfBounds("count of writes")),
            (&[1, 0, 7], PackError::Trailing),
            // An integer spelled with a needless zero byte.
            (&[1, 0x80, 0x00], PackError::OutOfBounds("integer")),
            // Eleven continuation bytes.
            (&[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], PackError::OutOfBounds("integer")),
            (&[1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02], PackError::OutOfBounds("integer")),
        ];
        for (body, expected) in cases {
            assert_eq!(decode(HOUR, body), Err(expected), "{body:?}");
        }
        // Two writes of session "s": the second names it by number, or
        // spells it again, which no pack Bee writes does (found by fuzzing).
        let two = |second_session: &[u8]| {
            let mut body = vec![FORMAT, 2];
            for (key, session) in [(b'a', &[3, 1, b's'][..]), (b'b', second_session)] {
                body.extend([FINAL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, key]);
                body.extend_from_slice(session);
                body.extend([0; 10]);
            }
            decode(HOUR, &body).map(|writes| writes.len())
        };
        assert_eq!(two(&[2]), Ok(2));
        assert_eq!(two(&[5, 1, b's']), Err(PackError::OutOfBounds("string spelled twice")));
        let mut one = encoded(&[PackedWrite {
            provider: Provider::Codex,
            key_hash: -5,
            key: "resp_1".to_owned(),
            session_id: None,
            model: None,
            at_ms: HOUR + 5,
            tokens: Counters::default(),
            context_tokens: None,
            context_window: None,
            is_final: false,
            own_figure: None,
            copied: false,
        }]);
        assert!(decode(HOUR, &one).is_ok());
        // Flags no version writes; a key that is not UTF-8; a time past the hour.
        let flags_at = 2;
        one[flags_at] = OWN_FIGURE | Provider::Codex.number() << 1;
        assert_eq!(decode(HOUR, &one), Err(PackError::Truncated), "a cost said to follow, and missing");
        one.extend_from_slice(&f64::NAN.to_le_bytes());
        assert_eq!(decode(HOUR, &one), Err(PackError::OutOfBounds("own figure")));
        one.truncate(one.len() - 8);
        one.extend_from_slice(&0.25f64.to_le_bytes());
        assert_eq!(decode(HOUR, &one).map(|w| w[0].own_figure), Ok(Some(0.25)));
        one.truncate(one.len() - 8);
        one.extend_from_slice(&5_000.0f64.to_le_bytes());
        assert_eq!(decode(HOUR, &one), Err(PackError::OutOfBounds("own figure")), "past any cost of one response");
        one.truncate(one.len() - 8);
        // The bound is the agent's unit's: Kiro's credits, Warp's whole tokens.
        let figure = |provider: Provider, figure: f64| {
            let tokens = Counters::default();
            let write = Entry {
                provider,
                key_hash: 1,
                key: "r",
                session_id: None,
                model: None,
                at_ms: HOUR,
                tokens: &tokens,
                context_tokens: None,
                context_window: None,
                is_final: true,
                own_figure: Some(figure),
                copied: false,
            };
            encode(HOUR, &[write]).and_then(|body| decode(HOUR, &body)).map(|w| w[0].own_figure)
        };
        assert_eq!(figure(Provider::Kiro, 5_000.0), Ok(Some(5_000.0)));
        assert_eq!(figure(Provider::Warp, 2_500_000.0), Ok(Some(2_500_000.0)));
        assert_eq!(figure(Provider::Warp, 0.5), Err(PackError::OutOfBounds("own figure")));
        assert_eq!(figure(Provider::Aider, 604.0), Ok(Some(604.0)));
        assert_eq!(figure(Provider::Codex, 5_000.0), Err(PackError::OutOfBounds("own figure")));
        one[flags_at] = PROVIDER;
        one.insert(flags_at + 1, 0xff);
        assert_eq!(decode(HOUR, &one), Err(PackError::OutOfBounds("flags")), "a provider no version names");
        one[flags_at + 1] = Provider::Codex.number();
        assert_eq!(decode(HOUR, &one), Err(PackError::OutOfBounds("flags")), "a number the flags hold, after them");
        one.remove(flags_at + 1);
        one[flags_at] = Provider::Codex.number() << 1;
        let key_at = flags_at + 1 + 8 + 1 + 1;
        one[key_at] = 0xff;
        assert_eq!(decode(HOUR, &one), Err(PackError::NotUtf8("key")));
        let refused = |at_ms: i64, key: &str, output: u64| {
            let tokens = Counters { output_tokens: Some(output), ..Counters::default() };
            let entry = Entry {
                provider: Provider::Claude,
                key_hash: 0,
                key,
                session_id: None,
                model: None,
                at_ms,
                tokens: &tokens,
                context_tokens: None,
                context_window: None,
                is_final: true,
                own_figure: None,
                copied: false,
            };
            encode(HOUR, &[entry]).err()
        };
        assert_eq!(refused(HOUR + HOUR_MS, "k", 1), Some(PackError::OutOfBounds("time")));
        assert_eq!(refused(HOUR - 1, "k", 1), Some(PackError::OutOfBounds("time")));
        assert_eq!(refused(HOUR, "", 1), Some(PackError::OutOfBounds("key")));
        assert_eq!(refused(HOUR, "k", MAX_CALL_TOKENS + 1), Some(PackError::OutOfBounds("counter")));
        assert_eq!(refused(HOUR, "k", MAX_CALL_TOKENS), None);
    }
}
