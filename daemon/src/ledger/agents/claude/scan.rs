//! The fields ingestion reads of a Claude Code response line, found in one
//! pass over its bytes that checks the JSON as it goes and keeps nothing
//! else. Most of an assistant line is content nobody counts, and a general
//! deserializer spends most of its time walking it.
//!
//! The scan answers only for lines in the plain shape Claude Code writes.
//! For anything else it answers `None`, and serde_json decides:
//! - an escape in a kept string or in a key of the line, message or usage;
//! - a non-ASCII key there;
//! - a field named twice;
//! - a counter that is not a plain integer;
//! - nesting deeper than [`MAX_DEPTH`];
//! - an array where an object is expected.
//!
//! So a line's fields are always what serde_json reads, and a test and a
//! fuzz target hold the two to that ([`agrees_with_serde`]).

use std::borrow::Cow;

use super::line::{ClaudeLine, ClaudeMessage, ClaudeUsage, RawJson};

/// Nesting deeper than this in skipped content is left to serde_json.
const MAX_DEPTH: usize = 64;

/// Words of a string's run read eight bytes at a time before the rest is
/// searched with memchr: most strings (keys, ids, times) end sooner.
const SHORT_RUN_WORDS: usize = 8;

/// The scan does not answer for this line: serde_json decides.
#[derive(Debug)]
struct Unsure;

type Scanned<T> = Result<T, Unsure>;

/// The line's fields, when the scan can answer for it (see the module doc).
pub(super) fn scan(line: &[u8]) -> Option<ClaudeLine<'_>> {
    let mut cursor = Cursor { bytes: line, at: 0 };
    let fields = cursor.line().ok()?;
    cursor.whitespace();
    (cursor.at == line.len()).then_some(fields)
}

/// Whether the scan's answer for `line`, when it gives one, is serde_json's:
/// `Err` says how they differ. For the fuzz target and the tests.
pub fn agrees_with_serde(line: &[u8]) -> Result<(), String> {
    let Some(scanned) = scan(line) else { return Ok(()) };
    match serde_json::from_slice::<ClaudeLine<'_>>(line) {
        Ok(parsed) if parsed == scanned => Ok(()),
        Ok(parsed) => Err(format!("scanned {scanned:?}, serde_json read {parsed:?}")),
        Err(err) => Err(format!("scanned {scanned:?}, serde_json refused the line: {err}")),
    }
}

