//! Token counts read from servers and files, which are untrusted.
//!
//! A server (or a hand-edited cassette, a BFCL result file) can send any JSON where a
//! token count belongs: `-5`, `1e30`, `"12"`, `18446744073709551615`. Stored as they come,
//! such values once saturated to 2^64 − 1 and summed with wrap-around into a
//! multi-trillion-dollar cost that stopped a run for budget. Every provider parser reads
//! its counts through [`count`], and a usage with any implausible count is dropped as a
//! whole ([`UsageReading::Implausible`]): the trial keeps a warning saying what was sent,
//! and the runner counts the tokens offline instead (marked estimated), as for a server
//! that sends no usage at all.
//!
//! A count is **plausible** when it is a JSON number that is a whole number (`12` or
//! `12.0`), not negative, and at most [`MAX_TOKENS_PER_REQUEST`]. Null or absent is "not
//! given", not implausible.

use crate::util::json_kind::json_kind;
use serde_json::{Map, Value};

use super::{Response, Usage};

/// The largest token count one request may plausibly report, per field (one billion).
/// The largest context windows today are a few million tokens; a billion leaves three
/// orders of magnitude of room and keeps every sum over a run far from overflow.
pub const MAX_TOKENS_PER_REQUEST: u64 = 1_000_000_000;

/// What a response's usage section yielded.
#[derive(Debug, Clone, PartialEq)]
pub enum UsageReading {
    /// No usage was given (absent, null, or no count in it).
    Absent,
    /// Plausible counts.
    Counted(Usage),
    /// At least one count was implausible; the text says which and why.
    Implausible(String),
}

impl UsageReading {
    /// Put the reading into `response`: counted usage is set, absent usage left unset,
    /// and implausible usage left unset with a warning naming the value (`source` says
    /// where it came from, e.g. `openai`, `cassette`).
    pub fn apply(self, response: &mut Response, source: &str) {
        match self {
            UsageReading::Absent => response.usage = None,
            UsageReading::Counted(u) => response.usage = Some(u),
            UsageReading::Implausible(why) => {
                response.usage = None;
                response.warnings.push(implausible_warning(source, &why));
            }
        }
    }
}

/// The warning kept on a trial whose usage was ignored.
pub fn implausible_warning(source: &str, why: &str) -> String {
    format!("implausible usage from {source} ignored: {why}")
}

/// The token count in `v`, named `field` in messages: `Ok(None)` when absent or null,
/// `Err` saying why when it is not a plausible count (see the module docs).
pub fn count(v: Option<&Value>, field: &str) -> Result<Option<u64>, String> {
    let n = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n,
        Some(other) => {
            let text = preview(other);
            return Err(format!(
                "`{field}` is {text}, {}, not a number",
                json_kind(other)
            ));
        }
    };
    if let Some(u) = n.as_u64() {
        return if u <= MAX_TOKENS_PER_REQUEST {
            Ok(Some(u))
        } else {
            Err(format!(
                "`{field}` is {n}, above the cap of {MAX_TOKENS_PER_REQUEST} tokens per request"
            ))
        };
    }
    if n.as_i64().is_some() {
        return Err(format!("`{field}` is {n}, a negative count"));
    }
    // A float: accepted only when it is a whole, non-negative number within the cap.
    let f = n.as_f64().unwrap_or(f64::NAN);
    if !f.is_finite() || f.fract() != 0.0 {
        Err(format!("`{field}` is {n}, not a whole number"))
    } else if f < 0.0 {
        Err(format!("`{field}` is {n}, a negative count"))
    } else if f > MAX_TOKENS_PER_REQUEST as f64 {
        Err(format!(
            "`{field}` is {n}, above the cap of {MAX_TOKENS_PER_REQUEST} tokens per request"
        ))
    } else {
        Ok(Some(f as u64))
    }
}

