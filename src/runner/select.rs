//! Running part of a suite: cases picked by id pattern (`--case`) and by tag (`--tag`),
//! and a deterministic share of the trials (`--shard K/N`). What was picked is recorded
//! in `run.json` as a [`Selection`], so `--resume`, `report` and `merge` keep it.
//!
//! Patterns within `--case` and tags within `--tag` are alternatives (a case matches
//! any of them); the two flags together are an intersection (a case runs when it
//! matches a `--case` pattern *and* has a `--tag`), so `--tag smoke --case 'beijing-*'`
//! narrows the smoke cases instead of widening them.
//!
//! A trial's shard depends only on its identity (target, variant, tool_choice, case id,
//! repeat), never on the order of the plan, the concurrency or the other trials: see
//! [`crate::score::record::TrialId::shard`].

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::suite::Suite;

/// The most shards a run can be split into (a guard against `--shard 1/4000000000`,
/// which would plan nothing useful).
pub const MAX_SHARDS: u32 = 10_000;

/// Characters that make a `--case` value a glob pattern.
const GLOB_CHARS: &[char] = &['*', '?', '['];

/// Most case ids or tags listed in a hint.
const LISTED: usize = 12;

/// `--shard K/N`: the K-th (1-based) of N shards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// K, from 1.
    pub index: u32,
    /// N.
    pub count: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard takes K/N (the K-th of N shards, 1 <= K <= N <= {MAX_SHARDS}), e.g. 2/3; got `{s}`"
            )
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n || n > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index: k, count: n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Some of the N shards of a run's trials: one for `run --shard K/N`, several for a
/// partial `merge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSet {
    /// N, the number of shards the trials were split into.
    pub count: u32,
    /// The shards held (1-based, ascending, no repeats).
    pub indices: Vec<u32>,
}

impl ShardSet {
    /// The set holding only `shard`.
    pub fn one(shard: Shard) -> ShardSet {
        ShardSet {
            count: shard.count,
            indices: vec![shard.index],
        }
    }

    /// True when shard `k` (1-based) is in the set.
    pub fn contains(&self, k: u32) -> bool {
        self.indices.binary_search(&k).is_ok()
    }

    /// True when every shard is in the set (the trials of the whole run).
    pub fn is_all(&self) -> bool {
        self.indices.len() == self.count as usize
    }

    /// Why the set cannot be a run's (a `run.json` edited by hand), if it cannot: N in
    /// 1..=[`MAX_SHARDS`], indices ascending, without repeats, each in 1..=N.
    pub fn check(&self) -> Result<(), String> {
        let n = self.count;
        if n == 0 || n > MAX_SHARDS {
            return Err(format!("a shard count of {n} (1 to {MAX_SHARDS})"));
        }
        if self.indices.is_empty()
            || !self.indices.windows(2).all(|w| w[0] < w[1])
            || self.indices.iter().any(|k| *k == 0 || *k > n)
        {
            return Err(format!(
                "shards {:?} of {n} (each from 1 to {n}, ascending, once)",
                self.indices
            ));
        }
        Ok(())
    }

    /// The shards not in the set, ascending.
    pub fn missing(&self) -> Vec<u32> {
        (1..=self.count).filter(|k| !self.contains(*k)).collect()
    }
}

impl fmt::Display for ShardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.indices.as_slice() {
            [k] => write!(f, "shard {k}/{}", self.count),
            ks => write!(f, "shards {} of {}", join(ks.iter(), ", "), self.count),
        }
    }
}

/// The part of a suite a run covers, as recorded in `run.json` (absent there when the
/// run covers every trial).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// `--case` patterns (ids or globs; a case matches any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<String>,
    /// `--tag` names (a case matches when it has any).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The shards of the trials held (absent: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardSet>,
    /// Cases selected by `cases` and `tags`.
    pub cases_selected: usize,
    /// Cases in the suite.
    pub cases_total: usize,
}

