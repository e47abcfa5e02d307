//! `toolgauge cassette write`: a hand-written cassette from a script of responses.

use std::sync::Arc;

use super::AppError;
use super::settings::resolve;
use crate::cli::CassetteWriteArgs;
use crate::provider::cassette::{
    CassetteEntry, CassetteHeader, CassetteSource, CassetteWriter, RequestHasher,
};
use crate::provider::{Provider, ProviderError, Request, Response, TrialKey};
use crate::runner::Plan;
use crate::scripted::ScriptedProvider;

/// Write the cassette for `args.suite` from `args.script`.
pub(crate) fn cassette_write(args: &CassetteWriteArgs) -> Result<(), AppError> {
    let suite = Arc::new(super::load_suite(&args.suite)?);
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
    let host = crate::tools::suite_host();
    for t in plan.trials() {
        let (request, key) = plan.request(t);
        let target = &plan.cells[t.cell].target;
        let case = &suite.cases[t.case];
        // A loop case's episode is played against the suite's mocks, and every round's
        // request and answer is an entry (the key covers the conversation so far).
        let exchanges = match &case.episode {
            Some(spec) => {
                let taped = Taped::new(&scripted);
                let outcome = runtime.block_on(crate::episode::run_episode(
                    &taped,
                    host.as_ref(),
                    spec.clone(),
                    request,
                    &key,
                ));
                match outcome.end {
                    Err(crate::episode::EpisodeError::Provider { source, .. }) => {
                        Err(source.to_string())
                    }
                    _ => Ok(taped.into_exchanges()),
                }
            }
            None => runtime
                .block_on(scripted.complete(&request, &key))
                .map(|response| vec![(request, response)])
                .map_err(|e| e.to_string()),
        };
        match exchanges {
            Ok(exchanges) => {
                for (request, response) in exchanges {
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
            }
            Err(e) => missing.push(e),
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

/// A provider that keeps every request it was sent and the answer it gave, in order:
/// the rounds of one episode, to be written as cassette entries.
struct Taped<'a> {
    inner: &'a dyn Provider,
    exchanges: std::sync::Mutex<Vec<(Request, Response)>>,
}

impl<'a> Taped<'a> {
    fn new(inner: &'a dyn Provider) -> Self {
        Taped {
            inner,
            exchanges: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn into_exchanges(self) -> Vec<(Request, Response)> {
        self.exchanges
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait::async_trait]
impl Provider for Taped<'_> {
    fn source(&self) -> String {
        self.inner.source()
    }

    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        let response = self.inner.complete(request, key).await?;
        self.exchanges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((request.clone(), response.clone()));
        Ok(response)
    }
}
