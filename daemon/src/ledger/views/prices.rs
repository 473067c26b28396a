//! The price table `beectl usage` estimates cost with: a dated snapshot of
//! LiteLLM's public model price list bundled in the binary (the Anthropic
//! and OpenAI models Claude Code and Codex use), or a file in LiteLLM's
//! format given with `--prices`. An estimate is labelled one, never mixed
//! with the cost a provider reported, and a model the table does not name
//! is not priced at all — never at another model's rates.

use bee_proto::ledger::{CounterShape, Provider};
use bee_proto::usage::Counters;
use std::collections::BTreeMap;
use std::path::Path;

/// Where the bundled table comes from.
pub const BUNDLED_SOURCE: &str = "LiteLLM model_prices_and_context_window.json (github.com/BerriAI/litellm at 00035b69f416), Anthropic and OpenAI models";
/// The day the bundled table was taken from its source.
pub const BUNDLED_DATE: &str = "2026-11-30";
const BUNDLED: &str = include_str!("prices.json");

/// Prompt sizes (tokens) above which providers price a whole request at
/// long-context rates (Claude Sonnet 4/4.5 above 200k, GPT-5.4/5.5 above
/// 272k). Usage is aggregated by the tier a request's prompt falls in, so a
/// table with another threshold cannot be applied to it.
pub const TIER_THRESHOLDS: [u64; 2] = [200_000, 272_000];

/// A `--prices` file larger than this is refused (LiteLLM's whole list is
/// under 2 MiB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Which tier a request's prompt falls in: 0 up to 200k tokens, 1 up to
/// 272k, 2 above. The prompt is everything sent: Claude's input, cache
/// writes and cache reads; OpenAI's input (its cached part included).
pub fn tier_of(provider: Provider, tokens: &Counters) -> u8 {
    let prompt = match provider.counter_shape() {
        CounterShape::Anthropic => tokens.claude_context_size(),
        CounterShape::OpenAi => tokens.input_tokens,
    }
    .unwrap_or(0);
    TIER_THRESHOLDS.iter().filter(|threshold| prompt > **threshold).count() as u8
}

/// USD per token of each kind; `None` where the list gives no price.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rates {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_write: Option<f64>,
    pub cache_read: Option<f64>,
}

/// One model's prices: the base rates and, per threshold, the rates of a
/// request whose prompt is above it (a kind it does not list keeps its base
/// rate, as the list means it).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPrice {
    pub base: Rates,
    pub above: BTreeMap<u64, Rates>,
}

impl ModelPrice {
    /// The rates of a request in `tier`.
    fn rates(&self, tier: u8) -> Rates {
        let lower_bound = match tier {
            0 => 0,
            tier => TIER_THRESHOLDS[usize::from(tier).min(TIER_THRESHOLDS.len()) - 1],
        };
        match self.above.range(..=lower_bound).next_back() {
            Some((_, above)) if tier > 0 => Rates {
                input: above.input.or(self.base.input),
                output: above.output.or(self.base.output),
                cache_write: above.cache_write.or(self.base.cache_write),
                cache_read: above.cache_read.or(self.base.cache_read),
            },
            _ => self.base.clone(),
        }
    }
}

/// Why a price file was refused.
#[derive(Debug, thiserror::Error)]
pub enum PriceError {
    #[error("{path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: larger than {MAX_FILE_BYTES} bytes")]
    TooLarge { path: String },
    #[error("{path}: not a JSON object of models (LiteLLM's model_prices_and_context_window.json format): {reason}")]
    Format { path: String, reason: String },
}

/// A price table: where it comes from, its date, its models, and the
/// models it names that cannot be applied (with why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    pub source: String,
    /// `YYYY-MM-DD`; `None` when unknown.
    pub date: Option<String>,
    pub models: BTreeMap<String, ModelPrice>,
    pub skipped: BTreeMap<String, String>,
}

impl PriceTable {
    /// The table bundled in the binary.
    pub fn bundled() -> PriceTable {
        let source = BUNDLED_SOURCE.to_owned();
        PriceTable::parse(BUNDLED, source.clone(), Some(BUNDLED_DATE.to_owned())).unwrap_or(PriceTable {
            source,
            date: Some(BUNDLED_DATE.to_owned()),
            models: BTreeMap::new(),
            skipped: BTreeMap::new(),
        })
    }

