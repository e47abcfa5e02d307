//! Token prices, in US dollars per million tokens, to turn usage into cost.
//!
//! The built-in table lists list prices of common models (standard tier, no caching or
//! batch discounts) as published by their providers in 2025; prices change, so
//! `--prices FILE` overrides or extends it. A model with no price has no cost (shown as
//! `-`), never a guessed one. A price must be a finite, non-negative number of USD per
//! million tokens, at most [`MAX_PRICE_PER_MTOK`] ([`check_price`]): a file with a bad one
//! is refused with its line and field.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Price of one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// USD per million input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
}

impl Price {
    /// The cost of a usage.
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input_per_mtok + output_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
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
}

const BUILT_IN: &[(&str, f64, f64)] = &[
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4.1", 2.00, 8.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1-nano", 0.10, 0.40),
    ("o3", 2.00, 8.00),
    ("o3-mini", 1.10, 4.40),
    ("o4-mini", 1.10, 4.40),
    ("gpt-5", 1.25, 10.00),
    ("gpt-5-mini", 0.25, 2.00),
    ("gpt-5-nano", 0.05, 0.40),
    ("claude-opus-4-1", 15.00, 75.00),
    ("claude-sonnet-4-5", 3.00, 15.00),
    ("claude-sonnet-4", 3.00, 15.00),
    ("claude-haiku-4-5", 1.00, 5.00),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("gemini-2.5-pro", 1.25, 10.00),
    ("gemini-2.5-flash", 0.30, 2.50),
    ("gemini-2.5-flash-lite", 0.10, 0.40),
    ("gemini-2.0-flash", 0.10, 0.40),
    ("deepseek-chat", 0.27, 1.10),
];

/// Prices by model name, built-in and from a file.
#[derive(Debug, Clone)]
pub struct PriceTable {
    prices: HashMap<String, Price>,
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
    fn default() -> Self {
        PriceTable {
            prices: BUILT_IN
                .iter()
                .map(|(m, i, o)| {
                    (
                        m.to_string(),
                        Price {
                            input_per_mtok: *i,
                            output_per_mtok: *o,
                        },
                    )
                })
                .collect(),
        }
    }
}

impl PriceTable {
    /// The built-in table with the entries of `path` (YAML or JSON: a map from
    /// `model` or `provider:model` to `{input_per_mtok, output_per_mtok}`) on top.
    pub fn with_file(path: &Path) -> Result<PriceTable, PriceError> {
        let err = |message: String| PriceError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let extra: HashMap<String, FilePrice> =
            serde_saphyr::from_str_with_options(&text, crate::util::yaml::options())
                .map_err(|e| err(parse_message(&e)))?;
        // Every bad price is listed, in file order.
        let mut problems: Vec<(u64, String)> = Vec::new();
        let mut table = PriceTable::default();
        for (model, p) in extra {
            for (field, v) in [
                ("input_per_mtok", &p.input_per_mtok),
                ("output_per_mtok", &p.output_per_mtok),
            ] {
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
                },
            );
        }
        if !problems.is_empty() {
            problems.sort();
            let lines: Vec<String> = problems.into_iter().map(|(_, m)| m).collect();
            return Err(err(lines.join("; ")));
        }
        Ok(table)
    }

    /// The price of `model` of `provider`: an exact `provider:model` or `model` entry,
    /// else the longest built-in name that `model` starts with followed by `-` (so
    /// dated snapshots such as `gpt-4o-mini-2024-07-18` find `gpt-4o-mini`).
    pub fn lookup(&self, provider: &str, model: &str) -> Option<Price> {
        if let Some(p) = self.prices.get(&format!("{provider}:{model}")) {
            return Some(*p);
        }
        if let Some(p) = self.prices.get(model) {
            return Some(*p);
        }
        self.prices
            .iter()
            .filter(|(name, _)| {
                model.len() > name.len()
                    && model.starts_with(name.as_str())
                    && model.as_bytes()[name.len()] == b'-'
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| *p)
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
    fn the_built_in_prices_are_all_valid() {
        for (model, i, o) in BUILT_IN {
            assert!(check_price(*i).is_ok(), "{model}");
            assert!(check_price(*o).is_ok(), "{model}");
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
}
