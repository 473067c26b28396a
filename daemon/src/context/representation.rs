//! `bee-json-v1` (spec/50 "Representation"): JSON values in fewer tokens
//! than compact JSON, and back, exactly.
//!
//! A packet is text. Its first line is `bee-json-v1` (one value) or
//! `bee-json-v1 values` (a sequence, as JSON lines carry). Then:
//!
//! - an object is one `key value` line per field; a nested object is
//!   `key:` with its fields one space further in; `{}` and `[]` are the
//!   empty containers;
//! - an array is a header `key[N]` (or `[N]` where no key names it) and
//!   one of three bodies: `[N]:a,b,c` for scalars; a table `[N]{a,b.c}:`
//!   followed by N rows at the line start when the elements are objects
//!   (the keys are written once for the whole array: a column is a key
//!   path, so nested objects flatten; an empty cell is a key the row does
//!   not have; a non-empty array in a cell is compact JSON; a column of
//!   integers or `YYYY-MM-DD` dates stepping evenly is `t=START+STEP` or
//!   `day=2026-05-01+1d` in the header and no cells); otherwise `[N]:`
//!   and N items `- value` at the owner's
//!   column, an object item's first field on the dash line and the rest
//!   one space in;
//! - an object whose values are objects of one shape is a keyed table,
//!   `key{N}{a,b}:`, each row's first cell its key;
//! - a container whose lines would stand two or more spaces in (o200k
//!   spends a token on such indentation) is compact JSON on its line;
//! - the header names the cell delimiter when it is not a comma: `[N|]`,
//!   `[N\t]`;
//! - a string is written bare unless it could be read as something else
//!   (a number, `true`, `{}`, a key, a delimiter, surrounding white space,
//!   a control character, nothing at all): then it is JSON-quoted;
//! - every number is written exactly as the input spelled it (`1.0`,
//!   `1e3`, integers of any size); white space and key order are not kept.
//!
//! Decoding checks every count and row width, refuses duplicate keys and
//! nesting deeper than [`MAX_DEPTH`], and stops as soon as its output would
//! pass the caller's limit: expansion is bounded.

use bee_proto::mcp::coded as error;
use std::collections::HashSet;
use std::fmt::Write as _;

/// A packet's first line.
pub const MAGIC: &str = "bee-json-v1";
/// The first line's suffix of a packet that carries a sequence.
const SEQUENCE: &str = " values";
/// How deeply values may nest (serde_json's own default limit).
pub const MAX_DEPTH: usize = 128;
/// The deepest column a line of the block form stands at.
const BLOCK_COLUMNS: usize = 1;
/// Columns a table may have before the list form is used instead.
const MAX_COLUMNS: usize = 64;

/// A JSON value whose numbers keep their spelling and whose objects keep
/// the order they were read in (compared as maps by [`same`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// Why a text or a packet could not be read, or a result would not fit:
/// `invalid_json`, `invalid_packet`, `too_deep` or `budget_exceeded`.
pub type ReprError = bee_proto::mcp::CodedError;

// ---------------------------------------------------------------- JSON in

/// Every JSON value in `text`: one, or several separated by white space
/// (JSON lines). Numbers keep their spelling; duplicate keys, lone
/// surrogates and nesting deeper than [`MAX_DEPTH`] are refused.
pub fn parse_json_values(text: &str) -> Result<Vec<Json>, ReprError> {
    let mut reader = JsonReader { text, pos: 0 };
    let mut values = Vec::new();
    loop {
        reader.skip_space();
        if reader.pos == text.len() {
            break;
        }
        values.push(reader.value(0)?);
        // JSON lines: values apart, so `01` is no sequence of 0 and 1.
        if !matches!(reader.peek(), None | Some(b' ' | b'\t' | b'\n' | b'\r')) {
            return Err(reader.fail("expected white space between values"));
        }
    }
    if values.is_empty() {
        return Err(error("invalid_json", "no JSON value"));
    }
    Ok(values)
}

struct JsonReader<'a> {
    text: &'a str,
    pos: usize,
}

impl JsonReader<'_> {
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn fail(&self, what: &str) -> ReprError {
        error("invalid_json", format!("{what} at byte {}", self.pos))
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), ReprError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.fail(&format!("expected {:?}", byte as char)))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, ReprError> {
        if depth > MAX_DEPTH {
            return Err(error("too_deep", format!("values nest deeper than {MAX_DEPTH}")));
        }
        self.skip_space();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => {
                let (text, used) = read_json_string(&self.text[self.pos..]).map_err(|what| self.fail(what))?;
                self.pos += used;
                Ok(Json::String(text))
            }
            Some(b'-' | b'0'..=b'9') => {
                let used = number_prefix(&self.bytes()[self.pos..]).ok_or_else(|| self.fail("a malformed number"))?;
                let spelled = self.text[self.pos..self.pos + used].to_owned();
                self.pos += used;
                Ok(Json::Number(spelled))
            }
            _ => {
                for (word, value) in [("true", Json::Bool(true)), ("false", Json::Bool(false)), ("null", Json::Null)] {
                    if self.text[self.pos..].starts_with(word) {
                        self.pos += word.len();
                        return Ok(value);
                    }
                }
                Err(self.fail("expected a value"))
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, ReprError> {
        self.expect(b'{')?;
        let mut fields = Vec::new();
        let mut seen = HashSet::new();
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(fields));
        }
        loop {
            self.skip_space();
            if self.peek() != Some(b'"') {
                return Err(self.fail("expected a key"));
            }
            let (key, used) = read_json_string(&self.text[self.pos..]).map_err(|what| self.fail(what))?;
            if !seen.insert(key.clone()) {
                return Err(self.fail(&format!("duplicate key {key:?}")));
            }
            self.pos += used;
            self.skip_space();
            self.expect(b':')?;
            let value = self.value(depth + 1)?;
            fields.push((key, value));
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(fields));
                }
                _ => return Err(self.fail("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, ReprError> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_space();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_space();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.fail("expected ',' or ']'")),
            }
        }
    }
}

