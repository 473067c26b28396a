//! The price table `beectl usage` estimates cost with: LiteLLM's model
//! price list as a named PyPI release ships it (its chat and responses
//! models, bundled in the binary; `contrib/prices/update.py` regenerates it
//! from the wheel), with the user's own `~/.bee/prices.json` merged over it,
//! or a file in LiteLLM's format given with `--prices` alone. It owns which
//! entry prices the id an agent wrote (exact first, then provider prefixes,
//! snapshot dates, `-latest` aliases and case — never another model), the
//! prompt-size tiers usage is aggregated by, and the cost of a part at a
//! tier. An estimate is labelled one, never mixed with the cost a provider
//! reported, and a model the table does not name is not priced at all.

use bee_proto::ledger::{CounterShape, PriceList, Provider};
use bee_proto::usage::Counters;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The bundled table: `contrib/prices/update.py`'s output (`prices.json`
/// here), deflated by the build script.
static BUNDLED_DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prices.json.deflate"));

/// The bundled table's text; `None` only if it did not inflate (a broken
/// build, which this module's tests catch).
fn bundled_text() -> Option<String> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::bufread::DeflateDecoder::new(BUNDLED_DEFLATED), &mut text).ok()?;
    Some(text)
}
/// The bundled table's record of where it comes from (its first key).
const SOURCE_KEY: &str = "bee_source";
/// The user's price file, in Bee's directory (`${BEE_HOME:-$HOME}/.bee`).
pub const USER_FILE_NAME: &str = "prices.json";

/// Prompt sizes (tokens) above which some model in the bundled table prices
/// a whole request at other rates: LiteLLM's `…_above_<N>k_tokens` fields
/// (32k, 100k, 128k, 200k, 256k, 272k, 512k), the starts of DashScope's
/// `tiered_pricing` ranges (32k, 128k, 256k), and 199,999 because xAI bills
/// its 200k tier from 200,000 tokens on (LiteLLM compares inclusively for
/// xAI only). Usage is aggregated by the band between two of them a
/// request's prompt falls in, so every tier in the table is priced exactly;
/// a price file with another threshold cannot be applied to it.
pub const TIER_THRESHOLDS: [u64; 8] = [32_000, 100_000, 128_000, 199_999, 200_000, 256_000, 272_000, 512_000];
/// The thresholds tiers 0 to 2 were cut at before there were more (up to
/// 200k, to 272k, above): aggregates settled then still carry them, and
/// they keep that meaning.
pub const LEGACY_THRESHOLDS: [u64; 2] = [200_000, 272_000];
/// The first tier number cut at [`TIER_THRESHOLDS`]: tier `FIRST_TIER + i`
/// is a prompt above `i` of them (and up to the next).
pub const FIRST_TIER: u8 = 3;

/// A price file larger than this is refused (LiteLLM's whole list is
/// under 4 MiB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Which tier a request's prompt falls in: [`FIRST_TIER`] plus how many of
/// [`TIER_THRESHOLDS`] it is above. The prompt is everything sent: Claude's
/// input, cache writes and cache reads; OpenAI's input (its cached part
/// included) — what LiteLLM compares with a threshold.
pub fn tier_of(provider: Provider, tokens: &Counters) -> u8 {
    let prompt = match provider.counter_shape() {
        CounterShape::Anthropic => tokens.claude_context_size(),
        CounterShape::OpenAi => tokens.input_tokens,
    }
    .unwrap_or(0);
    FIRST_TIER + TIER_THRESHOLDS.iter().filter(|threshold| prompt > **threshold).count() as u8
}

/// The prompt sizes a tier holds: above the first bound (`None`: from 0)
/// and up to the second (`None`: no end). `None` for a number no version of
/// Bee wrote.
pub fn tier_bounds(tier: u8) -> Option<(Option<u64>, Option<u64>)> {
    let (thresholds, index): (&[u64], usize) = match tier.checked_sub(FIRST_TIER) {
        None => (&LEGACY_THRESHOLDS, usize::from(tier)),
        Some(index) => (&TIER_THRESHOLDS, usize::from(index)),
    };
    if index > thresholds.len() {
        return None;
    }
    Some((index.checked_sub(1).map(|below| thresholds[below]), thresholds.get(index).copied()))
}

/// USD per token of each kind; `None` where the list gives no price (an
/// absent cache price is billed at the input price, as LiteLLM bills it;
/// an absent reasoning price at the output price).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rates {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_write: Option<f64>,
    pub cache_read: Option<f64>,
    pub reasoning: Option<f64>,
}

impl Rates {
    /// These rates with each kind they lack taken from `under`.
    fn over(&self, under: &Rates) -> Rates {
        Rates {
            input: self.input.or(under.input),
            output: self.output.or(under.output),
            cache_write: self.cache_write.or(under.cache_write),
            cache_read: self.cache_read.or(under.cache_read),
            reasoning: self.reasoning.or(under.reasoning),
        }
    }
}

/// One model's prices: the base rates and, per threshold, the rates of a
/// request whose prompt is above it (each kind resolved as LiteLLM resolves
/// it: a long-context kind the list does not give is the one below it).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPrice {
    /// LiteLLM's `litellm_provider`: who sells the model at these prices.
    pub provider: Option<String>,
    pub base: Rates,
    /// Keyed by a prompt size the request must be above (exclusive).
    pub above: BTreeMap<u64, Rates>,
}

impl ModelPrice {
    /// The rates of a request in `tier`; `None` when the tier's prompts
    /// straddle one of this model's thresholds (a tier number of older
    /// aggregates, cut coarser) or is unknown.
    pub fn rates(&self, tier: u8) -> Option<&Rates> {
        let (low, high) = tier_bounds(tier)?;
        let low = low.unwrap_or(0);
        if self.above.keys().any(|threshold| low < *threshold && high.is_none_or(|high| *threshold < high)) {
            return None;
        }
        Some(self.above.range(..=low).next_back().map_or(&self.base, |(_, rates)| rates))
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

/// The user's price file merged over the bundled table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserPrices {
    pub path: String,
    /// Its entries (models, aliases) whose name the bundled table did not have.
    pub added: u64,
    /// Its entries that replace the bundled table's entry of the same name.
    pub replaced: u64,
    /// Its entries that could not be applied (listed under `skipped`).
    pub skipped: u64,
}

/// A price table: where it comes from, its date, its models, the other
/// names the list gives some of them, and the entries it names that cannot
/// be applied (with why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    pub source: String,
    /// `YYYY-MM-DD`; `None` when unknown.
    pub date: Option<String>,
    pub models: BTreeMap<String, ModelPrice>,
    /// LiteLLM's `alias_of` entries: a name and the model it is another name of.
    pub aliases: BTreeMap<String, String>,
    pub skipped: BTreeMap<String, String>,
    /// The user's price file merged over the bundled table, if one was.
    pub user: Option<UserPrices>,
    /// The names the user's file gave: they win over the bundled table's
    /// for every id they match.
    user_names: BTreeSet<String>,
    /// Lowercased names to the one name they fold from (`None` where two
    /// names of different prices fold together).
    folded: BTreeMap<String, Option<String>>,
}

