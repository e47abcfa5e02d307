//! Token prices, in US dollars per million tokens, to turn usage into cost.
//!
//! The built-in table lists list prices of common models (standard tier, no batch
//! discounts) as published by their providers in 2025, with the rates of prompt-cache
//! reads and writes where the provider bills them apart; prices change, so
//! `--prices FILE` overrides or extends it. A model with no price has no cost (shown as
//! `-`), never a guessed one. A price must be a finite, non-negative number of USD per
//! million tokens, at most [`MAX_PRICE_PER_MTOK`] ([`check_price`]): a file with a bad one
//! is refused with its line and field.
//!
//! A run keeps the prices it charged in `run.json` ([`RunPrices`]: each target's model
//! price, and the file's path and SHA-256), so `run --resume` charges the new trials what
//! it charged the first ones, wherever it runs and whatever became of the file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::provider::Usage;

/// Price of one model.
///
/// The two cache rates are optional, and left out of `run.json` when absent so the
/// prices kept by runs that had none read and write as before. Without one, those tokens
/// are charged at the input rate (what every token of the prompt cost before the rates
/// were kept apart). Reasoning tokens have no rate of their own: every provider bills
/// them as output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million input tokens (fresh ones, neither read from nor written to a
    /// prompt cache).
    pub input_per_mtok: f64,
    /// USD per million output tokens (reasoning tokens included).
    pub output_per_mtok: f64,
    /// USD per million input tokens read from the prompt cache; `None`: the input rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
    /// USD per million input tokens written to the prompt cache; `None`: the input rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_per_mtok: Option<f64>,
}

impl Price {
    /// A price with input and output rates only.
    pub fn new(input_per_mtok: f64, output_per_mtok: f64) -> Price {
        Price {
            input_per_mtok,
            output_per_mtok,
            cached_input_per_mtok: None,
            cache_write_per_mtok: None,
        }
    }

    /// The cost of `input_tokens` fresh input and `output_tokens` output tokens.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        self.cost_of(&Usage::new(input_tokens, output_tokens))
    }

    /// The cost of a usage: fresh input at the input rate, cached input at the cached
    /// rate, cache writes at the cache-write rate (each of the two at the input rate when
    /// the price has none), and all output, reasoning included, at the output rate.
    pub fn cost_of(&self, u: &Usage) -> f64 {
        let cached = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        let write = self.cache_write_per_mtok.unwrap_or(self.input_per_mtok);
        (u.fresh_input_tokens() as f64 * self.input_per_mtok
            + u.cached_input_tokens as f64 * cached
            + u.cache_write_tokens as f64 * write
            + u.output_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }

    /// Every rate with its field name, the optional ones when set.
    fn rates(&self) -> Vec<(&'static str, f64)> {
        let mut out = vec![
            ("input_per_mtok", self.input_per_mtok),
            ("output_per_mtok", self.output_per_mtok),
        ];
        out.extend(
            self.cached_input_per_mtok
                .map(|v| ("cached_input_per_mtok", v)),
        );
        out.extend(
            self.cache_write_per_mtok
                .map(|v| ("cache_write_per_mtok", v)),
        );
        out
    }
}

/// The highest price accepted, in USD per million tokens: a thousand times the dearest
/// list price today, so any real price fits and a typo (or a hostile file) can not turn a
/// run's cost into an overflow.
pub const MAX_PRICE_PER_MTOK: f64 = 1_000_000.0;

/// Why `price` (USD per million tokens) is not one: negative, not finite, or above
/// [`MAX_PRICE_PER_MTOK`].
pub fn check_price(price: f64) -> Result<(), String> {
    if !price.is_finite() {
        Err(format!("is {price}: a price must be a finite number"))
    } else if price < 0.0 {
        Err(format!("is {price}: a price can not be negative"))
    } else if price > MAX_PRICE_PER_MTOK {
        Err(format!(
            "is {price}: above {MAX_PRICE_PER_MTOK} USD per million tokens (prices are per million tokens, not per token)"
        ))
    } else {
        Ok(())
    }
}