/// The length of the JSON number at the start of `bytes`, if one is there.
fn number_prefix(bytes: &[u8]) -> Option<usize> {
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut pos = usize::from(bytes.first() == Some(&b'-'));
    match bytes.get(pos) {
        Some(b'0') => pos += 1,
        Some(b'1'..=b'9') => pos += digits(pos),
        _ => return None,
    }
    if bytes.get(pos) == Some(&b'.') {
        let fraction = digits(pos + 1);
        if fraction == 0 {
            return None;
        }
        pos += 1 + fraction;
    }
    if matches!(bytes.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(bytes.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let exponent = digits(pos);
        if exponent == 0 {
            return None;
        }
        pos += exponent;
    }
    Some(pos)
}

/// Whether all of `text` is one JSON number.
fn is_number(text: &str) -> bool {
    number_prefix(text.as_bytes()) == Some(text.len())
}

/// The JSON string at the start of `text` (which begins with `"`): its
/// value and how many bytes it took.
fn read_json_string(text: &str) -> Result<(String, usize), &'static str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut pos = 1;
    let mut run = pos;
    loop {
        match bytes.get(pos) {
            None => return Err("an unterminated string"),
            Some(b'"') => {
                out.push_str(&text[run..pos]);
                return Ok((out, pos + 1));
            }
            Some(b'\\') => {
                out.push_str(&text[run..pos]);
                let escape = bytes.get(pos + 1).ok_or("an unterminated escape")?;
                pos += 2;
                match escape {
                    b'"' => out.push('"'),
                    b'\\' => out.push('\\'),
                    b'/' => out.push('/'),
                    b'b' => out.push('\u{8}'),
                    b'f' => out.push('\u{c}'),
                    b'n' => out.push('\n'),
                    b'r' => out.push('\r'),
                    b't' => out.push('\t'),
                    b'u' => {
                        let high = hex4(bytes, pos)?;
                        pos += 4;
                        let code = if (0xD800..0xDC00).contains(&high) {
                            if bytes.get(pos) != Some(&b'\\') || bytes.get(pos + 1) != Some(&b'u') {
                                return Err("a lone surrogate");
                            }
                            let low = hex4(bytes, pos + 2)?;
                            if !(0xDC00..0xE000).contains(&low) {
                                return Err("a lone surrogate");
                            }
                            pos += 6;
                            0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..0xE000).contains(&high) {
                            return Err("a lone surrogate");
                        } else {
                            high
                        };
                        out.push(char::from_u32(code).ok_or("an invalid escape")?);
                    }
                    _ => return Err("an invalid escape"),
                }
                run = pos;
            }
            Some(byte) if *byte < 0x20 => return Err("a control character in a string"),
            Some(_) => pos += 1,
        }
    }
}

fn hex4(bytes: &[u8], at: usize) -> Result<u32, &'static str> {
    let digits = bytes.get(at..at + 4).ok_or("a short \\u escape")?;
    let text = std::str::from_utf8(digits).map_err(|_| "an invalid \\u escape")?;
    u32::from_str_radix(text, 16).map_err(|_| "an invalid \\u escape")
}

// --------------------------------------------------------------- JSON out

/// `value` as compact JSON, each number as it was spelled.
pub fn to_json(value: &Json) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

fn write_json(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(spelled) => out.push_str(spelled),
        Json::String(text) => write_json_string(text, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Json::Object(fields) => {
            out.push('{');
            for (i, (key, item)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
    }
}

fn write_json_string(text: &str, out: &mut String) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `a` and `b` are the same JSON value: objects as maps (key order
/// is not part of a value), numbers by their spelling.
pub fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Array(x), Json::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(key, p)| y.iter().any(|(other, q)| other == key && same(p, q)))
        }
        _ => a == b,
    }
}

// ----------------------------------------------------------------- encode

/// Where a bare string would stand, which decides what it must not look
/// like.
#[derive(Clone, Copy)]
enum Place {
    /// After `key `, the rest of the line.
    Value,
    /// After `- `, or a packet's only line: it must not read as a key.
    Item,
    /// A cell of an inline array or a table row.
    Cell(char),
}

/// The packet carrying `values`: one value, or a sequence when `sequence`.
pub fn encode(values: &[Json], sequence: bool) -> Result<String, ReprError> {
    let mut out = String::from(MAGIC);
    if sequence {
        out.push_str(SEQUENCE);
        out.push('\n');
        write_array(values, 0, &mut out);
    } else {
        let [value] = values else {
            return Err(error("invalid_json", "one value, or a sequence"));
        };
        out.push('\n');
        match value {
            Json::Object(fields) if !fields.is_empty() => write_fields(fields, 0, &mut out),
            Json::Array(items) if !items.is_empty() => write_array(items, 0, &mut out),
            scalar => write_scalar(scalar, Place::Item, &mut out),
        }
    }
    if out.ends_with('\n') {
        out.pop();
    }
    Ok(out)
}

/// Whether lines at `column` cost no token for their indentation: o200k
/// reads one space and the word after it as one token, two spaces as one
/// more. Deeper containers are written as compact JSON on their line.
fn block_at(column: usize) -> bool {
    column <= BLOCK_COLUMNS
}

/// The fields of an object at `column`, each on its own line(s).
fn write_fields(fields: &[(String, Json)], column: usize, out: &mut String) {
    for (key, value) in fields {
        out.extend(std::iter::repeat_n(' ', column));
        write_field(key, value, column, out);
    }
}

/// One field from its key on (its indentation already written).
fn write_field(key: &str, value: &Json, column: usize, out: &mut String) {
    write_key(key, out);
    if let Json::Object(fields) = value
        && fields.len() >= 2
        && fields.iter().all(|(_, v)| matches!(v, Json::Object(inner) if !inner.is_empty()))
        && let Some(table) = Table::keyed(fields)
    {
        table.write(out);
        return;
    }
    match value {
        Json::Object(fields) if !fields.is_empty() && block_at(column + 1) => {
            out.push_str(":\n");
            write_fields(fields, column + 1, out);
        }
        Json::Array(items) if !items.is_empty() && (block_at(column + 1) || !needs_items(items)) => {
            write_array(items, column, out);
        }
        Json::Object(_) | Json::Array(_) if !is_scalar(value) => {
            out.push(' ');
            write_json(value, out);
            out.push('\n');
        }
        scalar => {
            out.push(' ');
            write_scalar(scalar, Place::Value, out);
            out.push('\n');
        }
    }
}

/// Whether a non-empty array can only be written as list items (its
/// elements are neither all scalars nor a table).
fn needs_items(items: &[Json]) -> bool {
    !items.iter().all(is_scalar) && Table::of(items).is_none()
}

/// A non-empty array's header (after its key, if any) and body, owned by a
/// line at `column`: its list items stand at that column too, an object
/// item's further fields one in.
fn write_array(items: &[Json], column: usize, out: &mut String) {
    if items.iter().all(is_scalar) {
        let delimiter = delimiter_for(items.iter());
        write_count(items.len(), delimiter, out);
        out.push(':');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                out.push(delimiter);
            }
            write_scalar(item, Place::Cell(delimiter), out);
        }
        out.push('\n');
        return;
    }
    if let Some(table) = Table::of(items) {
        table.write(out);
        return;
    }
    write_count(items.len(), ',', out);
    out.push_str(":\n");
    for item in items {
        out.extend(std::iter::repeat_n(' ', column));
        out.push_str("- ");
        write_item(item, column, out);
    }
}

