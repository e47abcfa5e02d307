//! Matching an episode's calls against a trajectory's steps, in the five match modes.
//!
//! Which calls take part: every call of the episode except a failed call that the
//! model retried (a later round calls the same tool again): the retry stands for it.
//! Calls of one round run concurrently, so their order within the round never counts.
//!
//! How a step fits a call: the tool must be the step's tool, each argument must satisfy
//! its matcher, and each `{from: TOOL.result.PATH}` argument must equal the value at
//! PATH in a successful result of TOOL returned in an earlier round (any such result:
//! the static matchers of the earlier steps say which calls those were). A call that
//! satisfies every matcher but not a `from` is a broken data flow, not a missing step.
//!
//! The unordered modes pair steps with calls by optimal assignment
//! ([`crate::util::assign`]), so a step with a loose matcher does not take the call a
//! stricter step needs. The ordered modes find the most steps matched in order with a
//! dynamic programme over rounds (steps given to one round form a block; within the
//! round they pair by maximum matching); fewer steps in order than in any order is
//! `wrong_order`.

use serde_json::Value;

use crate::episode::view::Placed;
use crate::judge::calls::Reason;
use crate::suite::ExtraArgs;
use crate::suite::matcher::show;
use crate::suite::trajectory::{FromRef, MatchMode, Step, StepArg, Trajectory};
use crate::util::assign;

/// What matching the steps found.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StepFacts {
    /// Steps in the trajectory.
    pub steps: u32,
    /// Steps fully matched by a call (in any order).
    pub matched: u32,
    /// Steps with a `from` argument that were paired with a call of their tool whose
    /// other arguments matched.
    pub data_flow_checked: u32,
    /// Of those, the steps whose `from` arguments held.
    pub data_flow_ok: u32,
}

/// How well a step fits a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fit {
    /// Another tool.
    None,
    /// The step's tool, with this many arguments right.
    Partial(u32),
    /// Every matcher holds, a `from` does not.
    FlowOnly,
    /// Every check holds.
    Full,
}

/// The calls with what matching needs: parsed arguments and results.
struct Calls<'e> {
    placed: Vec<Placed<'e>>,
    args: Vec<Option<Value>>,
}