impl Selection {
    /// Check `--case` patterns and `--tag` names against `suite` and pick its cases.
    /// Returns the record for `run.json` and which cases run (`None`: all of them).
    pub fn new(
        suite: &Suite,
        patterns: &[String],
        tags: &[String],
        shards: Option<ShardSet>,
    ) -> Result<(Selection, Option<Vec<bool>>), SelectError> {
        if let Some(s) = &shards {
            s.check().map_err(SelectError::BadShards)?;
        }
        let mask = case_mask(suite, patterns, tags)?;
        let total = suite.cases.len();
        let selected = mask
            .as_ref()
            .map_or(total, |m| m.iter().filter(|b| **b).count());
        let selection = Selection {
            cases: patterns.to_vec(),
            tags: tags.to_vec(),
            shards,
            cases_selected: selected,
            cases_total: total,
        };
        Ok((selection, mask))
    }

    /// True when the run covers every trial of its matrix (nothing to record).
    pub fn is_everything(&self) -> bool {
        self.cases.is_empty() && self.tags.is_empty() && self.shards.is_none()
    }

    /// True when the run holds some shards only (its thresholds wait for the merge).
    pub fn is_sharded(&self) -> bool {
        self.shards.as_ref().is_some_and(|s| !s.is_all())
    }

    /// The flags that picked the cases, as typed: `--case a --tag smoke`.
    pub fn flags(&self) -> String {
        let cases = self.cases.iter().map(|c| format!("--case {c}"));
        let tags = self.tags.iter().map(|t| format!("--tag {t}"));
        join(cases.chain(tags), " ")
    }