/// A list item after its `- ` (the dash at `column`).
fn write_item(item: &Json, column: usize, out: &mut String) {
    match item {
        Json::Object(fields) if !fields.is_empty() => {
            let ((key, value), rest) = (&fields[0], &fields[1..]);
            write_field(key, value, column + 1, out);
            write_fields(rest, column + 1, out);
        }
        Json::Array(items) if !items.is_empty() && (block_at(column + 2) || !needs_items(items)) => {
            write_array(items, column + 1, out);
        }
        Json::Array(_) if !is_scalar(item) => {
            write_json(item, out);
            out.push('\n');
        }
        scalar => {
            write_scalar(scalar, Place::Item, out);
            out.push('\n');
        }
    }
}

fn write_count(count: usize, delimiter: char, out: &mut String) {
    let _ = write!(out, "[{count}");
    if delimiter != ',' {
        out.push(delimiter);
    }
    out.push(']');
}

fn is_scalar(value: &Json) -> bool {
    match value {
        Json::Array(items) => items.is_empty(),
        Json::Object(fields) => fields.is_empty(),
        _ => true,
    }
}

/// The delimiter that forces the fewest cells into quotes: a comma unless
/// a pipe or a tab does better.
fn delimiter_for<'a>(cells: impl Iterator<Item = &'a Json> + Clone) -> char {
    let quoted = |d: char| cells.clone().filter(|c| matches!(c, Json::String(s) if s.contains(d))).count();
    let comma = quoted(',');
    if comma == 0 {
        return ',';
    }
    let (pipe, tab) = (quoted('|'), quoted('\t'));
    if pipe < comma && pipe <= tab {
        '|'
    } else if tab < comma {
        '\t'
    } else {
        ','
    }
}

/// A scalar (or an empty container) as it stands at `place`.
fn write_scalar(value: &Json, place: Place, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(spelled) => out.push_str(spelled),
        Json::Array(_) => out.push_str("[]"),
        Json::Object(_) => out.push_str("{}"),
        Json::String(text) if needs_quotes(text, place) => write_json_string(text, out),
        Json::String(text) => out.push_str(text),
    }
}

/// Whether a bare `text` at `place` could be read back as anything but
/// itself.
fn needs_quotes(text: &str, place: Place) -> bool {
    let (Some(first), Some(last)) = (text.chars().next(), text.chars().last()) else {
        return true;
    };
    if first.is_whitespace() || last.is_whitespace() || first == '"' {
        return true;
    }
    if matches!(text, "null" | "true" | "false" | "{}" | "[]") || is_number(text) {
        return true;
    }
    if text.chars().any(|c| c.is_control()) {
        return true;
    }
    match place {
        Place::Value => first == '{' || first == '[',
        Place::Item => text.contains([' ', ':', '[', '{']),
        Place::Cell(delimiter) => first == '{' || first == '[' || text.contains(delimiter),
    }
}

/// Whether `key` can be written bare before `:` or `[`.
fn bare_key(key: &str) -> bool {
    let Some(first) = key.chars().next() else {
        return false;
    };
    first != '-'
        && !key
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, ':' | '[' | ']' | '{' | '}' | ',' | '|' | '"'))
}

/// Whether `key` can be written bare as (part of) a table's column.
fn bare_segment(key: &str) -> bool {
    bare_key(key) && !key.contains(['.', '='])
}

/// A column that steps evenly from row to row, written as its start and
/// step in the header instead of a cell per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sequence {
    /// Integers spelled plainly: `t=1764547200+60`.
    Integers { start: i64, step: i64 },
    /// Calendar dates as `YYYY-MM-DD` strings: `date=2026-05-01+1d`.
    Days { start: i64, step: i64 },
}

/// Day numbers of `YYYY-MM-DD` dates, counted from 1970-01-01.
fn day_number(text: &str) -> Option<i64> {
    let date: jiff::civil::Date = text.parse().ok()?;
    if date.to_string() != text {
        return None;
    }
    Some(i64::from(date.since(jiff::civil::date(1970, 1, 1)).ok()?.get_days()))
}

fn date_of(day: i64) -> Option<String> {
    let span = jiff::Span::new().try_days(day).ok()?;
    Some(jiff::civil::date(1970, 1, 1).checked_add(span).ok()?.to_string())
}

impl Sequence {
    /// The value of row `index`.
    fn nth(self, index: usize) -> Option<Json> {
        let (start, step) = match self {
            Sequence::Integers { start, step } | Sequence::Days { start, step } => (start, step),
        };
        let n = i64::try_from(index).ok()?.checked_mul(step)?.checked_add(start)?;
        match self {
            Sequence::Integers { .. } => Some(Json::Number(n.to_string())),
            Sequence::Days { .. } => date_of(n).map(Json::String),
        }
    }

    fn write(self, out: &mut String) {
        let (step, unit) = match self {
            Sequence::Integers { start, step } => {
                let _ = write!(out, "={start}");
                (step, "")
            }
            Sequence::Days { start, step } => {
                let _ = write!(out, "={}", date_of(start).unwrap_or_default());
                (step, "d")
            }
        };
        let _ = write!(out, "{}{}{unit}", if step < 0 { '-' } else { '+' }, step.unsigned_abs());
    }

    /// `START+STEP`, `START-STEP` (integers) or `YYYY-MM-DD+Nd`.
    fn parse(spec: &str) -> Option<Sequence> {
        let (days, spec) = match spec.strip_suffix('d') {
            Some(rest) => (true, rest),
            None => (false, spec),
        };
        let from = if days { 10 } else { 1 };
        let sign_at = spec.char_indices().skip(from).find(|(_, c)| *c == '+' || *c == '-')?.0;
        let magnitude: i64 = spec[sign_at + 1..].parse().ok().filter(|m: &i64| *m >= 0)?;
        let step = if spec[sign_at..].starts_with('-') { magnitude.checked_neg()? } else { magnitude };
        if days {
            Some(Sequence::Days { start: day_number(&spec[..sign_at])?, step })
        } else {
            Some(Sequence::Integers { start: spec[..sign_at].parse().ok()?, step })
        }
    }
}

/// The sequence a column of at least three cells is, if it is one: every
/// row has it, and each value is the previous one plus the same step.
fn sequence<'a>(cells: impl Iterator<Item = Option<&'a Json>> + Clone) -> Option<Sequence> {
    let steps = |numbers: Vec<i64>| -> Option<(i64, i64)> {
        let (start, second) = (*numbers.first()?, *numbers.get(1)?);
        let step = second.checked_sub(start)?;
        let even = numbers.windows(2).all(|pair| pair[1].checked_sub(pair[0]) == Some(step));
        (even && numbers.len() >= 3).then_some((start, step))
    };
    let integers: Option<Vec<i64>> = cells
        .clone()
        .map(|cell| match cell {
            Some(Json::Number(spelled)) => spelled.parse::<i64>().ok().filter(|n| n.to_string() == *spelled),
            _ => None,
        })
        .collect();
    if let Some((start, step)) = integers.and_then(steps) {
        return Some(Sequence::Integers { start, step });
    }
    let days: Option<Vec<i64>> = cells
        .map(|cell| match cell {
            Some(Json::String(text)) if text.len() == 10 => day_number(text),
            _ => None,
        })
        .collect();
    let (start, step) = steps(days?)?;
    Some(Sequence::Days { start, step })
}

