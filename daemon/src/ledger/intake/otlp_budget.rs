//! What an OTLP logs body may hold before it is decoded: counted in one
//! pass over its bytes that allocates nothing, so a body of millions of
//! empty records (two bytes each in protobuf, `{}` in JSON) is refused
//! before it costs a hundred times its size in memory.
//!
//! The bounds are far above what a real sender batches (the OpenTelemetry
//! SDKs export at most 512 records a batch, 128 attributes a record) and
//! keep a decoded request to a few megabytes whatever the body: at most
//! [`MAX_LOG_RECORDS`] records and [`MAX_MESSAGES`] messages of any kind
//! (resources, scopes, records, attributes, values) in protobuf,
//! [`MAX_JSON_VALUES`] values in JSON, nested at most [`MAX_DEPTH`] deep.

use std::fmt;

/// Log records one request may carry.
pub const MAX_LOG_RECORDS: usize = 4_096;
/// Protobuf messages of any kind one request may carry.
pub const MAX_MESSAGES: usize = 65_536;
/// JSON values (objects, arrays, scalars) one request may carry.
pub const MAX_JSON_VALUES: usize = 262_144;
/// How deep messages or JSON values may nest.
pub const MAX_DEPTH: usize = 32;

/// Why a body is refused before decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverBudget {
    Records,
    Messages,
    Values,
    Depth,
    /// Not the wire format it claims to be.
    Malformed(&'static str),
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OverBudget::Records => write!(f, "more than {MAX_LOG_RECORDS} log records in one request"),
            OverBudget::Messages => write!(f, "more than {MAX_MESSAGES} messages in one request"),
            OverBudget::Values => write!(f, "more than {MAX_JSON_VALUES} JSON values in one request"),
            OverBudget::Depth => write!(f, "nested deeper than {MAX_DEPTH}"),
            OverBudget::Malformed(what) => write!(f, "{what}"),
        }
    }
}

/// The OTLP logs messages whose fields hold other messages this walk counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Request,
    ResourceLogs,
    Resource,
    ScopeLogs,
    Scope,
    LogRecord,
    KeyValue,
    AnyValue,
    ArrayValue,
    KeyValueList,
    /// A message whose fields this walk does not look into.
    Opaque,
}

/// The message field `field` of a `kind` holds, or `None` for a field that
/// holds no message (a string, bytes, a number).
fn child(kind: Kind, field: u64) -> Option<Kind> {
    Some(match (kind, field) {
        (Kind::Request, 1) => Kind::ResourceLogs,
        (Kind::ResourceLogs, 1) => Kind::Resource,
        (Kind::ResourceLogs, 2) => Kind::ScopeLogs,
        (Kind::Resource, 1) | (Kind::Scope, 3) | (Kind::LogRecord, 6) => Kind::KeyValue,
        (Kind::Resource, 3) => Kind::Opaque,
        (Kind::ScopeLogs, 1) => Kind::Scope,
        (Kind::ScopeLogs, 2) => Kind::LogRecord,
        (Kind::LogRecord, 5) | (Kind::KeyValue, 2) | (Kind::ArrayValue, 1) => Kind::AnyValue,
        (Kind::AnyValue, 5) => Kind::ArrayValue,
        (Kind::AnyValue, 6) => Kind::KeyValueList,
        (Kind::KeyValueList, 1) => Kind::KeyValue,
        _ => return None,
    })
}

#[derive(Debug, Default)]
struct Tally {
    records: usize,
    messages: usize,
}

/// Checks a protobuf `ExportLogsServiceRequest` against the budget.
pub fn check_protobuf(body: &[u8]) -> Result<(), OverBudget> {
    walk(body, Kind::Request, 0, &mut Tally::default())
}

fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, OverBudget> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let Some(&byte) = bytes.get(*at) else { return Err(OverBudget::Malformed("a varint runs past the end")) };
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(OverBudget::Malformed("a varint longer than ten bytes"))
}

fn walk(bytes: &[u8], kind: Kind, depth: usize, tally: &mut Tally) -> Result<(), OverBudget> {
    if depth > MAX_DEPTH {
        return Err(OverBudget::Depth);
    }
    let mut at = 0;
    while at < bytes.len() {
        let key = varint(bytes, &mut at)?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(bytes, &mut at)?;
            }
            1 => {
                at =
                    at.checked_add(8).filter(|&end| end <= bytes.len()).ok_or(OverBudget::Malformed("a cut fixed64"))?
            }
            5 => {
                at =
                    at.checked_add(4).filter(|&end| end <= bytes.len()).ok_or(OverBudget::Malformed("a cut fixed32"))?
            }
            2 => {
                let length = usize::try_from(varint(bytes, &mut at)?).map_err(|_| OverBudget::Malformed("a length"))?;
                let end = at
                    .checked_add(length)
                    .filter(|&end| end <= bytes.len())
                    .ok_or(OverBudget::Malformed("a length past the end"))?;
                if let Some(inner) = child(kind, field) {
                    tally.messages += 1;
                    if tally.messages > MAX_MESSAGES {
                        return Err(OverBudget::Messages);
                    }
                    if inner == Kind::LogRecord {
                        tally.records += 1;
                        if tally.records > MAX_LOG_RECORDS {
                            return Err(OverBudget::Records);
                        }
                    }
                    if inner != Kind::Opaque {
                        walk(&bytes[at..end], inner, depth + 1, tally)?;
                    }
                }
                at = end;
            }
            _ => return Err(OverBudget::Malformed("a group or an unknown wire type")),
        }
    }
    Ok(())
}