/// A parse error as `line L, column C: what`, in the file's terms rather than the
/// parser's.
fn parse_message(e: &serde_saphyr::Error) -> String {
    let raw = e.without_snippet().to_string();
    let first = raw.lines().next().unwrap_or("invalid YAML").trim();
    let what = first.find(" at line ").map_or(first, |i| &first[..i]);
    let what = match what {
        "invalid floating point" => "a price must be a number (USD per million tokens)",
        "expected mapping start" => {
            "each model needs a map `{input_per_mtok: N, output_per_mtok: N}`"
        }
        // Anything else in plain words, as a suite's errors are (no parser jargon).
        _ => {
            let plain = crate::util::parse_error::yaml(e);
            return match e.location() {
                Some(l) => format!(
                    "line {}, column {}: {} ({})",
                    l.line(),
                    l.column(),
                    plain.message,
                    plain.hint
                ),
                None => format!("{} ({})", plain.message, plain.hint),
            };
        }
    };
    match e.location() {
        Some(l) => format!("line {}, column {}: {what}", l.line(), l.column()),
        None => what.to_string(),
    }
}

/// A price as written in a `--prices` file, with where each number is.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilePrice {
    input_per_mtok: serde_saphyr::Spanned<f64>,
    output_per_mtok: serde_saphyr::Spanned<f64>,
    #[serde(default)]
    cached_input_per_mtok: Option<serde_saphyr::Spanned<f64>>,
    #[serde(default)]
    cache_write_per_mtok: Option<serde_saphyr::Spanned<f64>>,
}

/// One row of [`BUILT_IN`]: provider, model, then USD per million input, output, cached
/// input and cache-write tokens (`None`: the provider bills no such rate apart).
type ListPrice = (
    &'static str,
    &'static str,
    f64,
    f64,
    Option<f64>,
    Option<f64>,
);

/// List prices (USD per million tokens: input, output, cached input and cache write)
/// of the providers' own models, each for the provider whose list it is: a model of the
/// same name behind another provider (`openai-compatible`, `ollama`: a self-hosted or
/// third-party server) gets no built-in price, only what `--prices` gives it.
///
/// Cache rates, from the providers' pricing pages as of late 2025 (no web access when
/// this table was written: checked against several third-party copies of those pages;
/// `--prices` overrides any of them):
/// - OpenAI bills cached input at 50% of input for gpt-4o, gpt-4o-mini, o3-mini and
///   o4-mini, 25% for gpt-4.1 (all sizes) and o3, 10% for gpt-5 (all sizes); it bills no
///   cache writes (`None`: it reports none either).
/// - Anthropic bills cache reads at 10% of input and 5-minute cache writes at 125%
///   (1-hour writes cost 200%; the usage does not tell them apart in its total, so
///   every write is charged the 5-minute rate).
/// - Gemini bills implicit and explicit cache hits of the 2.5 models at 10% of input
///   ($0.125 for 2.5 Pro prompts up to 200k tokens; older pages said 25%, $0.31) and of
///   2.0 Flash at 25%; the hourly storage of an explicit cache is not a token cost and
///   is not counted.
const BUILT_IN: &[ListPrice] = &[
    ("openai", "gpt-4o", 2.50, 10.00, Some(1.25), None),
    ("openai", "gpt-4o-mini", 0.15, 0.60, Some(0.075), None),
    ("openai", "gpt-4.1", 2.00, 8.00, Some(0.50), None),
    ("openai", "gpt-4.1-mini", 0.40, 1.60, Some(0.10), None),
    ("openai", "gpt-4.1-nano", 0.10, 0.40, Some(0.025), None),
    ("openai", "o3", 2.00, 8.00, Some(0.50), None),
    ("openai", "o3-mini", 1.10, 4.40, Some(0.55), None),
    ("openai", "o4-mini", 1.10, 4.40, Some(0.275), None),
    ("openai", "gpt-5", 1.25, 10.00, Some(0.125), None),
    ("openai", "gpt-5-mini", 0.25, 2.00, Some(0.025), None),
    ("openai", "gpt-5-nano", 0.05, 0.40, Some(0.005), None),
    (
        "anthropic",
        "claude-opus-4-1",
        15.00,
        75.00,
        Some(1.50),
        Some(18.75),
    ),
    (
        "anthropic",
        "claude-sonnet-4-5",
        3.00,
        15.00,
        Some(0.30),
        Some(3.75),
    ),
    (
        "anthropic",
        "claude-sonnet-4",
        3.00,
        15.00,
        Some(0.30),
        Some(3.75),
    ),
    (
        "anthropic",
        "claude-haiku-4-5",
        1.00,
        5.00,
        Some(0.10),
        Some(1.25),
    ),
    (
        "anthropic",
        "claude-3-5-haiku",
        0.80,
        4.00,
        Some(0.08),
        Some(1.00),
    ),
    ("gemini", "gemini-2.5-pro", 1.25, 10.00, Some(0.125), None),
    ("gemini", "gemini-2.5-flash", 0.30, 2.50, Some(0.03), None),
    (
        "gemini",
        "gemini-2.5-flash-lite",
        0.10,
        0.40,
        Some(0.01),
        None,
    ),
    ("gemini", "gemini-2.0-flash", 0.10, 0.40, Some(0.025), None),
];