fn write_key(key: &str, out: &mut String) {
    if bare_key(key) { out.push_str(key) } else { write_json_string(key, out) }
}

/// An array of objects written as a header of key paths and one row per
/// object.
struct Table<'a> {
    /// A keyed table's row keys: the object it writes maps each to a row.
    keys: Option<Vec<&'a str>>,
    columns: Vec<Vec<&'a str>>,
    /// A column whose integers step evenly from row to row (a time
    /// series' timestamps) is its start and step in the header, and no
    /// cell in the rows.
    sequences: Vec<Option<Sequence>>,
    rows: Vec<Vec<Option<&'a Json>>>,
    delimiter: char,
}

impl<'a> Table<'a> {
    /// The table form of `items` when every item is an object whose leaves
    /// are scalars, and the rows do not leave more cells empty than full.
    fn of(items: &'a [Json]) -> Option<Table<'a>> {
        Table::of_rows(items.iter(), None)
    }

    /// The keyed table of an object whose values are all tabular objects
    /// (a map of records, as `versions` of a package): the key is each
    /// row's first cell.
    fn keyed(fields: &'a [(String, Json)]) -> Option<Table<'a>> {
        let keys = fields.iter().map(|(key, _)| key.as_str()).collect();
        Table::of_rows(fields.iter().map(|(_, value)| value), Some(keys))
    }

    fn of_rows(items: impl ExactSizeIterator<Item = &'a Json>, keys: Option<Vec<&'a str>>) -> Option<Table<'a>> {
        // One row costs its header more than the keys it saves.
        if items.len() < 2 {
            return None;
        }
        let mut columns: Vec<Vec<&'a str>> = Vec::new();
        let mut index: std::collections::HashMap<Vec<&'a str>, usize> = std::collections::HashMap::new();
        let mut leaves_per_row = Vec::with_capacity(items.len());
        for item in items {
            let Json::Object(fields) = item else { return None };
            let mut leaves = Vec::new();
            let mut path = Vec::new();
            if !flatten(fields, &mut path, &mut leaves) {
                return None;
            }
            for (path, _) in &leaves {
                if !index.contains_key(path) {
                    index.insert(path.clone(), columns.len());
                    columns.push(path.clone());
                }
            }
            leaves_per_row.push(leaves);
        }
        let present: usize = leaves_per_row.iter().map(Vec::len).sum();
        let cells = columns.len() * leaves_per_row.len();
        // A map's records share their keys (else each is better as fields);
        // an array's may leave as many cells empty as full.
        let empty_allowed = if keys.is_some() { present / 4 } else { present };
        if columns.is_empty() || columns.len() > MAX_COLUMNS || cells - present > empty_allowed {
            return None;
        }
        let rows: Vec<Vec<Option<&Json>>> = leaves_per_row
            .into_iter()
            .map(|leaves| {
                let mut row = vec![None; columns.len()];
                for (path, value) in leaves {
                    row[index[&path]] = Some(value);
                }
                row
            })
            .collect();
        // A one-column table's row with no cell would be an empty line.
        if columns.len() == 1 && rows.iter().any(|row| row[0].is_none()) {
            return None;
        }
        let key_cells: Vec<Json> = keys.iter().flatten().map(|key| Json::String((*key).to_owned())).collect();
        let delimiter = delimiter_for(rows.iter().flatten().flatten().copied().chain(key_cells.iter()));
        let mut sequences: Vec<_> = (0..columns.len()).map(|c| sequence(rows.iter().map(|row| row[c]))).collect();
        // A row must keep a cell on its line: an empty line could be lost.
        let written: Vec<usize> = (0..columns.len()).filter(|&c| sequences[c].is_none()).collect();
        let lines_may_be_empty = keys.is_none()
            && (written.is_empty() || (written.len() == 1 && rows.iter().any(|row| row[written[0]].is_none())));
        if lines_may_be_empty {
            sequences.iter_mut().for_each(|sequence| *sequence = None);
        }
        Some(Table { keys, columns, sequences, rows, delimiter })
    }

    fn write(&self, out: &mut String) {
        if self.keys.is_some() {
            let _ = write!(out, "{{{}", self.rows.len());
            if self.delimiter != ',' {
                out.push(self.delimiter);
            }
            out.push('}');
        } else {
            write_count(self.rows.len(), self.delimiter, out);
        }
        out.push('{');
        for (i, path) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push(self.delimiter);
            }
            for (j, segment) in path.iter().enumerate() {
                if j > 0 {
                    out.push('.');
                }
                if bare_segment(segment) {
                    out.push_str(segment);
                } else {
                    write_json_string(segment, out);
                }
            }
            if let Some(sequence) = self.sequences[i] {
                sequence.write(out);
            }
        }
        out.push_str("}:\n");
        for (r, row) in self.rows.iter().enumerate() {
            if let Some(key) = self.keys.as_ref().and_then(|keys| keys.get(r)) {
                write_scalar(&Json::String((*key).to_owned()), Place::Cell(self.delimiter), out);
                out.push(self.delimiter);
            }
            let cells = row.iter().zip(&self.sequences).filter(|(_, sequence)| sequence.is_none());
            for (i, (cell, _)) in cells.enumerate() {
                if i > 0 {
                    out.push(self.delimiter);
                }
                if let Some(value) = cell {
                    if is_scalar(value) {
                        write_scalar(value, Place::Cell(self.delimiter), out);
                    } else {
                        write_json(value, out);
                    }
                }
            }
            out.push('\n');
        }
    }
}

/// Each leaf of `fields` with its key path (a non-empty array is a leaf,
/// written as compact JSON in its cell); false when the paths nest too
/// deeply.
fn flatten<'a>(
    fields: &'a [(String, Json)],
    path: &mut Vec<&'a str>,
    leaves: &mut Vec<(Vec<&'a str>, &'a Json)>,
) -> bool {
    if path.len() >= 8 {
        return false;
    }
    for (key, value) in fields {
        path.push(key);
        let ok = match value {
            Json::Object(inner) if !inner.is_empty() => flatten(inner, path, leaves),
            leaf => {
                leaves.push((path.clone(), leaf));
                true
            }
        };
        path.pop();
        if !ok {
            return false;
        }
    }
    true
}

// ----------------------------------------------------------------- decode

