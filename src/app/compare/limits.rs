//! `--fail-on-regression [METRIC=]POINTS`: which metrics the regression gate judges and
//! how far each may get worse. A plain number is accuracy, as it always was; a metric is
//! named as `summary.json` and the suite's thresholds name it; `thresholds=POINTS`
//! stands for every rate the suite's thresholds name. Only rates are gated (points of a
//! rate); amounts (milliseconds, tokens, dollars) are bad input with a hint.

use super::super::AppError;
use super::check_points;
use crate::compare::Limit;
use crate::util::metric_names::{is_rate, threshold_metrics};

/// The name standing for the metrics of the suite's thresholds.
pub(super) const THRESHOLDS: &str = "thresholds";

/// One `--fail-on-regression` value as written, checked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Asked {
    /// The metric, or [`THRESHOLDS`].
    pub metric: String,
    /// The limit in points.
    pub points: f64,
    /// As written, for messages.
    pub written: String,
}

/// The rates a regression gate can judge, in report order.
fn gateable() -> Vec<&'static str> {
    threshold_metrics()
        .into_iter()
        .filter(|m| is_rate(m))
        .collect()
}

/// What is wrong with the metric name `name`, if anything.
fn metric_problem(name: &str) -> Option<(String, String)> {
    let rates = gateable();
    if rates.contains(&name) || name == THRESHOLDS {
        return None;
    }
    let list = format!(
        "{THRESHOLDS} (every rate the suite's thresholds name), {}",
        rates.join(", ")
    );
    if threshold_metrics().contains(&name) {
        return Some((
            format!(
                "`{name}` is an amount (milliseconds, tokens or dollars), not a rate; the regression gate takes points of a rate"
            ),
            format!(
                "gate it with a suite threshold (`{{metric: {name}, max: ...}}`); the gate takes: {list}"
            ),
        ));
    }
    let hint = match crate::util::suggest::closest(name, rates.iter().copied()) {
        Some(m) => format!("did you mean `{m}`? the gate takes: {list}"),
        None => format!("the gate takes: {list}"),
    };
    Some((format!("unknown metric `{name}`"), hint))
}

