//! The stored form of an hour's usage parts from schema 9 on: the parts
//! one hour settled to, packed into one blob (`rollup_parts`), in place of
//! a row per part.
//!
//! A first import settles thousands of parts (an hour of every session
//! that worked in it) and a view of the whole history reads them all
//! back: a row of sixteen columns each cost SQLite a b-tree insert to
//! write and a column at a time to read. A pack is one insert and one read
//! per hour; its sessions and models are spelled once, its counts as
//! varints.
//!
//! Layout (format 2, from schema 14), all integers unsigned LEB128 (as
//! `pack` writes them):
//!
//! ```text
//! format (1 byte) · parts
//! per part: provider (1 byte: its number) · tier (1 byte) · session · model
//!           · responses · seven counters (value + 1; 0 when no response reported it)
//!           · partial parts · pending responses · producer calls
//!           · copied responses · the agents' own figure (steps of its unit + 1;
//!           0 when no response carried one) · responses of an unknown own figure
//!           · first and last response time (unix ms + 1; 0 when it has none)
//! session, model: as in a response pack (0 none · 2n + 1 a new string · 2n string n)
//! ```
//!
//! Format 1 (schema 9 to 13) lacked the last five; its hours are settled
//! again by schema 14's migration, and a reader of an older store takes
//! usage from the records.
//!
//! Counts are at most `i64::MAX`, as the rows before held them. The
//! aggregates are derived data: a pack that does not decode is named by the
//! reader, and its hour read from the records instead.

use bee_proto::ledger::Provider;
use bee_proto::usage::Counters;

use crate::ledger::stored::pack::{Names, PackError, Reader, Strings, varint};

/// The layout this module writes and reads.
const FORMAT: u8 = 2;

/// The fewest bytes a part takes: provider, tier, two absent strings, the
/// responses, seven absent counters, four counts, an absent cost and two
/// absent times.
const MIN_PART_BYTES: usize = 1 + 1 + 2 + 1 + 7 + 3 + 1 + 1 + 1 + 2;

/// The largest count a pack holds: what a SQLite integer holds.
const MAX_COUNT: u64 = i64::MAX as u64;

/// One part of an hour's usage, its strings borrowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPart<'a> {
    pub provider: Provider,
    pub session: Option<&'a str>,
    pub model: Option<&'a str>,
    pub tier: u8,
    pub responses: u64,
    pub tokens: Counters,
    pub partial_parts: u64,
    pub pending_responses: u64,
    pub producer_calls: u64,
    pub copied_responses: u64,
    /// Billionths of a dollar.
    pub own_figure_steps: Option<u64>,
    pub own_figure_unknown: u64,
    /// The first and last response time (unix ms); both or neither.
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
}

/// Packs `parts`. Counts above [`MAX_COUNT`] are stored as it, as a row
/// stored them; a session or model outside Bee's bounds is refused.
pub fn encode<'a>(parts: impl IntoIterator<Item = StoredPart<'a>>) -> Result<Vec<u8>, PackError> {
    let parts = parts.into_iter();
    let mut body = Vec::with_capacity(16 + parts.size_hint().0 * 32);
    body.push(FORMAT);
    // The count goes first; parts are counted as they are written.
    let mut written = 0u64;
    let mut rest = Vec::with_capacity(body.capacity());
    let mut strings = Strings::default();
    for part in parts {
        written += 1;
        rest.push(part.provider.number());
        rest.push(part.tier);
        for name in [part.session, part.model] {
            strings.write(&mut rest, name)?;
        }
        varint(&mut rest, part.responses.min(MAX_COUNT));
        for counter in part.tokens.values() {
            varint(&mut rest, counter.map_or(0, |n| n.min(MAX_COUNT) + 1));
        }
        for count in [part.partial_parts, part.pending_responses, part.producer_calls, part.copied_responses] {
            varint(&mut rest, count.min(MAX_COUNT));
        }
        varint(&mut rest, part.own_figure_steps.map_or(0, |n| n.min(MAX_COUNT) + 1));
        varint(&mut rest, part.own_figure_unknown.min(MAX_COUNT));
        let span = match (part.first_ms, part.last_ms) {
            (Some(first), Some(last)) if is_time(first) && is_time(last) && first <= last => [first, last],
            (None, None) => [-1, -1],
            _ => return Err(PackError::OutOfBounds("response times")),
        };
        for at in span {
            varint(&mut rest, (at + 1) as u64);
        }
    }
    varint(&mut body, written);
    body.extend_from_slice(&rest);
    Ok(body)
}