/// Checks a JSON body against the budget: every value counted, nothing kept.
pub fn check_json(body: &[u8]) -> Result<(), OverBudget> {
    use serde::de::DeserializeSeed;
    let mut over = None;
    let mut tally = JsonTally { values: 0, over: &mut over };
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    // Not JSON is left to the decoder to name; only what the walk counted is over.
    let _ = Count { tally: &mut tally, depth: 0 }.deserialize(&mut deserializer);
    over.map_or(Ok(()), Err)
}

/// Values counted so far, and the bound a walk ran into.
struct JsonTally<'o> {
    values: usize,
    over: &'o mut Option<OverBudget>,
}

/// A JSON value counted (and its members), never built.
struct Count<'t, 'o> {
    tally: &'t mut JsonTally<'o>,
    depth: usize,
}

impl<'o> Count<'_, 'o> {
    /// Stops the walk at a bound, noting which.
    fn over<E: serde::de::Error>(&mut self, bound: OverBudget) -> E {
        let message = bound.to_string();
        *self.tally.over = Some(bound);
        E::custom(message)
    }

    fn one<E: serde::de::Error>(&mut self) -> Result<(), E> {
        self.tally.values += 1;
        if self.tally.values > MAX_JSON_VALUES { Err(self.over(OverBudget::Values)) } else { Ok(()) }
    }

    fn inner<E: serde::de::Error>(&mut self) -> Result<Count<'_, 'o>, E> {
        if self.depth >= MAX_DEPTH {
            return Err(self.over(OverBudget::Depth));
        }
        Ok(Count { tally: self.tally, depth: self.depth + 1 })
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Count<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Count<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(mut self, _: bool) -> Result<(), E> {
        self.one()
    }
    fn visit_i64<E: serde::de::Error>(mut self, _: i64) -> Result<(), E> {
        self.one()
    }
    fn visit_u64<E: serde::de::Error>(mut self, _: u64) -> Result<(), E> {
        self.one()
    }
    fn visit_f64<E: serde::de::Error>(mut self, _: f64) -> Result<(), E> {
        self.one()
    }
    fn visit_str<E: serde::de::Error>(mut self, _: &str) -> Result<(), E> {
        self.one()
    }
    fn visit_unit<E: serde::de::Error>(mut self) -> Result<(), E> {
        self.one()
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.one()?;
        while seq.next_element_seed(self.inner()?)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        self.one()?;
        while map.next_key::<serde::de::IgnoredAny>()?.is_some() {
            map.next_value_seed(self.inner()?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `field` as a length-delimited protobuf field holding `inner`.
    fn message(field: u64, inner: &[u8]) -> Vec<u8> {
        let mut out = vec![((field << 3) | 2) as u8];
        let mut length = inner.len() as u64;
        loop {
            let byte = (length & 0x7f) as u8;
            length >>= 7;
            if length == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(inner);
        out
    }

    /// A request of one resource and one scope holding `records` empty records.
    fn empty_records(records: usize) -> Vec<u8> {
        let scope = [0x12, 0x00].repeat(records);
        message(1, &message(2, &scope))
    }

    #[test]
    fn a_flood_of_empty_records_is_refused_before_decoding() {
        assert_eq!(check_protobuf(&empty_records(MAX_LOG_RECORDS)), Ok(()));
        assert_eq!(check_protobuf(&empty_records(MAX_LOG_RECORDS + 1)), Err(OverBudget::Records));
        // The issue's body: 8 MiB of `0x12 0x00` in one ResourceLogs/ScopeLogs.
        assert_eq!(check_protobuf(&empty_records(4 * 1024 * 1024 - 8)), Err(OverBudget::Records));
    }

    #[test]
    fn attributes_count_as_messages_and_nesting_is_bounded() {
        // One record with MAX_MESSAGES empty attributes: over, with the
        // resource, scope and record.
        let record = [0x32, 0x00].repeat(MAX_MESSAGES);
        assert_eq!(check_protobuf(&message(1, &message(2, &message(2, &record)))), Err(OverBudget::Messages));
        // AnyValue → ArrayValue → AnyValue … deeper than the bound.
        let mut value = Vec::new();
        for _ in 0..MAX_DEPTH {
            value = message(5, &message(1, &value));
        }
        let record = message(5, &value);
        assert_eq!(check_protobuf(&message(1, &message(2, &message(2, &record)))), Err(OverBudget::Depth));
    }

    #[test]
    fn malformed_wire_data_is_named_not_a_panic() {
        for body in [&[0x0a, 0x05, 0x01][..], &[0xff; 12], &[0x0b], &[0x09, 0x01]] {
            assert!(matches!(check_protobuf(body), Err(OverBudget::Malformed(_))), "{body:?}");
        }
        assert_eq!(check_protobuf(&[]), Ok(()));
    }

    #[test]
    fn json_values_are_counted_without_building_them() {
        let records = |n: usize| {
            let records = vec!["{}"; n].join(",");
            format!(r#"{{"resourceLogs":[{{"scopeLogs":[{{"logRecords":[{records}]}}]}}]}}"#)
        };
        assert_eq!(check_json(records(1000).as_bytes()), Ok(()));
        assert_eq!(check_json(records(MAX_JSON_VALUES).as_bytes()), Err(OverBudget::Values));
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 2), "]".repeat(MAX_DEPTH + 2));
        assert_eq!(check_json(deep.as_bytes()), Err(OverBudget::Depth));
        assert_eq!(check_json(b"not json"), Ok(()), "left to the decoder to name");
    }
}