/// Check every `--fail-on-regression` value: `POINTS` (accuracy) or `METRIC=POINTS`.
/// Every problem is told in one error; a metric named twice is one of them.
pub(super) fn parse(values: &[String]) -> Result<Vec<Asked>, AppError> {
    const FLAG: &str = "--fail-on-regression";
    let mut out: Vec<Asked> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let mut hint: Option<String> = None;
    for raw in values {
        let value = raw.trim();
        let (metric, number) = match value.split_once('=') {
            Some((m, n)) => (m.trim().to_string(), n.trim()),
            None => ("accuracy".to_string(), value),
        };
        let mut bad = Vec::new();
        if let Some((message, h)) = metric_problem(&metric) {
            bad.push(message);
            hint.get_or_insert(h);
        }
        let points = match number.parse::<f64>() {
            Ok(p) if p.is_finite() => Some(p),
            _ => {
                bad.push(format!("`{number}` is not a number of points"));
                hint.get_or_insert_with(|| {
                    format!("write {FLAG} POINTS (accuracy) or {FLAG} METRIC=POINTS, e.g. {FLAG} task_success=5")
                });
                None
            }
        };
        if !bad.is_empty() {
            problems.push(format!("{FLAG} {value}: {}", bad.join(", and ")));
            continue;
        }
        let Some(points) = points else { continue };
        let flag = format!("{FLAG} {metric}");
        let points = match check_points(&flag, points) {
            Ok(p) => p,
            Err(AppError::BadInput { message, .. }) => {
                problems.push(message);
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(first) = out.iter().find(|a| a.metric == metric) {
            problems.push(format!(
                "{FLAG} names `{metric}` twice ({} and {value}); give each metric one limit",
                first.written
            ));
            continue;
        }
        out.push(Asked {
            metric,
            points,
            written: value.to_string(),
        });
    }
    if problems.is_empty() {
        return Ok(out);
    }
    Err(AppError::bad(problems.join("; "), hint.as_deref()))
}

/// The limits: each metric asked for, and for [`THRESHOLDS`] every rate of
/// `suite_thresholds` that no other value names. Amounts among the thresholds are left
/// out with a note.
pub(super) fn limits(asked: &[Asked], suite_thresholds: &[String]) -> Result<Vec<Limit>, AppError> {
    let mut out: Vec<Limit> = asked
        .iter()
        .filter(|a| a.metric != THRESHOLDS)
        .map(|a| Limit {
            metric: a.metric.clone(),
            points: a.points,
        })
        .collect();
    let Some(all) = asked.iter().find(|a| a.metric == THRESHOLDS) else {
        return Ok(out);
    };
    let (rates, amounts): (Vec<&String>, Vec<&String>) =
        suite_thresholds.iter().partition(|m| is_rate(m));
    if !amounts.is_empty() {
        let names: Vec<&str> = amounts.iter().map(|s| s.as_str()).collect();
        warnln!(
            "note: --fail-on-regression {}: the thresholds on {} are amounts, not gated in points",
            all.written,
            names.join(", ")
        );
    }
    if rates.is_empty() {
        return Err(AppError::bad(
            format!(
                "--fail-on-regression {}: the compared runs declare no threshold on a rate{}",
                all.written,
                if suite_thresholds.is_empty() {
                    " (or their summary.json is not there to say)"
                } else {
                    ""
                }
            ),
            Some("name the metrics instead, e.g. --fail-on-regression task_success=5"),
        ));
    }
    for m in rates {
        if !out.iter().any(|l| &l.metric == m) {
            out.push(Limit {
                metric: m.clone(),
                points: all.points,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(e: AppError) -> (String, Option<String>) {
        match e {
            AppError::BadInput { message, hint } => (message, hint),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plain_points_are_accuracy_and_metrics_are_named() {
        let a = parse(&[
            "5".into(),
            "task_success=2.5".into(),
            "error_rate = 1".into(),
        ])
        .unwrap();
        let got: Vec<(&str, f64)> = a.iter().map(|a| (a.metric.as_str(), a.points)).collect();
        assert_eq!(
            got,
            [
                ("accuracy", 5.0),
                ("task_success", 2.5),
                ("error_rate", 1.0)
            ]
        );
    }

    #[test]
    fn bad_values_are_named_with_a_hint() {
        let (m, h) = message(parse(&["foo=x".into()]).unwrap_err());
        assert_eq!(
            m,
            "--fail-on-regression foo=x: unknown metric `foo`, and `x` is not a number of points"
        );
        assert!(h.unwrap().contains("the gate takes: thresholds"));
        let (m, h) = message(parse(&["task_sucess=5".into()]).unwrap_err());
        assert_eq!(
            m,
            "--fail-on-regression task_sucess=5: unknown metric `task_sucess`"
        );
        assert!(h.unwrap().starts_with("did you mean `task_success`?"));
        let (m, _) = message(parse(&["task_success=-5".into()]).unwrap_err());
        assert!(m.contains("did you mean 5?"), "{m}");
        let (m, h) = message(parse(&["latency_p95_ms=10".into()]).unwrap_err());
        assert!(m.contains("is an amount"), "{m}");
        assert!(h.unwrap().contains("{metric: latency_p95_ms, max: ...}"));
        let (m, _) = message(parse(&["5".into(), "accuracy=3".into()]).unwrap_err());
        assert!(
            m.contains("names `accuracy` twice (5 and accuracy=3)"),
            "{m}"
        );
        let (m, _) = message(parse(&["".into()]).unwrap_err());
        assert!(m.contains("`` is not a number"), "{m}");
    }

    #[test]
    fn thresholds_stand_for_the_suites_rates() {
        let asked = parse(&["thresholds=5".into(), "accuracy=1".into()]).unwrap();
        let suite = [
            "accuracy".to_string(),
            "task_success".into(),
            "latency_p95_ms".into(),
        ];
        let l = limits(&asked, &suite).unwrap();
        let got: Vec<(&str, f64)> = l.iter().map(|l| (l.metric.as_str(), l.points)).collect();
        // accuracy keeps its own limit; the amount is left out.
        assert_eq!(got, [("accuracy", 1.0), ("task_success", 5.0)]);
        let (m, _) = message(limits(&asked, &[]).unwrap_err());
        assert!(m.contains("declare no threshold on a rate"), "{m}");
    }
}