/// Match `calls` (every call of the episode, in order) against `t`.
pub fn judge_steps(t: &Trajectory, all: &[Placed<'_>]) -> (Vec<Reason>, StepFacts) {
    // Only `from` reads results: parse those of the tools it names, no others.
    let mut read = Vec::new();
    for step in &t.steps {
        for (_, arg) in &step.args {
            from_tools(arg, &mut read);
        }
    }
    let results: Vec<Option<Value>> = all
        .iter()
        .map(|p| {
            p.record
                .outcome
                .as_ref()
                .filter(|o| !o.is_error && read.contains(&p.tool()))
                .map(crate::episode::view::CallOutcome::value)
        })
        .collect();
    let last = last_rounds(all);
    let eligible: Vec<usize> = (0..all.len())
        .filter(|&j| !(all[j].failed() && last[all[j].tool()] > all[j].round))
        .collect();
    let calls = Calls {
        placed: eligible.iter().map(|&j| all[j]).collect(),
        args: eligible
            .iter()
            .map(|&j| serde_json::from_str(&all[j].record.call.arguments).ok())
            .collect(),
    };
    // `from` reads every call's results (a retried failure has none anyway).
    let from = FromSource {
        all,
        results: &results,
    };
    let n = t.steps.len();
    let m = calls.placed.len();
    let fits: Vec<Vec<Fit>> = t
        .steps
        .iter()
        .map(|s| (0..m).map(|j| fit(s, &calls, j, &from)).collect())
        .collect();

    let max_args = t.steps.iter().map(|s| s.args.len()).max().unwrap_or(0) as i64;
    let k = n.max(m) as i64 + 1;
    let mid = (max_args + 2) * (k + 1);
    let full = mid * (k + 1);
    // Only calls of a step's tool can pair: the assignment runs on those columns (its
    // cost grows with the cube of the larger side).
    let weight = |f: Fit| match f {
        Fit::Full => full,
        Fit::FlowOnly => mid,
        Fit::Partial(a) => 1 + i64::from(a),
        Fit::None => 0,
    };
    let cols: Vec<usize> = (0..m)
        .filter(|&j| fits.iter().any(|row| row[j] != Fit::None))
        .collect();
    let cols = if cols.len() > PRUNE_ABOVE {
        candidate_columns(&fits, &cols, weight)
    } else {
        cols
    };
    let assignment: Vec<Option<usize>> =
        assign::best_assignment(n, cols.len(), |i, c| weight(fits[i][cols[c]]))
            .into_iter()
            .map(|c| c.map(|c| cols[c]))
            .collect();

    let mut reasons = Vec::new();
    let mut facts = StepFacts {
        steps: n as u32,
        ..StepFacts::default()
    };
    let mut used = vec![false; m];
    for (i, step) in t.steps.iter().enumerate() {
        let paired = assignment[i].map(|j| (j, fits[i][j]));
        let flows = step.args.iter().any(|(_, a)| a.uses_from());
        match paired {
            Some((j, Fit::Full)) => {
                used[j] = true;
                facts.matched += 1;
                if flows {
                    facts.data_flow_checked += 1;
                    facts.data_flow_ok += 1;
                }
            }
            Some((j, Fit::FlowOnly)) => {
                facts.data_flow_checked += 1;
                let broken = flow_failures(step, &calls, j, &from);
                reasons.push(
                    Reason::new(
                        "data_flow_broken",
                        format!(
                            "step {} `{}` (round {}): {}",
                            i + 1,
                            step.tool,
                            calls.placed[j].round + 1,
                            broken.join("; ")
                        ),
                    )
                    .in_rounds([calls.placed[j].round]),
                );
                if t.mode == MatchMode::Subset {
                    // Reported here; not a second time as a call outside the steps.
                    used[j] = true;
                }
            }
            other if t.mode != MatchMode::Subset => {
                let closest = match other {
                    Some((j, Fit::Partial(_))) => format!(
                        "; the closest call is `{}` {} in round {}",
                        step.tool,
                        clip(&calls.placed[j].record.call.arguments),
                        calls.placed[j].round + 1
                    ),
                    _ => String::new(),
                };
                reasons.push(Reason::new(
                    "missing_step",
                    format!(
                        "step {} ({}) was not called{closest}{}",
                        i + 1,
                        describe(step),
                        if m == 0 { " (no tool was called)" } else { "" }
                    ),
                ));
            }
            _ => {}
        }
    }

    if matches!(t.mode, MatchMode::Strict | MatchMode::InOrder) {
        let full_fits: Vec<Vec<bool>> = fits
            .iter()
            .map(|row| row.iter().map(|f| *f == Fit::Full).collect())
            .collect();
        let rounds: Vec<usize> = calls.placed.iter().map(|p| p.round).collect();
        let in_order = longest_in_order(&full_fits, &rounds);
        if in_order < facts.matched {
            reasons.push(Reason::new(
                "wrong_order",
                format!(
                    "{} of {} matched step(s) keep the order given: expected {}, the calls came as {}",
                    in_order,
                    facts.matched,
                    t.steps
                        .iter()
                        .map(|s| format!("`{}`", s.tool))
                        .collect::<Vec<_>>()
                        .join(" → "),
                    call_list(&calls.placed.iter().collect::<Vec<_>>())
                ),
            ));
        }
    }
    if matches!(
        t.mode,
        MatchMode::Strict | MatchMode::Unordered | MatchMode::Subset
    ) {
        let extra: Vec<&Placed<'_>> = calls
            .placed
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|(p, _)| p)
            .collect();
        if !extra.is_empty() {
            reasons.push(
                Reason::new(
                    "extra_calls",
                    format!(
                        "{} call(s) match none of the {} steps ({}): {}",
                        extra.len(),
                        n,
                        t.mode.as_str(),
                        call_list(&extra)
                    ),
                )
                .in_rounds(extra.iter().map(|p| p.round)),
            );
        }
    }
    (reasons, facts)
}

