//! Parsing an agent's JSON record keeping only what its reader reads: the
//! object keys a reader names ([`Keep`]) are built into a
//! [`serde_json::Value`], everything else is passed over while parsing and
//! never built. What is built is also charged against a budget, so a
//! record of millions of tiny items is refused (and named) instead of
//! growing a tree dozens of times its size: the tree held while a record
//! is read is at most [`budget`] of its input — the input's own size and
//! a mebibyte, at most [`MOST_KEPT_BYTES`] — so a line or document costs
//! at most about twice its bytes to read.

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;

/// Most bytes a kept tree may take, whatever the input's size.
pub(crate) const MOST_KEPT_BYTES: usize = 16 << 20;
/// Least budget: a small record is never refused for its shape.
const LEAST_KEPT_BYTES: usize = 1 << 20;

/// What one kept value is charged: a `Value` and its share of the vector
/// or map holding it (which may have doubled on its last growth).
const NODE_BYTES: usize = 2 * std::mem::size_of::<Value>();
/// What one kept object entry is charged beside its key's text and its value.
const ENTRY_BYTES: usize = 64;

/// The budget for a record of `input` bytes.
pub(crate) fn budget(input: usize) -> usize {
    // A record that is one long string kept costs its length and a little.
    input.saturating_add(LEAST_KEPT_BYTES).min(MOST_KEPT_BYTES)
}

/// Which parts of a record a reader reads, written as paths of object keys
/// from the record's root (`"messages/tokens"`): a path's last key is kept
/// whole, with all it holds. Arrays are passed through: a path applies to
/// every element of an array met on its way (`"messages/id"` reads the
/// `id` of each message of a `messages` array).
#[derive(Debug, Default)]
pub(crate) struct Keep {
    keys: HashMap<&'static str, Keep>,
    /// The value is kept whole.
    whole: bool,
}

impl Keep {
    /// The keys of `paths`.
    pub(crate) fn paths(paths: &[&'static str]) -> Keep {
        let mut root = Keep::default();
        for path in paths {
            let mut node = &mut root;
            for key in path.split('/') {
                node = node.keys.entry(key).or_default();
            }
            node.whole = true;
        }
        root
    }

    /// The whole record: every key (still within the budget).
    pub(crate) fn everything() -> Keep {
        Keep { keys: HashMap::new(), whole: true }
    }
}

/// Declares `static`s of [`Keep`]s, built once.
macro_rules! keep {
    ($($(#[$doc:meta])* $name:ident = [$($path:expr),* $(,)?];)*) => {
        $($(#[$doc])* static $name: std::sync::LazyLock<$crate::ledger::agents::sparse::Keep> =
            std::sync::LazyLock::new(|| $crate::ledger::agents::sparse::Keep::paths(&[$($path),*]));)*
    };
}
pub(crate) use keep;

/// Why a record was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not JSON (or not whole).
    Malformed,
    /// What it holds of the kept keys is more than the budget.
    TooComplex,
}

/// The parts `keep` names of the JSON record `input`.
pub(crate) fn parse(input: &[u8], keep: &Keep) -> Result<Value, Refused> {
    let left = Cell::new(budget(input.len()));
    let over = Cell::new(false);
    let mut reader = serde_json::Deserializer::from_slice(input);
    let seed = Kept { keep, left: &left, over: &over };
    let parsed = seed.deserialize(&mut reader).and_then(|value| reader.end().map(|()| value));
    match parsed {
        Ok(value) => Ok(value),
        Err(_) if over.get() => Err(Refused::TooComplex),
        Err(_) => Err(Refused::Malformed),
    }
}

/// [`parse`] of text.
pub(crate) fn parse_str(input: &str, keep: &Keep) -> Result<Value, Refused> {
    parse(input.as_bytes(), keep)
}

/// Builds the kept parts of one value.
struct Kept<'k> {
    keep: &'k Keep,
    left: &'k Cell<usize>,
    over: &'k Cell<bool>,
}

impl<'k> Kept<'k> {
    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.over.set(true);
                Err(E::custom("the record holds more than its budget"))
            }
        }
    }

    fn at(&self, keep: &'k Keep) -> Kept<'k> {
        Kept { keep, left: self.left, over: self.over }
    }
}