/// Providers that sell their own models, by the prefix LiteLLM files them
/// under: a bare id an agent wrote (`qwen3-coder-plus`) is priced from the
/// maker's entry (`dashscope/qwen3-coder-plus`), never a reseller's.
const MAKERS: [(&str, &str); 11] = [
    ("anthropic/", "anthropic"),
    ("openai/", "openai"),
    ("gemini/", "gemini"),
    ("vertex_ai/", "vertex_ai-language-models"),
    ("dashscope/", "dashscope"),
    ("deepseek/", "deepseek"),
    ("xai/", "xai"),
    ("mistral/", "mistral"),
    ("moonshot/", "moonshot"),
    ("zai/", "zai"),
    ("minimax/", "minimax"),
];

/// The four per-token kinds LiteLLM gives tiers of.
const TIERED_KINDS: [&str; 4] =
    ["input_cost_per_token", "output_cost_per_token", "cache_creation_input_token_cost", "cache_read_input_token_cost"];

impl PriceTable {
    /// The table bundled in the binary, parsed once per process.
    pub fn bundled() -> PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(parse_bundled).clone()
    }

    /// `${BEE_HOME:-$HOME}/.bee/prices.json`; `None` without a home.
    pub fn user_file() -> Option<PathBuf> {
        bee_proto::paths::bee_dir().map(|dir| dir.join(USER_FILE_NAME))
    }

    /// The table estimates use: `--prices FILE` alone when given (as it
    /// always was), else the bundled table with the user's price file
    /// merged over it when that file exists.
    pub fn load(prices_file: Option<&Path>) -> Result<PriceTable, PriceError> {
        match prices_file {
            Some(path) => PriceTable::from_file(path),
            None => PriceTable::with_user_file(PriceTable::user_file().as_deref()),
        }
    }

    /// The table a view that runs unasked uses (beed's status line and
    /// export, `beectl top`): the user's file over the bundled table, as
    /// `beectl usage` prices; a broken user file leaves the bundled table
    /// alone, with a warning once per process — such a view never fails
    /// for a price file (`beectl usage` and `beectl prices` name it as an
    /// error). Built once and shared until the user's file changes: a
    /// status line asks every few seconds, within bee-hook's deadline.
    pub fn user_or_bundled() -> std::sync::Arc<PriceTable> {
        type Loaded = Option<(Option<(u64, Option<std::time::SystemTime>)>, std::sync::Arc<PriceTable>)>;
        static LOADED: std::sync::Mutex<Loaded> = std::sync::Mutex::new(None);
        static WARNED: std::sync::Once = std::sync::Once::new();
        let stamp = PriceTable::user_file()
            .and_then(|path| std::fs::metadata(path).ok())
            .map(|file| (file.len(), file.modified().ok()));
        if let Ok(loaded) = LOADED.lock()
            && let Some((seen, table)) = loaded.as_ref()
            && *seen == stamp
        {
            return table.clone();
        }
        let table = std::sync::Arc::new(PriceTable::load(None).unwrap_or_else(|err| {
            WARNED.call_once(|| tracing::warn!("{err}: the bundled prices are used alone"));
            PriceTable::bundled()
        }));
        if let Ok(mut loaded) = LOADED.lock() {
            *loaded = Some((stamp, table.clone()));
        }
        table
    }

    /// The bundled table with `user_file` merged over it; no file there is
    /// no error, a file that cannot be read or parsed is one (naming it).
    pub fn with_user_file(user_file: Option<&Path>) -> Result<PriceTable, PriceError> {
        let mut table = PriceTable::bundled();
        let Some(path) = user_file else { return Ok(table) };
        match std::fs::symlink_metadata(path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(table),
            _ => {}
        }
        let user = PriceTable::read(path, true)?;
        table.merge(user, path);
        Ok(table)
    }

    /// A table in LiteLLM's format read from `path`; its date is the file's
    /// modification day (UTC).
    pub fn from_file(path: &Path) -> Result<PriceTable, PriceError> {
        PriceTable::read(path, false)
    }

    /// [`PriceTable::from_file`]; with `name_unpriced`, an entry that is no
    /// priced model is listed under `skipped` (a user's own file means
    /// every entry).
    fn read(path: &Path, name_unpriced: bool) -> Result<PriceTable, PriceError> {
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
        let entries = entries_of(&text).map_err(|reason| PriceError::Format { path: shown.clone(), reason })?;
        let mut table = PriceTable::from_entries(&entries, shown, date, name_unpriced);
        if !name_unpriced {
            table.settle();
        }
        Ok(table)
    }

    /// Parses LiteLLM's format: an object of models, each with
    /// `input_cost_per_token` and `output_cost_per_token` or a
    /// `tiered_pricing` table (others, such as image models or the
    /// `sample_spec` entry, are not token-priced and left out), optionally
    /// the cache and reasoning prices and `…_above_<N>k_tokens` tiers; and
    /// `alias_of` entries.
    pub fn parse(text: &str, source: String, date: Option<String>) -> Result<PriceTable, String> {
        let mut table = PriceTable::from_entries(&entries_of(text)?, source, date, false);
        table.settle();
        Ok(table)
    }

    /// A table as read, not yet settled (`settle`): a user's file may
    /// alias the bundled table's models, so it is settled once merged.
    fn from_entries(
        entries: &serde_json::Map<String, serde_json::Value>,
        source: String,
        date: Option<String>,
        name_unpriced: bool,
    ) -> PriceTable {
        let mut table = PriceTable { source, date, ..PriceTable::default() };
        for (name, entry) in entries {
            let serde_json::Value::Object(fields) = entry else {
                if name_unpriced {
                    table.skipped.insert(name.clone(), "not an object".to_owned());
                }
                continue;
            };
            if let Some(target) = fields.get("alias_of").and_then(serde_json::Value::as_str) {
                table.aliases.insert(name.clone(), target.to_owned());
                continue;
            }
            match model_price(fields) {
                Ok(Some(price)) => {
                    table.models.insert(name.clone(), price);
                }
                Ok(None) if name_unpriced && name != SOURCE_KEY => {
                    table.skipped.insert(name.clone(), "no per-token input and output prices".to_owned());
                }
                Ok(None) => {}
                Err(reason) => {
                    table.skipped.insert(name.clone(), reason);
                }
            }
        }
        table
    }

    /// Leaves out the aliases that name nothing here (a model the table
    /// does not price, or a name it prices itself) and indexes the names.
    fn settle(&mut self) {
        let models = &self.models;
        self.aliases.retain(|name, target| models.contains_key(target) && !models.contains_key(name));
        self.reindex();
    }

    /// Puts `user`'s entries over this table's: each of its models wins
    /// for its name (and for every id that name matches), its aliases too
    /// (of its own models or of this table's).
    pub fn merge(&mut self, user: PriceTable, path: &Path) {
        let mut summary = UserPrices { path: path.display().to_string(), ..UserPrices::default() };
        let mut count = |known: bool| if known { summary.replaced += 1 } else { summary.added += 1 };
        for (name, price) in user.models {
            count(self.models.contains_key(&name) || self.aliases.remove(&name).is_some());
            self.user_names.insert(name.clone());
            self.models.insert(name, price);
        }
        let mut skipped = user.skipped;
        for (name, target) in user.aliases {
            if !self.models.contains_key(&target) || self.user_names.contains(&name) {
                skipped.insert(name, format!("an alias of {target}, which no table here prices"));
                continue;
            }
            count(self.models.remove(&name).is_some() || self.aliases.contains_key(&name));
            self.aliases.insert(name, target);
        }
        summary.skipped = skipped.len() as u64;
        for (name, why) in skipped {
            self.skipped.insert(name, format!("{why} (in {})", summary.path));
        }
        self.source = format!("{}, with {} over it", self.source, summary.path);
        self.user = Some(summary);
        self.settle();
    }

    fn reindex(&mut self) {
        let mut folded: BTreeMap<String, Option<String>> = BTreeMap::new();
        for name in self.models.keys().chain(self.aliases.keys()) {
            let key = name.to_lowercase();
            if key == *name {
                continue;
            }
            let same = |other: &str| self.price_of(other).map(|(_, p)| p) == self.price_of(name).map(|(_, p)| p);
            folded
                .entry(key)
                .and_modify(|held| {
                    if held.as_deref().is_some_and(|other| !same(other)) {
                        *held = None;
                    }
                })
                .or_insert_with(|| Some(name.clone()));
        }
        // A lowercase name the list gives itself is the only one it means.
        folded.retain(|key, _| !self.models.contains_key(key) && !self.aliases.contains_key(key));
        self.folded = folded;
    }

    /// The model `name` is, exactly: a model, or an alias of one.
    fn price_of(&self, name: &str) -> Option<(&str, &ModelPrice)> {
        if let Some((name, price)) = self.models.get_key_value(name) {
            return Some((name.as_str(), price));
        }
        let target = self.aliases.get(name)?;
        self.models.get_key_value(target).map(|(name, price)| (name.as_str(), price))
    }

    /// `name` exactly, else in another case; a model among `only` when given.
    fn named(&self, name: &str, only: Option<&BTreeSet<String>>) -> Option<(&str, &ModelPrice)> {
        let lower = name.to_lowercase();
        let folded = self.folded.get(&lower).and_then(Option::as_deref);
        [Some(name), Some(lower.as_str()), folded]
            .into_iter()
            .flatten()
            .filter_map(|name| self.price_of(name))
            .find(|(model, _)| only.is_none_or(|only| only.contains(*model)))
    }

    /// `name`, or the maker's entry of a bare `name`.
    fn named_or_made(&self, name: &str, only: Option<&BTreeSet<String>>) -> Option<(&str, &ModelPrice)> {
        if let Some(found) = self.named(name, only) {
            return Some(found);
        }
        if name.contains('/') {
            return None;
        }
        MAKERS.iter().find_map(|(prefix, maker)| {
            self.named(&format!("{prefix}{name}"), only).filter(|(_, price)| price.provider.as_deref() == Some(maker))
        })
    }

    /// The one price of `name`'s dated snapshots (`name-20250514`,
    /// `name-2025-05-14`); `None` when there are none or they differ.
    fn dated(&self, name: &str, only: Option<&BTreeSet<String>>) -> Option<(&str, &ModelPrice)> {
        let stem = format!("{name}-");
        let mut found: Option<(&str, &ModelPrice)> = None;
        for (key, price) in self.models.range(stem.clone()..) {
            let Some(date) = key.strip_prefix(&stem) else { break };
            if !is_date(date) || only.is_some_and(|only| !only.contains(key)) {
                continue;
            }
            match found {
                Some((_, held)) if held != price => return None,
                _ => found = Some((key.as_str(), price)),
            }
        }
        found
    }

    /// The entry that prices `model`, as an agent wrote it: the user's
    /// entries first, then the bundled table's.
    pub fn lookup(&self, model: &str) -> Option<(&str, &ModelPrice)> {
        let model = model.trim();
        if model.is_empty() {
            return None;
        }
        if !self.user_names.is_empty()
            && let Some(found) = self.find(model, Some(&self.user_names))
        {
            return Some(found);
        }
        self.find(model, None)
    }

    /// The rules, in order, each tried on the id and then on it without
    /// each leading routing segment (`openrouter/anthropic/x`,
    /// `anthropic/x`, `x`), Claude's dotted versions spelled with dashes:
    /// the name itself (exact, an alias, another case), the maker's entry
    /// of a bare name; then without a snapshot date or `-latest`; then the
    /// one price of its dated snapshots. Never a shorter or longer name
    /// than these: an unknown model stays unpriced.
    fn find(&self, model: &str, only: Option<&BTreeSet<String>>) -> Option<(&str, &ModelPrice)> {
        let mut names = vec![model];
        let mut rest = model;
        while let Some((_, tail)) = rest.split_once('/') {
            if tail.is_empty() {
                break;
            }
            names.push(tail);
            rest = tail;
        }
        let spellings: Vec<String> = names
            .iter()
            .flat_map(|name| {
                let dashed = claude_dashed(name);
                // Cursor's `claude-4.5-sonnet`, family first as priced.
                let family_first = claude_family_first(dashed.as_deref().unwrap_or(name));
                std::iter::once((*name).to_owned()).chain(dashed).chain(family_first)
            })
            .collect();
        if let Some(found) = spellings.iter().find_map(|name| self.named_or_made(name, only)) {
            return Some(found);
        }
        let undated: Vec<&str> =
            spellings.iter().filter_map(|name| without_date(name).or_else(|| name.strip_suffix("-latest"))).collect();
        if let Some(found) = undated.iter().find_map(|name| self.named_or_made(name, only)) {
            return Some(found);
        }
        spellings
            .iter()
            .map(String::as_str)
            .chain(undated.iter().copied())
            .filter(|name| without_date(name).is_none())
            .find_map(|name| {
                self.dated(name, only).or_else(|| {
                    if name.contains('/') {
                        return None;
                    }
                    MAKERS.iter().find_map(|(prefix, maker)| {
                        self.dated(&format!("{prefix}{name}"), only)
                            .filter(|(_, price)| price.provider.as_deref() == Some(maker))
                    })
                })
            })
    }

    /// The estimated cost of `tokens` of `model` in `tier`; `None` when the
    /// table does not price the model, cannot say its rates in `tier` (an
    /// older aggregate's tier straddling one of its thresholds), or the
    /// part lacks the reasoning count a reasoning price needs.
    pub fn cost(&self, provider: Provider, model: Option<&str>, tier: u8, tokens: &Counters) -> Option<f64> {
        PriceTable::cost_at(self.lookup(model?)?.1, provider, tier, tokens)
    }

    /// [`PriceTable::cost`] at a `price` already looked up: a view prices
    /// thousands of parts of a few models, and the lookup is most of the work.
    pub fn cost_at(price: &ModelPrice, provider: Provider, tier: u8, tokens: &Counters) -> Option<f64> {
        let counts = [
            tokens.input_tokens,
            tokens.cached_input_tokens,
            tokens.cache_creation_input_tokens,
            tokens.cache_read_input_tokens,
            tokens.output_tokens,
        ];
        let Some(rates) = price.rates(tier) else {
            // Nothing served costs nothing at any rate.
            return counts.iter().all(|count| count.unwrap_or(0) == 0).then_some(0.0);
        };
        let input = rates.input?;
        let output = rates.output?;
        let cache_write = rates.cache_write.unwrap_or(input);
        let cache_read = rates.cache_read.unwrap_or(input);
        let term = |count: Option<u64>, rate: f64| count.unwrap_or(0) as f64 * rate;
        // Both shapes count reasoning inside output; a model whose list
        // prices reasoning apart needs to know how much of it there was.
        let all_output = tokens.output_tokens.unwrap_or(0);
        let output_cost = match rates.reasoning.filter(|reasoning| *reasoning != output) {
            Some(reasoning_rate) if all_output > 0 => {
                let reasoning = tokens.reasoning_output_tokens?.min(all_output);
                (all_output - reasoning) as f64 * output + reasoning as f64 * reasoning_rate
            }
            _ => all_output as f64 * output,
        };
        let prompt_cost = match provider.counter_shape() {
            CounterShape::Anthropic => {
                term(tokens.input_tokens, input)
                    + term(tokens.cache_creation_input_tokens, cache_write)
                    + term(tokens.cache_read_input_tokens, cache_read)
            }
            // OpenAI counts cached input inside input.
            CounterShape::OpenAi => {
                let cached = tokens.cached_input_tokens.unwrap_or(0);
                term(tokens.input_tokens.map(|input| input.saturating_sub(cached)), input)
                    + term(tokens.cached_input_tokens, cache_read)
            }
        };
        Some(prompt_cost + output_cost)
    }

    /// `beectl prices`: every model, USD per million tokens.
    pub fn list(&self) -> PriceList {
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
        PriceList {
            schema_version: 2,
            source: self.source.clone(),
            date: self.date.clone(),
            unit: "USD per million tokens".to_owned(),
            models,
            skipped: self.skipped.clone(),
        }
    }

    /// `beectl prices --json`: [`PriceTable::list`] with the count of
    /// models, the aliases and the user's file.
    pub fn listing(&self) -> PriceListing {
        PriceListing {
            list: self.list(),
            model_count: self.models.len() as u64,
            aliases: self.aliases.clone(),
            user_file: self.user.clone(),
        }
    }
}