/// The parts of a pack, their strings borrowed from `body`.
pub fn decode(body: &[u8]) -> Result<Vec<StoredPart<'_>>, PackError> {
    let (mut reader, count) = Reader::opening(body, FORMAT, MIN_PART_BYTES, "count of parts")?;
    let mut names = Names::default();
    let mut parts = Vec::with_capacity(count);
    for _ in 0..count {
        let provider = Provider::from_number(reader.byte()?).ok_or(PackError::OutOfBounds("provider"))?;
        let tier = reader.byte()?;
        let session = reader.name(&mut names)?.and_then(|number| names.get(number));
        let model = reader.name(&mut names)?.and_then(|number| names.get(number));
        let responses = count_in(&mut reader)?;
        let mut counters = [None; 7];
        for counter in &mut counters {
            *counter = match reader.varint()? {
                0 => None,
                n if n - 1 > MAX_COUNT => return Err(PackError::OutOfBounds("counter")),
                n => Some(n - 1),
            };
        }
        let [input, cached, creation, read, output, reasoning, total] = counters;
        let [partial_parts, pending_responses, producer_calls, copied_responses, cost, own_figure_unknown] =
            [(); 6].map(|()| count_in(&mut reader));
        let (first_ms, last_ms) = span_in(&mut reader)?.unzip();
        parts.push(StoredPart {
            provider,
            session,
            model,
            tier,
            responses,
            tokens: Counters {
                input_tokens: input,
                cached_input_tokens: cached,
                cache_creation_input_tokens: creation,
                cache_read_input_tokens: read,
                output_tokens: output,
                reasoning_output_tokens: reasoning,
                total_tokens: total,
            },
            partial_parts: partial_parts?,
            pending_responses: pending_responses?,
            producer_calls: producer_calls?,
            copied_responses: copied_responses?,
            own_figure_steps: cost?.checked_sub(1),
            own_figure_unknown: own_figure_unknown?,
            first_ms,
            last_ms,
        });
    }
    reader.finished()?;
    Ok(parts)
}

fn count_in(reader: &mut Reader<'_>) -> Result<u64, PackError> {
    Some(reader.varint()?).filter(|&n| n <= MAX_COUNT).ok_or(PackError::OutOfBounds("count"))
}

/// A part's first and last response times: both or neither, in order,
/// each a time the ledger holds.
fn span_in(reader: &mut Reader<'_>) -> Result<Option<(i64, i64)>, PackError> {
    let refused = PackError::OutOfBounds("response times");
    match [reader.varint()?, reader.varint()?] {
        [0, 0] => Ok(None),
        [first, last] if first > 0 && first <= last => {
            let (first, last) = (i64::try_from(first - 1), i64::try_from(last - 1));
            match (first, last) {
                (Ok(first), Ok(last)) if is_time(last) => Ok(Some((first, last))),
                _ => Err(refused),
            }
        }
        _ => Err(refused),
    }
}

/// A response's time as the ledger holds one (see `ResponseWrite::is_valid`).
fn is_time(at_ms: i64) -> bool {
    bee_proto::time::spells_as_rfc3339(at_ms)
}