/// Prices by model name: from a file (or kept by a run), then the built-in list prices of
/// each provider's own models.
#[derive(Debug, Clone)]
pub struct PriceTable {
    /// `--prices` entries (or a run's kept prices), by `provider:model` or `model`.
    prices: HashMap<String, Price>,
    /// Whether the built-in list prices apply (not to a resumed run's kept table).
    list: bool,
    /// The `--prices` file the table was read from, if any.
    source: Option<PriceSource>,
}

/// The `--prices` file a table was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriceSource {
    /// The path as given.
    pub given: String,
    /// SHA-256 of its bytes when read (lowercase hex).
    pub sha256: String,
}

/// Why a price file could not be used.
#[derive(Debug, thiserror::Error)]
#[error("failed to read price file `{path}`: {message}")]
pub struct PriceError {
    /// The file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Default for PriceTable {
    /// The built-in list prices alone.
    fn default() -> Self {
        PriceTable {
            prices: HashMap::new(),
            list: true,
            source: None,
        }
    }
}

/// The built-in list prices of `provider`'s own models, by model name.
fn list_prices(provider: &str) -> impl Iterator<Item = (&'static str, Price)> + Clone + '_ {
    BUILT_IN
        .iter()
        .filter(move |(p, ..)| *p == provider)
        .map(|(_, m, i, o, cached, write)| {
            (
                *m,
                Price {
                    input_per_mtok: *i,
                    output_per_mtok: *o,
                    cached_input_per_mtok: *cached,
                    cache_write_per_mtok: *write,
                },
            )
        })
}

impl PriceTable {
    /// The built-in table with the entries of `path` (YAML or JSON: a map from
    /// `model` or `provider:model` to `{input_per_mtok, output_per_mtok}`, optionally
    /// with `cached_input_per_mtok` and `cache_write_per_mtok`) on top.
    pub fn with_file(path: &Path) -> Result<PriceTable, PriceError> {
        let err = |message: String| PriceError {
            path: path.display().to_string(),
            message,
        };
        let bytes = std::fs::read(path).map_err(|e| err(e.to_string()))?;
        let sha256 = crate::util::digest::sha256_hex(&bytes);
        let text =
            String::from_utf8(bytes).map_err(|_| err("the file is not UTF-8 text".into()))?;
        let extra: HashMap<String, FilePrice> =
            serde_saphyr::from_str_with_options(&text, crate::util::yaml::options())
                .map_err(|e| err(parse_message(&e)))?;
        // Every bad price is listed, in file order.
        let mut problems: Vec<(u64, String)> = Vec::new();
        let mut table = PriceTable::default();
        for (model, p) in extra {
            let fields = [
                ("input_per_mtok", Some(&p.input_per_mtok)),
                ("output_per_mtok", Some(&p.output_per_mtok)),
                ("cached_input_per_mtok", p.cached_input_per_mtok.as_ref()),
                ("cache_write_per_mtok", p.cache_write_per_mtok.as_ref()),
            ];
            for (field, v) in fields {
                let Some(v) = v else { continue };
                if let Err(why) = check_price(v.value) {
                    problems.push((
                        v.referenced.line(),
                        format!(
                            "line {}: `{model}` field `{field}` {why}",
                            v.referenced.line()
                        ),
                    ));
                }
            }
            table.prices.insert(
                model,
                Price {
                    input_per_mtok: p.input_per_mtok.value,
                    output_per_mtok: p.output_per_mtok.value,
                    cached_input_per_mtok: p.cached_input_per_mtok.map(|v| v.value),
                    cache_write_per_mtok: p.cache_write_per_mtok.map(|v| v.value),
                },
            );
        }
        if !problems.is_empty() {
            problems.sort();
            let lines: Vec<String> = problems.into_iter().map(|(_, m)| m).collect();
            return Err(err(lines.join("; ")));
        }
        table.source = Some(PriceSource {
            given: path.display().to_string(),
            sha256,
        });
        Ok(table)
    }

    /// The `--prices` file the table was read from, if any.
    pub fn source(&self) -> Option<&PriceSource> {
        self.source.as_ref()
    }

    /// The price of `model` of `provider`: an exact `provider:model` or `model` entry of
    /// the file, else the provider's own list price of `model` (built in: OpenAI's for
    /// `openai`, Anthropic's for `anthropic`, Gemini's for `gemini`; none for a server
    /// that only speaks a provider's protocol, such as `openai-compatible` or `ollama`),
    /// else the longest of those names that `model` starts with followed by `-` (so
    /// dated snapshots such as `gpt-4o-mini-2024-07-18` find `gpt-4o-mini`).
    pub fn lookup(&self, provider: &str, model: &str) -> Option<Price> {
        let own = format!("{provider}:{model}");
        if let Some(p) = self.prices.get(&own).or_else(|| self.prices.get(model)) {
            return Some(*p);
        }
        let list = list_prices(if self.list { provider } else { "" });
        if let Some((_, p)) = list.clone().find(|(name, _)| *name == model) {
            return Some(p);
        }
        // The file's names (bare, or this provider's) before the list's at equal length.
        let prefix = format!("{provider}:");
        let file = self
            .prices
            .iter()
            .map(|(k, p)| (k.strip_prefix(&prefix).unwrap_or(k), *p, 1));
        file.chain(list.map(|(name, p)| (name, p, 0)))
            .filter(|(name, ..)| {
                model.len() > name.len()
                    && model.starts_with(name)
                    && model.as_bytes()[name.len()] == b'-'
            })
            .max_by_key(|(name, _, from_file)| (name.len(), *from_file))
            .map(|(_, p, _)| p)
    }
}

/// The prices a run charged, as `run.json` keeps them (`settings.prices`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunPrices {
    /// The `--prices` file as given, when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// SHA-256 of that file when the run began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_sha256: Option<String>,
    /// The price of each target's model that has one, by `provider:model`; a target's
    /// model that is not here had no price.
    #[serde(default)]
    pub models: BTreeMap<String, Price>,
}