/// `beectl prices --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceListing {
    #[serde(flatten)]
    pub list: PriceList,
    /// How many models the table prices (one row each in `models`).
    pub model_count: u64,
    /// Other names the list gives a model (LiteLLM's `alias_of`).
    pub aliases: BTreeMap<String, String>,
    /// The user's price file merged over the bundled table; `null` when
    /// none was (none exists, or `--prices` named the table).
    pub user_file: Option<UserPrices>,
}

/// The bundled table, named from its `bee_source` record.
fn parse_bundled() -> PriceTable {
    let Some(Ok(entries)) = bundled_text().as_deref().map(entries_of) else {
        // Checked by this module's tests; an answer is still owed.
        return PriceTable { source: "bundled price table (unreadable)".to_owned(), ..PriceTable::default() };
    };
    let about = entries.get(SOURCE_KEY);
    let text = |key: &str| about.and_then(|about| about.get(key)).and_then(serde_json::Value::as_str);
    let retained = about
        .and_then(|about| about.pointer("/retained/models"))
        .and_then(serde_json::Value::as_array)
        .map_or(0, Vec::len);
    let source = format!(
        "LiteLLM {} (PyPI package litellm, released {}), its chat and responses models{}",
        text("version").unwrap_or("(version unknown)"),
        text("released").unwrap_or("on a day unknown"),
        match retained {
            0 => String::new(),
            n => format!(", and {n} models it dropped at the prices Bee shipped before"),
        }
    );
    let mut table = PriceTable::from_entries(&entries, source, text("released").map(str::to_owned), false);
    table.settle();
    table
}

