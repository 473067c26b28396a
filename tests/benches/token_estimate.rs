//! Token estimate benchmarks, each as a ratio against a baseline in the same run:
//!
//! 1. a 1 KiB prompt in o200k_base, whole `beectl token estimate` wall time,
//!    through a warm beed vs the offline path (which builds the encoder);
//! 2. exact counting throughput on 1 MiB of mixed English prose and Rust
//!    source, ours vs tiktoken-rs `encode_ordinary`, both encoders prebuilt;
//! 3. 1 MB with no whitespace: refused by the work bound, or counted in
//!    linear time.
//!
//! `cargo bench -p bee-tests --bench token_estimate`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::tokens::encoders::Encoders;
use bee_proto::tokens::Encoding;
use bee_tests::*;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn main() {
    warm_versus_offline();
    throughput();
    no_whitespace();
}

fn warm_versus_offline() {
    let home = TestHome::new();
    let prompt = "Refactor the parser so that errors carry line numbers; keep the public API. ".repeat(14);
    let prompt = &prompt[..1024];
    let file = home.file("prompt.txt", prompt.as_bytes());
    let run = || {
        let started = Instant::now();
        let output = home
            .command(bin("beectl"))
            .current_dir(home.path())
            .args([
                "token",
                "estimate",
                "--file",
                file.file_name().unwrap().to_str().unwrap(),
                "--encoding",
                "o200k_base",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
        (started.elapsed(), output.stdout)
    };
    run(); // builds the binaries on first use; not timed
    let offline: Vec<(Duration, Vec<u8>)> = (0..15).map(|_| run()).collect();
    let mut command = home.command(bin("beed"));
    command.env("BEE_LOG", "debug");
    let daemon = Daemon::start(&home, command);
    assert!(eventually(Duration::from_secs(30), || daemon.log().contains("encoders built")));
    let warm: Vec<(Duration, Vec<u8>)> = (0..100).map(|_| run()).collect();
    assert!(warm.iter().all(|(_, out)| *out == offline[0].1), "daemon and offline reports differ");
    drop(daemon);
    let (o, w) = (
        Spread::of(&offline.iter().map(|r| r.0).collect::<Vec<_>>()),
        Spread::of(&warm.iter().map(|r| r.0).collect::<Vec<_>>()),
    );
    println!("1 KiB prompt, o200k_base, whole command:");
    println!("  offline (builds the encoder) {o}");
    println!("  warm beed                    {w}");
    println!(
        "  ratio offline/warm: median {:.1}x (slowest warm vs fastest offline {:.1}x)",
        o.median / w.median,
        o.min / w.max
    );
}

/// About 1 MiB: this repository's Rust source interleaved with English prose.
fn mixed_text() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    let mut sources = Vec::new();
    for dir in ["proto/src", "daemon/src", "cli/src", "hook-client/src", "tests/tests"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                sources.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let prose = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut text = String::new();
    let mut n = 0;
    while text.len() < 1 << 20 {
        text.push_str(&prose);
        text.push_str(&sources[n % sources.len()]);
        n += 1;
    }
    let mut end = 1 << 20;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text
}

fn throughput() {
    let text = mixed_text();
    let inputs = vec![text.clone()];
    let far = || Instant::now() + Duration::from_secs(60);
    let ours = Encoders::default();
    for (encoding, theirs) in [
        (Encoding::O200kBase, tiktoken_rs::o200k_base().unwrap()),
        (Encoding::Cl100kBase, tiktoken_rs::cl100k_base().unwrap()),
    ] {
        ours.get(encoding).unwrap();
        let expected = theirs.encode_ordinary(&text).len() as u64;
        let mut ours_times = Vec::new();
        let mut theirs_times = Vec::new();
        for _ in 0..7 {
            let started = Instant::now();
            let counted = ours.count(encoding, &inputs, far()).unwrap()[0];
            ours_times.push(started.elapsed());
            assert_eq!(counted, expected, "counts must be identical");
            let started = Instant::now();
            let tokens = theirs.encode_ordinary(&text).len() as u64;
            theirs_times.push(started.elapsed());
            assert_eq!(tokens, expected);
        }
        let (a, b) = (Spread::of(&ours_times), Spread::of(&theirs_times));
        let mb = text.len() as f64 / 1e6;
        println!("{encoding:?}, {:.2} MB mixed prose and Rust, {expected} tokens:", mb);
        println!("  ours        {:.1} MB/s  ({a})", mb / (a.median / 1e3));
        println!("  tiktoken-rs {:.1} MB/s  ({b})", mb / (b.median / 1e3));
        println!(
            "  ratio ours/tiktoken-rs throughput: median {:.2}x (range {:.2}x..{:.2}x)",
            b.median / a.median,
            b.min / a.max,
            b.max / a.min
        );
    }
}

fn no_whitespace() {
    let ours = Encoders::default();
    let far = Instant::now() + Duration::from_secs(60);
    let letters = vec!["a".repeat(1_000_000)];
    let digits_and_punctuation = vec!["a1,b2;c3.".repeat(111_112)[..1_000_000].to_owned()];
    let cjk = vec!["日本語の文章".repeat(55_556)];
    for (label, input) in
        [("letters", letters), ("letters, digits, punctuation", digits_and_punctuation), ("CJK, no spaces", cjk)]
    {
        for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
            ours.get(encoding).unwrap();
            let started = Instant::now();
            let result = ours.count(encoding, &input, far);
            let elapsed = started.elapsed();
            let outcome = match result {
                Ok(counts) => format!("counted {} tokens", counts[0]),
                Err(failure) => format!("refused: {:?}", failure.code),
            };
            println!(
                "1 MB without whitespace ({label}), {encoding:?}: {outcome} in {:.1} ms",
                elapsed.as_secs_f64() * 1e3
            );
        }
    }
}
