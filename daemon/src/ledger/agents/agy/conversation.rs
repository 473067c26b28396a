//! An agy conversation's database: table `gen_metadata` (`idx`, `data`),
//! one row a generation (one provider response), its usage in a protobuf
//! blob with no published schema. Public accounts of the format put the
//! usage at field path 1.4, and the message there is agy's
//! `ModelUsageStats` (its field names are in the descriptors the agy binary
//! embeds, as an open reader recorded them: the README): f2 input (not
//! cached), f4 cache writes, f5 cache reads, f9 thinking (reasoning), f10
//! response text, and f3 their output total, which equals f9 + f10. A row
//! whose blob fails that invariant (or holds no such message) is refused,
//! never guessed at, and nothing is estimated from text.
//!
//! The message around the usage (field 1) names the model that answered
//! (field 19, `response_model`) and holds the generation's time (field 9's
//! field 4, a `Timestamp`), where agy wrote them (read from real databases
//! by another reader: the README). A generation without its time is dated
//! when Bee first read it (its database's last write before that read), one
//! without its model has it unknown; its key is the conversation (the
//! database's name) and the row's `idx`.
//!
//! A blob is read within the bound of a database value: a longer one is
//! passed over and named by its length alone (SQLite never reads it into
//! memory); one within it is read in one pass that keeps only the fields
//! asked for, however many it holds.

use bee_proto::usage::Counters;
use std::path::Path;

use super::protobuf::{Field, last_of};
use crate::ledger::agents::lines::Found;
use crate::ledger::agents::whole::{column_within, modified_ms, pass_over_value};
use bee_proto::ledger::SkipReason;

/// Every generation row: its index and its metadata blob, by its length
/// first ([`column_within`]).
pub(crate) const QUERY: &str =
    "SELECT idx, octet_length(data), CASE WHEN octet_length(data) <= ?1 THEN data END FROM gen_metadata";

/// Reads one generation row of the conversation at `path`.
pub(crate) fn read(path: &Path, row: &rusqlite::Row<'_>, found: &mut Found<'_>) -> bool {
    let Some(conversation) = path.file_stem().and_then(|stem| stem.to_str()).filter(|stem| !stem.is_empty()) else {
        return false;
    };
    let Ok(id) = row.get::<_, i64>(0) else { return false };
    let blob = match column_within(row, 1) {
        Ok(value) => value.as_blob().ok(),
        Err(bytes) => {
            // Named, so not also refused.
            pass_over_value(SkipReason::OversizedDocument, bytes, path, &format_args!("gen_metadata idx {id}"));
            return true;
        }
    };
    let Some(generation) = blob.and_then(read_generation) else { return false };
    // Its own time where it wrote one, else when Bee first read it.
    let Some(at_ms) = generation.at_ms.or_else(|| modified_ms(path)) else { return false };
    found.session(conversation, None);
    found.response(format!("{conversation}\u{1f}{id}"), conversation, at_ms, generation.model, generation.counters);
    true
}

/// What a generation's `gen_metadata` blob says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation<'a> {
    /// Its usage in Bee's columns (input without either cache, cache
    /// writes, cache reads, output with its reasoning).
    pub counters: Counters,
    /// The model that answered (`response_model`), where the row names it.
    pub model: Option<&'a str>,
    /// When it was generated (unix milliseconds), where the row says.
    pub at_ms: Option<i64>,
}

/// A generation from its `gen_metadata` blob; `None` when the blob has no
/// usage at field path 1.4 or its output total is not the sum of its parts.
/// A model that is no text, or a time that is no time, is unknown.
pub fn read_generation(blob: &[u8]) -> Option<Generation<'_>> {
    let [Some(Field::Bytes(chat_model))] = last_of(blob, [1])? else { return None };
    let [usage, generated, model] = last_of(chat_model, [4, 9, 19])?;
    let Some(Field::Bytes(usage)) = usage else { return None };
    let counters = usage_counters(usage)?;
    let model = match model {
        Some(Field::Bytes(name)) => std::str::from_utf8(name).ok().filter(|name| !name.is_empty()),
        _ => None,
    };
    let at_ms = match generated {
        Some(Field::Bytes(generated)) => generated_at_ms(generated),
        _ => None,
    };
    Some(Generation { counters, model, at_ms })
}

/// The counters of a `ModelUsageStats`, checked: output total = reasoning +
/// text.
fn usage_counters(usage: &[u8]) -> Option<Counters> {
    let counter = |field| match field {
        Some(Field::Varint(n)) => Some(Some(n)),
        None => Some(None),
        _ => None,
    };
    let [input, total, written, cached, reasoning, text] = last_of(usage, [2, 3, 4, 5, 9, 10])?;
    let (input, written, cached, total, reasoning, text) =
        (counter(input)?, counter(written)?, counter(cached)?, counter(total)?, counter(reasoning)?, counter(text)?);
    // A field protobuf leaves out is 0; the invariant holds over what was written.
    let output = reasoning.unwrap_or(0).checked_add(text.unwrap_or(0))?;
    if total.unwrap_or(0) != output || output == 0 && input.is_none() {
        return None;
    }
    Some(Counters {
        input_tokens: Some(input.unwrap_or(0)),
        cache_creation_input_tokens: Some(written.unwrap_or(0)),
        cache_read_input_tokens: Some(cached.unwrap_or(0)),
        output_tokens: Some(output),
        reasoning_output_tokens: Some(reasoning.unwrap_or(0)),
        ..Counters::default()
    })
}