/// The top-level object of a price file.
fn entries_of(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str(text).map_err(|err| err.to_string())? {
        serde_json::Value::Object(entries) => Ok(entries),
        _ => Err("the top level is not an object".to_owned()),
    }
}

/// A finite, non-negative price.
fn rate_of(value: Option<&serde_json::Value>) -> Option<f64> {
    value.and_then(serde_json::Value::as_f64).filter(|price| price.is_finite() && *price >= 0.0)
}

/// The flat rates of an entry (or of one of its `tiered_pricing` tiers).
fn rates_of(fields: &serde_json::Map<String, serde_json::Value>) -> Rates {
    Rates {
        input: rate_of(fields.get("input_cost_per_token")),
        output: rate_of(fields.get("output_cost_per_token")),
        cache_write: rate_of(fields.get("cache_creation_input_token_cost")),
        cache_read: rate_of(fields.get("cache_read_input_token_cost")),
        reasoning: rate_of(fields.get("output_cost_per_reasoning_token")),
    }
}

/// One entry's prices: `Ok(None)` when it is no token-priced model, `Err`
/// with why when its tiers cannot be applied.
fn model_price(fields: &serde_json::Map<String, serde_json::Value>) -> Result<Option<ModelPrice>, String> {
    let provider = fields.get("litellm_provider").and_then(serde_json::Value::as_str).map(str::to_owned);
    let flat = rates_of(fields);
    let (base, above) = match fields.get("tiered_pricing") {
        // LiteLLM prices by the table when there is one, whatever else the entry says.
        Some(serde_json::Value::Array(tiers)) if !tiers.is_empty() => tiered(tiers, &flat)?,
        _ => {
            if flat.input.is_none() || flat.output.is_none() {
                return Ok(None);
            }
            (flat.clone(), long_context(fields, &flat, provider.as_deref() == Some("xai")))
        }
    };
    if let Some(threshold) = above.keys().find(|threshold| !TIER_THRESHOLDS.contains(threshold)) {
        return Err(format!(
            "prices requests above {threshold} tokens apart; Bee tiers at {}",
            TIER_THRESHOLDS.map(|t| t.to_string()).join(", ")
        ));
    }
    Ok(Some(ModelPrice { provider, base, above }))
}

/// The `…_above_<N>k_tokens` rates by the prompt size they start above,
/// each kind the list does not give at a threshold being the one below it.
/// xAI bills a threshold from that many tokens on: above one fewer.
fn long_context(
    fields: &serde_json::Map<String, serde_json::Value>,
    base: &Rates,
    inclusive: bool,
) -> BTreeMap<u64, Rates> {
    let mut given: BTreeMap<u64, Rates> = BTreeMap::new();
    for (key, value) in fields {
        let Some((kind, threshold)) = tier_field(key) else { continue };
        let Some(rate) = rate_of(Some(value)) else { continue };
        let threshold = if inclusive { threshold.saturating_sub(1) } else { threshold };
        let rates = given.entry(threshold).or_default();
        match kind {
            "input_cost_per_token" => rates.input = Some(rate),
            "output_cost_per_token" => rates.output = Some(rate),
            "cache_creation_input_token_cost" => rates.cache_write = Some(rate),
            _ => rates.cache_read = Some(rate),
        }
    }
    let mut below = base.clone();
    given
        .into_iter()
        .map(|(threshold, rates)| {
            below = rates.over(&below);
            (threshold, below.clone())
        })
        .collect()
}