    /// A table in LiteLLM's format read from `path`; its date is the file's
    /// modification day (UTC).
    pub fn from_file(path: &Path) -> Result<PriceTable, PriceError> {
        let shown = path.display().to_string();
        let read = |source| PriceError::Read { path: shown.clone(), source };
        let meta = std::fs::metadata(path).map_err(read)?;
        if meta.len() > MAX_FILE_BYTES {
            return Err(PriceError::TooLarge { path: shown });
        }
        let bytes = std::fs::read(path).map_err(read)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| PriceError::Format { path: shown.clone(), reason: "not UTF-8".to_owned() })?;
        let date = meta
            .modified()
            .ok()
            .and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok())
            .and_then(|since| i64::try_from(since.as_millis()).ok())
            .map(|ms| bee_proto::time::format_unix_ms(ms)[..10].to_owned());
        PriceTable::parse(&text, shown.clone(), date).map_err(|reason| PriceError::Format { path: shown, reason })
    }

    /// Parses LiteLLM's format: an object of models, each with
    /// `input_cost_per_token` and `output_cost_per_token` (others, such as
    /// image models or the `sample_spec` entry, are not token-priced and
    /// left out), optionally the cache prices and `…_above_<N>k_tokens`
    /// tiers.
    pub fn parse(text: &str, source: String, date: Option<String>) -> Result<PriceTable, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|err| err.to_string())?;
        let serde_json::Value::Object(entries) = value else {
            return Err("the top level is not an object".to_owned());
        };
        let mut table = PriceTable { source, date, models: BTreeMap::new(), skipped: BTreeMap::new() };
        for (name, entry) in entries {
            let serde_json::Value::Object(fields) = entry else { continue };
            let price =
                |key: &str| fields.get(key).and_then(serde_json::Value::as_f64).filter(|p| p.is_finite() && *p >= 0.0);
            let base = Rates {
                input: price("input_cost_per_token"),
                output: price("output_cost_per_token"),
                cache_write: price("cache_creation_input_token_cost"),
                cache_read: price("cache_read_input_token_cost"),
            };
            if base.input.is_none() || base.output.is_none() {
                continue;
            }
            let mut above: BTreeMap<u64, Rates> = BTreeMap::new();
            let mut unusable = None;
            for (key, value) in &fields {
                let Some((kind, threshold)) = tier_field(key) else { continue };
                let Some(rate) = value.as_f64().filter(|p| p.is_finite() && *p >= 0.0) else { continue };
                if !TIER_THRESHOLDS.contains(&threshold) {
                    unusable =
                        Some(format!("prices requests above {threshold} tokens apart; Bee tiers at 200k and 272k"));
                    break;
                }
                let rates = above.entry(threshold).or_default();
                match kind {
                    "input_cost_per_token" => rates.input = Some(rate),
                    "output_cost_per_token" => rates.output = Some(rate),
                    "cache_creation_input_token_cost" => rates.cache_write = Some(rate),
                    _ => rates.cache_read = Some(rate),
                }
            }
            match unusable {
                Some(reason) => {
                    table.skipped.insert(name, reason);
                }
                None => {
                    table.models.insert(name, ModelPrice { base, above });
                }
            }
        }
        Ok(table)
    }

    /// The entry that prices `model`: its own name, else the name without a
    /// trailing date (`-20250929`, `-2025-08-07`). Nothing looser.
    pub fn lookup(&self, model: &str) -> Option<(&str, &ModelPrice)> {
        let exact = self.models.get_key_value(model);
        exact.or_else(|| self.models.get_key_value(without_date(model)?)).map(|(name, price)| (name.as_str(), price))
    }

    /// The estimated cost of `tokens` of `model` in `tier`; `None` when the
    /// table does not price the model, or gives no rate for a kind of token
    /// the part used.
    pub fn cost(&self, provider: Provider, model: Option<&str>, tier: u8, tokens: &Counters) -> Option<f64> {
        let rates = self.lookup(model?)?.1.rates(tier);
        let term = |count: Option<u64>, rate: Option<f64>| match count.unwrap_or(0) {
            0 => Some(0.0),
            count => rate.map(|rate| count as f64 * rate),
        };
        let parts = match provider.counter_shape() {
            CounterShape::Anthropic => [
                term(tokens.input_tokens, rates.input),
                term(tokens.cache_creation_input_tokens, rates.cache_write),
                term(tokens.cache_read_input_tokens, rates.cache_read),
                term(tokens.output_tokens, rates.output),
            ],
            // OpenAI counts cached input inside input, and reasoning inside output.
            CounterShape::OpenAi => {
                let cached = tokens.cached_input_tokens.unwrap_or(0);
                [
                    term(tokens.input_tokens.map(|input| input.saturating_sub(cached)), rates.input),
                    term(tokens.cached_input_tokens, rates.cache_read),
                    term(tokens.output_tokens, rates.output),
                    Some(0.0),
                ]
            }
        };
        parts.into_iter().sum()
    }
}

