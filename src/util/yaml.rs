//! The YAML reading options every YAML file of the tool is read with (suites, scripted
//! model scripts, price tables): one place decides how a scalar is typed and how much a
//! document may cost to read.

use serde_saphyr::{Budget, Options};

/// Deepest YAML nesting accepted; JSON Schemas of real tools stay far below it.
pub const MAX_DEPTH: usize = 64;

/// YAML options: strict booleans and leading zeros kept as text, so `country: NO` and
/// `zip: 010` stay strings; budgets refuse bombs and deep nesting.
pub fn options() -> Options {
    options_for(0)
}

/// [`options`] for a document of `len` bytes. The node budget is what stops an
/// alias bomb (a few bytes that expand into millions of nodes), so it stays at 250,000
/// for small files and grows only with the text: a node takes at least two bytes of
/// plain YAML, so `len / 2` nodes can not come from expansion. Imported benchmarks are
/// big plain documents (BFCL's live_multiple is about 5 MB).
pub fn options_for(len: usize) -> Options {
    let mut budget = Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.max_aliases = 10_000;
    let nodes = (len / 2).max(250_000);
    budget.max_nodes = nodes;
    budget.max_events = nodes.saturating_mul(4);
    let mut options = Options::default();
    options.budget = Some(budget);
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    options.with_snippet = false;
    options
}