/// A `tiered_pricing` table (`range: [start, end]`, a request of more than
/// `start` and up to `end` prompt tokens priced whole at its rates, above
/// the last range at the last): the first range's rates and the others' by
/// their start. A tier without an output price takes the entry's; one
/// without cache prices bills cached tokens at its input price.
fn tiered(tiers: &[serde_json::Value], flat: &Rates) -> Result<(Rates, BTreeMap<u64, Rates>), String> {
    let mut ranges: Vec<(u64, u64, Rates)> = Vec::new();
    for tier in tiers {
        let serde_json::Value::Object(fields) = tier else {
            return Err("a tiered_pricing tier is not an object".into());
        };
        let bound = |value: &serde_json::Value| {
            rate_of(Some(value)).filter(|bound| bound.fract() == 0.0 && *bound < 1e15).map(|bound| bound as u64)
        };
        let (start, end) = match fields.get("range").and_then(serde_json::Value::as_array).map(Vec::as_slice) {
            Some([start, end]) => (bound(start), bound(end)),
            _ => (None, None),
        };
        let (Some(start), Some(end)) = (start, end) else {
            return Err("a tiered_pricing tier has no range of two token counts".to_owned());
        };
        let mut rates = rates_of(fields);
        rates.output = rates.output.or(flat.output);
        if rates.input.is_none() || rates.output.is_none() {
            return Err("a tiered_pricing tier gives no input or output price".to_owned());
        }
        ranges.push((start, end, rates));
    }
    ranges.sort_by_key(|(start, _, _)| *start);
    let contiguous = ranges.windows(2).all(|pair| pair[0].1 == pair[1].0);
    let mut ranges = ranges.into_iter();
    match ranges.next() {
        Some((0, _, base)) if contiguous => Ok((base, ranges.map(|(start, _, rates)| (start, rates)).collect())),
        _ => Err("its tiered_pricing ranges do not run on from 0 tokens".to_owned()),
    }
}

