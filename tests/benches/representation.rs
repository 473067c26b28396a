//! `bee-json-v1` token benchmark over the fixed corpus in
//! `tests/fixtures/repr-corpus` (API responses, logs as JSON lines, config
//! files, tabular arrays): exact o200k tokens of each document as compact
//! JSON (the baseline), as TOON (its reference encoder from npm, run by
//! this benchmark) and as a `bee-json-v1` packet, whose round trip is
//! checked before it is counted. Targets: `bee-json-v1` at most 0.6× compact
//! JSON on each tabular document (`table-*`) and on them together, never
//! above 1.0× on any document, and at or below TOON on the corpus total.
//! Exits 1 when a target is missed.
//!
//! `cargo bench -p bee-tests --bench representation`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use bee_daemon::context::representation::{self, Json};
use bee_daemon::tokens::encoders::Encoders;
use bee_proto::tokens::Encoding;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Row {
    name: String,
    tabular: bool,
    json: u64,
    toon: u64,
    bee: u64,
}

fn main() {
    let tests = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus = tests.join("fixtures/repr-corpus");
    let toon_dir = tempfile::tempdir().unwrap();
    let status = Command::new("node")
        .arg(tests.join("node/toon-encode.mjs"))
        .arg(&corpus)
        .arg(toon_dir.path())
        .status()
        .expect("node, with tests/node installed (.ci/run does it)");
    assert!(status.success(), "TOON's encoder failed");

    let encoders = Encoders::default();
    let count = |text: &str| -> u64 {
        encoders.count(Encoding::O200kBase, &[text.to_owned()], Instant::now() + Duration::from_secs(60)).unwrap()[0]
    };
    let mut names: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".json") || n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(names.len() >= 20, "the corpus has at least 20 documents");

    let mut rows = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(corpus.join(&name)).unwrap();
        let values = representation::parse_json_values(&text).unwrap();
        let sequence = name.ends_with(".jsonl");
        let compact: Vec<String> = values.iter().map(representation::to_json).collect();
        let packet = representation::encode(&values, sequence).unwrap();
        check_round_trip(&name, &values, &packet);
        let toon = std::fs::read_to_string(toon_dir.path().join(format!("{name}.toon"))).unwrap();
        rows.push(Row {
            tabular: name.starts_with("table-"),
            json: count(&compact.join("\n")),
            toon: count(&toon),
            bee: count(&packet),
            name,
        });
    }
    report(&rows, &corpus);
}

fn check_round_trip(name: &str, values: &[Json], packet: &str) {
    let (back, _) = representation::decode(packet, usize::MAX).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(back.len(), values.len(), "{name}");
    for (a, b) in values.iter().zip(&back) {
        assert!(representation::same(a, b), "{name} does not round-trip");
    }
}

fn report(rows: &[Row], corpus: &Path) {
    println!("o200k tokens per document ({}):", corpus.display());
    println!("{:<36} {:>8} {:>8} {:>8} {:>9} {:>9}", "document", "JSON", "TOON", "bee", "bee/JSON", "bee/TOON");
    let mut missed = Vec::new();
    for row in rows {
        let ratio = row.bee as f64 / row.json as f64;
        println!(
            "{:<36} {:>8} {:>8} {:>8} {:>8.3}× {:>8.3}×",
            row.name,
            row.json,
            row.toon,
            row.bee,
            ratio,
            row.bee as f64 / row.toon as f64
        );
        if ratio > 1.0 {
            missed.push(format!("{} is {ratio:.3}× compact JSON (target ≤ 1.0×)", row.name));
        }
    }
    let sum = |f: fn(&Row) -> u64, tabular: Option<bool>| -> u64 {
        rows.iter().filter(|r| tabular.is_none_or(|t| r.tabular == t)).map(f).sum()
    };
    let (json, toon, bee) = (sum(|r| r.json, None), sum(|r| r.toon, None), sum(|r| r.bee, None));
    let (tab_json, tab_bee) = (sum(|r| r.json, Some(true)), sum(|r| r.bee, Some(true)));
    println!(
        "{:<36} {:>8} {:>8} {:>8} {:>8.3}× {:>8.3}×",
        "total",
        json,
        toon,
        bee,
        bee as f64 / json as f64,
        bee as f64 / toon as f64
    );
    println!("tabular documents: bee-json-v1 {:.3}× compact JSON (target ≤ 0.6×)", tab_bee as f64 / tab_json as f64);
    if tab_bee as f64 > 0.6 * tab_json as f64 {
        missed.push(format!(
            "the tabular documents are {:.3}× compact JSON (target ≤ 0.6×)",
            tab_bee as f64 / tab_json as f64
        ));
    }
    for row in rows.iter().filter(|r| r.tabular) {
        let ratio = row.bee as f64 / row.json as f64;
        if ratio > 0.6 {
            missed.push(format!("tabular {} is {ratio:.3}× compact JSON (target ≤ 0.6×)", row.name));
        }
    }
    if bee > toon {
        missed.push(format!("corpus total {bee} tokens is above TOON's {toon}"));
    }
    if missed.is_empty() {
        println!("every target met");
    } else {
        for miss in &missed {
            println!("MISSED: {miss}");
        }
        std::process::exit(1);
    }
}