impl RunPrices {
    /// What a run charging `table` for the `(provider, model)` of its targets keeps.
    pub fn of<'a>(
        table: &PriceTable,
        models: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> RunPrices {
        RunPrices {
            file: table.source.as_ref().map(|s| s.given.clone()),
            file_sha256: table.source.as_ref().map(|s| s.sha256.clone()),
            models: models
                .into_iter()
                .filter_map(|(provider, model)| {
                    let p = table.lookup(provider, model)?;
                    Some((format!("{provider}:{model}"), p))
                })
                .collect(),
        }
    }

    /// The table charging exactly these prices: each kept `provider:model` its price,
    /// every other model none (a resumed run charges what the run began with, whatever
    /// the built-in table of this version says). `aliases` gives more `provider:model`
    /// names the price of a kept one (a resumed `scripted:FILE` target opens its file by
    /// another path). Its source is the run's file.
    pub fn table(&self, aliases: impl IntoIterator<Item = (String, String)>) -> PriceTable {
        let mut prices: HashMap<String, Price> =
            self.models.iter().map(|(k, p)| (k.clone(), *p)).collect();
        for (name, kept) in aliases {
            if let Some(p) = self.models.get(&kept) {
                prices.insert(name, *p);
            }
        }
        PriceTable {
            prices,
            list: false,
            source: self.file.as_ref().map(|given| PriceSource {
                given: given.clone(),
                sha256: self.file_sha256.clone().unwrap_or_default(),
            }),
        }
    }

