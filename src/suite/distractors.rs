//! `distractors:`: N other tools added to each case's tool list, as a matrix axis, to
//! measure tool selection as the tool count grows. Written form (serde) and compiled
//! form; the pool kinds are in [`pool`], the seeded choice in [`pick`].

pub mod pick;
pub mod pool;

use std::cell::Cell;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::span::Spanned;
use super::{Case, Tool};
use crate::chat::ToolDefinition;

pub use pool::{Pool, PoolError, PoolKind};

/// The seed used when a suite gives none (so a suite without `seed` still picks the
/// same tools everywhere).
pub const DEFAULT_SEED: u64 = 0;

/// `distractors:` as written.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DistractorsSpec {
    /// Where the extra tools come from: an MCP snapshot file, a LiveMCPTool-style
    /// catalogue, a suite file (its tools), or an MCP server.
    pub from: Spanned<String>,
    /// The counts to run, each a value of the axis (e.g. `[0, 10, 50, 100]`).
    pub n: Vec<Spanned<u32>>,
    /// The seed of each case's order over the pool (default 0): change it to draw
    /// other distractors.
    #[serde(default)]
    pub seed: Option<Spanned<u64>>,
}

/// `distractors:` compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct Distractors {
    /// The counts, in the order written.
    pub n: Vec<u32>,
    /// The seed of the per-case orders.
    pub seed: u64,
    /// `from` as written.
    pub from: String,
    /// What the pool was read as.
    pub kind: PoolKind,
    /// The pool's tools, as provider definitions.
    pub pool: Arc<Vec<ToolDefinition>>,
    /// Per case (by index into `suite.cases`): the pool indices of its distractors in
    /// its seeded order, as many as the largest count.
    pub picks: Vec<Vec<u32>>,
    /// Per case, the pool tools skipped because the case offers a tool of that name.
    pub clashes: Vec<Vec<String>>,
    /// Names the pool holds more than once (the first definition is used).
    pub duplicates: Vec<String>,
}

impl Distractors {
    /// The distractors of case `case` at count `n`: the first `n` of its order.
    pub fn for_case(&self, case: usize, n: u32) -> impl Iterator<Item = &ToolDefinition> {
        let picks = self.picks.get(case).map(Vec::as_slice).unwrap_or(&[]);
        picks[..(n as usize).min(picks.len())]
            .iter()
            .map(|&i| &self.pool[i as usize])
    }

    /// True when `name` is a distractor of case `case` at count `n`.
    pub fn is_distractor(&self, case: usize, n: u32, name: &str) -> bool {
        self.for_case(case, n).any(|t| t.name == name)
    }

    /// What a run should say about the pool: the names it holds twice and the tools
    /// skipped for clashing with a case's own (each case once).
    pub fn warnings(&self, cases: &[Case]) -> Vec<String> {
        let mut out = Vec::new();
        if !self.duplicates.is_empty() {
            out.push(format!(
                "distractor pool `{}` names {} tool(s) more than once ({}); the first definition of each is used",
                self.from,
                self.duplicates.len(),
                self.duplicates.join(", ")
            ));
        }
        // One line for all cases: a suite's own tools clash in every case alike.
        let mut skipped: indexmap::IndexMap<&str, Vec<&str>> = indexmap::IndexMap::new();
        for (case, names) in cases.iter().zip(&self.clashes) {
            for n in names {
                skipped
                    .entry(n.as_str())
                    .or_default()
                    .push(case.id.as_str());
            }
        }
        if !skipped.is_empty() {
            let list: Vec<String> = skipped
                .iter()
                .map(|(name, in_cases)| match in_cases.as_slice() {
                    [one] => format!("`{name}` (case `{one}`)"),
                    many => format!("`{name}` ({} cases)", many.len()),
                })
                .collect();
            out.push(format!(
                "distractor pool `{}`: {} tool(s) not added where a case offers a tool of the same name: {}",
                self.from,
                skipped.len(),
                list.join(", ")
            ));
        }
        out
    }
}