impl PriceTable {
    /// `beectl prices`: every model, USD per million tokens.
    pub fn list(&self) -> bee_proto::ledger::PriceList {
        let per_million = |rate: Option<f64>| rate.map(|r| (r * 1e6 * 1e6).round() / 1e6);
        let models = self
            .models
            .iter()
            .map(|(model, price)| bee_proto::ledger::ModelPriceRow {
                model: model.clone(),
                input: per_million(price.base.input),
                output: per_million(price.base.output),
                cache_write: per_million(price.base.cache_write),
                cache_read: per_million(price.base.cache_read),
                tiers: price
                    .above
                    .iter()
                    .map(|(above, rates)| bee_proto::ledger::PriceTierRow {
                        above_tokens: *above,
                        input: per_million(rates.input),
                        output: per_million(rates.output),
                        cache_write: per_million(rates.cache_write),
                        cache_read: per_million(rates.cache_read),
                    })
                    .collect(),
            })
            .collect();
        bee_proto::ledger::PriceList {
            schema_version: 1,
            source: self.source.clone(),
            date: self.date.clone(),
            unit: "USD per million tokens".to_owned(),
            models,
            skipped: self.skipped.clone(),
        }
    }
}

/// `input_cost_per_token_above_200k_tokens` → (`input_cost_per_token`, 200000).
fn tier_field(key: &str) -> Option<(&str, u64)> {
    let (kind, size) = key.strip_suffix("k_tokens")?.rsplit_once("_above_")?;
    let known = [
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_creation_input_token_cost",
        "cache_read_input_token_cost",
    ];
    let kind = known.into_iter().find(|k| *k == kind)?;
    Some((kind, size.parse::<u64>().ok()?.checked_mul(1000)?))
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-5-2025-08-07` → `gpt-5`.
pub fn without_date(model: &str) -> Option<&str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((name, date)) = model.rsplit_once('-')
        && date.len() == 8
        && digits(date)
    {
        return Some(name);
    }
    let bytes = model.as_bytes();
    if bytes.len() > 11 && bytes[bytes.len() - 11] == b'-' {
        let (name, date) = model.split_at(model.len() - 11);
        let date = &date[1..];
        let mut pieces = date.split('-');
        if let (Some(y), Some(m), Some(d), None) = (pieces.next(), pieces.next(), pieces.next(), pieces.next())
            && y.len() == 4
            && m.len() == 2
            && d.len() == 2
            && [y, m, d].iter().all(|p| digits(p))
        {
            return Some(name);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(input: u64, write: u64, read: u64, output: u64) -> Counters {
        Counters {
            input_tokens: Some(input),
            cache_creation_input_tokens: Some(write),
            cache_read_input_tokens: Some(read),
            output_tokens: Some(output),
            ..Counters::default()
        }
    }

    #[test]
    fn the_bundled_table_parses_and_prices_the_models_the_clis_use() {
        let table = PriceTable::bundled();
        assert!(table.models.len() >= 40, "{}", table.models.len());
        assert!(table.skipped.is_empty(), "{:?}", table.skipped);
        for model in ["claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5", "gpt-5-codex", "gpt-5"] {
            assert!(table.lookup(model).is_some(), "{model}");
        }
    }

    #[test]
    fn claude_costs_each_kind_at_its_rate_and_a_long_prompt_at_the_long_context_rates() {
        let table = PriceTable::bundled();
        let tokens = claude(1_000, 2_000, 3_000, 400);
        let expected = 1_000.0 * 3e-6 + 2_000.0 * 3.75e-6 + 3_000.0 * 3e-7 + 400.0 * 1.5e-5;
        let cost = table.cost(Provider::Claude, Some("claude-sonnet-4-5-20250929"), 0, &tokens).unwrap();
        assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
        let long = claude(10, 0, 250_000, 100);
        assert_eq!(tier_of(Provider::Claude, &long), 1);
        let cost = table.cost(Provider::Claude, Some("claude-sonnet-4-5"), 1, &long).unwrap();
        let expected = 10.0 * 6e-6 + 250_000.0 * 6e-7 + 100.0 * 2.25e-5;
        assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
        // A model without a long-context tier keeps its base rates.
        let opus = table.cost(Provider::Claude, Some("claude-opus-4-1"), 2, &long).unwrap();
        assert!((opus - (10.0 * 1.5e-5 + 250_000.0 * 1.5e-6 + 100.0 * 7.5e-5)).abs() < 1e-12);
    }

    #[test]
    fn openai_cached_input_is_inside_input() {
        let table = PriceTable::bundled();
        let tokens = Counters {
            input_tokens: Some(10_000),
            cached_input_tokens: Some(8_000),
            output_tokens: Some(500),
            reasoning_output_tokens: Some(200),
            total_tokens: Some(10_500),
            ..Counters::default()
        };
        let cost = table.cost(Provider::Codex, Some("gpt-5-codex"), 0, &tokens).unwrap();
        let expected = 2_000.0 * 1.25e-6 + 8_000.0 * 1.25e-7 + 500.0 * 1e-5;
        assert!((cost - expected).abs() < 1e-12, "{cost} vs {expected}");
        assert_eq!(tier_of(Provider::Codex, &Counters { input_tokens: Some(300_000), ..tokens }), 2);
    }

    #[test]
    fn an_unknown_model_is_never_priced() {
        let table = PriceTable::bundled();
        let tokens = claude(1, 1, 1, 1);
        for model in [Some("claude-sonnet-9"), Some("gpt-5-codex-ultra"), Some("sonnet"), Some(""), None] {
            assert_eq!(table.cost(Provider::Claude, model, 0, &tokens), None, "{model:?}");
        }
        // No price for a kind the part used: no estimate rather than a part of one.
        let gpt_with_cache_writes = claude(1, 1, 0, 1);
        assert_eq!(table.cost(Provider::Claude, Some("gpt-5"), 0, &gpt_with_cache_writes), None);
    }

    #[test]
    fn dates_are_stripped_and_nothing_else() {
        assert_eq!(without_date("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4-5"));
        assert_eq!(without_date("gpt-5-2025-08-07"), Some("gpt-5"));
        for model in ["claude-sonnet-4-5", "gpt-5", "x-1234567", "a-2025-8-07", "-20250929x"] {
            assert_eq!(without_date(model), None, "{model}");
        }
    }

    #[test]
    fn hostile_files_are_refused_or_skip_what_cannot_be_applied() {
        for text in ["", "[]", "{", "null", "\"x\"", "{\"a\":"] {
            assert!(PriceTable::parse(text, "t".into(), None).is_err(), "{text:?}");
        }
        let text = r#"{"sample_spec": {"input_cost_per_token": "x"},
            "m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_token_above_128k_tokens": 2e-6},
            "n": {"input_cost_per_token": -1, "output_cost_per_token": 2e-6},
            "o": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_token_above_200k_tokens": 3e-6},
            "img": {"output_cost_per_image": 0.04}}"#;
        let table = PriceTable::parse(text, "t".into(), None).unwrap();
        assert_eq!(table.models.keys().collect::<Vec<_>>(), ["o"]);
        assert!(table.skipped.contains_key("m"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, [0xff, 0xfe, b'{']).unwrap();
        assert!(matches!(PriceTable::from_file(&path), Err(PriceError::Format { .. })));
        assert!(matches!(PriceTable::from_file(&dir.path().join("none")), Err(PriceError::Read { .. })));
    }
}