/// Where the scan is in a line.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// Each byte of a word set to `byte`.
const fn repeated(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// The high bit of each byte of `word` (little-endian) that ends a string's
/// plain run: a quote, a backslash or a control character. Bits above the
/// lowest may be spurious; the lowest is exact.
fn string_stops(word: u64) -> u64 {
    const ONES: u64 = repeated(1);
    let (quote, backslash) = (word ^ repeated(b'"'), word ^ repeated(b'\\'));
    let zero = |w: u64| w.wrapping_sub(ONES) & !w;
    (zero(quote) | zero(backslash) | (word.wrapping_sub(repeated(0x20)) & !word)) & repeated(0x80)
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    #[inline(always)]
    fn whitespace(&mut self) {
        // Claude Code writes none: one comparison says so.
        if self.peek().is_some_and(|byte| byte > b' ') {
            return;
        }
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// Whitespace, then `byte`.
    fn eat(&mut self, byte: u8) -> Scanned<()> {
        self.whitespace();
        if self.peek() != Some(byte) {
            return Err(Unsure);
        }
        self.at += 1;
        Ok(())
    }

    /// Whitespace, then `byte` if it is there.
    #[inline(always)]
    fn eat_byte(&mut self, byte: u8) -> bool {
        self.whitespace();
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    /// Whitespace, then `word` (a literal) if it is there.
    fn eat_word(&mut self, word: &[u8]) -> bool {
        self.whitespace();
        // Its first byte decides nearly every time.
        let found = self.peek() == word.first().copied()
            && self.bytes.get(self.at..).is_some_and(|rest| rest.starts_with(word));
        if found {
            self.at += word.len();
        }
        found
    }

    /// From inside a string, the first quote, backslash or control
    /// character, or the line's end.
    #[inline(always)]
    fn plain_run(&mut self) {
        for _ in 0..SHORT_RUN_WORDS {
            let stops = string_stops(self.word());
            if stops != 0 {
                self.at = (self.at + stops.trailing_zeros() as usize / 8).min(self.bytes.len());
                return;
            }
            self.at += 8;
        }
        self.long_run();
    }

    /// The rest of a run longer than a few words (a text block, a thinking
    /// signature, a file a tool wrote): its end found by memchr, then the
    /// bytes before it checked for a control character in one pass the
    /// compiler vectorizes.
    #[inline(never)]
    fn long_run(&mut self) {
        let rest = self.bytes.get(self.at..).unwrap_or_default();
        let end = memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
        let run = &rest[..end];
        let lowest = run.iter().fold(u8::MAX, |lowest, &byte| lowest.min(byte));
        self.at += if lowest < 0x20 { run.iter().position(|&byte| byte < 0x20).unwrap_or(end) } else { end };
    }

    /// The eight bytes from the cursor as a little-endian word, zeros past
    /// the line's end: a zero is a control character, which ends every run
    /// there, so no run needs a byte-by-byte tail.
    fn word(&self) -> u64 {
        match self.bytes.get(self.at..self.at + 8) {
            Some(word) => u64::from_le_bytes(word.try_into().unwrap_or([0; 8])),
            None => {
                let mut word = [0u8; 8];
                let rest = self.bytes.get(self.at..).unwrap_or_default();
                word[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(word)
            }
        }
    }

    /// A string without escapes, its quotes included; its bytes.
    fn plain_string(&mut self) -> Scanned<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        self.plain_run();
        if self.peek() != Some(b'"') {
            return Err(Unsure);
        }
        self.at += 1;
        Ok(&self.bytes[start..self.at - 1])
    }

    /// Any string, its escapes checked as serde_json checks a string it
    /// skips (not its UTF-8).
    fn skip_string(&mut self) -> Scanned<()> {
        self.string().map(drop)
    }

    /// [`Cursor::skip_string`]; whether the string had no escape.
    /// Inlined where strings are read: most have no escape and end at the
    /// first stop, and the rest of the work is out of line.
    #[inline(always)]
    fn string(&mut self) -> Scanned<bool> {
        self.eat(b'"')?;
        self.plain_run();
        if self.peek() == Some(b'"') {
            self.at += 1;
            return Ok(true);
        }
        self.escaped_string()
    }

    /// The rest of a string the cursor stopped in short of its end: at an
    /// escape, or at what ends the scan's answer.
    #[inline(never)]
    fn escaped_string(&mut self) -> Scanned<bool> {
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(false);
                }
                Some(b'\\') => {
                    let escaped = self.bytes.get(self.at + 1).copied();
                    self.at += 2;
                    match escaped {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {}
                        Some(b'u') => {
                            let hex = self.bytes.get(self.at..self.at + 4).ok_or(Unsure)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return Err(Unsure);
                            }
                            self.at += 4;
                        }
                        _ => return Err(Unsure),
                    }
                }
                _ => return Err(Unsure),
            }
            self.plain_run();
        }
    }

    /// Digits, at least one.
    fn digits(&mut self) -> Scanned<()> {
        let start = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        if self.at == start { Err(Unsure) } else { Ok(()) }
    }

    /// A number, as JSON spells one.
    fn skip_number(&mut self) -> Scanned<()> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.at += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(Unsure);
                }
            }
            Some(b'1'..=b'9') => self.digits()?,
            _ => return Err(Unsure),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.digits()?;
        }
        Ok(())
    }

    /// Any value, `depth` objects and arrays deep.
    fn skip(&mut self, depth: usize) -> Scanned<()> {
        self.whitespace();
        match self.peek().ok_or(Unsure)? {
            b'"' => self.skip_string(),
            b'{' if depth < MAX_DEPTH => self.object(|cursor, _, _| cursor.skip(depth + 1)),
            b'[' if depth < MAX_DEPTH => {
                self.at += 1;
                if self.eat_byte(b']') {
                    return Ok(());
                }
                loop {
                    self.skip(depth + 1)?;
                    if !self.eat_byte(b',') {
                        return self.eat(b']');
                    }
                }
            }
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ if self.eat_word(b"true") || self.eat_word(b"false") || self.eat_word(b"null") => Ok(()),
            _ => Err(Unsure),
        }
    }

    /// An object, each of its values read by `value` (given its key's
    /// bytes, as written, and whether they hold no escape).
    fn object(&mut self, mut value: impl FnMut(&mut Self, &'a [u8], bool) -> Scanned<()>) -> Scanned<()> {
        self.eat(b'{')?;
        if self.eat_byte(b'}') {
            return Ok(());
        }
        loop {
            self.whitespace();
            let start = self.at;
            let plain = self.string()?;
            let key = &self.bytes[start + 1..self.at - 1];
            self.eat(b':')?;
            value(self, key, plain)?;
            if !self.eat_byte(b',') {
                return self.eat(b'}');
            }
        }
    }

    /// An object serde_json reads as a struct: its keys plain ASCII, each
    /// named once; `field` reads the value of the field `named` finds a key
    /// naming (an index below 32), and other values are skipped.
    fn fields(
        &mut self,
        named: impl Fn(&[u8]) -> Option<u32>,
        mut field: impl FnMut(&mut Self, u32) -> Scanned<()>,
    ) -> Scanned<()> {
        let mut seen = 0u32;
        self.object(|cursor, key, plain| {
            if !plain || !key.is_ascii() {
                return Err(Unsure);
            }
            match named(key) {
                Some(index) if seen & (1 << index) != 0 => Err(Unsure),
                Some(index) => {
                    seen |= 1 << index;
                    field(cursor, index)
                }
                None => cursor.skip(1),
            }
        })
    }

    /// `null`, or what `read` reads: an optional field.
    fn nullable<T>(&mut self, read: impl FnOnce(&mut Self) -> Scanned<T>) -> Scanned<Option<T>> {
        if self.eat_word(b"null") { Ok(None) } else { read(self).map(Some) }
    }

    /// `null`, or a string without escapes.
    fn text(&mut self) -> Scanned<Option<Cow<'a, str>>> {
        self.nullable(|cursor| {
            let bytes = cursor.plain_string()?;
            std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|_| Unsure)
        })
    }

    /// `null`, or a non-negative integer without sign, fraction or exponent
    /// that fits.
    fn counter(&mut self) -> Scanned<Option<u64>> {
        self.nullable(|cursor| {
            cursor.whitespace();
            let start = cursor.at;
            cursor.skip_number()?;
            let digits = &cursor.bytes[start..cursor.at];
            if !digits.iter().all(u8::is_ascii_digit) {
                return Err(Unsure);
            }
            digits.iter().try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add(u64::from(d - b'0'))).ok_or(Unsure)
        })
    }

    fn flag(&mut self) -> Scanned<Option<bool>> {
        if self.eat_word(b"null") {
            Ok(None)
        } else if self.eat_word(b"true") {
            Ok(Some(true))
        } else if self.eat_word(b"false") {
            Ok(Some(false))
        } else {
            Err(Unsure)
        }
    }

    /// `null`, or any value as its JSON text.
    fn raw(&mut self) -> Scanned<Option<RawJson<'a>>> {
        self.nullable(|cursor| {
            cursor.whitespace();
            let start = cursor.at;
            cursor.skip(1)?;
            std::str::from_utf8(&cursor.bytes[start..cursor.at]).map(RawJson).map_err(|_| Unsure)
        })
    }

    fn line(&mut self) -> Scanned<ClaudeLine<'a>> {
        let mut line = ClaudeLine::default();
        let named = |key: &[u8]| match key {
            b"sessionId" => Some(0),
            b"timestamp" => Some(1),
            b"requestId" => Some(2),
            b"message" => Some(3),
            b"isApiErrorMessage" => Some(4),
            b"error" => Some(5),
            b"type" => Some(6),
            _ => None,
        };
        self.fields(named, |cursor, field| {
            match field {
                0 => line.session_id = cursor.text()?,
                1 => line.timestamp = cursor.text()?,
                2 => line.request_id = cursor.text()?,
                3 => line.message = cursor.nullable(Cursor::message)?,
                4 => line.is_api_error = cursor.flag()?,
                5 => line.error = cursor.raw()?,
                _ => line.kind = cursor.raw()?,
            }
            Ok(())
        })?;
        Ok(line)
    }

    fn message(&mut self) -> Scanned<ClaudeMessage<'a>> {
        let mut message = ClaudeMessage::default();
        let named = |key: &[u8]| match key {
            b"id" => Some(0),
            b"model" => Some(1),
            b"stop_reason" => Some(2),
            b"usage" => Some(3),
            _ => None,
        };
        self.fields(named, |cursor, field| {
            match field {
                0 => message.id = cursor.text()?,
                1 => message.model = cursor.text()?,
                2 => message.stop_reason = cursor.text()?,
                _ => message.usage = cursor.nullable(Cursor::usage)?,
            }
            Ok(())
        })?;
        Ok(message)
    }

    fn usage(&mut self) -> Scanned<ClaudeUsage> {
        let mut usage = ClaudeUsage::default();
        let named = |key: &[u8]| match key {
            b"input_tokens" => Some(0),
            b"cache_creation_input_tokens" => Some(1),
            b"cache_read_input_tokens" => Some(2),
            b"output_tokens" => Some(3),
            _ => None,
        };
        self.fields(named, |cursor, field| {
            let counter = cursor.counter()?;
            match field {
                0 => usage.input_tokens = counter,
                1 => usage.cache_creation_input_tokens = counter,
                2 => usage.cache_read_input_tokens = counter,
                _ => usage.output_tokens = counter,
            }
            Ok(())
        })?;
        Ok(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lines as Claude Code 2.1 writes them: the scan answers for each, with
    /// serde_json's fields.
    #[test]
    fn claude_code_lines_are_scanned_as_serde_json_reads_them() {
        let lines = [
            // A streamed write: no stop reason yet, content with escapes,
            // non-ASCII text and a nested tool input.
            r#"{"parentUuid":"a1","isSidechain":false,"userType":"external","cwd":"/home/dev/app","sessionId":"5eed0000-0000-4000-8000-000000000001","version":"2.1.32","gitBranch":"main","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":"toolu_01","name":"Write","input":{"file_path":"/x","content":"fn main() {\n\tprintln!(\"h\u00e9llo — ok\");\n}\n","nested":[[1,2.5e-3,-0,true,null,{}]]}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":20003,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"service_tier":"standard"}},"requestId":"req_01","type":"assistant","uuid":"b2","timestamp":"2026-11-30T10:00:01.000Z"}"#,
            // Its final write.
            r#"{"parentUuid":"a1","type":"assistant","sessionId":"s","timestamp":"2026-11-30T10:00:02.000Z","requestId":"req_01","message":{"id":"msg_01","model":"claude-sonnet-4-5","stop_reason":"end_turn","content":[],"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":20003,"output_tokens":607}}}"#,
            // A request a limit refused.
            r#"{"type":"assistant","sessionId":"s","timestamp":"2026-11-30T10:00:03.000Z","isApiErrorMessage":true,"error":"rate_limit","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"You've hit your session limit · resets 3pm"}],"usage":{"input_tokens":0,"output_tokens":0}}}"#,
            // Spaced out, with an object as the error and nulls.
            "{ \"sessionId\" : \"s\" ,\t\"timestamp\":null, \"error\" : {\"type\": \"overloaded\"} , \"message\" : null }\r\n",
            "{}\n",
        ];
        for line in lines {
            let scanned = scan(line.as_bytes());
            assert!(scanned.is_some(), "left to serde_json: {line}");
            assert_eq!(agrees_with_serde(line.as_bytes()), Ok(()), "{line}");
        }
        let line = scan(lines[0].as_bytes()).unwrap_or_default();
        let message = line.message.unwrap_or_default();
        let usage = message.usage.unwrap_or_default();
        assert_eq!((line.request_id.as_deref(), message.stop_reason), (Some("req_01"), None));
        assert_eq!((usage.cache_read_input_tokens, usage.output_tokens), (Some(20003), Some(1)));
        assert_eq!(scan(lines[2].as_bytes()).and_then(|l| l.error).map(|e| e.0), Some("\"rate_limit\""));
    }

    /// A long run with an escape, a raw control character, a quote or a
    /// non-ASCII letter at each place: the scan reads past the words it
    /// reads one at a time and answers as serde_json does, for the valid
    /// lines with their fields.
    #[test]
    fn long_runs_end_where_serde_json_says() {
        for at in 0..160 {
            for (inserted, valid) in
                [("\\\"", true), ("\\\\", true), ("\\u0041", true), ("é", true), ("\u{1}", false), ("\"", false)]
            {
                let mut text = "x".repeat(160);
                text.insert_str(at, inserted);
                let line = format!(r#"{{"sessionId":"s","message":{{"content":"{text}","id":"m{at}"}}}}"#);
                assert_eq!(agrees_with_serde(line.as_bytes()), Ok(()), "{line}");
                let id = scan(line.as_bytes()).and_then(|read| read.message).and_then(|message| message.id);
                assert_eq!(id.is_some(), valid, "{line}");
            }
        }
    }

    /// What the scan leaves to serde_json, which then reads the line or
    /// refuses it: the answer is serde_json's either way.
    #[test]
    fn lines_out_of_the_plain_shape_are_left_to_serde_json() {
        let deep = format!(r#"{{"sessionId":"s","x":{}1{}}}"#, "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let left: Vec<Vec<u8>> = [
            r#"{"sessionId":"s\u0041"}"#,
            r#"{"session\u0049d":"s"}"#,
            r#"{"sessionId":"s","sessionId":"t"}"#,
            r#"{"sessionId":null,"sessionId":null}"#,
            r#"{"message":{"usage":{"output_tokens":1.0}}}"#,
            r#"{"message":{"usage":{"output_tokens":-1}}}"#,
            r#"{"message":{"usage":{"output_tokens":1e3}}}"#,
            r#"{"message":{"usage":{"output_tokens":18446744073709551616}}}"#,
            r#"{"message":{"usage":{"output_tokens":"7"}}}"#,
            r#"{"message":{"usage":{"output_tokens":01}}}"#,
            r#"{"message":["id","model"]}"#,
            r#"["s","2026-11-30T10:00:01.000Z"]"#,
            r#"{"isApiErrorMessage":"true"}"#,
            r#"{"sessionId":"s"} x"#,
            r#"{"sessionId":"s",}"#,
            r#"{"x":"bad \q escape"}"#,
            r#"{"x":"\u12"}"#,
            "{\"x\":\"raw \u{1} control\"}",
            &deep,
        ]
        .iter()
        .map(|line| line.as_bytes().to_vec())
        .chain([b"{\"sessionId\":\"\xff\"}".to_vec(), b"{\"\xff\":1}".to_vec(), b"{\"error\":\"\xfe\"}".to_vec()])
        .collect();
        for line in &left {
            assert!(scan(line).is_none(), "answered for {}", String::from_utf8_lossy(line));
            assert_eq!(agrees_with_serde(line), Ok(()), "{}", String::from_utf8_lossy(line));
        }
        // Non-ASCII in a kept string is fine when it is UTF-8.
        assert!(scan("{\"sessionId\":\"caf\u{e9}\"}".as_bytes()).is_some());
        // Bytes serde_json does not check in content it skips, the scan
        // does not either.
        assert!(scan(b"{\"x\":\"\xff\",\"y\":{\"\xfe\":1}}").is_some());
    }

    const NAMES: [&str; 16] = [
        "sessionId",
        "timestamp",
        "requestId",
        "message",
        "isApiErrorMessage",
        "error",
        "id",
        "model",
        "stop_reason",
        "usage",
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
        "content",
        "type",
    ];

    fn space() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", "", "", " ", "\n", "\t", "\r\n", "  "])
    }

    fn string() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-zA-Z0-9 _:.-]{0,12}".prop_map(|s| format!("\"{s}\"")),
            prop::sample::select(NAMES.to_vec()).prop_map(|s| format!("\"{s}\"")),
            any::<String>().prop_map(|s| serde_json::Value::String(s).to_string()),
            // Runs longer than the words read one at a time, escapes and
            // control characters (escaped) anywhere in them.
            prop::collection::vec(any::<char>(), 40..300)
                .prop_map(|chars| serde_json::Value::String(chars.into_iter().collect()).to_string()),
            "[ -~]{40,300}".prop_map(|s| format!("\"{s}\"")),
            prop::sample::select(vec![
                r#""a\nb""#,
                r#""\u00e9""#,
                r#""\ud800""#,
                r#""\uZZZZ""#,
                r#""bad\x""#,
                "\"raw\u{1}\"",
                "\"é—😀\"",
                r#""\"""#,
                r#""\\""#,
                r#""unterminated"#,
            ])
            .prop_map(str::to_owned),
        ]
    }

    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            string(),
            any::<u64>().prop_map(|n| n.to_string()),
            "-?(0|[1-9][0-9]{0,21})(\\.[0-9]{0,3})?([eE][+-]?[0-9]{0,3})?",
            prop::sample::select(vec!["null", "true", "false", "nul", "tru", "-", "01", "1.", "-0", "0"])
                .prop_map(str::to_owned),
        ]
    }

    /// JSON texts, and nearly-JSON ones, whose objects use the names the
    /// scan reads (at any level), named twice now and then.
    fn value() -> impl Strategy<Value = String> {
        scalar().prop_recursive(6, 64, 6, |inner| {
            let key =
                prop_oneof![3 => prop::sample::select(NAMES.to_vec()).prop_map(|s| format!("\"{s}\"")), 1 => string()];
            prop_oneof![
                prop::collection::vec((space(), inner.clone(), space()), 0..5).prop_map(|items| {
                    let items: Vec<String> = items.into_iter().map(|(a, v, b)| format!("{a}{v}{b}")).collect();
                    format!("[{}]", items.join(","))
                }),
                prop::collection::vec((key, space(), inner, space()), 0..7).prop_map(|fields| {
                    let fields: Vec<String> = fields.into_iter().map(|(k, a, v, b)| format!("{k}{a}:{b}{v}")).collect();
                    format!("{{{}}}", fields.join(","))
                }),
            ]
        })
    }

    /// A byte edit: where (a fraction of the length), what, and the byte.
    #[derive(Debug, Clone)]
    enum Edit {
        None,
        Delete(f64),
        Insert(f64, u8),
        Replace(f64, u8),
        Truncate(f64),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        let at = 0.0..1.0f64;
        prop_oneof![
            4 => Just(Edit::None),
            1 => at.clone().prop_map(Edit::Delete),
            1 => (at.clone(), any::<u8>()).prop_map(|(at, b)| Edit::Insert(at, b)),
            1 => (at.clone(), prop::sample::select(b"\"\\{}[],:0 \xff\x01".to_vec())).prop_map(|(at, b)| Edit::Replace(at, b)),
            1 => at.prop_map(Edit::Truncate),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4_000))]

        /// Whatever the line, an answer from the scan is serde_json's.
        #[test]
        fn the_scan_answers_only_as_serde_json_reads(line in value(), edit in edit(), newline in any::<bool>()) {
            let mut bytes = line.into_bytes();
            let index = |at: f64, len: usize| ((at * len as f64) as usize).min(len);
            match edit {
                Edit::None => {}
                Edit::Delete(at) if !bytes.is_empty() => {
                    bytes.remove(index(at, bytes.len() - 1));
                }
                Edit::Insert(at, b) => bytes.insert(index(at, bytes.len()), b),
                Edit::Replace(at, b) if !bytes.is_empty() => {
                    let at = index(at, bytes.len() - 1);
                    bytes[at] = b;
                }
                Edit::Truncate(at) => bytes.truncate(index(at, bytes.len())),
                _ => {}
            }
            if newline {
                bytes.push(b'\n');
            }
            prop_assert_eq!(agrees_with_serde(&bytes), Ok(()), "{}", String::from_utf8_lossy(&bytes));
        }
    }
}