/// For the fuzz target: decodes any bytes as a pack of parts (without
/// panicking), and a pack that decodes encodes back to the same bytes.
pub fn decodes_exactly(body: &[u8]) -> Result<(), String> {
    let Ok(parts) = decode(body) else { return Ok(()) };
    match encode(parts.iter().cloned()) {
        Ok(again) if again == body => Ok(()),
        Ok(again) => Err(format!("decoded {parts:?}, encoded again as {again:?}")),
        Err(err) => Err(format!("decoded {parts:?}, refused to encode again: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn counter() -> impl Strategy<Value = Option<u64>> {
        prop_oneof![Just(None), (0u64..=MAX_COUNT).prop_map(Some), (0u64..300).prop_map(Some)]
    }

    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..=MAX_COUNT, 0u64..300]
    }

    /// Parts as owned strings; a pack borrows them.
    type Owned =
        (Provider, u8, Option<String>, Option<String>, Vec<Option<u64>>, [u64; 6], Option<u64>, Option<[i64; 2]>);

    /// A part's first and last response times, or none.
    fn span() -> impl Strategy<Value = Option<[i64; 2]>> {
        let at = 0..=bee_proto::time::LATEST_RFC3339_MS;
        prop_oneof![Just(None), (at.clone(), at).prop_map(|(a, b)| Some([a.min(b), a.max(b)]))]
    }

    fn owned() -> impl Strategy<Value = Owned> {
        let name = prop_oneof![Just(None), "[a-c]{1,3}".prop_map(Some), "\\PC{0,12}".prop_map(Some)];
        (
            proptest::sample::select(Provider::ALL),
            any::<u8>(),
            name.clone(),
            name,
            proptest::collection::vec(counter(), 7),
            [count(), count(), count(), count(), count(), count()],
            counter(),
            span(),
        )
    }

    fn part(owned: &Owned) -> StoredPart<'_> {
        let (provider, tier, session, model, c, [responses, partial, pending, producer, copied, unknown], cost, span) =
            owned;
        StoredPart {
            provider: *provider,
            session: session.as_deref(),
            model: model.as_deref(),
            tier: *tier,
            responses: *responses,
            tokens: Counters {
                input_tokens: c[0],
                cached_input_tokens: c[1],
                cache_creation_input_tokens: c[2],
                cache_read_input_tokens: c[3],
                output_tokens: c[4],
                reasoning_output_tokens: c[5],
                total_tokens: c[6],
            },
            partial_parts: *partial,
            pending_responses: *pending,
            producer_calls: *producer,
            copied_responses: *copied,
            own_figure_steps: cost.map(|n| n.min(MAX_COUNT - 1)),
            own_figure_unknown: *unknown,
            first_ms: span.map(|[first, _]| first),
            last_ms: span.map(|[_, last]| last),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000))]

        /// Any parts Bee settles come back as they were, and their pack is
        /// the one spelling of them.
        #[test]
        fn parts_come_back_as_they_were_packed(owned in proptest::collection::vec(owned(), 0..40)) {
            let parts: Vec<StoredPart<'_>> = owned.iter().map(part).collect();
            let body = encode(parts.iter().cloned()).unwrap();
            prop_assert_eq!(decode(&body), Ok(parts));
            prop_assert_eq!(decodes_exactly(&body), Ok(()));
        }

        /// A pack with a byte changed, cut short or grown either decodes to
        /// parts that pack back to exactly those bytes, or is refused.
        #[test]
        fn a_damaged_pack_is_refused_or_read_as_exactly_what_it_says(
            owned in proptest::collection::vec(owned(), 1..8),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            how in 0..3u8,
        ) {
            let body = crate::ledger::stored::pack::damaged(encode(owned.iter().map(part)).unwrap(), at, byte, how);
            prop_assert_eq!(decodes_exactly(&body), Ok(()));
        }
    }

    fn blank() -> StoredPart<'static> {
        StoredPart {
            provider: Provider::Claude,
            session: None,
            model: None,
            tier: 0,
            responses: 0,
            tokens: Counters::default(),
            partial_parts: 0,
            pending_responses: 0,
            producer_calls: 0,
            copied_responses: 0,
            own_figure_steps: None,
            own_figure_unknown: 0,
            first_ms: None,
            last_ms: None,
        }
    }

    #[test]
    fn a_count_beyond_what_sqlite_holds_is_stored_as_its_largest() {
        let part = StoredPart {
            responses: u64::MAX,
            tokens: Counters { output_tokens: Some(u64::MAX), ..Counters::default() },
            ..blank()
        };
        let body = encode([part]).unwrap();
        let stored = decode(&body).unwrap();
        assert_eq!((stored[0].responses, stored[0].tokens.output_tokens), (MAX_COUNT, Some(MAX_COUNT)));
    }

    #[test]
    fn sessions_and_models_are_spelled_once_per_pack() {
        let part = StoredPart {
            session: Some("0f6c3a52-5a7e-4cbb-9a51-3f1f1f0f2d11"),
            model: Some("claude-sonnet-4-5-20250929"),
            ..blank()
        };
        let one = encode([part.clone()]).unwrap().len();
        let two = encode([part.clone(), StoredPart { tier: 1, ..part }]).unwrap().len();
        assert_eq!(two - one, MIN_PART_BYTES, "the second part names both by number");
    }

    #[test]
    fn hostile_packs_are_refused() {
        let refused = |body: &[u8]| decode(body).is_err();
        let part = |provider: u8, session: u8, tail: &[u8]| {
            let mut body = vec![FORMAT, 1, provider, 0, session, 0];
            body.extend([0; 7 + 1 + 3 + 3]);
            body.extend_from_slice(tail);
            body
        };
        assert!(!refused(&part(0, 0, &[0, 0])), "a part of nothing");
        assert!(refused(b""));
        assert!(refused(&[3, 0]), "an unknown format");
        assert!(refused(&[1, 0]), "format 1, settled again by the migration to schema 14");
        assert!(refused(&[FORMAT, 0xff, 0xff, 0xff, 0xff, 0x0f]), "a count the bytes cannot hold");
        assert!(refused(&part(0xff, 0, &[0, 0])), "an unknown provider");
        assert!(refused(&part(0, 4, &[0, 0])), "a string never spelled");
        assert!(refused(&part(0, 0, &[2, 0])), "a first response time without a last");
        assert!(refused(&part(0, 0, &[3, 2])), "a last response time before the first");
        assert!(!refused(&part(0, 0, &[2, 3])));
        assert!(refused(&[FORMAT, 0, 0]), "bytes after the last part");
        assert_eq!(decode(&[FORMAT, 0]), Ok(Vec::new()));
        let late = StoredPart { first_ms: Some(0), last_ms: Some(bee_proto::time::LATEST_RFC3339_MS + 1), ..blank() };
        assert_eq!(encode([late]), Err(PackError::OutOfBounds("response times")));
    }
}