/// The values a packet carries, and whether it carries a sequence. Stops
/// with `budget_exceeded` as soon as their compact JSON would pass
/// `limit` bytes.
pub fn decode(packet: &str, limit: usize) -> Result<(Vec<Json>, bool), ReprError> {
    let packet = packet.strip_suffix('\n').unwrap_or(packet);
    let mut lines = packet.split('\n');
    let sequence = match lines.next() {
        Some(MAGIC) => false,
        Some(first) if first.strip_prefix(MAGIC) == Some(SEQUENCE) => true,
        _ => return Err(error("invalid_packet", format!("a packet begins with the line {MAGIC:?}"))),
    };
    let mut reader = PacketReader { lines: lines.collect(), pos: 0, produced: 0, limit };
    let values = if sequence {
        let line = reader.take()?;
        if !line.starts_with('[') {
            return Err(reader.fail("a sequence begins with [N]"));
        }
        match reader.array(line, 0, 0)? {
            Json::Array(items) => items,
            _ => return Err(reader.fail("a sequence is an array")),
        }
    } else {
        vec![reader.root()?]
    };
    if reader.pos != reader.lines.len() {
        return Err(reader.fail("more lines than the value has"));
    }
    Ok((values, sequence))
}

struct PacketReader<'a> {
    lines: Vec<&'a str>,
    pos: usize,
    produced: usize,
    limit: usize,
}

impl<'a> PacketReader<'a> {
    fn fail(&self, what: &str) -> ReprError {
        error("invalid_packet", format!("{what} (line {})", self.pos + 1))
    }

    /// Counts `bytes` of output against the limit.
    fn produce(&mut self, bytes: usize) -> Result<(), ReprError> {
        self.produced += bytes;
        if self.produced > self.limit {
            return Err(error(
                "budget_exceeded",
                format!("the decoded values pass the budget of {} bytes: raise budgetBytes", self.limit),
            ));
        }
        Ok(())
    }

