//! Differential fuzzing of the exact counts: for any text, our pre-tokenizer
//! splits it piece by piece as the split regex alone does (its ASCII path
//! held to the regex), and with our merge gives exactly tiktoken-rs
//! `encode_ordinary`'s token count.
#![no_main]

use bee_daemon::tokens::encoders::Encoders;
use bee_proto::tokens::Encoding;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Both {
    ours: Encoders,
    o200k: tiktoken_rs::CoreBPE,
    cl100k: tiktoken_rs::CoreBPE,
}

fn both() -> &'static Both {
    static BOTH: OnceLock<Both> = OnceLock::new();
    BOTH.get_or_init(|| Both {
        ours: Encoders::default(),
        o200k: tiktoken_rs::o200k_base().unwrap(),
        cl100k: tiktoken_rs::cl100k_base().unwrap(),
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let both = both();
    let (encoding, reference) =
        if selector & 1 == 0 { (Encoding::O200kBase, &both.o200k) } else { (Encoding::Cl100kBase, &both.cl100k) };
    let deadline = Instant::now() + Duration::from_secs(60);
    if let Some(encoder) = both.ours.get(encoding) {
        assert_eq!(encoder.pieces(text, deadline), encoder.regex_pieces(text, deadline), "{encoding:?} {text:?}");
    }
    // Inputs the work bound refuses are never counted, so there is nothing to compare.
    if let Ok(counts) = both.ours.count(encoding, &[text.to_owned()], deadline) {
        assert_eq!(counts[0], reference.encode_ordinary(text).len() as u64, "{encoding:?} {text:?}");
    }
});
