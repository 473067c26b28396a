//! Writes the bundled price table deflated (`ledger::views::prices`
//! inflates it once), and the exact encodings' ordinary ranks (o200k_base, cl100k_base) as
//! compact tables in `OUT_DIR`, read once here from tiktoken-rs's bundled
//! data: at run time the daemon maps them from its own binary in
//! milliseconds (`tokens::encoders`), where building tiktoken's own
//! encoder and reading its ranks back took a cold context packet most of
//! its time.
//!
//! A table: the count (u32 LE), then per token in rank order its length
//! (one byte) and its bytes; a token's rank is its place, as the ordinary
//! ranks of both encodings run from 0 without a gap (checked here), and no
//! token is longer than 255 bytes (the longest is 128). Special tokens are
//! left out: ordinary text never counts them.

use std::error::Error;
use std::io::Write;
use std::path::PathBuf;

use tiktoken_rs::{CoreBPE, Rank};

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    for (name, bpe) in [("o200k_base", tiktoken_rs::o200k_base()?), ("cl100k_base", tiktoken_rs::cl100k_base()?)] {
        let table = ordinary_ranks(&bpe)?;
        std::fs::File::create(out.join(format!("{name}.ranks")))?.write_all(&table)?;
    }
    // The bundled price table, deflated: 670 KB of JSON in every binary
    // that links this crate was 49 KB of it.
    let prices = "src/ledger/views/prices.json";
    println!("cargo:rerun-if-changed={prices}");
    let mut deflated = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    deflated.write_all(&std::fs::read(prices)?)?;
    std::fs::write(out.join("prices.json.deflate"), deflated.finish()?)?;
    Ok(())
}

/// The table of `bpe`'s ordinary tokens, read back through its decoder.
fn ordinary_ranks(bpe: &CoreBPE) -> Result<Vec<u8>, Box<dyn Error>> {
    let specials: Vec<Vec<u8>> = bpe.special_tokens().into_iter().map(|s| s.as_bytes().to_vec()).collect();
    let mut tokens: Vec<(Rank, Vec<u8>)> = Vec::new();
    let mut misses = 0;
    let mut rank: Rank = 0;
    // Ranks are dense up to the vocabulary size; stop after a long gap.
    while misses < 4096 {
        match bpe.decode_bytes(&[rank]) {
            Ok(bytes) if !specials.contains(&bytes) => {
                tokens.push((rank, bytes));
                misses = 0;
            }
            _ => misses += 1,
        }
        rank += 1;
    }
    let mut table = Vec::with_capacity(tokens.len() * 8);
    table.extend_from_slice(&u32::try_from(tokens.len())?.to_le_bytes());
    for (place, (rank, bytes)) in tokens.into_iter().enumerate() {
        if usize::try_from(rank)? != place {
            return Err(format!("ranks are not dense: rank {rank} at place {place}").into());
        }
        table.push(u8::try_from(bytes.len())?);
        table.extend_from_slice(&bytes);
    }
    Ok(table)
}
