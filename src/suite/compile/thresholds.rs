//! Compiling `thresholds`, the bounds on metrics that decide a run's exit code.

use std::collections::HashMap;

use super::Checker;
use super::matrix::{check_modes, mode};
use crate::suite::model::SuiteFile;
use crate::suite::span::Spanned;
use crate::suite::{Threshold, Tool};
use crate::util::suggest;

/// The exit-code `thresholds`: each metric, bound, variant, target and tool choice
/// checked; a `function` tool choice may name one of the suite's tools (`tools`) or of
/// any case's own.
pub(super) fn compile_thresholds(
    c: &mut Checker<'_>,
    model: &SuiteFile,
    variants: &[String],
    tools: &HashMap<&str, &Tool>,
) -> Vec<Threshold> {
    let tool_known = |f: &str| {
        tools.contains_key(f)
            || model
                .cases
                .iter()
                .flat_map(|c| c.tools.iter().flat_map(|t| t.0.iter()))
                .any(|t| t.name.value == f)
    };
    use crate::util::metric_names::{check_bound, check_metric, check_range};
    let mut out = Vec::new();
    for (i, t) in model.thresholds.iter().enumerate() {
        let f = format!("thresholds[{i}]");
        let mut ok = true;
        if let Err(e) = check_metric(&t.metric.value) {
            c.report(
                t.metric.at(),
                format!("{f}.metric"),
                e.message,
                Some(e.hint),
            );
            ok = false;
        }
        if t.min.is_none() && t.max.is_none() {
            c.report(
                t.metric.at(),
                &f,
                format!(
                    "the threshold on `{}` has no `min` or `max`",
                    t.metric.value
                ),
                Some("add `min: VALUE` (at least) or `max: VALUE` (at most)".into()),
            );
            ok = false;
        }
        for (which, bound) in [("min", &t.min), ("max", &t.max)] {
            if let Some(b) = bound
                && let Err(e) = check_bound(&t.metric.value, which, b.value)
            {
                c.report(b.at(), format!("{f}.{which}"), e.message, Some(e.hint));
                ok = false;
            }
        }
        if let (Some(lo), Some(hi)) = (&t.min, &t.max)
            && let Err(e) = check_range(lo.value, hi.value)
        {
            c.report(lo.at(), format!("{f}.min"), e.message, Some(e.hint));
            ok = false;
        }
        if let Some(v) = &t.variant
            && !variants.contains(&v.value)
        {
            report_unknown_variant(c, v, &f, variants);
            ok = false;
        }
        if let Some(target) = &t.target
            && let Err(e) = crate::suite::targets::check_target(&target.value)
        {
            c.report(target.at(), format!("{f}.target"), e.message, Some(e.hint));
            ok = false;
        }
        if let Some(m) = &t.tool_choice {
            let before = c.diags.len();
            check_modes(
                c,
                std::slice::from_ref(m),
                &tool_known,
                &format!("{f}.tool_choice"),
            );
            ok &= c.diags.len() == before;
        }
        if ok {
            out.push(Threshold {
                metric: t.metric.value.clone(),
                min: t.min.as_ref().map(|b| b.value),
                max: t.max.as_ref().map(|b| b.value),
                variant: t.variant.as_ref().map(|v| v.value.clone()),
                tool_choice: t.tool_choice.as_ref().map(|m| mode(&m.value)),
                target: t.target.as_ref().map(|v| v.value.clone()),
            });
        }
    }
    out
}

/// A threshold's `variant` (at `f`) names none of the suite's `variants`.
fn report_unknown_variant(c: &mut Checker<'_>, v: &Spanned<String>, f: &str, variants: &[String]) {
    let hint = match suggest::closest(&v.value, variants.iter().map(String::as_str)) {
        Some(s) => format!(
            "did you mean `{s}`? the variants are: {}",
            variants.join(", ")
        ),
        None => format!("the variants are: {}", variants.join(", ")),
    };
    c.report(
        v.at(),
        format!("{f}.variant"),
        format!("unknown variant `{}`", v.value),
        Some(hint),
    );
}