    fn take(&mut self) -> Result<&'a str, ReprError> {
        let line = self.lines.get(self.pos).copied().ok_or_else(|| self.fail("the packet ends early"))?;
        self.pos += 1;
        Ok(line)
    }

    /// The next line's column and content, if it is at `column`.
    fn at(&self, column: usize) -> Option<&'a str> {
        let line = self.lines.get(self.pos)?;
        let content = line.trim_start_matches(' ');
        (line.len() - content.len() == column && !content.is_empty()).then_some(content)
    }

    fn root(&mut self) -> Result<Json, ReprError> {
        let line = self.take()?;
        if is_header(line) {
            return self.array(line, 0, 0);
        }
        match split_key(line).map_err(|what| self.fail(what))? {
            Some((key, rest)) => {
                let mut fields = Vec::new();
                let mut seen = HashSet::new();
                self.field(key, rest, 0, 0, &mut fields, &mut seen)?;
                self.fields(0, 0, &mut fields, &mut seen)?;
                Ok(Json::Object(fields))
            }
            None => self.value(line, 0),
        }
    }

    /// Fields at `column` until a line is not.
    fn fields(
        &mut self,
        column: usize,
        depth: usize,
        fields: &mut Vec<(String, Json)>,
        seen: &mut HashSet<String>,
    ) -> Result<(), ReprError> {
        while let Some(content) = self.at(column) {
            if content.starts_with("- ") {
                return Err(self.fail("a list item where a field was expected"));
            }
            self.pos += 1;
            let (key, rest) = split_key(content)
                .map_err(|what| self.fail(what))?
                .ok_or_else(|| self.fail("expected `key:` or `key[N]`"))?;
            self.field(key, rest, column, depth, fields, seen)?;
        }
        if let Some(line) = self.lines.get(self.pos)
            && line.len() - line.trim_start_matches(' ').len() > column
        {
            return Err(self.fail("unexpected indentation"));
        }
        Ok(())
    }

    /// One field whose key is read; `rest` begins with `:` or `[`.
    fn field(
        &mut self,
        key: String,
        rest: &'a str,
        column: usize,
        depth: usize,
        fields: &mut Vec<(String, Json)>,
        seen: &mut HashSet<String>,
    ) -> Result<(), ReprError> {
        if depth > MAX_DEPTH {
            return Err(error("too_deep", format!("values nest deeper than {MAX_DEPTH}")));
        }
        if !seen.insert(key.clone()) {
            return Err(self.fail(&format!("duplicate key {key:?}")));
        }
        self.produce(key.len() + 4)?;
        let value = if rest.starts_with('[') {
            self.array(rest, column, depth + 1)?
        } else if rest.starts_with('{') {
            self.keyed_table(rest, depth + 1)?
        } else if rest == ":" {
            let mut inner = Vec::new();
            let mut inner_seen = HashSet::new();
            self.fields(column + 1, depth + 1, &mut inner, &mut inner_seen)?;
            if inner.is_empty() {
                return Err(self.fail("`key:` with no fields under it"));
            }
            Json::Object(inner)
        } else if let Some(text) = rest.strip_prefix(' ') {
            self.value(text, depth + 1)?
        } else {
            return Err(self.fail("expected a space, `:` or `[` after a key"));
        };
        fields.push((key, value));
        Ok(())
    }

    /// An array from its header `[N…]…`, owned by a line at `column`: its
    /// list items stand at that column, an object item's further fields
    /// one in.
    fn array(&mut self, header: &'a str, column: usize, depth: usize) -> Result<Json, ReprError> {
        if depth > MAX_DEPTH {
            return Err(error("too_deep", format!("values nest deeper than {MAX_DEPTH}")));
        }
        let close = header.find(']').ok_or_else(|| self.fail("an array header is [N]"))?;
        let (count, delimiter) = self.count(&header[1..close], header)?;
        let after = &header[close + 1..];
        if let Some(columns) = after.strip_prefix('{').and_then(|c| c.strip_suffix("}:")) {
            return self.table(columns, delimiter, count, false, depth);
        }
        match after.strip_prefix(':') {
            Some("") => {}
            Some(cells) => {
                let cells = split_cells(cells, delimiter).map_err(|what| self.fail(what))?;
                if cells.len() != count {
                    return Err(self.fail(&format!("{count} values announced, {} given", cells.len())));
                }
                let items = cells.into_iter().map(|cell| self.value(cell, depth)).collect::<Result<Vec<_>, _>>()?;
                return Ok(Json::Array(items));
            }
            None => return Err(self.fail("an array header ends with `:`, `:values` or `{columns}:`")),
        }
        let mut items = Vec::with_capacity(count);
        for _ in 0..count {
            let content = self.at(column).ok_or_else(|| self.fail(&format!("{count} items announced")))?;
            self.pos += 1;
            let text = content.strip_prefix("- ").ok_or_else(|| self.fail("a list item begins with `- `"))?;
            items.push(self.item(text, column, depth + 1)?);
        }
        Ok(Json::Array(items))
    }

    /// A list item after its `- ` (the dash at `column`).
    fn item(&mut self, text: &'a str, column: usize, depth: usize) -> Result<Json, ReprError> {
        if is_header(text) {
            return self.array(text, column + 1, depth);
        }
        if text.starts_with(['{', '[']) {
            return self.value(text, depth);
        }
        match split_key(text).map_err(|what| self.fail(what))? {
            Some((key, rest)) => {
                let mut fields = Vec::new();
                let mut seen = HashSet::new();
                self.field(key, rest, column + 1, depth, &mut fields, &mut seen)?;
                self.fields(column + 1, depth, &mut fields, &mut seen)?;
                Ok(Json::Object(fields))
            }
            None => self.scalar(text),
        }
    }

    /// The rest of a line holding one value: compact JSON for a non-empty
    /// container, else a scalar.
    fn value(&mut self, text: &str, depth: usize) -> Result<Json, ReprError> {
        if !text.starts_with(['{', '[']) || text == "{}" || text == "[]" {
            return self.scalar(text);
        }
        self.produce(text.len())?;
        let mut reader = JsonReader { text, pos: 0 };
        let value = reader.value(depth).map_err(|e| if e.code == "too_deep" { e } else { self.fail(&e.message) })?;
        if reader.pos != text.len() {
            return Err(self.fail("text after a JSON value"));
        }
        Ok(value)
    }

    /// A table's rows under its `header` of columns: an array of objects,
    /// or (`keyed`) an object whose keys are the rows' first cells.
    fn table(
        &mut self,
        header: &str,
        delimiter: char,
        count: usize,
        keyed: bool,
        depth: usize,
    ) -> Result<Json, ReprError> {
        let columns = split_columns(header, delimiter).map_err(|what| self.fail(what))?;
        if columns.is_empty() || columns.iter().any(|(path, _)| path.is_empty()) {
            return Err(self.fail("a table names its columns"));
        }
        let width = columns.iter().filter(|(_, sequence)| sequence.is_none()).count() + usize::from(keyed);
        let mut rows = Vec::with_capacity(count);
        let mut keys = Vec::new();
        let mut seen = HashSet::new();
        for index in 0..count {
            let line = self.take()?;
            let mut cells =
                if width == 0 { Vec::new() } else { split_cells(line, delimiter).map_err(|what| self.fail(what))? };
            if cells.len() != width {
                return Err(self.fail(&format!("a row of {} cells where {width} belong", cells.len())));
            }
            if keyed {
                let cell = cells.remove(0);
                let key = match cell.strip_prefix('"') {
                    Some(_) => match read_json_string(cell) {
                        Ok((key, used)) if used == cell.len() => key,
                        _ => return Err(self.fail("a malformed quoted key")),
                    },
                    None => cell.to_owned(),
                };
                if !seen.insert(key.clone()) {
                    return Err(self.fail(&format!("duplicate key {key:?}")));
                }
                self.produce(key.len() + 4)?;
                keys.push(key);
            }
            let mut row = Json::Object(Vec::new());
            let mut cells = cells.into_iter();
            for (path, sequence) in &columns {
                let value = match sequence {
                    Some(sequence) => {
                        let value = sequence
                            .nth(index)
                            .ok_or_else(|| self.fail("a sequence column passes the values it can hold"))?;
                        self.produce(8)?;
                        value
                    }
                    None => {
                        let cell = cells.next().unwrap_or("");
                        if cell.is_empty() {
                            continue;
                        }
                        self.value(cell, depth + path.len())?
                    }
                };
                self.produce(path.iter().map(|s| s.len() + 4).sum())?;
                insert(&mut row, path, value).map_err(|what| self.fail(what))?;
            }
            rows.push(row);
        }
        Ok(if keyed { Json::Object(keys.into_iter().zip(rows).collect()) } else { Json::Array(rows) })
    }

    /// A keyed table from its header `{N…}{columns}:`.
    fn keyed_table(&mut self, header: &str, depth: usize) -> Result<Json, ReprError> {
        let close = header.find('}').ok_or_else(|| self.fail("a keyed table's header is {N}{columns}:"))?;
        let (count, delimiter) = self.count(&header[1..close], header)?;
        let columns = header[close + 1..]
            .strip_prefix('{')
            .and_then(|c| c.strip_suffix("}:"))
            .ok_or_else(|| self.fail("a keyed table's header is {N}{columns}:"))?;
        self.table(columns, delimiter, count, true, depth)
    }

    /// A header's count and delimiter: `N`, `N|` or `N\t`.
    /// Rows and items are lines; inline values are on the header's line.
    fn count(&mut self, inside: &str, line: &str) -> Result<(usize, char), ReprError> {
        let (count, delimiter) = match inside.char_indices().last() {
            Some((at, d @ ('|' | '\t'))) => (&inside[..at], d),
            _ => (inside, ','),
        };
        let count: usize = count.parse().map_err(|_| self.fail("a count is a number"))?;
        if count == 0 || count > self.lines.len() + line.len() {
            return Err(self.fail("a count that does not fit the packet"));
        }
        self.produce(count)?;
        Ok((count, delimiter))
    }

    /// A bare or quoted scalar, or an empty container.
    fn scalar(&mut self, text: &str) -> Result<Json, ReprError> {
        self.produce(text.len() + 1)?;
        Ok(match text {
            "null" => Json::Null,
            "true" => Json::Bool(true),
            "false" => Json::Bool(false),
            "{}" => Json::Object(Vec::new()),
            "[]" => Json::Array(Vec::new()),
            _ if is_number(text) => Json::Number(text.to_owned()),
            _ if text.starts_with('"') => {
                let (value, used) = read_json_string(text).map_err(|what| self.fail(what))?;
                if used != text.len() {
                    return Err(self.fail("text after a quoted string"));
                }
                Json::String(value)
            }
            _ if text.is_empty() => return Err(self.fail("an empty value")),
            _ => Json::String(text.to_owned()),
        })
    }
}

/// Whether `text` begins with an array header `[N]:`, `[N|]{`, ….
fn is_header(text: &str) -> bool {
    let Some(inside) = text.strip_prefix('[') else { return false };
    let digits = inside.bytes().take_while(u8::is_ascii_digit).count();
    let after = inside[digits..].strip_prefix(['|', '\t']).unwrap_or(&inside[digits..]);
    digits > 0 && (after.starts_with("]:") || after.starts_with("]{"))
}

/// A line's key and what follows it (`:…` or `[…`), or `None` when the
/// line is a scalar.
fn split_key(line: &str) -> Result<Option<(String, &str)>, &'static str> {
    if line.starts_with('"') {
        let (key, used) = read_json_string(line)?;
        let rest = &line[used..];
        return Ok(rest.starts_with([' ', ':', '[', '{']).then_some((key, rest)));
    }
    Ok(line.find([' ', ':', '[', '{']).filter(|&at| at > 0).map(|at| (line[..at].to_owned(), &line[at..])))
}