/// Above this many candidate calls, the assignment runs on [`candidate_columns`] only.
const PRUNE_ABOVE: usize = 64;

/// The calls that an optimal pairing of steps with calls needs at most: for each step,
/// its `n` best calls (`n` steps; the earlier call on equal weight), in call order.
///
/// Some optimal assignment uses only these: a step paired with a call outside its `n`
/// best can move to one of them that no other step holds (the other `n - 1` steps hold
/// at most `n - 1`) at no loss. The assignment's cost grows with the cube of the larger
/// side, so a long episode (hundreds of calls of a step's tool) costs what its steps do,
/// not its calls.
fn candidate_columns(fits: &[Vec<Fit>], cols: &[usize], weight: impl Fn(Fit) -> i64) -> Vec<usize> {
    let n = fits.len();
    let mut keep = vec![false; cols.len()];
    let mut order: Vec<usize> = Vec::with_capacity(cols.len());
    for row in fits {
        order.clear();
        order.extend((0..cols.len()).filter(|&c| weight(row[cols[c]]) > 0));
        order.sort_by_key(|&c| (std::cmp::Reverse(weight(row[cols[c]])), c));
        for &c in order.iter().take(n) {
            keep[c] = true;
        }
    }
    cols.iter()
        .zip(keep)
        .filter_map(|(&j, k)| k.then_some(j))
        .collect()
}

/// The tools whose results `arg`'s `from` references read, added to `out`.
fn from_tools<'t>(arg: &'t StepArg, out: &mut Vec<&'t str>) {
    match arg {
        StepArg::Match(_) => {}
        StepArg::From(r) => {
            if !out.contains(&r.tool.as_str()) {
                out.push(&r.tool);
            }
        }
        StepArg::Object { fields, .. } => fields.iter().for_each(|(_, a)| from_tools(a, out)),
        StepArg::Array(items) => items.iter().for_each(|a| from_tools(a, out)),
    }
}

/// The last round in which each tool was called.
pub fn last_rounds<'e>(calls: &[Placed<'e>]) -> std::collections::HashMap<&'e str, usize> {
    calls
        .iter()
        .map(|p| (p.record.call.name.as_str(), p.round))
        .collect()
}

/// Where `from` values come from: every call of the episode and its parsed result.
struct FromSource<'a, 'e> {
    all: &'a [Placed<'e>],
    results: &'a [Option<Value>],
}

impl FromSource<'_, '_> {
    /// The values `r` names in successful results returned before `round`.
    fn values(&self, r: &FromRef, round: usize) -> Vec<&Value> {
        self.all
            .iter()
            .zip(self.results)
            .take_while(|(p, _)| p.round < round)
            .filter(|(p, _)| p.tool() == r.tool)
            .filter_map(|(_, v)| v.as_ref().and_then(|v| r.lookup(v)))
            .collect()
    }
}

fn fit(step: &Step, calls: &Calls<'_>, j: usize, from: &FromSource<'_, '_>) -> Fit {
    if calls.placed[j].tool() != step.tool {
        return Fit::None;
    }
    let Some(Value::Object(obj)) = &calls.args[j] else {
        return Fit::Partial(0);
    };
    let round = calls.placed[j].round;
    let mut right = 0;
    let mut statics = true;
    let mut flows = true;
    for (name, arg) in &step.args {
        let (s, f) = check(arg, obj.get(name), round, from);
        if s && f {
            right += 1;
        }
        statics &= s;
        flows &= f;
    }
    statics &=
        step.extra == ExtraArgs::Allow || obj.keys().all(|k| step.args.iter().any(|(n, _)| n == k));
    match (statics, flows) {
        (true, true) => Fit::Full,
        (true, false) => Fit::FlowOnly,
        _ => Fit::Partial(right),
    }
}

