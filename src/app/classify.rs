//! `toolgauge classify`: the built-in text-answer classifier on one answer, or measured
//! on labelled answers (a When2Call file, or JSON Lines of `{"text", "label"}`) as a
//! confusion matrix with the accuracy of each class.

use std::io::Read as _;

use serde_json::json;

use super::AppError;
use crate::behaviour::measure::{self, Example, Half, Measurement};
use crate::behaviour::{Behaviour, classify as classify_text};
use crate::cli::ClassifyArgs;
use crate::exit;

/// Run `toolgauge classify`.
pub(crate) fn classify(args: &ClassifyArgs) -> Result<u8, AppError> {
    if let (Some(half), None) = (&args.half, &args.when2call) {
        return Err(AppError::bad(
            format!("--half {half} needs --when2call FILE"),
            Some(
                "the halves split the items of a When2Call file; a TEXT or --jsonl file is classified whole",
            ),
        ));
    }
    if let Some(text) = &args.text {
        let text = if text == "-" {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map_err(|e| {
                AppError::bad(
                    format!("cannot read the answer from standard input: {e}"),
                    Some("pipe UTF-8 text, or give the answer as an argument"),
                )
            })?;
            s
        } else {
            text.clone()
        };
        let c = classify_text(&text);
        if args.json {
            sayln!(
                "{}",
                json!({"behaviour": c.behaviour, "suite_name": c.behaviour.suite_name(), "cue": c.cue})
            );
        } else {
            match &c.cue {
                Some(cue) => sayln!("{} (cue: {cue:?})", c.behaviour),
                None => sayln!("{} (no cue)", c.behaviour),
            }
        }
        return Ok(exit::OK);
    }
    let (what, examples) = if let Some(path) = &args.when2call {
        let half = args
            .half
            .as_deref()
            .and_then(Half::parse)
            .unwrap_or(Half::All);
        let examples = measure::when2call_examples(path, half).map_err(|e| {
            AppError::bad(
                e.to_string(),
                Some("give a When2Call LLM-judge file (one JSON item per line with `answers`), e.g. datasets/when2call/when2call_test_llm_judge.jsonl"),
            )
        })?;
        let what = match half {
            Half::Dev => "When2Call example answers, development half (even items)",
            Half::HeldOut => "When2Call example answers, held-out half (odd items)",
            Half::All => "When2Call example answers, all items",
        };
        (what, examples)
    } else if let Some(path) = &args.jsonl {
        let examples = measure::labelled_examples(path).map_err(|e| {
            AppError::bad(
                e.to_string(),
                Some("each line: {\"text\": \"the answer\", \"label\": \"request_for_info\" | \"cannot_answer\" | \"direct\"}"),
            )
        })?;
        ("labelled answers", examples)
    } else {
        return Err(AppError::bad(
            "nothing to classify",
            Some("give a TEXT, --when2call FILE or --jsonl FILE"),
        ));
    };
    let m = measure::measure(&examples);
    if args.json {
        sayln!("{}", report_json(what, &examples, &m, args.misses));
    } else {
        report_text(what, &examples, &m, args.misses);
    }
    Ok(exit::OK)
}

/// A percentage with one decimal, or `-` without answers.
fn pct(p: Option<f64>) -> String {
    p.map_or_else(|| "-".to_string(), |p| format!("{p:.1}%"))
}

fn report_text(what: &str, examples: &[Example], m: &Measurement, misses: bool) {
    sayln!("{what}: {} answers", examples.len());
    let width = 18;
    say!("{:width$}", "expected \\ observed");
    for b in Behaviour::TEXT {
        say!(" {:>width$}", b.label());
    }
    sayln!("  accuracy");
    for (r, b) in Behaviour::TEXT.iter().enumerate() {
        say!("{:width$}", b.label());
        for c in 0..3 {
            say!(" {:>width$}", m.confusion.counts[r][c]);
        }
        let (hit, total) = m.confusion.class(*b);
        sayln!("  {} ({hit}/{total})", pct(m.confusion.accuracy(*b)));
    }
    sayln!("overall: {}", pct(m.confusion.overall()));
    if misses {
        for x in &m.misses {
            sayln!(
                "miss {}: expected {}, observed {} (cue: {}): {}",
                x.example.source,
                x.example.label,
                x.observed,
                x.cue.as_deref().unwrap_or("-"),
                x.example.text.replace('\n', " ")
            );
        }
    }
}

fn report_json(what: &str, examples: &[Example], m: &Measurement, misses: bool) -> String {
    let accuracy: serde_json::Map<String, serde_json::Value> = Behaviour::TEXT
        .iter()
        .map(|b| {
            let (hit, total) = m.confusion.class(*b);
            (
                b.label().to_string(),
                json!({"correct": hit, "total": total, "percent": m.confusion.accuracy(*b)}),
            )
        })
        .collect();
    let mut out = json!({
        "set": what,
        "answers": examples.len(),
        "labels": Behaviour::TEXT.iter().map(|b| b.label()).collect::<Vec<_>>(),
        "confusion": m.confusion.counts,
        "accuracy": accuracy,
        "overall_percent": m.confusion.overall(),
    });
    if misses {
        out["misses"] = json!(m.misses);
    }
    out.to_string()
}