/// A row's or a header's cells, split on `delimiter` outside quotes.
fn split_cells(line: &str, delimiter: char) -> Result<Vec<&str>, &'static str> {
    let mut cells = Vec::new();
    let mut rest = line;
    loop {
        let end = if rest.starts_with(['"', '[', '{']) {
            let mut reader = JsonReader { text: rest, pos: 0 };
            reader.value(0).map_err(|_| "a malformed quoted or JSON cell")?;
            let used = reader.pos;
            if !(rest[used..].is_empty() || rest[used..].starts_with(delimiter)) {
                return Err("text after a quoted or JSON cell");
            }
            used
        } else {
            rest.find(delimiter).unwrap_or(rest.len())
        };
        cells.push(&rest[..end]);
        if end == rest.len() {
            return Ok(cells);
        }
        rest = &rest[end + delimiter.len_utf8()..];
    }
}

/// A table header's columns, each a key path (keys bare or JSON-quoted,
/// joined by `.`) and its sequence (`=START+STEP`) if it is one, split on
/// `delimiter`.
#[allow(clippy::type_complexity)]
fn split_columns(header: &str, delimiter: char) -> Result<Vec<(Vec<String>, Option<Sequence>)>, &'static str> {
    let mut columns = Vec::new();
    let mut path = Vec::new();
    let mut rest = header;
    loop {
        let key = if rest.starts_with('"') {
            let (key, used) = read_json_string(rest)?;
            rest = &rest[used..];
            key
        } else {
            let end = rest.find(['.', '=', delimiter]).unwrap_or(rest.len());
            if end == 0 {
                return Err("an empty key in a column");
            }
            let key = rest[..end].to_owned();
            rest = &rest[end..];
            key
        };
        path.push(key);
        if let Some(after) = rest.strip_prefix('.') {
            rest = after;
            continue;
        }
        let sequence = match rest.strip_prefix('=') {
            Some(spec) => {
                let end = spec.find(delimiter).unwrap_or(spec.len());
                let sequence = Sequence::parse(&spec[..end])
                    .ok_or("a sequence column is name=START+STEP or name=YYYY-MM-DD+Nd")?;
                rest = &spec[end..];
                Some(sequence)
            }
            None => None,
        };
        columns.push((std::mem::take(&mut path), sequence));
        match rest.strip_prefix(delimiter) {
            Some(after) => rest = after,
            None if rest.is_empty() => return Ok(columns),
            None => return Err("text after a quoted key in a column"),
        }
    }
}