impl<'de> DeserializeSeed<'de> for Kept<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Kept<'_> {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
        self.charge(NODE_BYTES)?;
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
        self.charge(NODE_BYTES)?;
        Ok(Value::from(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
        self.charge(NODE_BYTES)?;
        Ok(Value::from(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
        self.charge(NODE_BYTES)?;
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        self.charge(NODE_BYTES + value.len())?;
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        self.charge(NODE_BYTES + value.len())?;
        Ok(Value::String(value))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.charge(NODE_BYTES)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        self.charge(NODE_BYTES)?;
        let mut kept = Vec::new();
        // Arrays are passed through: each item is read as the array was.
        while let Some(item) = items.next_element_seed(self.at(self.keep))? {
            kept.push(item);
        }
        Ok(Value::Array(kept))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        self.charge(NODE_BYTES)?;
        let mut kept = Map::new();
        while let Some(key) = entries.next_key_seed(KeyText)? {
            let keep = match self.keep.keys.get(key.as_ref()) {
                Some(keep) => keep,
                None if self.keep.whole => &*WHOLE,
                None => {
                    entries.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            self.charge(ENTRY_BYTES + key.len())?;
            let value = entries.next_value_seed(self.at(keep))?;
            kept.insert(key.into_owned(), value);
        }
        Ok(Value::Object(kept))
    }
}

/// An object key, borrowed from the input where it has no escapes: a
/// key passed over is never copied.
struct KeyText;

impl<'de> DeserializeSeed<'de> for KeyText {
    type Value = std::borrow::Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyText {
    type Value = std::borrow::Cow<'de, str>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Borrowed(key))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(std::borrow::Cow::Owned(key.to_owned()))
    }
}

/// Everything below a key kept whole.
static WHOLE: std::sync::LazyLock<Keep> = std::sync::LazyLock::new(Keep::everything);

/// Whether the readers' parse of `input` for the parts `paths` name
/// agrees with serde_json's whole parse of it cut down to those parts (for
/// fuzzing): both read it, and to the same value; or serde_json refuses
/// it (the parse for parts does not check what it passes over as closely);
/// or it is refused as too complex, only ever when what it keeps passes
/// its bound (never for an input of at most 16 KiB).
pub fn agrees_with_serde(input: &[u8], paths: &[&'static str]) -> bool {
    let split: Vec<Vec<&str>> = paths.iter().map(|path| path.split('/').collect()).collect();
    let wanted: Vec<&[&str]> = split.iter().map(Vec::as_slice).collect();
    match (parse(input, &Keep::paths(paths)), serde_json::from_slice::<Value>(input)) {
        (Ok(kept), Ok(whole)) => kept == cut_down(&whole, &wanted),
        (Err(Refused::Malformed), Ok(_)) => false,
        (Err(Refused::TooComplex), Ok(_)) => input.len() > 16 << 10,
        (_, Err(_)) => true,
    }
}

/// `value` with only the parts `paths` (split into keys) name, as the
/// readers' parse keeps them: an object keeps the keys a path names next
/// (all of them when a path ends at it), an array each of its items as
/// itself, a scalar itself.
fn cut_down(value: &Value, paths: &[&[&str]]) -> Value {
    if paths.iter().any(|path| path.is_empty()) {
        return value.clone();
    }
    match value {
        Value::Object(entries) => Value::Object(
            entries
                .iter()
                .filter_map(|(key, value)| {
                    let below: Vec<&[&str]> =
                        paths.iter().filter(|path| path[0] == key.as_str()).map(|path| &path[1..]).collect();
                    (!below.is_empty()).then(|| (key.clone(), cut_down(value, &below)))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|item| cut_down(item, paths)).collect()),
        scalar => scalar.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_named_keys_are_kept_through_arrays() {
        let keep = Keep::paths(&["type", "messages/id", "messages/tokens"]);
        let record = json!({"type": "chat", "secret": {"a": [1, 2, 3]}, "messages": [
            {"id": "m1", "content": "long text", "tokens": {"input": 3, "output": 4}},
            {"id": "m2", "tokens": null, "other": [1]},
        ]});
        let kept = parse(record.to_string().as_bytes(), &keep).unwrap();
        assert_eq!(
            kept,
            json!({"type": "chat", "messages": [
                {"id": "m1", "tokens": {"input": 3, "output": 4}}, {"id": "m2", "tokens": null}]})
        );
        // A kept key whose value is not an object is kept as it is.
        let odd = parse(br#"{"messages": "text", "type": 7}"#, &keep).unwrap();
        assert_eq!(odd, json!({"messages": "text", "type": 7}));
        assert_eq!(parse(br#"{"a":1,"a":2}"#, &Keep::everything()).unwrap(), json!({"a": 2}));
    }

    #[test]
    fn malformed_and_trailing_bytes_are_refused() {
        let keep = Keep::paths(&["a"]);
        for input in [&b"{\"a\":"[..], b"{\"a\":1}x", b"", b"\xff\xfe", b"{\"a\":\"\xff\"}", b"[1,2"] {
            assert_eq!(parse(input, &keep), Err(Refused::Malformed), "{input:?}");
        }
        // Deep nesting ends in an error, not a stack overflow.
        let deep = "[".repeat(100_000);
        assert_eq!(parse(deep.as_bytes(), &keep), Err(Refused::Malformed));
        // Whitespace around a record is not trailing input.
        assert_eq!(parse(b" {\"a\":1}\n", &keep).unwrap(), json!({"a": 1}));
    }

    /// Millions of tiny items in a key not read cost nothing; in a key
    /// read, the record is refused once the tree would pass its budget.
    #[test]
    fn tiny_items_are_passed_over_or_refused_within_the_budget() {
        let items = vec!["1"; 3 << 20].join(",");
        let ignored = format!(r#"{{"junk":[{items}],"type":"x"}}"#);
        assert_eq!(parse(ignored.as_bytes(), &Keep::paths(&["type"])).unwrap(), json!({"type": "x"}));
        let kept = format!(r#"{{"type":[{items}]}}"#);
        assert_eq!(parse(kept.as_bytes(), &Keep::paths(&["type"])), Err(Refused::TooComplex));
        let objects = vec!["{}"; 2 << 20].join(",");
        let messages = format!(r#"{{"messages":[{objects}]}}"#);
        assert_eq!(parse(messages.as_bytes(), &Keep::paths(&["messages/id"])), Err(Refused::TooComplex));
        // A long string is its own length: within the budget.
        let text = format!(r#"{{"type":"{}"}}"#, "x".repeat(8 << 20));
        assert!(parse(text.as_bytes(), &Keep::paths(&["type"])).is_ok());
    }

    #[test]
    fn the_budget_is_the_input_within_its_bounds() {
        assert_eq!(budget(10), LEAST_KEPT_BYTES + 10);
        assert_eq!(budget(5 << 20), (5 << 20) + LEAST_KEPT_BYTES);
        assert_eq!(budget(1 << 30), MOST_KEPT_BYTES);
    }

    /// The readers' parse for parts agrees with serde_json's whole parse
    /// cut down, over every fixture line and a few odd shapes.
    #[test]
    fn the_parse_for_parts_agrees_with_serde_json() {
        let paths = &["type", "message/usage", "message/id", "a/b/c", "$set/messages/tokens"];
        let fixtures: [&[u8]; 3] = [
            include_bytes!("testdata/gemini-0.61.0-tool-and-resume.jsonl"),
            include_bytes!("testdata/pi-0.73.1-tool-and-continue.jsonl"),
            include_bytes!("testdata/copilot-otel.jsonl"),
        ];
        let odd: [&[u8]; 8] = [
            br#"{"a":[{"b":{"c":1,"d":2}},3,[{"b":[{"c":[4]}]}]],"type":{"x":1}}"#,
            br#"{"a":1,"a":{"b":2}}"#,
            br#"[{"type":"t","other":1},[{"message":{"id":"m","content":"x"}}]]"#,
            br#"{"message":null,"$set":{"messages":[{"tokens":{"input":1},"id":2}]}}"#,
            br#"{"skipped":"\ud800","type":"t"}"#,
            b"{\"skipped\":\"\xff\",\"type\":\"t\"}",
            br#"{"type":"t"} x"#,
            b"",
        ];
        for input in fixtures.iter().flat_map(|log| log.split(|&b| b == b'\n')).chain(odd) {
            assert!(agrees_with_serde(input, paths), "{}", String::from_utf8_lossy(input));
        }
        let cut = cut_down(&serde_json::json!({"a": {"b": 1, "c": 2}, "d": 3}), &[&["a", "b"]]);
        assert_eq!(cut, serde_json::json!({"a": {"b": 1}}));
    }
}
