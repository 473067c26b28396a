//! BM25 (k1 1.2, b 0.75): how well each of a set of documents, each a bag
//! of weighted words, answers a query's terms. The skill bridge ranks skills
//! with it, the MCP discovery search tools.

use std::collections::HashMap;

/// A document as ranked: each word and its weighted count.
pub type Document = HashMap<String, f64>;

/// Adds `words` to `document`, each counted `weight` times.
pub fn add(document: &mut Document, words: impl Iterator<Item = String>, weight: f64) {
    for word in words {
        *document.entry(word).or_default() += weight;
    }
}

/// Each document's BM25 score for `terms` (deduplicated by the caller or
/// not: a repeated term counts again), in the documents' order.
pub fn scores(documents: &[Document], terms: &[String]) -> Vec<f64> {
    let lengths: Vec<f64> = documents.iter().map(|d| d.values().sum()).collect();
    let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
    let n = documents.len() as f64;
    documents
        .iter()
        .zip(&lengths)
        .map(|(document, length)| {
            terms
                .iter()
                .map(|term| {
                    let frequency = document.get(term).copied().unwrap_or(0.0);
                    if frequency == 0.0 {
                        return 0.0;
                    }
                    let containing = documents.iter().filter(|d| d.contains_key(term)).count() as f64;
                    let idf = ((n - containing + 0.5) / (containing + 0.5) + 1.0).ln();
                    let norm = 1.2 * (1.0 - 0.75 + 0.75 * length / average.max(1.0));
                    idf * frequency * 2.2 / (frequency + norm)
                })
                .sum::<f64>()
        })
        .collect()
}
