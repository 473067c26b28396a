//! Local prose compression (spec/50 "Local prose compression"): an
//! extractive method that keeps a share of a text's o200k tokens and drops
//! the least informative rest, with no model, no download and no network.
//!
//! Information is self-information, `-log p(token)`, from frequency data
//! bundled in the binary: the o200k vocabulary itself. Byte-pair merges
//! are learned most-frequent first, so a token's merge rank orders tokens
//! by how common they were in the tokenizer's training text; a Zipf law
//! over that rank (`p ∝ 1 / (rank + 256)`) gives each token its
//! information in bits. A word's information is its tokens'; a sentence's
//! density is its words' mean.
//!
//! Two passes reach the asked share: whole sentences of the less dense half
//! go first (least dense first) while the rest still holds the share; then
//! the least informative words of what is left (articles, auxiliaries,
//! fillers), until the share is met. Sentence order, line breaks and the
//! words kept are the original's; nothing is rewritten.
//!
//! The configuration (`[compression] enabled`) lives in
//! `${BEE_HOME}/.bee/config.toml`, off unless `beectl compress enable`
//! turned it on.

use bee_proto::mcp::coded as error;
use serde::Deserialize;
use std::sync::OnceLock;

/// The method's name and version, as answers and stored metadata give it.
pub const METHOD: &str = "self-information-v1";
/// The largest input.
pub const MAX_INPUT_BYTES: usize = 64 * 1024;
/// The largest input in o200k tokens.
pub const MAX_INPUT_TOKENS: usize = 8_192;
/// The share of tokens a caller may ask to keep, in percent.
pub const RATE_PERCENT: std::ops::RangeInclusive<u32> = 10..=90;

/// Why text could not be compressed or the setting not read.
pub type CompressionError = bee_proto::mcp::CodedError;

#[derive(Deserialize)]
struct Config {
    compression: Option<Setting>,
}

#[derive(Deserialize)]
struct Setting {
    #[serde(default)]
    enabled: bool,
}

/// Whether compression is on: `[compression] enabled = true` in
/// `config.toml`; a missing file or table is off.
pub fn enabled() -> Result<bool, CompressionError> {
    let config: Option<Config> =
        crate::storage::files::read_config().map_err(|message| error("config_invalid", message))?;
    Ok(config.and_then(|c| c.compression).is_some_and(|s| s.enabled))
}

/// A compressed text and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compressed {
    pub text: String,
    pub original_tokens: usize,
    pub kept_tokens: usize,
    /// Words dropped (whole sentences' words included).
    pub dropped_words: usize,
    pub dropped_sentences: usize,
}

fn encoder() -> Result<&'static tiktoken_rs::CoreBPE, CompressionError> {
    static ENCODER: OnceLock<Option<tiktoken_rs::CoreBPE>> = OnceLock::new();
    ENCODER
        .get_or_init(crate::tokens::encoders::o200k_core_bpe)
        .as_ref()
        .ok_or_else(|| error("encoding_unavailable", "the bundled o200k_base vocabulary could not be loaded"))
}

/// Exact o200k tokens of `text`.
pub fn tokens(text: &str) -> Result<usize, CompressionError> {
    Ok(encoder()?.encode_ordinary(text).len())
}

/// A token's information in bits. Single bytes (ranks below 256) stand
/// for text the vocabulary never merged: rare, so as informative as the
/// rarest merge.
fn information(rank: u32) -> f64 {
    const RAREST: f64 = 200_000.0 + 256.0;
    if rank < 256 { RAREST.log2() } else { (f64::from(rank) + 256.0).log2() }
}

/// One word: a run of non-space characters, with its information and
/// tokens.
struct Word {
    text: String,
    bits: f64,
    tokens: usize,
    kept: bool,
}

/// A sentence: its words, and what separates it from the next.
struct Sentence {
    words: Vec<Word>,
    /// `"\n"` runs are kept as they were; otherwise one space.
    separator: String,
    kept: bool,
}

impl Sentence {
    fn tokens(&self) -> usize {
        self.words.iter().filter(|w| w.kept).map(|w| w.tokens).sum()
    }

    fn density(&self) -> f64 {
        let tokens: usize = self.words.iter().map(|w| w.tokens).sum();
        let bits: f64 = self.words.iter().map(|w| w.bits).sum();
        if tokens == 0 { 0.0 } else { bits / tokens as f64 }
    }
}

