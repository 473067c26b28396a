//! bee-json-v1: any text decodes to values or an error, never a panic, and
//! never past its limit; any JSON text that parses round-trips exactly
//! through a packet; the compression method takes any text.
#![no_main]

use bee_daemon::context::representation::{decode, encode, parse_json_values, same, to_json};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok((values, _)) = decode(text, 1 << 16) {
        // Escapes may grow a control character to six bytes, no more.
        assert!(values.iter().map(|v| to_json(v).len()).sum::<usize>() <= 8 << 16);
    }
    let _ = decode(&format!("bee-json-v1\n{text}"), 1 << 16);
    if let Ok(values) = parse_json_values(text) {
        let sequence = values.len() != 1;
        let packet = encode(&values, sequence).unwrap();
        let (back, seq) = decode(&packet, usize::MAX).unwrap();
        assert_eq!(seq, sequence);
        assert!(values.iter().zip(&back).all(|(a, b)| same(a, b)) && values.len() == back.len());
    }
    if text.len() <= 4096 {
        let _ = bee_daemon::context::compression::compress(text, 50);
    }
});
