//! `toolgauge cassette write`: a hand-written cassette from a script of responses.

use std::sync::Arc;

use super::AppError;
use super::settings::resolve;
use crate::cli::CassetteWriteArgs;
use crate::provider::Provider;
use crate::provider::cassette::{
    CassetteEntry, CassetteHeader, CassetteSource, CassetteWriter, RequestHasher,
};
use crate::provider::scripted::ScriptedProvider;
use crate::runner::Plan;

/// Write the cassette for `args.suite` from `args.script`.
pub(crate) fn cassette_write(args: &CassetteWriteArgs) -> Result<(), AppError> {
    let suite = Arc::new(super::load_suite(&args.suite)?);
    // A loop suite's cassette would hold first rounds only: refused, as `run` refuses it.
    super::run::refuse_loops(&suite).map_err(super::run::in_suite(&args.suite))?;
    let r = resolve(&suite, &args.targets, &[], &[], None)?;
    let out = args
        .out
        .clone()
        .or_else(|| suite.cassette.clone())
        .ok_or_else(|| {
            AppError::bad(
                "no cassette path: the suite has no `cassette:` and no --out was given",
                None,
            )
        })?;
    let script = args.script.display().to_string();
    if !(script.ends_with(".yaml") || script.ends_with(".yml") || script.ends_with(".json")) {
        return Err(AppError::bad(
            format!("script `{script}` must be a .yaml, .yml or .json file"),
            None,
        ));
    }
    let scripted = ScriptedProvider::new(&script, suite.clone())
        .map_err(|e| AppError::bad(e.to_string(), Some("see docs/cassettes.md")))?;
    let plan = Plan::new(suite.clone(), &r.targets, &r.variants, &r.modes, r.repeats);
    let single = (r.targets.len() == 1).then(|| &r.targets[0]);
    let header = CassetteHeader {
        toolgauge_cassette: crate::provider::cassette::CASSETTE_VERSION,
        source: CassetteSource::HandWritten,
        provider: single.map(|t| t.provider.clone()),
        model: single.map(|t| t.model.clone()),
        recorded_at: Some(jiff::Timestamp::now().to_string()),
        note: args.note.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| AppError::Incomplete(format!("failed to start the async runtime: {e}")))?;
    // Entries stream to a temporary file beside the cassette, which replaces the old one
    // only when every trial had a response: memory stays flat for large suites, and a
    // failed write never leaves a half cassette behind.
    let tmp = out.with_extension("jsonl.partial");
    let write_err = |e: std::io::Error| {
        AppError::Incomplete(format!("failed to write `{}`: {e}", tmp.display()))
    };
    let mut w = CassetteWriter::create(&tmp, &header).map_err(write_err)?;
    let hasher = RequestHasher::default();
    let mut written = 0usize;
    let mut missing = Vec::new();
    for t in plan.trials() {
        let (request, key) = plan.request(t);
        let target = &plan.cells[t.cell].target;
        match runtime.block_on(scripted.complete(&request, &key)) {
            Ok(response) => {
                let entry = CassetteEntry {
                    key: hasher.hash(target, &request),
                    repeat: key.repeat,
                    case_id: key.case_id.clone(),
                    target: key.target.clone(),
                    variant: key.variant.clone(),
                    tool_choice: key.tool_choice.to_string(),
                    request: Some(request),
                    response,
                    raw: None,
                };
                w.append(&entry).map_err(write_err)?;
                written += 1;
            }
            Err(e) => missing.push(e.to_string()),
        }
    }
    drop(w);
    if !missing.is_empty() {
        let _ = std::fs::remove_file(&tmp);
        return Err(AppError::bad(
            format!(
                "{} trial(s) have no scripted response; first: {}",
                missing.len(),
                missing[0]
            ),
            Some(
                "add a `responses` entry for each case (filters by variant, tool_choice and repeat are optional)",
            ),
        ));
    }
    std::fs::rename(&tmp, &out)
        .map_err(|e| AppError::Incomplete(format!("failed to write `{}`: {e}", out.display())))?;
    sayln!("wrote {written} entries to {}", out.display());
    Ok(())
}