/// Splits `text` into sentences of words; a sentence ends after `.`, `!`
/// or `?` closing a word, or at a line break.
fn sentences(text: &str) -> Result<Vec<Sentence>, CompressionError> {
    let bpe = encoder()?;
    let mut out = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut rest = text;
    loop {
        let start = rest.len() - rest.trim_start().len();
        let space = &rest[..start];
        if !space.is_empty() && space.contains('\n') && !words.is_empty() {
            let newlines: String = space.chars().filter(|c| *c == '\n').collect();
            out.push(Sentence { words: std::mem::take(&mut words), separator: newlines, kept: true });
        }
        rest = &rest[start..];
        if rest.is_empty() {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        // A word is counted as it stands in running text, after a space.
        let ranks = bpe.encode_ordinary(&format!(" {word}"));
        let bits = ranks.iter().map(|r| information(*r)).sum();
        words.push(Word { text: word.to_owned(), bits, tokens: ranks.len().max(1), kept: true });
        rest = &rest[end..];
        if word.ends_with(['.', '!', '?']) {
            let next_is_break = rest.trim_start_matches([' ', '\t']).starts_with('\n') || rest.is_empty();
            if !next_is_break {
                out.push(Sentence { words: std::mem::take(&mut words), separator: " ".to_owned(), kept: true });
            }
        }
    }
    if !words.is_empty() {
        out.push(Sentence { words, separator: String::new(), kept: true });
    }
    Ok(out)
}

/// Keeps about `rate_percent` of `text`'s o200k tokens, dropping the least
/// informative sentences, then words.
pub fn compress(text: &str, rate_percent: u32) -> Result<Compressed, CompressionError> {
    if !RATE_PERCENT.contains(&rate_percent) {
        return Err(error("invalid_usage", format!("ratePercent: {}..{}", RATE_PERCENT.start(), RATE_PERCENT.end())));
    }
    if text.len() > MAX_INPUT_BYTES {
        return Err(error("input_too_large", format!("the text is over {MAX_INPUT_BYTES} bytes (64 KiB)")));
    }
    let original_tokens = tokens(text)?;
    if original_tokens > MAX_INPUT_TOKENS {
        return Err(error(
            "input_too_large",
            format!("the text is {original_tokens} o200k tokens, over {MAX_INPUT_TOKENS}"),
        ));
    }
    let mut sentences = sentences(text)?;
    let target = (original_tokens * rate_percent as usize).div_ceil(100);
    let mut kept: usize = sentences.iter().map(Sentence::tokens).sum();

    // Whole sentences, from the less dense half only.
    let mut order: Vec<usize> = (0..sentences.len()).collect();
    order.sort_by(|&a, &b| sentences[a].density().total_cmp(&sentences[b].density()));
    let mut dropped_sentences = 0;
    for &index in order.iter().take(sentences.len() / 2) {
        let cost = sentences[index].tokens();
        if kept <= target || kept - cost < target {
            continue;
        }
        sentences[index].kept = false;
        sentences[index].words.iter_mut().for_each(|w| w.kept = false);
        kept -= cost;
        dropped_sentences += 1;
    }

    // Then words, least informative first (per token, so a long rare word
    // is not dropped for its length); a sentence keeps at least one word.
    let mut words: Vec<(usize, usize, f64)> = sentences
        .iter()
        .enumerate()
        .filter(|(_, s)| s.kept)
        .flat_map(|(i, s)| s.words.iter().enumerate().map(move |(j, w)| (i, j, w.bits / w.tokens as f64)))
        .collect();
    words.sort_by(|a, b| a.2.total_cmp(&b.2));
    for (i, j, _) in words {
        if kept <= target {
            break;
        }
        if sentences[i].words.iter().filter(|w| w.kept).count() <= 1 {
            continue;
        }
        let word = &mut sentences[i].words[j];
        word.kept = false;
        kept -= word.tokens;
    }

    let dropped_words = sentences.iter().flat_map(|s| &s.words).filter(|w| !w.kept).count();
    let mut out = String::new();
    for sentence in sentences.iter().filter(|s| s.kept) {
        let words: Vec<&str> = sentence.words.iter().filter(|w| w.kept).map(|w| w.text.as_str()).collect();
        out.push_str(&words.join(" "));
        out.push_str(&sentence.separator);
    }
    let out = out.trim_end().to_owned();
    let kept_tokens = tokens(&out)?;
    Ok(Compressed { text: out, original_tokens, kept_tokens, dropped_words, dropped_sentences })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROSE: &str = "The ledger counts each provider response once, by its provider id. \
        It is the same response whoever brought it, so a copy in another session's file is not counted again. \
        Well, you know, it is basically just a thing that is really quite important. \
        Time comes from producers and tokens come from the provider's own logs.\n\n\
        A window that was not observed is unknown, never zero.";

    #[test]
    fn it_keeps_about_the_asked_share_and_drops_filler_first() {
        let all = tokens(PROSE).unwrap();
        for rate in [10, 30, 50, 70, 90] {
            let c = compress(PROSE, rate).unwrap();
            assert_eq!(c.original_tokens, all);
            assert_eq!(c.kept_tokens, tokens(&c.text).unwrap());
            assert!(c.kept_tokens < all, "{rate}: something was dropped");
            // Within a few tokens of the share (re-tokenising joins words).
            assert!(
                c.kept_tokens <= (all * rate as usize).div_ceil(100) + 6,
                "{rate}: {} of {all}: {}",
                c.kept_tokens,
                c.text
            );
        }
        let half = compress(PROSE, 50).unwrap();
        assert!(!half.text.contains("basically"), "the filler sentence goes first: {}", half.text);
        assert!(half.text.contains("provider"), "{}", half.text);
        // Every kept word is the original's, in order.
        let mut rest = PROSE;
        for word in half.text.split_whitespace() {
            let at = rest.find(word).unwrap_or_else(|| panic!("{word} is not in the original in order"));
            rest = &rest[at + word.len()..];
        }
    }

    #[test]
    fn bounds_are_errors() {
        assert_eq!(compress(PROSE, 9).unwrap_err().code, "invalid_usage");
        assert_eq!(compress(PROSE, 91).unwrap_err().code, "invalid_usage");
        assert_eq!(compress(&"word ".repeat(14_000), 50).unwrap_err().code, "input_too_large");
        assert_eq!(compress(&"a1b2c3 ".repeat(9_000), 50).unwrap_err().code, "input_too_large");
        assert_eq!(compress("", 50).unwrap().text, "");
        assert_eq!(compress("   \n\n  ", 50).unwrap().kept_tokens, 0);
    }

    #[test]
    fn rare_tokens_carry_more_information_than_common_ones() {
        let bpe = encoder().unwrap();
        let the = bpe.encode_ordinary(" the")[0];
        let rare = bpe.encode_ordinary(" idempotency");
        assert!(information(the) < rare.iter().map(|r| information(*r)).sum::<f64>());
    }
}