thread_local! {
    /// Set while a suite is read as a pool, so that suite's own `distractors:` is not
    /// followed (a suite naming itself, or two naming each other, would never end).
    static IN_POOL: Cell<bool> = const { Cell::new(false) };
}

/// A problem found while compiling `distractors:`: where, the field, what, how to fix.
pub(super) type Problem = ((u32, u32), String, String, Option<String>);

/// Compile `spec` for the suite at `path` whose cases (and suite-wide tools) are given.
/// Problems are returned located; `None` when the spec is absent or has problems.
pub(super) fn compile(
    spec: Option<&DistractorsSpec>,
    path: &Path,
    tools: &[Arc<Tool>],
    cases: &[Case],
    servers: &super::servers::ServerTools,
) -> (Option<Arc<Distractors>>, Vec<Problem>) {
    let Some(spec) = spec else {
        return (None, Vec::new());
    };
    if IN_POOL.with(Cell::get) {
        return (None, Vec::new());
    }
    let mut problems: Vec<Problem> = Vec::new();
    if spec.n.is_empty() {
        problems.push((
            spec.from.at(),
            "distractors.n".into(),
            "`n` is empty: the axis needs at least one count".into(),
            Some("e.g. `n: [0, 10, 50, 100]` (0 runs the case's own tools only)".into()),
        ));
    }
    let mut seen = HashSet::new();
    for (i, n) in spec.n.iter().enumerate() {
        if !seen.insert(n.value) {
            problems.push((
                n.at(),
                format!("distractors.n[{i}]"),
                format!("count {} is listed twice", n.value),
                Some("each count is one value of the axis: list it once".into()),
            ));
        }
    }
    let base = path.parent().unwrap_or_else(|| Path::new(""));
    IN_POOL.with(|f| f.set(true));
    let loaded = pool::load(&spec.from.value, base, servers);
    IN_POOL.with(|f| f.set(false));
    let pool = match loaded {
        Ok(p) => p,
        Err(e) => {
            problems.push((
                spec.from.at(),
                "distractors.from".into(),
                e.message,
                Some(e.hint),
            ));
            return (None, problems);
        }
    };
    let max = spec.n.iter().map(|n| n.value).max().unwrap_or(0);
    let seed = spec.seed.as_ref().map_or(DEFAULT_SEED, |s| s.value);
    let mut picks = Vec::with_capacity(cases.len());
    let mut clashes = Vec::with_capacity(cases.len());
    for case in cases {
        let offered: HashSet<&str> = match &case.tools {
            Some(own) => own.iter().map(|t| t.name.as_str()).collect(),
            None => tools.iter().map(|t| t.name.as_str()).collect(),
        };
        let clash: Vec<String> = pool
            .tools
            .iter()
            .filter(|t| offered.contains(t.name.as_str()))
            .map(|t| t.name.clone())
            .collect();
        let usable = pool.tools.len() - clash.len();
        if (max as usize) > usable && problems.is_empty() {
            let at = spec
                .n
                .iter()
                .find(|n| n.value == max)
                .map_or(spec.from.at(), Spanned::at);
            let clash_note = if clash.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} of its {} tools clash with case `{}`'s own)",
                    clash.len(),
                    pool.tools.len(),
                    case.id
                )
            };
            problems.push((
                at,
                "distractors.n".into(),
                format!(
                    "count {max} is larger than the {} pool `{}`, which has {usable} tools to add to case `{}`{clash_note}",
                    pool.kind.as_str(),
                    spec.from.value,
                    case.id
                ),
                Some(format!("use counts up to {usable}, or a larger pool")),
            ));
        }
        picks.push(pick::first_k(
            &pool.tools,
            seed,
            &case.id,
            &offered,
            max as usize,
        ));
        clashes.push(clash);
    }
    if !problems.is_empty() {
        return (None, problems);
    }
    let d = Distractors {
        n: spec.n.iter().map(|n| n.value).collect(),
        seed,
        from: spec.from.value.clone(),
        kind: pool.kind,
        pool: Arc::new(pool.tools),
        picks,
        clashes,
        duplicates: pool.duplicates,
    };
    (Some(Arc::new(d)), problems)
}