/// (the matchers hold, the `from` references hold) for one argument.
fn check(
    arg: &StepArg,
    actual: Option<&Value>,
    round: usize,
    from: &FromSource<'_, '_>,
) -> (bool, bool) {
    match arg {
        StepArg::Match(m) => (m.matches(actual), true),
        StepArg::From(r) => (
            true,
            actual.is_some_and(|a| from.values(r, round).iter().any(|v| same(r, v, a))),
        ),
        StepArg::Object { fields, extra } => {
            let Some(obj) = actual.and_then(Value::as_object) else {
                return (false, true);
            };
            let extra_ok = *extra == ExtraArgs::Allow
                || obj.keys().all(|k| fields.iter().any(|(n, _)| n == k));
            fields.iter().fold((extra_ok, true), |(s, f), (n, a)| {
                let (s2, f2) = check(a, obj.get(n), round, from);
                (s && s2, f && f2)
            })
        }
        StepArg::Array(items) => match actual.and_then(Value::as_array) {
            Some(list) if list.len() == items.len() => {
                items.iter().zip(list).fold((true, true), |(s, f), (a, v)| {
                    let (s2, f2) = check(a, Some(v), round, from);
                    (s && s2, f && f2)
                })
            }
            _ => (false, true),
        },
    }
}

/// Whether an argument equals a value read from a result: strings after the suite's
/// normalisation, numbers by value, and a number equal to a string holding it (a value
/// passed on as text is still the value; its type is the schema check's business). The
/// scripted oracle uses it too, so what it plays is what the judge accepts.
pub fn same(r: &FromRef, want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::String(a), Value::String(b)) => r.norm.apply(a) == r.norm.apply(b),
        (Value::Number(a), Value::Number(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => a.as_f64() == b.as_f64(),
        },
        (Value::Number(n), Value::String(s)) | (Value::String(s), Value::Number(n)) => {
            s.trim() == n.to_string()
        }
        _ => want == got,
    }
}

/// Why the `from` arguments of a step do not hold for call `j`.
fn flow_failures(
    step: &Step,
    calls: &Calls<'_>,
    j: usize,
    from: &FromSource<'_, '_>,
) -> Vec<String> {
    let mut out = Vec::new();
    let round = calls.placed[j].round;
    let obj = calls.args[j].as_ref().and_then(Value::as_object);
    for (name, arg) in &step.args {
        walk_flows(
            arg,
            obj.and_then(|o| o.get(name)),
            name,
            round,
            from,
            &mut out,
        );
    }
    out
}

fn walk_flows(
    arg: &StepArg,
    actual: Option<&Value>,
    path: &str,
    round: usize,
    from: &FromSource<'_, '_>,
    out: &mut Vec<String>,
) {
    match arg {
        StepArg::Match(_) => {}
        StepArg::From(r) => {
            let values = from.values(r, round);
            if actual.is_some_and(|a| values.iter().any(|v| same(r, v, a))) {
                return;
            }
            let got = actual.map_or("<absent>".to_string(), show);
            out.push(if values.is_empty() {
                format!(
                    "`{path}` is {got}, but no result of `{}` before round {} has `{}`",
                    r.tool,
                    round + 1,
                    r.text
                )
            } else {
                format!(
                    "`{path}` is {got}, not the value of `{}` ({})",
                    r.text,
                    values
                        .iter()
                        .map(|v| show(v))
                        .collect::<Vec<_>>()
                        .join(" or ")
                )
            });
        }
        StepArg::Object { fields, .. } => {
            let obj = actual.and_then(Value::as_object);
            for (n, a) in fields {
                walk_flows(
                    a,
                    obj.and_then(|o| o.get(n)),
                    &format!("{path}.{n}"),
                    round,
                    from,
                    out,
                );
            }
        }
        StepArg::Array(items) => {
            let list = actual.and_then(Value::as_array);
            for (i, a) in items.iter().enumerate() {
                walk_flows(
                    a,
                    list.and_then(|l| l.get(i)),
                    &format!("{path}[{i}]"),
                    round,
                    from,
                    out,
                );
            }
        }
    }
}