/// The time in a generation's timing message (its field 4, a protobuf
/// `Timestamp`: seconds, nanoseconds), in unix milliseconds; `None` when it
/// is missing, 0, or no time RFC 3339 spells.
fn generated_at_ms(generated: &[u8]) -> Option<i64> {
    let [Some(Field::Bytes(stamp))] = last_of(generated, [4])? else { return None };
    let [seconds, nanos] = last_of(stamp, [1, 2])?;
    let seconds = match seconds {
        Some(Field::Varint(seconds)) => i64::try_from(seconds).ok()?,
        _ => return None,
    };
    let nanos = match nanos {
        Some(Field::Varint(nanos)) if nanos < 1_000_000_000 => nanos as i64,
        None => 0,
        _ => return None,
    };
    let ms = seconds.checked_mul(1000)?.checked_add(nanos / 1_000_000)?;
    (ms > 0 && bee_proto::time::spells_as_rfc3339(ms)).then_some(ms)
}

#[cfg(test)]
mod tests {
    use super::super::protobuf::tests::{Encoded, encode};
    use super::*;
    use crate::ledger::agents::tests::{database, read_whole, rows};
    use bee_proto::ledger::Provider;

    /// A `gen_metadata` blob with usage (input, cache writes, cache reads,
    /// reasoning, text, output total) at field path 1.4, among other fields;
    /// no cache-write field where there are none, as protobuf leaves a 0 out.
    pub(crate) fn blob(input: u64, written: u64, cached: u64, reasoning: u64, text: u64, total: u64) -> Vec<u8> {
        let written = (written > 0).then_some((4, Encoded::Varint(written)));
        let usage = encode(
            &[
                (2, Encoded::Varint(input)),
                (3, Encoded::Varint(total)),
                (5, Encoded::Varint(cached)),
                (9, Encoded::Varint(reasoning)),
                (10, Encoded::Varint(text)),
            ]
            .into_iter()
            .chain(written)
            .collect::<Vec<_>>(),
        );
        let metadata = encode(&[(1, Encoded::Bytes(b"gemini")), (4, Encoded::Bytes(&usage)), (7, Encoded::Varint(1))]);
        encode(&[(1, Encoded::Bytes(&metadata)), (3, Encoded::Bytes(b"step"))])
    }

    /// Generations read as the conversation grows: each once by its row;
    /// cached input shown once under cache reads, cache writes (f4) under
    /// cache writes and 0 where the field is left out, reasoning inside
    /// output;
    /// a blob whose output total is not its parts' sum, and one that is no
    /// protobuf, are refused.
    #[test]
    fn generations_once_and_misread_usage_refused() {
        let (_dir, path, db) = database(
            "0f9d2c44-5b1e-4c8a-9e61-2d7f3a8b9c10.db",
            "CREATE TABLE gen_metadata (idx INTEGER PRIMARY KEY, data BLOB)",
        );
        let insert = "INSERT INTO gen_metadata (idx, data) VALUES (?1, ?2)";
        db.execute(insert, (1, blob(5200, 0, 0, 310, 95, 405))).unwrap();
        let (first, _) = read_whole(Provider::Agy, &path, &Default::default());
        db.execute(insert, (2, blob(140, 1200, 5100, 0, 60, 60))).unwrap();
        db.execute(insert, (3, blob(100, 0, 0, 10, 20, 31))).unwrap();
        db.execute(insert, (4, b"\xff\xff not protobuf".to_vec())).unwrap();
        let (mut all, _) = read_whole(Provider::Agy, &path, &Default::default());
        all.extend(first);
        let s = Some;
        let conversation = "0f9d2c44-5b1e-4c8a-9e61-2d7f3a8b9c10\u{1f}";
        assert_eq!(
            rows(Provider::Agy, &all),
            [
                (format!("{conversation}1"), s(5200), s(0), s(0), s(405), s(310), s(5605)),
                (format!("{conversation}2"), s(140), s(1200), s(5100), s(60), s(0), s(6500)),
            ]
        );
        assert!(all.iter().all(|w| w.model.is_none()), "agy's rows name no model Bee can read");
    }