    /// Every stored price that is not one (only an edited `run.json` has one), in words.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (model, p) in &self.models {
            for (field, v) in p.rates() {
                if let Err(why) = check_price(v) {
                    out.push(format!("`{model}` field `{field}` {why}"));
                }
            }
        }
        out
    }

    /// How `other` charges the same models differently, one line per model, e.g.
    /// `` `openai:gpt-4o-mini`: input 0.15 → 0.2, output 0.6 → 0.6 USD per million tokens``,
    /// then any cache rate that differs (`; cached input 0.075 → none`);
    /// empty when every model costs the same under both.
    pub fn changes(&self, other: &RunPrices) -> Vec<String> {
        let keys: std::collections::BTreeSet<&String> =
            self.models.keys().chain(other.models.keys()).collect();
        let show = |p: Option<&Price>| {
            p.map_or("no price".to_string(), |p| {
                format!(
                    "input {} / output {} USD per million tokens",
                    p.input_per_mtok, p.output_per_mtok
                )
            })
        };
        // A cache rate that differs is told after the input and output rates, so the
        // line reads as before for prices without one.
        let extra = |a: Option<&Price>, b: Option<&Price>| {
            let rate = |p: Option<&Price>, f: fn(&Price) -> Option<f64>| {
                p.and_then(f).map_or("none".to_string(), |v| v.to_string())
            };
            let mut out = String::new();
            for (name, f) in [
                (
                    "cached input",
                    (|p: &Price| p.cached_input_per_mtok) as fn(&Price) -> _,
                ),
                ("cache write", |p: &Price| p.cache_write_per_mtok),
            ] {
                let (x, y) = (rate(a, f), rate(b, f));
                if x != y {
                    out.push_str(&format!("; {name} {x} → {y}"));
                }
            }
            out
        };
        keys.into_iter()
            .filter_map(|k| {
                let (a, b) = (self.models.get(k), other.models.get(k));
                (a != b).then(|| format!("`{k}`: {} → {}{}", show(a), show(b), extra(a, b)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_by_hand() {
        let t = PriceTable::default();
        let p = t.lookup("openai", "gpt-4o-mini").unwrap();
        // 1,000 in × $0.15/M + 200 out × $0.60/M = $0.00015 + $0.00012 = $0.00027.
        assert!((p.cost(1000, 200) - 0.00027).abs() < 1e-12);
    }

    #[test]
    fn dated_snapshots_use_the_longest_prefix() {
        let t = PriceTable::default();
        assert_eq!(
            t.lookup("openai", "gpt-4o-mini-2024-07-18"),
            t.lookup("openai", "gpt-4o-mini")
        );
        assert_eq!(
            t.lookup("openai", "gpt-4o-2024-08-06"),
            t.lookup("openai", "gpt-4o")
        );
        assert_eq!(t.lookup("openai", "gpt-4ox"), None);
        assert_eq!(t.lookup("scripted", "oracle"), None);
    }

    #[test]
    fn list_prices_are_the_providers_own_and_a_file_prices_any_server() {
        let t = PriceTable::default();
        // OpenAI's list price is for OpenAI's models at `openai`, dated snapshots too…
        assert!(t.lookup("openai", "gpt-4o-mini").is_some());
        assert!(
            t.lookup("anthropic", "claude-sonnet-4-5-20250929")
                .is_some()
        );
        assert!(t.lookup("gemini", "gemini-2.5-flash").is_some());
        // …not for a model of that name on a server that only speaks its protocol
        // (self-hosted or third-party), nor for another provider's list.
        assert_eq!(t.lookup("openai-compatible", "gpt-4o-mini"), None);
        assert_eq!(t.lookup("ollama", "gpt-4o-mini"), None);
        assert_eq!(t.lookup("anthropic", "gpt-4o-mini"), None);
        // A `--prices` entry prices it, by `provider:model` or by bare name.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.yaml");
        std::fs::write(
            &path,
            "\"openai-compatible:gpt-4o-mini\": {input_per_mtok: 0, output_per_mtok: 0}\nqwen2.5: {input_per_mtok: 0.1, output_per_mtok: 0.2}\n",
        )
        .unwrap();
        let t = PriceTable::with_file(&path).unwrap();
        assert_eq!(
            t.lookup("openai-compatible", "gpt-4o-mini"),
            Some(price(0.0, 0.0))
        );
        assert_eq!(t.lookup("ollama", "qwen2.5-7b"), Some(price(0.1, 0.2)));
        // The file's entry wins over a list price of the same length.
        std::fs::write(&path, "gpt-4o: {input_per_mtok: 9, output_per_mtok: 9}\n").unwrap();
        let t = PriceTable::with_file(&path).unwrap();
        assert_eq!(
            t.lookup("openai", "gpt-4o-2024-08-06"),
            Some(price(9.0, 9.0))
        );
        assert_eq!(
            t.lookup("openai", "gpt-4o-mini"),
            Some(Price {
                cached_input_per_mtok: Some(0.075),
                ..price(0.15, 0.60)
            })
        );
    }

    #[test]
    fn the_built_in_prices_are_all_valid() {
        for (provider, model, ..) in BUILT_IN {
            let p = PriceTable::default().lookup(provider, model).unwrap();
            for (field, v) in p.rates() {
                assert!(check_price(v).is_ok(), "{model} {field}");
            }
            // A cache read never costs more than fresh input.
            assert!(
                p.cached_input_per_mtok.unwrap() <= p.input_per_mtok,
                "{model}"
            );
        }
    }

    #[test]
    fn prices_must_be_finite_non_negative_and_per_million() {
        assert!(check_price(0.0).is_ok());
        assert!(check_price(MAX_PRICE_PER_MTOK).is_ok());
        for (p, want) in [
            (-0.15, "can not be negative"),
            (f64::NAN, "finite"),
            (f64::INFINITY, "finite"),
            (2e6, "per million tokens"),
        ] {
            let e = check_price(p).unwrap_err();
            assert!(e.contains(want), "{p}: {e}");
        }
    }

    #[test]
    fn bad_prices_in_a_file_are_named_with_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.yaml");
        std::fs::write(
            &path,
            "gpt-4o-mini:\n  input_per_mtok: 0.15\n  output_per_mtok: -0.6\nmine:\n  input_per_mtok: -1\n  output_per_mtok: 1\n",
        )
        .unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "failed to read price file `{}`: line 3: `gpt-4o-mini` field `output_per_mtok` is -0.6: a price can not be negative; line 5: `mine` field `input_per_mtok` is -1: a price can not be negative",
                path.display()
            )
        );
        // JSON is YAML too: the same check, with the JSON line; YAML's infinity and
        // not-a-number are refused like any other non-price.
        std::fs::write(
            &path,
            "{\"m\": {\"input_per_mtok\": 1,\n \"output_per_mtok\": -2}}",
        )
        .unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("line 2: `m` field `output_per_mtok` is -2"),
            "{e}"
        );
        std::fs::write(
            &path,
            "m:\n  input_per_mtok: twelve\n  output_per_mtok: 1\n",
        )
        .unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert!(
            e.ends_with("line 2, column 19: a price must be a number (USD per million tokens)"),
            "{e}"
        );
        std::fs::write(&path, "m: {input_per_mtok: .inf, output_per_mtok: .nan}\n").unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        assert!(!e.contains("policy"), "{e}");
    }

    #[test]
    fn a_file_overrides_and_extends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.yaml");
        std::fs::write(&path, "\"ollama:qwen2.5\": {input_per_mtok: 0, output_per_mtok: 0}\ngpt-4o-mini: {input_per_mtok: 1, output_per_mtok: 2}\n").unwrap();
        let t = PriceTable::with_file(&path).unwrap();
        assert_eq!(t.lookup("ollama", "qwen2.5").unwrap().input_per_mtok, 0.0);
        assert_eq!(
            t.lookup("openai", "gpt-4o-mini").unwrap().output_per_mtok,
            2.0
        );
    }

    #[test]
    fn a_duplicate_model_is_named_in_plain_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.yaml");
        std::fs::write(
            &path,
            "m: {input_per_mtok: 1, output_per_mtok: 2}\nm: {input_per_mtok: 3, output_per_mtok: 4}\n",
        )
        .unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert!(e.contains("line 2, column 1: duplicate key `m`"), "{e}");
        assert!(!e.contains("DuplicateKeyPolicy"), "{e}");
    }

    fn price(i: f64, o: f64) -> Price {
        Price::new(i, o)
    }

    #[test]
    fn a_run_keeps_the_price_of_each_target_and_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.yaml");
        std::fs::write(
            &path,
            "gpt-4o-mini: {input_per_mtok: 1, output_per_mtok: 2}\n",
        )
        .unwrap();
        let table = PriceTable::with_file(&path).unwrap();
        let kept = RunPrices::of(
            &table,
            [
                ("openai", "gpt-4o-mini-2024-07-18"),
                ("anthropic", "claude-haiku-4-5"),
                ("scripted", "oracle"),
            ],
        );
        assert_eq!(kept.file.as_deref(), path.to_str());
        // sha256 of the bytes written above (`sha256sum`).
        assert_eq!(
            kept.file_sha256.as_deref(),
            Some("562bc3441eb2edd6bb3bd96a80abf7b91ae3be5983858b361493c9a13cf07674")
        );
        // The dated snapshot is charged the file's price, the other its built-in one,
        // the scripted target none.
        assert_eq!(
            kept.models.into_iter().collect::<Vec<_>>(),
            [
                (
                    "anthropic:claude-haiku-4-5".to_string(),
                    Price {
                        cached_input_per_mtok: Some(0.10),
                        cache_write_per_mtok: Some(1.25),
                        ..price(1.0, 5.0)
                    }
                ),
                ("openai:gpt-4o-mini-2024-07-18".to_string(), price(1.0, 2.0)),
            ]
        );
    }

    #[test]
    fn a_kept_table_charges_exactly_the_kept_prices() {
        let kept = RunPrices {
            file: Some("p.yaml".into()),
            file_sha256: Some("ab".into()),
            models: [("scripted:s.yaml".to_string(), price(3.0, 4.0))]
                .into_iter()
                .collect(),
        };
        let t = kept.table([(
            "scripted:/abs/s.yaml".to_string(),
            "scripted:s.yaml".to_string(),
        )]);
        assert_eq!(t.lookup("scripted", "s.yaml"), Some(price(3.0, 4.0)));
        assert_eq!(t.lookup("scripted", "/abs/s.yaml"), Some(price(3.0, 4.0)));
        // Not kept: no price, whatever the built-in table says.
        assert_eq!(t.lookup("openai", "gpt-4o-mini"), None);
        assert_eq!(
            t.source(),
            Some(&PriceSource {
                given: "p.yaml".into(),
                sha256: "ab".into()
            })
        );
    }

    #[test]
    fn changes_and_problems_are_told_per_model() {
        let a = RunPrices {
            models: [
                ("x:a".to_string(), price(1.0, 2.0)),
                ("x:b".to_string(), price(1.0, 1.0)),
            ]
            .into_iter()
            .collect(),
            ..RunPrices::default()
        };
        let mut b = a.clone();
        assert!(a.changes(&b).is_empty());
        b.models.insert("x:a".into(), price(1.5, 2.0));
        b.models.remove("x:b");
        assert_eq!(
            a.changes(&b),
            [
                "`x:a`: input 1 / output 2 USD per million tokens → input 1.5 / output 2 USD per million tokens",
                "`x:b`: input 1 / output 1 USD per million tokens → no price",
            ]
        );
        assert!(a.problems().is_empty());
        b.models.insert("x:c".into(), price(f64::NAN, -1.0));
        assert_eq!(
            b.problems(),
            [
                "`x:c` field `input_per_mtok` is NaN: a price must be a finite number",
                "`x:c` field `output_per_mtok` is -1: a price can not be negative",
            ]
        );
    }

    // ---- cache rates ----

    #[test]
    fn cache_reads_and_writes_are_charged_at_their_list_rates_by_hand() {
        let t = PriceTable::default();
        // Anthropic: 1,000 input tokens of which 800 read from the cache and 100 written
        // to it, 200 output, at Claude Sonnet 4.5's list rates ($3 input, $0.30 cache
        // read, $3.75 cache write, $15 output per million):
        //   100 fresh × 3 + 800 × 0.30 + 100 × 3.75 + 200 × 15
        //   = 300 + 240 + 375 + 3,000 = 3,915 per million = $0.003915.
        let p = t.lookup("anthropic", "claude-sonnet-4-5-20250929").unwrap();
        let u = Usage {
            cached_input_tokens: 800,
            cache_write_tokens: 100,
            ..Usage::new(1000, 200)
        };
        assert!(
            (p.cost_of(&u) - 0.003915).abs() < 1e-12,
            "{}",
            p.cost_of(&u)
        );
        // Charged as fresh input (the old cost) it was 1,000 × 3 + 3,000 = $0.006.
        assert!((p.cost(1000, 200) - 0.006).abs() < 1e-12);
        // OpenAI: the caching guide's 2,006 prompt tokens, 1,920 cached, 300 output, at
        // gpt-4o-mini's $0.15 / $0.075 / $0.60: 86 × 0.15 + 1,920 × 0.075 + 300 × 0.60
        //   = 12.9 + 144 + 180 = 336.9 per million.
        let p = t.lookup("openai", "gpt-4o-mini").unwrap();
        let u = Usage {
            cached_input_tokens: 1920,
            ..Usage::new(2006, 300)
        };
        assert!(
            (p.cost_of(&u) - 0.0003369).abs() < 1e-12,
            "{}",
            p.cost_of(&u)
        );
        // Reasoning is output: it changes nothing once inside output_tokens.
        let thinking = Usage {
            reasoning_tokens: 250,
            ..u
        };
        assert_eq!(p.cost_of(&thinking), p.cost_of(&u));
        // Gemini 2.5 Flash: 1,000 prompt tokens, 600 cached, 100 output:
        //   400 × 0.30 + 600 × 0.03 + 100 × 2.50 = 120 + 18 + 250 = 388 per million.
        let p = t.lookup("gemini", "gemini-2.5-flash").unwrap();
        let u = Usage {
            cached_input_tokens: 600,
            ..Usage::new(1000, 100)
        };
        assert!(
            (p.cost_of(&u) - 0.000388).abs() < 1e-12,
            "{}",
            p.cost_of(&u)
        );
    }

    #[test]
    fn a_price_without_cache_rates_charges_cached_tokens_as_input() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.yaml");
        std::fs::write(
            &path,
            "plain: {input_per_mtok: 2, output_per_mtok: 8}
\
             cached:\n  input_per_mtok: 2\n  output_per_mtok: 8\n  cached_input_per_mtok: 0.5\n  cache_write_per_mtok: 2.5\n",
        )
        .unwrap();
        let t = PriceTable::with_file(&path).unwrap();
        let u = Usage {
            cached_input_tokens: 600,
            cache_write_tokens: 200,
            ..Usage::new(1000, 100)
        };
        // No cache rate: every input token at 2 (the cost before the rates were apart).
        let plain = t.lookup("x", "plain").unwrap();
        assert_eq!(plain, Price::new(2.0, 8.0));
        assert!((plain.cost_of(&u) - (1000.0 * 2.0 + 100.0 * 8.0) / 1e6).abs() < 1e-15);
        // With them: 200 × 2 + 600 × 0.5 + 200 × 2.5 + 100 × 8 = 2,000 per million.
        let cached = t.lookup("x", "cached").unwrap();
        assert_eq!(cached.cached_input_per_mtok, Some(0.5));
        assert_eq!(cached.cache_write_per_mtok, Some(2.5));
        assert!((cached.cost_of(&u) - 0.002).abs() < 1e-15);
        // A run keeps the cache rates only of a price that has them, so run.json of a
        // run without is as before.
        let kept = RunPrices::of(&t, [("x", "plain"), ("x", "cached")]);
        assert_eq!(
            serde_json::to_string(&kept.models).unwrap(),
            r#"{"x:cached":{"input_per_mtok":2.0,"output_per_mtok":8.0,"cached_input_per_mtok":0.5,"cache_write_per_mtok":2.5},"x:plain":{"input_per_mtok":2.0,"output_per_mtok":8.0}}"#
        );
        let back: BTreeMap<String, Price> =
            serde_json::from_str(&serde_json::to_string(&kept.models).unwrap()).unwrap();
        assert_eq!(back, kept.models);
    }

    #[test]
    fn a_bad_cache_rate_is_named_with_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("prices.yaml");
        std::fs::write(
            &path,
            "m:\n  input_per_mtok: 1\n  output_per_mtok: 2\n  cached_input_per_mtok: -0.1\n  cache_write_per_mtok: 2e9\n",
        )
        .unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert!(
            e.contains("line 4: `m` field `cached_input_per_mtok` is -0.1: a price can not be negative; line 5: `m` field `cache_write_per_mtok` is 2000000000: above"),
            "{e}"
        );
        // A misspelt key is refused, not ignored.
        std::fs::write(
            &path,
            "m: {input_per_mtok: 1, output_per_mtok: 2, cache_read_per_mtok: 0.1}\n",
        )
        .unwrap();
        let e = PriceTable::with_file(&path).unwrap_err().to_string();
        assert!(e.contains("cache_read_per_mtok"), "{e}");
        // A kept price is checked the same way, and a changed cache rate is told.
        let a = RunPrices {
            models: [(
                "x:m".to_string(),
                Price {
                    cached_input_per_mtok: Some(0.5),
                    ..price(1.0, 2.0)
                },
            )]
            .into_iter()
            .collect(),
            ..RunPrices::default()
        };
        let mut b = a.clone();
        b.models.get_mut("x:m").unwrap().cached_input_per_mtok = Some(f64::NAN);
        assert_eq!(
            b.problems(),
            ["`x:m` field `cached_input_per_mtok` is NaN: a price must be a finite number"]
        );
        b.models.get_mut("x:m").unwrap().cached_input_per_mtok = None;
        assert_eq!(
            a.changes(&b),
            [
                "`x:m`: input 1 / output 2 USD per million tokens → input 1 / output 2 USD per million tokens; cached input 0.5 → none"
            ]
        );
    }
}