    /// One line for report headers, e.g. `7 of 13 cases: --tag smoke; shard 2/3`
    /// (`None` for a run of every trial).
    pub fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        // Patterns that happen to select every case make no partial run.
        if !(self.cases.is_empty() && self.tags.is_empty())
            && self.cases_selected < self.cases_total
        {
            parts.push(format!(
                "{} of {} cases: {}",
                self.cases_selected,
                self.cases_total,
                self.flags()
            ));
        }
        if let Some(s) = self.shards.as_ref().filter(|s| !s.is_all()) {
            parts.push(s.to_string());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// One shard run joined by `toolgauge merge`, as recorded in the merged `run.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedShard {
    /// Its run directory, as given to `merge`.
    pub dir: String,
    /// The shards it held.
    pub shards: ShardSet,
    /// Trials it held.
    pub trials: u64,
    /// Its start (RFC 3339).
    pub started_at: String,
    /// Its end (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

/// A `--case` or `--tag` that cannot select anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// A `--case` value that is no id and not a valid glob pattern.
    #[error("--case `{pattern}` is not a valid pattern: {message}")]
    BadPattern {
        /// The value given.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// A `--case` pattern matching no case.
    #[error("--case `{pattern}` matches no case of suite `{suite}`")]
    NoCase {
        /// The pattern.
        pattern: String,
        /// The suite's name.
        suite: String,
        /// A near id or pattern, or the ids there are.
        hint: String,
    },
    /// A `--tag` no case has.
    #[error("--tag `{tag}` is on no case of suite `{suite}`")]
    NoTag {
        /// The tag.
        tag: String,
        /// The suite's name.
        suite: String,
        /// A near tag, or the tags there are.
        hint: String,
    },
    /// A shard set that no run makes (a `run.json` edited by hand).
    #[error("run.json records {0}")]
    BadShards(String),
    /// `--case` and `--tag` each match cases, but never the same ones.
    #[error("no case of suite `{suite}` matches both {flags}")]
    Disjoint {
        /// The suite's name.
        suite: String,
        /// The flags as typed.
        flags: String,
    },
}

impl SelectError {
    /// How to fix it.
    pub fn hint(&self) -> String {
        match self {
            SelectError::BadPattern { .. } => {
                "patterns use * (any characters), ? (one character) and [abc] (one of them); \
                 an id written whole matches itself"
                    .into()
            }
            SelectError::NoCase { hint, .. } | SelectError::NoTag { hint, .. } => hint.clone(),
            SelectError::BadShards(_) => {
                "the run directory was edited; run the shard again with --shard K/N".into()
            }
            SelectError::Disjoint { .. } => {
                "--case and --tag combine as an intersection: a case runs when it matches a \
                 --case pattern and also has one of the --tag names"
                    .into()
            }
        }
    }
}

/// Which cases of `suite` the patterns and tags select (`None` when neither is given).
fn case_mask(
    suite: &Suite,
    patterns: &[String],
    tags: &[String],
) -> Result<Option<Vec<bool>>, SelectError> {
    if patterns.is_empty() && tags.is_empty() {
        return Ok(None);
    }
    let n = suite.cases.len();
    let mut by_case = vec![patterns.is_empty(); n];
    for p in patterns {
        let glob = if p.contains(GLOB_CHARS) {
            Some(glob::Pattern::new(p))
        } else {
            None
        };
        let mut any = false;
        for (i, c) in suite.cases.iter().enumerate() {
            // An id written whole matches itself even when it holds glob characters.
            let hit = c.id == *p || matches!(&glob, Some(Ok(g)) if g.matches(&c.id));
            any |= hit;
            by_case[i] |= hit;
        }
        if !any {
            if let Some(Err(e)) = glob {
                return Err(SelectError::BadPattern {
                    pattern: p.clone(),
                    message: e.msg.to_string(),
                });
            }
            return Err(SelectError::NoCase {
                pattern: p.clone(),
                suite: suite.name.clone(),
                hint: case_hint(suite, p),
            });
        }
    }
    let mut by_tag = vec![tags.is_empty(); n];
    for tag in tags {
        let mut any = false;
        for (i, c) in suite.cases.iter().enumerate() {
            let hit = c.tags.iter().any(|t| t == tag);
            any |= hit;
            by_tag[i] |= hit;
        }
        if !any {
            return Err(SelectError::NoTag {
                tag: tag.clone(),
                suite: suite.name.clone(),
                hint: tag_hint(suite, tag),
            });
        }
    }
    let mask: Vec<bool> = by_case.iter().zip(&by_tag).map(|(a, b)| *a && *b).collect();
    if !mask.contains(&true) {
        let flags = Selection {
            cases: patterns.to_vec(),
            tags: tags.to_vec(),
            ..Selection::default()
        }
        .flags();
        return Err(SelectError::Disjoint {
            suite: suite.name.clone(),
            flags,
        });
    }
    Ok(Some(mask))
}

/// The hint for a pattern that matched no case: a near id (or pattern), else the ids.
fn case_hint(suite: &Suite, pattern: &str) -> String {
    let ids = || suite.cases.iter().map(|c| c.id.as_str());
    // An id's beginning written without `*`: `--case beijing` for `beijing-today`.
    if !pattern.contains(GLOB_CHARS)
        && !pattern.is_empty()
        && ids().any(|id| id.starts_with(pattern))
    {
        return format!("did you mean `{pattern}*`? (a pattern without * matches a whole id)");
    }
    let suggestion = match pattern.find(GLOB_CHARS) {
        // A pattern: correct the literal part before the first glob character.
        Some(at) if at > 0 => {
            let (head, rest) = pattern.split_at(at);
            // The typo may add or drop a character: try id beginnings one shorter and
            // one longer too.
            let width = head.chars().count();
            let mut heads: Vec<String> = ids()
                .flat_map(|id| {
                    (width.saturating_sub(1)..=width + 1).map(|w| id.chars().take(w).collect())
                })
                .collect();
            heads.sort_unstable();
            heads.dedup();
            closest(head, heads.iter().map(String::as_str)).map(|h| format!("{h}{rest}"))
        }
        Some(_) => None,
        None => closest(pattern, ids()).map(str::to_string),
    };
    match suggestion {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("the suite's case ids are: {}", listed(ids())),
    }
}

/// The hint for a tag on no case: a near tag, else the tags there are.
fn tag_hint(suite: &Suite, tag: &str) -> String {
    let mut known: Vec<&str> = suite
        .cases
        .iter()
        .flat_map(|c| c.tags.iter().map(String::as_str))
        .collect();
    known.sort_unstable();
    known.dedup();
    if known.is_empty() {
        return "the suite's cases have no tags; add `tags: [smoke]` to the cases to select".into();
    }
    match closest(tag, known.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("the suite's tags are: {}", listed(known.into_iter())),
    }
}

/// The candidate nearest to `word` (ignoring case), when it is near enough to be a typo:
/// at most a third of the longer word's characters differ (at least one may).
fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    let w_len = w.chars().count();
    candidates
        .filter_map(|c| {
            let c_len = c.chars().count();
            let limit = (w_len.max(c_len) / 3).max(1);
            // The distance is at least the difference in length: skip the quadratic
            // comparison when that alone is too far (a pasted blob against short ids).
            if w_len.abs_diff(c_len) > limit || c == word {
                return None;
            }
            let d = strsim::levenshtein(&w, &c.to_lowercase());
            (d <= limit).then_some((d, c))
        })
        .min()
        .map(|(_, c)| c)
}

/// Up to [`LISTED`] items, with a count of the rest.
fn listed<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let all: Vec<&str> = items.collect();
    let shown = join(all.iter().take(LISTED), ", ");
    if all.len() > LISTED {
        format!("{shown}, … ({} in all)", all.len())
    } else {
        shown
    }
}

