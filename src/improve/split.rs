//! The training and held-out sets of a search.
//!
//! Wordings are chosen on the training cases and accepted only on the held-out ones, so
//! a wording tuned to its examples does not count as better. The split is stratified by
//! case kind (should call, should not call, ambiguous), so both sets test triggering and
//! restraint alike, and seeded: the same cases, fraction and seed give the same split, in
//! whatever order the suite lists its cases (each kind's cases are shuffled from their
//! sorted ids).

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::suite::CaseKind;

/// Case ids of the two sets, each in the suite's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Cases the search runs every round.
    pub train: Vec<String>,
    /// Cases that decide whether a wording is accepted.
    pub holdout: Vec<String>,
}

/// Why cases could not be split.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    /// The fraction is not strictly between 0 and 1.
    #[error("--holdout {0} is not a fraction between 0 and 1 (exclusive)")]
    Fraction(f64),
    /// One of the sets would be empty.
    #[error("{cases} case(s) with --holdout {fraction} leave the {empty} set empty")]
    Empty {
        /// How many cases there are.
        cases: usize,
        /// The fraction asked for.
        fraction: f64,
        /// `training` or `held-out`.
        empty: &'static str,
    },
    /// Two cases share an id.
    #[error("case id `{0}` appears twice")]
    Duplicate(String),
}

impl SplitError {
    /// How to fix it.
    pub fn hint(&self) -> &'static str {
        match self {
            SplitError::Fraction(_) => "use a fraction such as 0.3 (30% of each kind held out)",
            SplitError::Empty { .. } => {
                "add cases, choose another --holdout, or give a held-out suite with --holdout-suite FILE"
            }
            SplitError::Duplicate(_) => "give every case its own id",
        }
    }
}

/// Split `cases` (id and kind, in suite order): of each kind, `fraction` of its cases
/// (rounded to the nearest whole case) are held out, chosen at random with `seed`.
pub fn split(cases: &[(&str, CaseKind)], fraction: f64, seed: u64) -> Result<Split, SplitError> {
    if !(fraction > 0.0 && fraction < 1.0) {
        return Err(SplitError::Fraction(fraction));
    }
    let mut all: Vec<&str> = cases.iter().map(|(id, _)| *id).collect();
    all.sort_unstable();
    if let Some(w) = all.windows(2).find(|w| w[0] == w[1]) {
        return Err(SplitError::Duplicate(w[0].to_string()));
    }
    let mut by_kind: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (id, kind) in cases {
        by_kind.entry(kind_key(*kind)).or_default().push(id);
    }
    let mut held = std::collections::HashSet::new();
    for (kind, ids) in &mut by_kind {
        ids.sort_unstable();
        // One stream per kind, so adding cases of one kind leaves the others' split alone.
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ fnv1a(kind.as_bytes()));
        ids.shuffle(&mut rng);
        let n = (ids.len() as f64 * fraction).round() as usize;
        held.extend(ids.iter().take(n).copied());
    }
    let (holdout, train): (Vec<&str>, Vec<&str>) = cases
        .iter()
        .map(|(id, _)| *id)
        .partition(|id| held.contains(id));
    let empty = if train.is_empty() {
        Some("training")
    } else if holdout.is_empty() {
        Some("held-out")
    } else {
        None
    };
    if let Some(empty) = empty {
        return Err(SplitError::Empty {
            cases: cases.len(),
            fraction,
            empty,
        });
    }
    Ok(Split {
        train: train.into_iter().map(str::to_string).collect(),
        holdout: holdout.into_iter().map(str::to_string).collect(),
    })
}

/// A stable name of a kind (its YAML spelling), for the per-kind random stream.
fn kind_key(kind: CaseKind) -> &'static str {
    match kind {
        CaseKind::ShouldCall => "should_call",
        CaseKind::ShouldNotCall => "should_not_call",
        CaseKind::Ambiguous => "ambiguous",
    }
}

/// FNV-1a: a fixed hash (std's hasher is seeded per process), to derive each kind's seed.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite(calls: usize, not: usize, ambiguous: usize) -> Vec<(String, CaseKind)> {
        let mut v = Vec::new();
        for i in 0..calls {
            v.push((format!("call-{i:02}"), CaseKind::ShouldCall));
        }
        for i in 0..not {
            v.push((format!("not-{i:02}"), CaseKind::ShouldNotCall));
        }
        for i in 0..ambiguous {
            v.push((format!("amb-{i:02}"), CaseKind::Ambiguous));
        }
        v
    }

    fn refs(v: &[(String, CaseKind)]) -> Vec<(&str, CaseKind)> {
        v.iter().map(|(id, k)| (id.as_str(), *k)).collect()
    }

    #[test]
    fn each_kind_is_held_out_in_proportion() {
        let cases = suite(20, 10, 3);
        let s = split(&refs(&cases), 0.3, 7).unwrap();
        let count = |prefix: &str| s.holdout.iter().filter(|id| id.starts_with(prefix)).count();
        assert_eq!(count("call-"), 6);
        assert_eq!(count("not-"), 3);
        assert_eq!(count("amb-"), 1, "0.9 rounds to 1");
        assert_eq!(s.train.len() + s.holdout.len(), 33);
        // Both keep the suite's order.
        let order = |ids: &[String]| {
            let pos: Vec<usize> = ids
                .iter()
                .map(|id| cases.iter().position(|(c, _)| c == id).unwrap())
                .collect();
            pos.windows(2).all(|w| w[0] < w[1])
        };
        assert!(order(&s.train) && order(&s.holdout));
    }

    #[test]
    fn the_same_seed_gives_the_same_split_in_any_suite_order() {
        let cases = suite(20, 10, 3);
        let a = split(&refs(&cases), 0.3, 7).unwrap();
        let mut reversed = refs(&cases);
        reversed.reverse();
        let b = split(&reversed, 0.3, 7).unwrap();
        let sorted = |v: &[String]| {
            let mut v = v.to_vec();
            v.sort();
            v
        };
        assert_eq!(sorted(&a.holdout), sorted(&b.holdout));
        let c = split(&refs(&cases), 0.3, 8).unwrap();
        assert_ne!(a.holdout, c.holdout, "another seed, another split");
    }

    #[test]
    fn adding_cases_of_one_kind_keeps_the_others_split() {
        let a = split(&refs(&suite(20, 10, 0)), 0.3, 1).unwrap();
        let b = split(&refs(&suite(20, 10, 6)), 0.3, 1).unwrap();
        let calls = |s: &Split| -> Vec<String> {
            s.holdout
                .iter()
                .filter(|id| !id.starts_with("amb-"))
                .cloned()
                .collect()
        };
        assert_eq!(calls(&a), calls(&b));
    }

    #[test]
    fn impossible_splits_say_why() {
        let cases = suite(1, 0, 0);
        let e = split(&refs(&cases), 0.3, 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "1 case(s) with --holdout 0.3 leave the held-out set empty"
        );
        assert!(e.hint().contains("--holdout-suite"));
        let e = split(&refs(&suite(2, 0, 0)), 0.9, 1).unwrap_err();
        assert!(e.to_string().contains("training set empty"), "{e}");
        for bad in [0.0, 1.0, -0.5, f64::NAN] {
            assert!(matches!(
                split(&refs(&suite(5, 5, 0)), bad, 1),
                Err(SplitError::Fraction(_))
            ));
        }
        let dup = [("a", CaseKind::ShouldCall), ("a", CaseKind::ShouldNotCall)];
        assert_eq!(
            split(&dup, 0.5, 1).unwrap_err(),
            SplitError::Duplicate("a".into())
        );
    }
}