/// `input_cost_per_token_above_200k_tokens` → (`input_cost_per_token`,
/// 200000); LiteLLM also spells a threshold without the `k`. Batch, flex,
/// priority and cache-TTL variants are not Bee's and not matched.
fn tier_field(key: &str) -> Option<(&'static str, u64)> {
    let (kind, size) = key.strip_suffix("_tokens")?.rsplit_once("_above_")?;
    let kind = TIERED_KINDS.into_iter().find(|k| *k == kind)?;
    let (digits, scale) = match size.strip_suffix('k') {
        Some(digits) => (digits, 1000),
        None => (size, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((kind, digits.parse::<u64>().ok()?.checked_mul(scale)?))
}

/// `claude-sonnet-4.5` → `claude-sonnet-4-5`: Anthropic spells Claude's
/// versions with dashes, OpenRouter and others with a dot.
fn claude_dashed(name: &str) -> Option<String> {
    let version = name.strip_prefix("claude-")?;
    let bytes = version.as_bytes();
    let dotted_digits =
        bytes.iter().enumerate().filter(|(_, b)| **b == b'.').all(|(at, _)| {
            at > 0 && bytes[at - 1].is_ascii_digit() && bytes.get(at + 1).is_some_and(u8::is_ascii_digit)
        });
    (version.contains('.') && dotted_digits).then(|| format!("claude-{}", version.replace('.', "-")))
}

/// A Claude 4 or later spelled version first, as Cursor writes it
/// (`claude-4-5-sonnet`, `claude-4-opus-thinking`), spelled as Anthropic
/// does, family first (`claude-sonnet-4-5`); `None` for any other name.
/// Claude 3's own ids put the version first (`claude-3-5-sonnet`) and stay.
pub(crate) fn claude_family_first(name: &str) -> Option<String> {
    let mut parts = name.strip_prefix("claude-")?.split('-');
    let is_number = |part: &str| !part.is_empty() && part.len() <= 2 && part.bytes().all(|b| b.is_ascii_digit());
    let major = parts.next().filter(|major| is_number(major))?;
    if major.parse::<u8>().ok()? < 4 {
        return None;
    }
    let mut version = major.to_owned();
    let mut family = parts.next()?;
    if is_number(family) {
        version = format!("{version}-{family}");
        family = parts.next()?;
    }
    if !["opus", "sonnet", "haiku"].contains(&family) {
        return None;
    }
    let spelled = std::iter::once(format!("claude-{family}-{version}")).chain(parts.map(str::to_owned));
    Some(spelled.collect::<Vec<_>>().join("-"))
}

/// `20250929` or `2025-09-29`: a plausible day, so a model's own digits
/// (`-12345678`) are not taken for one.
fn is_date(text: &str) -> bool {
    let (year, month, day) = match text.len() {
        8 => (text.get(..4), text.get(4..6), text.get(6..)),
        10 if text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-' => {
            (text.get(..4), text.get(5..7), text.get(8..))
        }
        _ => return false,
    };
    let number =
        |part: Option<&str>| part.filter(|p| p.bytes().all(|b| b.is_ascii_digit())).and_then(|p| p.parse::<u32>().ok());
    matches!((number(year), number(month), number(day)), (Some(1990..=2099), Some(1..=12), Some(1..=31)))
}

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-5-2025-08-07` →
/// `gpt-5`; Vertex's `claude-sonnet-4-5@20250929` → `claude-sonnet-4-5`.
pub fn without_date(model: &str) -> Option<&str> {
    if let Some((name, date)) = model.rsplit_once('@')
        && !name.is_empty()
        && is_date(date)
    {
        return Some(name);
    }
    if let Some((name, date)) = model.rsplit_once('-')
        && !name.is_empty()
        && date.len() == 8
        && is_date(date)
    {
        return Some(name);
    }
    let split = model.len().checked_sub(11)?;
    let (name, date) = model.split_at_checked(split)?;
    let date = date.strip_prefix('-')?;
    (!name.is_empty() && is_date(date)).then_some(name)
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

    /// OpenAI's shape: input with its cached part, output with its reasoning.
    fn openai(input: u64, cached: u64, output: u64, reasoning: u64) -> Counters {
        Counters {
            input_tokens: Some(input),
            cached_input_tokens: Some(cached),
            output_tokens: Some(output),
            reasoning_output_tokens: Some(reasoning),
            ..Counters::default()
        }
    }

    fn close(actual: Option<f64>, expected: f64) {
        let actual = actual.expect("priced");
        assert!((actual - expected).abs() < 1e-12, "{actual} vs {expected}");
    }

    /// The bundled file's own entry for `model`, read apart from Bee's parser.
    fn bundled_entry(model: &str) -> serde_json::Value {
        let entries: serde_json::Value = serde_json::from_str(&bundled_text().unwrap()).unwrap();
        entries[model].clone()
    }

    #[test]
    fn the_bundled_table_is_the_whole_snapshot_and_every_entry_applies() {
        let table = PriceTable::bundled();
        let about = bundled_entry(SOURCE_KEY);
        assert_eq!(about["version"], "1.110.2");
        assert_eq!(about["released"], "2026-11-20");
        assert_eq!(table.date.as_deref(), Some("2026-11-20"));
        assert!(table.source.starts_with("LiteLLM 1.110.2 (PyPI package litellm, released 2026-11-20)"));
        let retained = about["retained"]["models"].as_array().unwrap().len();
        assert_eq!(table.models.len(), about["models"].as_u64().unwrap() as usize + retained);
        assert!(table.models.len() > 3_500, "{}", table.models.len());
        assert_eq!(table.aliases.len() as u64, about["aliases"].as_u64().unwrap());
        assert!(table.skipped.is_empty(), "{:?}", table.skipped);
        // Every threshold the snapshot has is one Bee tiers at.
        for threshold in about["thresholds"].as_array().unwrap() {
            assert!(TIER_THRESHOLDS.contains(&threshold.as_u64().unwrap()), "{threshold}");
        }
        for model in ["claude-sonnet-4-5-20250929", "claude-opus-4-1", "claude-haiku-4-5", "gpt-5-codex", "gpt-5"] {
            assert!(table.lookup(model).is_some(), "{model}");
        }
        assert!(PriceTable::parse(&bundled_text().unwrap(), "t".into(), None).is_ok());
        // What the binary holds inflates to the file, byte for byte.
        assert!(bundled_text().unwrap() == include_str!("prices.json"));
    }

    #[test]
    fn tiers_cut_at_every_threshold_and_old_tier_numbers_keep_their_meaning() {
        let at = |input: u64| tier_of(Provider::Codex, &Counters { input_tokens: Some(input), ..Counters::default() });
        assert_eq!(at(0), FIRST_TIER);
        assert_eq!(at(32_000), FIRST_TIER);
        assert_eq!(at(32_001), FIRST_TIER + 1);
        assert_eq!(at(199_999), FIRST_TIER + 3);
        assert_eq!(at(200_000), FIRST_TIER + 4);
        assert_eq!(at(200_001), FIRST_TIER + 5);
        assert_eq!(at(600_000), FIRST_TIER + 8);
        assert_eq!(tier_bounds(FIRST_TIER), Some((None, Some(32_000))));
        assert_eq!(tier_bounds(FIRST_TIER + 8), Some((Some(512_000), None)));
        assert_eq!(tier_bounds(FIRST_TIER + 9), None);
        // Tiers 0, 1 and 2 of aggregates settled before: up to 200k, to 272k, above.
        assert_eq!(tier_bounds(0), Some((None, Some(200_000))));
        assert_eq!(tier_bounds(1), Some((Some(200_000), Some(272_000))));
        assert_eq!(tier_bounds(2), Some((Some(272_000), None)));
        // Claude's prompt is all it sent: input and both caches.
        assert_eq!(tier_of(Provider::Claude, &claude(10, 0, 250_000, 100)), FIRST_TIER + 5);

        let table = PriceTable::bundled();
        let sonnet_4 = table.lookup("claude-sonnet-4-20250514").unwrap().1;
        assert_eq!(sonnet_4.rates(1), sonnet_4.rates(FIRST_TIER + 5));
        assert_eq!(sonnet_4.rates(0), sonnet_4.rates(FIRST_TIER));
        // An old tier straddling a model's threshold cannot say its rates.
        let qwen = table.lookup("qwen3-coder-plus").unwrap().1;
        assert_eq!(qwen.rates(0), None);
        assert!(qwen.rates(2).is_some(), "above 272k: its last range");
        let tokens = openai(1_000, 0, 10, 0);
        assert_eq!(table.cost(Provider::Qwen, Some("qwen3-coder-plus"), 0, &tokens), None);
        assert_eq!(table.cost(Provider::Qwen, Some("qwen3-coder-plus"), 0, &Counters::default()), Some(0.0));
        assert_eq!(table.cost(Provider::Qwen, Some("qwen3-coder-plus"), 200, &tokens), None);
    }

    #[test]
    fn claude_costs_each_kind_at_its_rate_and_a_long_prompt_at_the_long_context_rates() {
        let table = PriceTable::bundled();
        let tokens = claude(1_000, 2_000, 3_000, 400);
        let expected = 1_000.0 * 3e-6 + 2_000.0 * 3.75e-6 + 3_000.0 * 3e-7 + 400.0 * 1.5e-5;
        let tier = tier_of(Provider::Claude, &tokens);
        close(table.cost(Provider::Claude, Some("claude-sonnet-4-5-20250929"), tier, &tokens), expected);
        let long = claude(10, 0, 250_000, 100);
        let tier = tier_of(Provider::Claude, &long);
        let cost = table.cost(Provider::Claude, Some("claude-sonnet-4-20250514"), tier, &long);
        close(cost, 10.0 * 6e-6 + 250_000.0 * 6e-7 + 100.0 * 2.25e-5);
        // The same request in an aggregate of before: tier 1.
        close(table.cost(Provider::Claude, Some("claude-sonnet-4-20250514"), 1, &long), cost.unwrap());
        // A model without a long-context tier keeps its base rates.
        let opus = table.cost(Provider::Claude, Some("claude-opus-4-1"), tier, &long);
        close(opus, 10.0 * 1.5e-5 + 250_000.0 * 1.5e-6 + 100.0 * 7.5e-5);
    }

    #[test]
    fn openai_cached_input_is_inside_input() {
        let table = PriceTable::bundled();
        let tokens = openai(10_000, 8_000, 500, 200);
        let cost = table.cost(Provider::Codex, Some("gpt-5-codex"), tier_of(Provider::Codex, &tokens), &tokens);
        close(cost, 2_000.0 * 1.25e-6 + 8_000.0 * 1.25e-7 + 500.0 * 1e-5);
        assert_eq!(tier_of(Provider::Codex, &Counters { input_tokens: Some(300_000), ..tokens }), FIRST_TIER + 7);
    }

    #[test]
    fn gemini_2_5_pro_prices_a_whole_request_above_200k_at_its_long_context_rates() {
        let table = PriceTable::bundled();
        let entry = bundled_entry("gemini/gemini-2.5-pro");
        assert_eq!(entry["input_cost_per_token"], 1.25e-6);
        assert_eq!(entry["input_cost_per_token_above_200k_tokens"], 2.5e-6);
        for id in ["gemini-2.5-pro", "gemini/gemini-2.5-pro", "models/gemini-2.5-pro", "Gemini-2.5-Pro"] {
            assert!(table.lookup(id).is_some(), "{id}");
        }
        let short = openai(100_000, 40_000, 2_000, 500);
        let tier = tier_of(Provider::Gemini, &short);
        let expected = 60_000.0 * 1.25e-6 + 40_000.0 * 1.25e-7 + 2_000.0 * 1e-5;
        close(table.cost(Provider::Gemini, Some("gemini-2.5-pro"), tier, &short), expected);
        close(table.cost(Provider::Gemini, Some("models/gemini-2.5-pro"), tier, &short), expected);
        let long = openai(250_000, 200_000, 2_000, 500);
        let tier = tier_of(Provider::Gemini, &long);
        let expected = 50_000.0 * 2.5e-6 + 200_000.0 * 2.5e-7 + 2_000.0 * 1.5e-5;
        close(table.cost(Provider::Gemini, Some("gemini-2.5-pro"), tier, &long), expected);
        close(table.cost(Provider::Gemini, Some("gemini/gemini-2.5-pro"), tier, &long), expected);
        // Exactly 200k is not above 200k.
        let edge = openai(200_000, 0, 0, 0);
        close(table.cost(Provider::Gemini, Some("gemini-2.5-pro"), tier_of(Provider::Gemini, &edge), &edge), 0.25);
    }

    #[test]
    fn qwen3_coder_plus_is_priced_only_in_dashscopes_ranges() {
        let table = PriceTable::bundled();
        let entry = bundled_entry("dashscope/qwen3-coder-plus");
        assert!(entry.get("input_cost_per_token").is_none(), "priced only in tiers");
        let (name, _) = table.lookup("qwen3-coder-plus").unwrap();
        assert_eq!(name, "dashscope/qwen3-coder-plus");
        assert_eq!(table.lookup("qwen/qwen3-coder-plus").unwrap().0, name);
        // (prompt, cached, output) → input, cache-read, output rates of its range.
        for (prompt, (input, read, output)) in [
            (20_000, (1e-6, 1e-7, 5e-6)),
            (32_000, (1e-6, 1e-7, 5e-6)),
            (32_001, (1.8e-6, 1.8e-7, 9e-6)),
            (100_000, (1.8e-6, 1.8e-7, 9e-6)),
            (200_000, (3e-6, 3e-7, 1.5e-5)),
            (256_001, (6e-6, 6e-7, 6e-5)),
            (1_200_000, (6e-6, 6e-7, 6e-5)),
        ] {
            let tokens = openai(prompt, 10_000, 1_000, 0);
            let cost = table.cost(Provider::Qwen, Some("qwen3-coder-plus"), tier_of(Provider::Qwen, &tokens), &tokens);
            close(cost, (prompt - 10_000) as f64 * input + 10_000.0 * read + 1_000.0 * output);
        }
        // qwen3-max's ranges give no cache price: cached tokens at the range's input price.
        let tokens = openai(50_000, 10_000, 1_000, 0);
        let cost = table.cost(Provider::Qwen, Some("qwen3-max"), tier_of(Provider::Qwen, &tokens), &tokens);
        close(cost, 50_000.0 * 2.4e-6 + 1_000.0 * 1.2e-5);
        // Reasoning priced apart (qwen-plus): the part must say how much.
        let tokens = openai(1_000, 0, 500, 300);
        let cost = table.cost(Provider::Qwen, Some("qwen-plus-latest"), tier_of(Provider::Qwen, &tokens), &tokens);
        close(cost, 1_000.0 * 4e-7 + 200.0 * 1.2e-6 + 300.0 * 4e-6);
        let unknown_reasoning = Counters { reasoning_output_tokens: None, ..tokens.clone() };
        let tier = tier_of(Provider::Qwen, &tokens);
        assert_eq!(table.cost(Provider::Qwen, Some("qwen-plus-latest"), tier, &unknown_reasoning), None);
    }

    #[test]
    fn glm_kimi_deepseek_grok_and_mistral_are_priced_from_their_makers_entries() {
        let table = PriceTable::bundled();
        let tokens = openai(100_000, 60_000, 2_000, 0);
        let tier = tier_of(Provider::Codex, &tokens);
        // (ids as agents write them, the entry, input, cache-read, output per token)
        for (ids, entry, input, read, output) in [
            (&["glm-4.6", "zai/glm-4.6", "z-ai/glm-4.6", "GLM-4.6"][..], "zai/glm-4.6", 6e-7, 1.1e-7, 2.2e-6),
            (&["kimi-k2.5", "moonshot/kimi-k2.5", "moonshotai/kimi-k2.5"], "moonshot/kimi-k2.5", 6e-7, 1e-7, 3e-6),
            (&["deepseek-chat", "DeepSeek-Chat"], "deepseek-chat", 2.8e-7, 2.8e-8, 4.2e-7),
            (&["deepseek-v3.2", "openrouter/deepseek/deepseek-v3.2"], "deepseek/deepseek-v3.2", 2.8e-7, 2.8e-8, 4e-7),
            (&["grok-4.7", "xai/grok-4.7", "x-ai/grok-4.7"], "xai/grok-4.7", 2e-6, 5e-7, 6e-6),
            (
                &["devstral-medium-latest", "mistralai/devstral-medium-latest"],
                "mistral/devstral-medium-latest",
                4e-7,
                4e-8,
                2e-6,
            ),
        ] {
            let json = bundled_entry(entry);
            assert_eq!(
                (json["input_cost_per_token"].as_f64(), json["output_cost_per_token"].as_f64()),
                (Some(input), Some(output))
            );
            assert_eq!(json["cache_read_input_token_cost"].as_f64(), Some(read));
            let expected = 40_000.0 * input + 60_000.0 * read + 2_000.0 * output;
            for id in ids {
                assert_eq!(table.lookup(id).map(|(name, _)| name), Some(entry), "{id}");
                close(table.cost(Provider::Codex, Some(id), tier, &tokens), expected);
            }
        }
        // xAI bills its long-context rates from 200,000 tokens on.
        let at_200k = openai(200_000, 0, 1_000, 0);
        let tier = tier_of(Provider::Codex, &at_200k);
        close(table.cost(Provider::Codex, Some("grok-4.7"), tier, &at_200k), 200_000.0 * 4e-6 + 1_000.0 * 1.2e-5);
        close(
            table.cost(Provider::Codex, Some("gemini-2.5-pro"), tier, &at_200k),
            200_000.0 * 1.25e-6 + 1_000.0 * 1e-5,
        );
    }

    #[test]
    fn prefixes_dates_aliases_and_case_resolve_to_the_same_model() {
        let table = PriceTable::bundled();
        for (id, entry) in [
            ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929"),
            ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),
            ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
            ("openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
            ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
            ("Claude-Sonnet-4-5", "claude-sonnet-4-5"),
            // Cursor's spelling, version first.
            ("claude-4.5-sonnet", "claude-sonnet-4-5"),
            ("claude-4-sonnet", "claude-4-sonnet-20250514"),
            ("claude-sonnet-4", "claude-sonnet-4-20250514"),
            ("claude-sonnet-latest", "claude-sonnet-5-5"),
            ("anthropic/claude-sonnet-latest", "claude-sonnet-5-5"),
            ("claude-haiku-4-5-20251001", "claude-haiku-4-5-20251001"),
            ("openai/gpt-5", "gpt-5"),
            ("gpt-5-2025-08-07", "gpt-5-2025-08-07"),
            ("gpt-5.1-codex-max", "gpt-5.1-codex-max"),
        ] {
            assert_eq!(table.lookup(id).map(|(name, _)| name), Some(entry), "{id}");
        }
    }

    #[test]
    fn an_unknown_model_is_never_priced() {
        let table = PriceTable::bundled();
        let tokens = claude(1, 1, 1, 1);
        for model in [
            Some("claude-sonnet-9"),
            Some("gpt-5-codex-ultra"),
            Some("sonnet"),
            Some("opus"),
            Some("claude-mystery-9"),
            Some("claude-sonnet-FIRST"),
            Some("qwen3-coder"),
            Some("glm"),
            Some("kimi"),
            Some("grok"),
            Some("/"),
            Some("anthropic/"),
            Some(""),
            Some("  "),
            None,
        ] {
            assert_eq!(table.cost(Provider::Claude, model, FIRST_TIER, &tokens), None, "{model:?}");
        }
        // A reseller's entry never prices a bare id: only the maker's does.
        assert_eq!(table.lookup("FW-Kimi-K2.5"), None);
    }

    #[test]
    fn a_cache_price_the_list_does_not_give_is_billed_as_input() {
        let table = PriceTable::bundled();
        // GPT-5 lists no cache-write price: a Claude-shaped part's writes at its input price.
        let cost = table.cost(Provider::Claude, Some("gpt-5"), FIRST_TIER, &claude(1, 1, 0, 1));
        close(cost, 1.25e-6 + 1.25e-6 + 1e-5);
        // An explicit 0 is a price: GLM-4.6's cache writes cost nothing.
        close(table.cost(Provider::Claude, Some("glm-4.6"), FIRST_TIER, &claude(0, 1_000, 0, 0)), 0.0);
    }

    #[test]
    fn dates_are_stripped_and_nothing_else() {
        assert_eq!(without_date("claude-sonnet-4-5-20250929"), Some("claude-sonnet-4-5"));
        assert_eq!(without_date("gpt-5-2025-08-07"), Some("gpt-5"));
        assert_eq!(without_date("claude-sonnet-4-5@20250929"), Some("claude-sonnet-4-5"));
        for model in
            ["claude-sonnet-4-5", "gpt-5", "x-1234567", "a-2025-8-07", "-20250929x", "-20250929", "grok-4-0825"]
        {
            assert_eq!(without_date(model), None, "{model}");
        }
        assert_eq!(claude_dashed("claude-sonnet-4.5").as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(claude_dashed("claude-sonnet-4-5"), None);
        assert_eq!(claude_dashed("gpt-5.1"), None);
    }

    #[test]
    fn a_user_file_wins_for_its_models_and_a_broken_one_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.json");
        std::fs::write(
            &path,
            r#"{"my-model": {"input_cost_per_token": 1e-3, "output_cost_per_token": 2e-3},
                "claude-sonnet-4-5": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
                    "cache_read_input_token_cost": 1e-7, "cache_creation_input_token_cost": 1e-6},
                "my-alias": {"alias_of": "my-model"},
                "my-sonnet": {"alias_of": "claude-sonnet-4-5"},
                "lost": {"alias_of": "nothing-priced"},
                "typo": {"input_cost_per_tokens": 1e-6}}"#,
        )
        .unwrap();
        let table = PriceTable::with_user_file(Some(&path)).unwrap();
        let user = table.user.clone().unwrap();
        assert_eq!((user.added, user.replaced, user.skipped), (3, 1, 2), "{user:?}");
        assert!(table.skipped["typo"].contains("prices.json"), "{:?}", table.skipped);
        assert!(table.skipped["lost"].contains("nothing-priced"), "{:?}", table.skipped);
        assert_eq!(table.lookup("my-sonnet").map(|(name, _)| name), Some("claude-sonnet-4-5"));
        assert!(table.source.ends_with(&format!("with {} over it", path.display())), "{}", table.source);
        let tokens = claude(100, 0, 0, 50);
        close(table.cost(Provider::Claude, Some("my-model"), FIRST_TIER, &tokens), 0.2);
        close(table.cost(Provider::Claude, Some("MY-ALIAS"), FIRST_TIER, &tokens), 0.2);
        // The user's claude-sonnet-4-5 prices its dated snapshot and prefixed ids too.
        for id in ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5"] {
            close(table.cost(Provider::Claude, Some(id), FIRST_TIER, &tokens), 100.0 * 1e-6 + 50.0 * 2e-6);
        }
        assert!(table.lookup("gpt-5").is_some(), "the bundled table stays under it");
        assert_eq!(table.cost(Provider::Claude, Some("claude-mystery-9"), FIRST_TIER, &tokens), None);
        // No file: the bundled table alone.
        let none = PriceTable::with_user_file(Some(&dir.path().join("absent.json"))).unwrap();
        assert_eq!((none.user, none.models.len()), (None, PriceTable::bundled().models.len()));
        for broken in [&b"{"[..], b"[]", b"\xff"] {
            std::fs::write(&path, broken).unwrap();
            let err = PriceTable::with_user_file(Some(&path)).unwrap_err().to_string();
            assert!(err.starts_with(&path.display().to_string()), "{err}");
        }
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(matches!(PriceTable::with_user_file(Some(&path)), Err(PriceError::Read { .. })));
    }

    #[test]
    fn hostile_files_are_refused_or_skip_what_cannot_be_applied() {
        for text in ["", "[]", "{", "null", "\"x\"", "{\"a\":"] {
            assert!(PriceTable::parse(text, "t".into(), None).is_err(), "{text:?}");
        }
        let text = r#"{"sample_spec": {"input_cost_per_token": "x"},
            "m": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_token_above_64k_tokens": 2e-6},
            "n": {"input_cost_per_token": -1, "output_cost_per_token": 2e-6},
            "o": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_token_above_200k_tokens": 3e-6},
            "p": {"tiered_pricing": [{"range": [10, 20], "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}]},
            "q": {"tiered_pricing": [{"range": [0, 32000], "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6},
                                     {"range": [64000, 99000], "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}]},
            "r": {"tiered_pricing": [{"range": [0, 1e300], "input_cost_per_token": 1e-6, "output_cost_per_token": 1e-6}]},
            "s": {"output_cost_per_token": 7e-6,
                  "tiered_pricing": [{"range": [0, 32000.0], "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
                                     {"range": [32000.0, 1e6], "input_cost_per_token": 3e-6}]},
            "t": {"alias_of": "nothing"},
            "u": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_token_above_200k_tokens_priority": 9,
                  "cache_creation_input_token_cost_above_1hr_above_200k_tokens": 9, "input_cost_per_token_above_k_tokens": 9},
            "img": {"output_cost_per_image": 0.04}}"#;
        let table = PriceTable::parse(text, "t".into(), None).unwrap();
        assert_eq!(table.models.keys().collect::<Vec<_>>(), ["o", "s", "u"]);
        assert_eq!(table.skipped.keys().collect::<Vec<_>>(), ["m", "p", "q", "r"]);
        assert!(table.aliases.is_empty(), "an alias of nothing priced names nothing");
        // A tier without an output price takes the entry's, not the tier below's.
        let s = &table.models["s"];
        assert_eq!((s.base.output, s.above[&32_000].output), (Some(2e-6), Some(7e-6)));
        assert_eq!((s.base.input, s.above[&32_000].input), (Some(1e-6), Some(3e-6)));
        assert!(table.models["u"].above.is_empty(), "only Bee's standard long-context fields");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, [0xff, 0xfe, b'{']).unwrap();
        assert!(matches!(PriceTable::from_file(&path), Err(PriceError::Format { .. })));
        assert!(matches!(PriceTable::from_file(&dir.path().join("none")), Err(PriceError::Read { .. })));
    }
}