/// The first of `names` present (not null) in `obj`, read with [`count`].
pub fn first_count(obj: &Map<String, Value>, names: &[&str]) -> Result<Option<u64>, String> {
    for name in names {
        if let Some(n) = count(obj.get(*name), name)? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// Sum plausible counts; saturating, so a sum can never wrap (each count is at most
/// [`MAX_TOKENS_PER_REQUEST`], so in practice it never saturates either).
pub fn sum(counts: &[Option<u64>]) -> u64 {
    counts
        .iter()
        .flatten()
        .fold(0u64, |a, b| a.saturating_add(*b))
}

/// A usage from an input and an output count: absent when neither is given, the missing
/// one counting 0 otherwise.
pub fn reading(
    input: Result<Option<u64>, String>,
    output: Result<Option<u64>, String>,
) -> UsageReading {
    match (input, output) {
        (Err(a), Err(b)) => UsageReading::Implausible(format!("{a}; {b}")),
        (Err(e), _) | (_, Err(e)) => UsageReading::Implausible(e),
        (Ok(None), Ok(None)) => UsageReading::Absent,
        (Ok(i), Ok(o)) => UsageReading::Counted(Usage {
            input_tokens: i.unwrap_or(0),
            output_tokens: o.unwrap_or(0),
            estimated: false,
            ..Default::default()
        }),
    }
}

/// The detail counts of a usage as read from a server, each with [`count`]: the part of
/// the input read from a prompt cache, the part written to one, and the part of the
/// output spent reasoning. `Ok(None)` is "not given" (counts 0).
#[derive(Debug, Clone, PartialEq)]
pub struct Details {
    /// Input tokens read from the cache.
    pub cached_input: Result<Option<u64>, String>,
    /// Input tokens written to the cache.
    pub cache_write: Result<Option<u64>, String>,
    /// Output tokens spent reasoning.
    pub reasoning: Result<Option<u64>, String>,
}

impl Default for Details {
    fn default() -> Self {
        Details {
            cached_input: Ok(None),
            cache_write: Ok(None),
            reasoning: Ok(None),
        }
    }
}

/// `reading` with the detail counts added: an implausible detail makes the whole usage
/// implausible, as an implausible total does, and so do details that do not fit in their
/// totals ([`check_parts`]). Details without totals (an absent reading) stay absent.
pub fn with_details(reading: UsageReading, details: Details) -> UsageReading {
    let UsageReading::Counted(mut u) = reading else {
        return reading;
    };
    let problems: Vec<String> = [
        &details.cached_input,
        &details.cache_write,
        &details.reasoning,
    ]
    .into_iter()
    .filter_map(|d| d.as_ref().err().cloned())
    .collect();
    if !problems.is_empty() {
        return UsageReading::Implausible(problems.join("; "));
    }
    let get = |d: &Result<Option<u64>, String>| d.as_ref().ok().copied().flatten().unwrap_or(0);
    u.cached_input_tokens = get(&details.cached_input);
    u.cache_write_tokens = get(&details.cache_write);
    u.reasoning_tokens = get(&details.reasoning);
    match check_parts(&u) {
        Ok(()) => UsageReading::Counted(u),
        Err(why) => UsageReading::Implausible(why),
    }
}

/// Why the detail counts of `u` do not fit in its totals: the cached and cache-write
/// parts of the input together above the input, or the reasoning part above the output.
/// A server that says more tokens came from the cache than were sent is as untrusted as
/// one sending a negative count, and pricing such a usage would charge tokens twice or
/// a negative number of fresh ones.
pub fn check_parts(u: &Usage) -> Result<(), String> {
    let cache = u.cached_input_tokens.saturating_add(u.cache_write_tokens);
    if cache > u.input_tokens {
        return Err(format!(
            "{} cached and {} cache-write input tokens are more than the {} input tokens",
            u.cached_input_tokens, u.cache_write_tokens, u.input_tokens
        ));
    }
    if u.reasoning_tokens > u.output_tokens {
        return Err(format!(
            "{} reasoning tokens are more than the {} output tokens",
            u.reasoning_tokens, u.output_tokens
        ));
    }
    Ok(())
}

/// The count at `path` (object keys, outermost first) in `obj`, read with [`count`] and
/// named by the dotted path in messages; `Ok(None)` when any step is absent or null.
pub fn nested_count(obj: &Map<String, Value>, path: &[&str]) -> Result<Option<u64>, String> {
    let Some((last, parents)) = path.split_last() else {
        return Ok(None);
    };
    let mut here = obj;
    for key in parents {
        match here.get(*key) {
            Some(Value::Object(inner)) => here = inner,
            // Null or absent: not given. Anything else (a number, a string) is no
            // section of counts: also not given, as an unknown field would be.
            _ => return Ok(None),
        }
    }
    count(here.get(*last), &path.join("."))
}

/// The first of `paths` present (not null) in `obj`, read with [`nested_count`].
pub fn first_nested_count(
    obj: &Map<String, Value>,
    paths: &[&[&str]],
) -> Result<Option<u64>, String> {
    for path in paths {
        if let Some(n) = nested_count(obj, path)? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// A value as short JSON text for a message.
fn preview(v: &Value) -> String {
    let text = v.to_string();
    let cut: String = text.chars().take(40).collect();
    if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(v: Value) -> Result<Option<u64>, String> {
        count(Some(&v), "completion_tokens")
    }

    #[test]
    fn plausible_counts_are_read() {
        assert_eq!(one(json!(0)), Ok(Some(0)));
        assert_eq!(one(json!(17)), Ok(Some(17)));
        assert_eq!(one(json!(12.0)), Ok(Some(12)));
        assert_eq!(one(json!(1_000_000_000u64)), Ok(Some(1_000_000_000)));
        assert_eq!(count(None, "x"), Ok(None));
        assert_eq!(one(Value::Null), Ok(None));
    }

    #[test]
    fn implausible_counts_say_why() {
        let cases = [
            (json!(-5), "`completion_tokens` is -5, a negative count"),
            (json!(-0.5), "-0.5, not a whole number"),
            (json!(-2.0), "-2.0, a negative count"),
            (json!(1e30), "1e+30, above the cap of 1000000000"),
            (json!(1.5), "1.5, not a whole number"),
            (json!("12"), "is \"12\", a string, not a number"),
            (json!(u64::MAX), "18446744073709551615, above the cap"),
            (json!(1_000_000_001u64), "1000000001, above the cap"),
            (json!(true), "a boolean, not a number"),
            (json!([1, 2]), "an array, not a number"),
        ];
        for (v, want) in cases {
            let e = one(v.clone()).unwrap_err();
            assert!(e.contains(want), "{v}: {e} (wanted {want})");
        }
    }

    #[test]
    fn readings_drop_the_whole_usage_when_one_count_is_bad() {
        assert_eq!(reading(Ok(None), Ok(None)), UsageReading::Absent);
        assert_eq!(
            reading(Ok(Some(5)), Ok(None)),
            UsageReading::Counted(Usage {
                input_tokens: 5,
                output_tokens: 0,
                estimated: false,
                ..Default::default()
            })
        );
        let r = reading(Ok(Some(5)), one(json!(-5)));
        assert!(
            matches!(r, UsageReading::Implausible(ref e) if e.contains("-5")),
            "{r:?}"
        );
        let mut response = Response::default();
        r.apply(&mut response, "openai");
        assert_eq!(response.usage, None);
        assert_eq!(
            response.warnings,
            vec![
                "implausible usage from openai ignored: `completion_tokens` is -5, a negative count"
            ]
        );
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        assert_eq!(sum(&[Some(3), None, Some(4)]), 7);
        assert_eq!(sum(&[Some(u64::MAX), Some(2)]), u64::MAX);
    }

    #[test]
    fn details_are_parts_of_their_totals() {
        let details = |c, w, r| Details {
            cached_input: Ok(c),
            cache_write: Ok(w),
            reasoning: Ok(r),
        };
        let totals = || reading(Ok(Some(100)), Ok(Some(10)));
        assert_eq!(
            with_details(totals(), details(Some(60), Some(40), Some(10))),
            UsageReading::Counted(Usage {
                cached_input_tokens: 60,
                cache_write_tokens: 40,
                reasoning_tokens: 10,
                ..Usage::new(100, 10)
            })
        );
        // Cached and written together above the input, reasoning above the output.
        for (d, want) in [
            (
                details(Some(61), Some(40), None),
                "61 cached and 40 cache-write",
            ),
            (
                details(Some(101), None, None),
                "101 cached and 0 cache-write",
            ),
            (
                details(None, None, Some(11)),
                "11 reasoning tokens are more than the 10",
            ),
        ] {
            let r = with_details(totals(), d);
            assert!(
                matches!(r, UsageReading::Implausible(ref e) if e.contains(want)),
                "{r:?}"
            );
        }
        // A bad detail is as bad as a bad total; details without totals stay absent.
        let bad = Details {
            reasoning: one(json!(-1)),
            ..details(None, None, None)
        };
        assert!(matches!(
            with_details(totals(), bad),
            UsageReading::Implausible(_)
        ));
        assert_eq!(
            with_details(reading(Ok(None), Ok(None)), details(Some(5), None, None)),
            UsageReading::Absent
        );
    }

    #[test]
    fn nested_counts_follow_their_path() {
        let obj = json!({"a": {"b": 3}, "n": null, "s": "x"});
        let obj = obj.as_object().unwrap();
        assert_eq!(nested_count(obj, &["a", "b"]), Ok(Some(3)));
        assert_eq!(nested_count(obj, &["n", "b"]), Ok(None));
        assert_eq!(nested_count(obj, &["s", "b"]), Ok(None));
        assert_eq!(nested_count(obj, &["missing"]), Ok(None));
        assert_eq!(
            first_nested_count(obj, &[&["x", "y"], &["a", "b"]]),
            Ok(Some(3))
        );
        let bad = json!({"a": {"b": -2}});
        assert!(
            nested_count(bad.as_object().unwrap(), &["a", "b"])
                .unwrap_err()
                .contains("`a.b` is -2")
        );
    }
}