/// Sets `path` in `row` to `value`, making the objects on the way.
fn insert(row: &mut Json, path: &[String], value: Json) -> Result<(), &'static str> {
    let Some((last, parents)) = path.split_last() else { return Err("an empty column") };
    let mut node = row;
    for key in parents {
        let Json::Object(fields) = node else { return Err("a column under a value that is not an object") };
        let at = match fields.iter().position(|(k, _)| k == key) {
            Some(at) => at,
            None => {
                fields.push((key.clone(), Json::Object(Vec::new())));
                fields.len() - 1
            }
        };
        node = &mut fields[at].1;
    }
    let Json::Object(fields) = node else { return Err("a column under a value that is not an object") };
    if fields.iter().any(|(k, _)| k == last) {
        return Err("two cells of a row set the same key");
    }
    fields.push((last.clone(), value));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        let values = parse_json_values(text).unwrap();
        let sequence = values.len() != 1;
        let packet = encode(&values, sequence).unwrap();
        let (back, seq) = decode(&packet, usize::MAX).unwrap();
        assert_eq!(seq, sequence, "{packet}");
        assert_eq!(back.len(), values.len(), "{packet}");
        for (a, b) in values.iter().zip(&back) {
            assert!(same(a, b), "{packet}\n{}\n{}", to_json(a), to_json(b));
        }
        packet
    }

    #[test]
    fn a_table_writes_its_keys_once_and_nested_objects_as_paths() {
        let packet =
            round(r#"{"users":[{"id":1,"name":"Ann, B","u":{"a":true}},{"id":2,"name":"Bo","u":{"a":null}}]}"#);
        assert_eq!(packet, "bee-json-v1\nusers[2|]{id|name|u.a}:\n1|Ann, B|true\n2|Bo|null");
    }

    #[test]
    fn number_spellings_and_look_alike_strings_survive() {
        let packet = round(
            r#"{"a":1.0,"b":1e3,"c":123456789012345678901234567890,"d":"1.0","e":"true","f":"","g":" x","h":"{}","i":-0}"#,
        );
        assert!(
            packet.contains("a 1.0\n") && packet.contains("d \"1.0\"") && packet.contains("c 1234567890"),
            "{packet}"
        );
    }

    #[test]
    fn every_shape_round_trips() {
        for text in [
            "null",
            "\"a: b\"",
            "\"- x\"",
            "[]",
            "{}",
            "[1,[2,3],[],{},{\"a\":[1]}]",
            "[{\"a\":1},{\"b\":2},{\"a\":{}}]",
            "{\"a\":{\"b\":{\"c\":[{\"d\":1,\"e\":[1,2]},\"x\"]}}}",
            "{\"k:ey\":1,\"-k\":2,\"\":3,\"a.b\":[{\"a.b\":1,\"c\":2}],\"t\\tab\":[\"x,y\",\"p|q\"]}",
            "[[1,2],[3]]",
            "[{\"a\":1},{}]",
            "{\"a\":[{},{}]}",
            "{\"x\":[\"\\n\",\"é\",\"\\u0001\",\"a\\\"b\"]}",
            "1 2 {\"a\":1}",
            "{\"a\":1}\n{\"a\":2}\n{\"b\":3}",
            "[{\"u\":null},{\"u\":{\"v\":1}}]",
        ] {
            round(text);
        }
    }

    #[test]
    fn evenly_stepping_integers_are_a_sequence_column() {
        let packet = round(r#"[{"t":100,"v":1},{"t":90,"v":2},{"t":80,"v":"x"}]"#);
        assert_eq!(packet, "bee-json-v1\n[3]{t=100-10,v}:\n1\n2\nx");
        let packet = round(r#"{"s":[{"t":1,"u":5,"w":"a"},{"t":2,"u":5,"w":"b"},{"t":3,"u":5,"w":"c"}]}"#);
        assert!(packet.contains("{t=1+1,u=5+0,w}:\na\nb\nc"), "{packet}");
        // Every column a sequence would leave empty lines: none is.
        assert!(!round(r#"[{"t":1},{"t":2},{"t":3}]"#).contains('='));
        // Not a sequence: spelled otherwise, uneven, or too big to step.
        for text in [
            r#"[{"t":1.0},{"t":2.0},{"t":3.0}]"#,
            r#"[{"t":1,"v":0},{"t":2,"v":1},{"t":4,"v":0}]"#,
            r#"[{"t":-9223372036854775808,"v":0},{"t":9223372036854775807,"v":0},{"t":1,"v":0}]"#,
            r#"[{"t":1},{"t":2},{"t":3},{"u":1}]"#,
        ] {
            assert!(!round(text).contains("t="), "{text}");
        }
        assert!(decode("bee-json-v1\n[3]{t=9223372036854775800+5,v}:\n1\n2\n3", usize::MAX).is_err());
        // Calendar days, across a month and a leap day; not a date spelled otherwise.
        let packet = round(
            r#"[{"d":"2028-02-28","v":1},{"d":"2028-02-29","v":2},{"d":"2028-03-01","v":3},{"d":"2028-03-02","v":5}]"#,
        );
        assert!(packet.starts_with("bee-json-v1\n[4]{d=2028-02-28+1d,v}:"), "{packet}");
        let packet = round(r#"[{"d":"2026-01-15","v":1},{"d":"2026-01-08","v":2},{"d":"2026-01-01","v":4}]"#);
        assert!(packet.contains("d=2026-01-15-7d"), "{packet}");
        assert!(!round(r#"[{"d":"2026-1-01","v":1},{"d":"2026-1-02","v":2},{"d":"2026-1-03","v":4}]"#).contains("d="));
        assert!(decode("bee-json-v1\n[3]{d=9999-12-30+1d,v}:\n1\n2\n3", usize::MAX).is_err());
    }

    #[test]
    fn bad_packets_are_errors_not_panics() {
        for packet in [
            "",
            "bee-json-v2\n1",
            "bee-json-v1",
            "bee-json-v1\na[3]: 1,2",
            "bee-json-v1\na[2]{x,y}:\n1,2",
            "bee-json-v1\na[2]{x,y}:\n1,2\n3",
            "bee-json-v1\na: 1\na: 2",
            "bee-json-v1\na:\n",
            "bee-json-v1\n[99999999999999999999]: 1",
            "bee-json-v1\n[1]:\n- \"unterminated",
            "bee-json-v1\na: 1\n   b: 2",
            "bee-json-v1\n[1]{x.y,x}:\n1,2",
            "bee-json-v1 values\n1",
        ] {
            assert!(decode(packet, usize::MAX).is_err(), "{packet:?}");
        }
    }

    #[test]
    fn decoding_stops_at_its_limit() {
        let values = parse_json_values(r#"{"a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#).unwrap();
        let packet = encode(&values, false).unwrap();
        assert_eq!(decode(&packet, 10).unwrap_err().code, "budget_exceeded");
    }

    #[test]
    fn bad_json_is_an_error() {
        for text in ["", "{", "[1,]", "{\"a\":1,\"a\":2}", "\"\\ud800\"", "01", "1.", "nul", "\"\u{1}\""] {
            assert!(parse_json_values(text).is_err(), "{text:?}");
        }
        let deep = "[".repeat(MAX_DEPTH + 2) + &"]".repeat(MAX_DEPTH + 2);
        assert_eq!(parse_json_values(&deep).unwrap_err().code, "too_deep");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Number spellings JSON allows, the awkward ones included.
    fn number() -> impl Strategy<Value = Json> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            "-?(0|[1-9][0-9]{0,40})(\\.[0-9]{1,6})?([eE][+-]?[0-9]{1,3})?",
            Just("1.0".to_owned()),
            Just("-0".to_owned()),
            Just("1E+3".to_owned()),
            Just("18446744073709551616".to_owned()),
        ]
        .prop_map(Json::Number)
    }

    /// Strings that look like other things as well as any text.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            "[ -~]{0,12}",
            prop::sample::select(vec![
                "",
                " ",
                "null",
                "true",
                "false",
                "{}",
                "[]",
                "1",
                "1.0",
                "-",
                "- x",
                "a: b",
                "a[1]",
                "\"",
                "x,y",
                "p|q",
                "t\tab",
                "é",
                "😀",
                "\u{2028}",
                "~k",
                "a.b",
                "line\nbreak",
                "\\",
                "\"quoted\"",
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn scalar() -> impl Strategy<Value = Json> {
        prop_oneof![Just(Json::Null), any::<bool>().prop_map(Json::Bool), number(), text().prop_map(Json::String),]
    }

    fn object_of(inner: impl Strategy<Value = Json>) -> impl Strategy<Value = Json> {
        prop::collection::vec((text(), inner), 0..6).prop_map(|fields| {
            let mut seen = HashSet::new();
            Json::Object(fields.into_iter().filter(|(key, _)| seen.insert(key.clone())).collect())
        })
    }

    fn json() -> impl Strategy<Value = Json> {
        scalar().prop_recursive(8, 96, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
                object_of(inner.clone()),
                // Same-shaped objects: the table form, with nested paths
                // and missing keys.
                (
                    prop::collection::vec("[a-z]{1,3}", 1..4),
                    prop::collection::vec(
                        prop::collection::vec(prop::option::of(prop_oneof![scalar(), object_of(scalar())]), 4),
                        1..6
                    )
                )
                    .prop_map(|(keys, rows)| {
                        Json::Array(
                            rows.into_iter()
                                .map(|row| {
                                    let mut seen = HashSet::new();
                                    Json::Object(
                                        keys.iter()
                                            .zip(row)
                                            .filter_map(|(k, v)| Some((k.clone(), v?)))
                                            .filter(|(k, _)| seen.insert(k.clone()))
                                            .collect(),
                                    )
                                })
                                .collect(),
                        )
                    }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn decode_of_encode_is_the_value(value in json()) {
            let packet = encode(std::slice::from_ref(&value), false).unwrap();
            let (back, sequence) = decode(&packet, usize::MAX).map_err(|e| TestCaseError::fail(format!("{e}\n{packet}")))?;
            prop_assert!(!sequence);
            prop_assert!(same(&back[0], &value), "{}\n{}\n{}", packet, to_json(&value), to_json(&back[0]));
            // And through the JSON text, as a caller gives it.
            let parsed = parse_json_values(&to_json(&value)).unwrap();
            prop_assert!(same(&parsed[0], &value));
        }

        #[test]
        fn a_sequence_round_trips(values in prop::collection::vec(json(), 1..5)) {
            let packet = encode(&values, true).unwrap();
            let (back, sequence) = decode(&packet, usize::MAX).map_err(|e| TestCaseError::fail(format!("{e}\n{packet}")))?;
            prop_assert!(sequence);
            prop_assert_eq!(back.len(), values.len());
            for (a, b) in values.iter().zip(&back) {
                prop_assert!(same(a, b), "{}", packet);
            }
        }

        #[test]
        fn any_text_decodes_or_errs_without_panic(tail in any::<String>()) {
            let _ = decode(&format!("{MAGIC}\n{tail}"), 1 << 20);
            let _ = parse_json_values(&tail);
        }
    }

    #[test]
    fn deep_nesting_round_trips_up_to_the_limit() {
        let mut value = Json::Number("1".to_owned());
        for i in 0..MAX_DEPTH {
            value = if i % 2 == 0 { Json::Array(vec![value]) } else { Json::Object(vec![("k".to_owned(), value)]) };
        }
        let packet = encode(std::slice::from_ref(&value), false).unwrap();
        let (back, _) = decode(&packet, usize::MAX).unwrap();
        assert!(same(&back[0], &value));
    }
}