/// The most steps matched (fully) in order: a step given to a later round than another
/// step must come after it in the trajectory; steps given to the same round may come in
/// any order. `f[g][i]`: the best for the first `i` steps using the first `g` rounds,
/// where the steps given to round `g - 1` form the block `k..i`.
/// `rounds[j]`: the round of call `j`, in call order.
fn longest_in_order(full: &[Vec<bool>], rounds: &[usize]) -> u32 {
    let n = full.len();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (j, &round) in rounds.iter().enumerate() {
        match groups.last_mut() {
            Some(g) if rounds[g[0]] == round => g.push(j),
            _ => groups.push(vec![j]),
        }
    }
    let mut f = vec![0u32; n + 1];
    for group in &groups {
        let mut next = f.clone();
        for (k, &before) in f.iter().enumerate() {
            // Grow the block k..i one step at a time, keeping a maximum matching of its
            // steps with this round's calls (one augmenting path per added step).
            let mut owner: Vec<Option<usize>> = vec![None; group.len()];
            let mut size = 0;
            for i in k..n {
                let mut seen = vec![false; group.len()];
                if augment(i, group, full, &mut owner, &mut seen) {
                    size += 1;
                }
                next[i + 1] = next[i + 1].max(before + size);
            }
        }
        // A step left out keeps the best of the steps before it.
        for i in 1..=n {
            next[i] = next[i].max(next[i - 1]);
        }
        f = next;
    }
    f[n]
}

/// Kuhn's augmenting path from `step` over `group`'s calls.
fn augment(
    step: usize,
    group: &[usize],
    full: &[Vec<bool>],
    owner: &mut [Option<usize>],
    seen: &mut [bool],
) -> bool {
    for (slot, &j) in group.iter().enumerate() {
        if seen[slot] || !full[step][j] {
            continue;
        }
        seen[slot] = true;
        if owner[slot].is_none_or(|s| augment(s, group, full, owner, seen)) {
            owner[slot] = Some(step);
            return true;
        }
    }
    false
}

