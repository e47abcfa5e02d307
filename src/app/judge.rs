//! The run's judge model: which target judges (`--judge`, else the suite's `judge:`),
//! checked before anything runs, and the [`Judge`] the runner asks.

use std::sync::Arc;

use super::AppError;
use crate::judge::model::prompt::Prompts;
use crate::provider::{Provider, Target};
use crate::runner::judged::Judge;
use crate::score::prices::PriceTable;
use crate::suite::Suite;

/// The judge target `spec` (`--judge`, else the suite's), checked; `None` when the run
/// has no judge, which is refused when a case has a rubric (it could not be checked).
/// Errors name the suite (`path`), as the run's other setting errors do.
pub(super) fn judge_target(
    suite: &Suite,
    spec: Option<&str>,
    path: &std::path::Path,
) -> Result<Option<Target>, AppError> {
    let Some(spec) = spec else {
        return match suite.first_rubric() {
            Some(r) => Err(AppError::BadInput {
                message: r.unjudged.to_string().trim_end().to_string(),
                hint: None,
            }),
            None => Ok(None),
        };
    };
    let target = crate::suite::targets::check_target(spec).map_err(|e| {
        AppError::bad(
            format!("{}: judge: {}", path.display(), e.message),
            Some(&e.hint),
        )
    })?;
    if target.provider == "bfcl-result" {
        return Err(AppError::bad(
            format!(
                "{}: judge `{spec}` replays a BFCL result file, which can not judge answers",
                path.display()
            ),
            Some("name a model (`openai:gpt-4o-mini`), or `scripted:judge` offline"),
        ));
    }
    Ok(Some(target))
}

/// The judge of a run of `suite`: `target` answered by `provider` (the run's provider for
/// it), with the suite's prompt or the built-in ones, charged at its price.
pub(super) fn build(
    suite: &Suite,
    target: Target,
    provider: Arc<dyn Provider>,
    prices: &PriceTable,
) -> Result<Arc<Judge>, AppError> {
    let custom = suite.judge.as_ref().and_then(|j| j.prompt.as_ref());
    let prompts = Prompts::new(custom.map(|p| p.text.as_str())).map_err(|e| {
        AppError::bad(
            match custom {
                Some(p) => format!("`{}`: {e}", p.path.display()),
                None => e.to_string(),
            },
            Some("see docs/judge.md for the prompt's variables"),
        )
    })?;
    let price = prices.lookup(&target.provider, &target.model);
    Ok(Arc::new(Judge::new(target, provider, prompts, price)))
}