fn join<T: fmt::Display>(items: impl Iterator<Item = T>, sep: &str) -> String {
    items.map(|i| i.to_string()).collect::<Vec<_>>().join(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUITE: &str = r#"
name: pick
tools:
  - name: get_weather
    description: Weather.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
cases:
  - {id: beijing-today, kind: should_not_call, prompt: a, tags: [zh, smoke]}
  - {id: beijing-tomorrow, kind: should_not_call, prompt: b, tags: [zh]}
  - {id: tokyo-now, kind: should_not_call, prompt: c, tags: [en, smoke]}
  - {id: "odd[1]", kind: should_not_call, prompt: d}
"#;

    fn suite() -> Suite {
        crate::suite::load_str(SUITE, std::path::Path::new("pick.yaml")).unwrap()
    }

    fn pick(cases: &[&str], tags: &[&str]) -> Result<Option<Vec<bool>>, SelectError> {
        let s: Vec<String> = cases.iter().map(|c| c.to_string()).collect();
        let t: Vec<String> = tags.iter().map(|c| c.to_string()).collect();
        Selection::new(&suite(), &s, &t, None).map(|(_, m)| m)
    }

    #[test]
    fn patterns_are_a_union_tags_a_union_and_the_two_an_intersection() {
        assert_eq!(pick(&[], &[]).unwrap(), None);
        let m = |v: [bool; 4]| Some(v.to_vec());
        assert_eq!(
            pick(&["beijing-*"], &[]).unwrap(),
            m([true, true, false, false])
        );
        assert_eq!(
            pick(&["tokyo-now", "beijing-t?day"], &[]).unwrap(),
            m([true, false, true, false])
        );
        assert_eq!(
            pick(&[], &["smoke"]).unwrap(),
            m([true, false, true, false])
        );
        assert_eq!(
            pick(&[], &["en", "zh"]).unwrap(),
            m([true, true, true, false])
        );
        assert_eq!(
            pick(&["beijing-*"], &["smoke"]).unwrap(),
            m([true, false, false, false])
        );
        // An id with glob characters, written whole, matches itself.
        assert_eq!(
            pick(&["odd[1]"], &[]).unwrap(),
            m([false, false, false, true])
        );
    }

    #[test]
    fn a_pattern_or_tag_matching_nothing_is_an_error_with_a_near_name() {
        let e = pick(&["beijng-*"], &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--case `beijng-*` matches no case of suite `pick`"
        );
        assert_eq!(e.hint(), "did you mean `beijing-*`?");
        let e = pick(&["tokyo-nwo"], &[]).unwrap_err();
        assert_eq!(e.hint(), "did you mean `tokyo-now`?");
        let e = pick(&["beijing"], &[]).unwrap_err();
        assert!(
            e.hint().starts_with("did you mean `beijing*`?"),
            "{}",
            e.hint()
        );
        let e = pick(&["paris"], &[]).unwrap_err();
        assert_eq!(
            e.hint(),
            "the suite's case ids are: beijing-today, beijing-tomorrow, tokyo-now, odd[1]"
        );
        let e = pick(&[], &["smok"]).unwrap_err();
        assert_eq!(e.to_string(), "--tag `smok` is on no case of suite `pick`");
        assert_eq!(e.hint(), "did you mean `smoke`?");
        let e = pick(&[], &["Smoke"]).unwrap_err();
        assert_eq!(e.hint(), "did you mean `smoke`?");
        let e = pick(&[], &["nightly"]).unwrap_err();
        assert_eq!(e.hint(), "the suite's tags are: en, smoke, zh");
        let e = pick(&["tokyo-*"], &["zh"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "no case of suite `pick` matches both --case tokyo-* --tag zh"
        );
        // A huge value gets the list, not a suggestion (and no quadratic comparison).
        let e = pick(&["x".repeat(100_000).as_str()], &[]).unwrap_err();
        assert!(
            e.hint().starts_with("the suite's case ids are: "),
            "{}",
            e.hint()
        );
        let e = pick(&["beijing-[t"], &[]).unwrap_err();
        assert!(matches!(e, SelectError::BadPattern { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("--case `beijing-[t` is not a valid pattern: "),
            "{e}"
        );
    }

    #[test]
    fn the_record_counts_cases_and_describes_itself() {
        let (sel, _) = Selection::new(
            &suite(),
            &[],
            &["smoke".into()],
            Some(ShardSet::one("2/3".parse().unwrap())),
        )
        .unwrap();
        assert_eq!((sel.cases_selected, sel.cases_total), (2, 4));
        assert_eq!(
            sel.describe().unwrap(),
            "2 of 4 cases: --tag smoke; shard 2/3"
        );
        assert!(sel.is_sharded());
        let (all, mask) = Selection::new(&suite(), &[], &[], None).unwrap();
        assert!(all.is_everything() && mask.is_none() && all.describe().is_none());
        let merged = ShardSet {
            count: 4,
            indices: vec![1, 3],
        };
        assert_eq!(merged.to_string(), "shards 1, 3 of 4");
        assert_eq!(merged.missing(), vec![2, 4]);
        assert_eq!(merged.check(), Ok(()));
        for (count, indices) in [
            (0, vec![1]),
            (3, vec![]),
            (3, vec![2, 1]),
            (3, vec![1, 1]),
            (3, vec![4]),
            (3, vec![0]),
        ] {
            let bad = ShardSet { count, indices };
            assert!(bad.check().is_err(), "{bad:?}");
            let e = Selection::new(&suite(), &[], &[], Some(bad)).unwrap_err();
            assert!(matches!(e, SelectError::BadShards(_)), "{e:?}");
        }
        // Patterns selecting every case describe no partial run.
        let (every, mask) = Selection::new(&suite(), &["*".into()], &[], None).unwrap();
        assert_eq!(mask, Some(vec![true; 4]));
        assert_eq!(every.describe(), None);
    }

    #[test]
    fn shard_flags_are_checked() {
        assert_eq!("2/3".parse::<Shard>(), Ok(Shard { index: 2, count: 3 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "1/10001", "-1/3", ""] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.contains(&format!("got `{bad}`")), "{e}");
        }
    }
}