/// A step as written: `tool {arg: matcher, ...}`.
pub fn describe(step: &Step) -> String {
    if step.args.is_empty() {
        return format!("`{}`", step.tool);
    }
    format!(
        "`{}` with {{{}}}",
        step.tool,
        step.args
            .iter()
            .map(|(n, a)| format!("{n}: {}", describe_arg(a)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn describe_arg(a: &StepArg) -> String {
    match a {
        StepArg::Match(m) => m.describe(),
        StepArg::From(r) => format!("{{from: {}}}", r.text),
        StepArg::Object { fields, .. } => format!(
            "{{{}}}",
            fields
                .iter()
                .map(|(n, a)| format!("{n}: {}", describe_arg(a)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        StepArg::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(describe_arg)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `tool` (round N), ... for at most 20 calls.
pub fn call_list(calls: &[&Placed<'_>]) -> String {
    let mut s = calls
        .iter()
        .take(20)
        .map(|p| format!("`{}` (round {})", clip(p.tool()), p.round + 1))
        .collect::<Vec<_>>()
        .join(", ");
    if calls.len() > 20 {
        s.push_str(&format!(" and {} more", calls.len() - 20));
    }
    s
}

/// A quote from the model, shortened (the record keeps it whole).
pub fn clip(text: &str) -> String {
    if text.chars().count() <= 120 {
        return text.to_string();
    }
    let head: String = text.chars().take(117).collect();
    format!("{head}...")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The most steps matched in order, by trying every assignment (small inputs only).
    fn brute_force(full: &[Vec<bool>], rounds: &[usize]) -> u32 {
        fn go(
            i: usize,
            full: &[Vec<bool>],
            rounds: &[usize],
            used: &mut Vec<bool>,
            last: usize,
        ) -> u32 {
            if i == full.len() {
                return 0;
            }
            // Leave step i out.
            let mut best = go(i + 1, full, rounds, used, last);
            for j in 0..rounds.len() {
                if full[i][j] && !used[j] && rounds[j] >= last {
                    used[j] = true;
                    best = best.max(1 + go(i + 1, full, rounds, used, rounds[j]));
                    used[j] = false;
                }
            }
            best
        }
        go(0, full, rounds, &mut vec![false; rounds.len()], 0)
    }

    #[test]
    fn steps_in_one_round_keep_order_in_any_listing() {
        // Steps a, b; round 0 lists b then a: both in order. Round 1 then a again.
        let full = vec![vec![false, true, true], vec![true, false, false]];
        assert_eq!(longest_in_order(&full, &[0, 0, 1]), 2);
        // b in round 0, a only in round 1: one of the two keeps the order.
        let full = vec![vec![false, true], vec![true, false]];
        assert_eq!(longest_in_order(&full, &[0, 1]), 1);
        assert_eq!(longest_in_order(&[], &[0, 1]), 0);
        assert_eq!(longest_in_order(&[vec![], vec![]], &[]), 0);
    }

    /// The total weight of the best assignment of `fits`' rows to the columns `cols`.
    fn best_total(fits: &[Vec<Fit>], cols: &[usize]) -> i64 {
        let w = |f: Fit| match f {
            Fit::Full => 100,
            Fit::FlowOnly => 10,
            Fit::Partial(a) => 1 + i64::from(a),
            Fit::None => 0,
        };
        assign::best_assignment(fits.len(), cols.len(), |i, c| w(fits[i][cols[c]]))
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| w(fits[i][cols[c]])))
            .sum()
    }

    fn any_fit() -> impl Strategy<Value = Fit> {
        prop_oneof![
            Just(Fit::None),
            (0u32..3).prop_map(Fit::Partial),
            Just(Fit::FlowOnly),
            Just(Fit::Full),
        ]
    }

    proptest! {
        #[test]
        fn the_candidate_calls_keep_the_best_assignment(
            n in 1usize..5,
            m in 0usize..14,
            cells in proptest::collection::vec(any_fit(), 70),
        ) {
            let fits: Vec<Vec<Fit>> =
                (0..n).map(|i| (0..m).map(|j| cells[i * 14 + j]).collect()).collect();
            let all: Vec<usize> = (0..m).collect();
            let w = |f: Fit| match f {
                Fit::Full => 100,
                Fit::FlowOnly => 10,
                Fit::Partial(a) => 1 + i64::from(a),
                Fit::None => 0,
            };
            let kept = candidate_columns(&fits, &all, w);
            prop_assert!(kept.len() <= n * n);
            prop_assert!(kept.windows(2).all(|p| p[0] < p[1]));
            prop_assert_eq!(best_total(&fits, &kept), best_total(&fits, &all));
        }

        #[test]
        fn the_in_order_programme_equals_brute_force(
            n in 0usize..5,
            rounds in proptest::collection::vec(0usize..3, 0..6),
            bits in proptest::collection::vec(any::<bool>(), 30),
        ) {
            let mut rounds = rounds;
            rounds.sort_unstable();
            let m = rounds.len();
            let full: Vec<Vec<bool>> =
                (0..n).map(|i| (0..m).map(|j| bits[i * 6 + j]).collect()).collect();
            prop_assert_eq!(longest_in_order(&full, &rounds), brute_force(&full, &rounds));
        }
    }
}