    /// A blob over the bound is named by its length (SQLite never reads
    /// it) and not refused; a blob of millions of tiny fields before its
    /// usage is read in one pass, keeping only the fields asked for.
    #[test]
    fn a_blob_over_the_bound_is_named_and_tiny_fields_read_past() {
        use crate::ledger::agents::tests::noted;
        use crate::ledger::agents::whole::MAX_DOCUMENT_BYTES;
        use bee_proto::ledger::SkipReason;
        let (_dir, path, db) = database("c1.db", "CREATE TABLE gen_metadata (idx INTEGER PRIMARY KEY, data BLOB)");
        let mut tiny = [0x08, 0x01].repeat(2_000_000);
        tiny.extend(blob(100, 0, 0, 10, 20, 30));
        db.execute("INSERT INTO gen_metadata (idx, data) VALUES (1, ?1)", [tiny]).unwrap();
        db.execute("INSERT INTO gen_metadata (idx, data) VALUES (2, zeroblob(?1))", [MAX_DOCUMENT_BYTES as i64 + 1])
            .unwrap();
        db.execute("INSERT INTO gen_metadata (idx, data) VALUES (3, ?1)", [blob(5, 0, 0, 0, 1, 1)]).unwrap();
        let _ = noted();
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(Provider::Agy).whole_file().unwrap();
        let (_, refused) = reader.read(&path, &Default::default(), &mut evidence).unwrap();
        let writes = crate::ledger::agents::tests::responses_of(evidence);
        assert_eq!((writes.len(), refused), (2, 0));
        assert_eq!(writes[0].tokens.output_tokens, Some(30));
        assert_eq!(noted(), [(0, MAX_DOCUMENT_BYTES + 1, SkipReason::OversizedDocument)]);
    }

    #[test]
    fn usage_not_at_its_path_is_none() {
        assert_eq!(read_generation(&encode(&[(1, Encoded::Varint(4))])), None);
        assert_eq!(read_generation(&[]), None);
        let neither = blob(1, 2, 3, 4, 5, 9);
        let generation = read_generation(&neither).unwrap();
        assert_eq!((generation.model, generation.at_ms), (None, None), "a row that names neither");
    }

    /// A generation as agy writes one, its usage beside the model that
    /// answered (`response_model`, field 19) and its time (field 9's
    /// `Timestamp`): the response is dated by its own time and named by its
    /// model, not by when Bee read it. A model that is no text, or a time
    /// that is none (0, nanoseconds past a second, past what RFC 3339
    /// spells, not a number), is unknown and the response still counts,
    /// dated when Bee read it.
    #[test]
    fn a_generation_names_its_model_and_its_time() {
        let generation = |model: Option<&[u8]>, stamp: Option<Vec<u8>>| {
            let usage = encode(&[(2, Encoded::Varint(100)), (3, Encoded::Varint(30)), (10, Encoded::Varint(30))]);
            let timing = stamp.map(|stamp| encode(&[(1, Encoded::Varint(7)), (4, Encoded::Bytes(&stamp))]));
            let mut fields = vec![(1, Encoded::Varint(1132)), (4, Encoded::Bytes(&usage))];
            fields.extend(timing.as_deref().map(|timing| (9, Encoded::Bytes(timing))));
            fields.extend(model.map(|model| (19, Encoded::Bytes(model))));
            fields.push((21, Encoded::Bytes(b"Gemini 3 Flash (High)")));
            encode(&[(1, Encoded::Bytes(&encode(&fields))), (3, Encoded::Bytes(b"step"))])
        };
        let stamp = |seconds: u64, nanos: u64| encode(&[(1, Encoded::Varint(seconds)), (2, Encoded::Varint(nanos))]);
        let (_dir, path, db) = database("d2.db", "CREATE TABLE gen_metadata (idx INTEGER PRIMARY KEY, data BLOB)");
        let insert = "INSERT INTO gen_metadata (idx, data) VALUES (?1, ?2)";
        db.execute(insert, (1, generation(Some(b"gemini-3-flash-a"), Some(stamp(1_796_600_000, 250_000_000)))))
            .unwrap();
        db.execute(insert, (2, generation(Some(b"\xff\xfe"), Some(stamp(0, 0))))).unwrap();
        db.execute(insert, (3, generation(None, Some(stamp(1_796_600_100, 1_000_000_000))))).unwrap();
        db.execute(insert, (4, generation(None, Some(stamp(u64::MAX, 0))))).unwrap();
        db.execute(insert, (5, generation(None, Some(encode(&[(1, Encoded::Bytes(b"soon"))]))))).unwrap();
        db.execute(insert, (6, generation(None, Some(stamp(400_000_000_000, 0))))).unwrap();
        let mut evidence = Vec::new();
        let reader = crate::ledger::agents::agent(Provider::Agy).whole_file().unwrap();
        let (_, refused) = reader.read(&path, &Default::default(), &mut evidence).unwrap();
        let writes = crate::ledger::agents::tests::responses_of(evidence);
        assert_eq!((writes.len(), refused), (6, 0), "a name or a time it cannot read refuses no row");
        assert_eq!(writes[0].model.as_deref(), Some("gemini-3-flash-a"));
        assert_eq!(writes[0].at_ms, 1_796_600_000_250);
        let read_at = crate::ledger::agents::whole::modified_ms(&path).unwrap();
        for write in &writes[1..] {
            assert_eq!((write.model.as_deref(), write.at_ms), (None, read_at), "{}", write.key);
        }
        assert!(
            writes.iter().all(|w| w.tokens.output_tokens == Some(30) && w.tokens.reasoning_output_tokens == Some(0))
        );
        // Its field 1 is the model's number in agy's enum, no count of tokens.
        assert!(writes.iter().all(|w| w.tokens.input_tokens == Some(100)));
    }
}
