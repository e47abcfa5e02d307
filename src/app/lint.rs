//! `toolgauge lint TARGET`: read the target's tools, run every rule family, drop what the
//! suite, its tools and `--allow` allow, print the findings (text, JSON or SARIF) and
//! exit 1 when one is at or above `--deny`.

use std::path::Path;

use super::AppError;
use super::mcp::{Source, list_live, source};
use crate::cli::{LintArgs, LintFormat, LintLevel};
use crate::exit;
use crate::lint::output::Report;
use crate::lint::source::{Allowed, SourceError, Target, from_json, from_listing, from_suite};
use crate::lint::{
    LintConfig, Severity, apply_allow, check_all, merge_variants, rules, run_findings,
};

/// `toolgauge lint TARGET [--format F] [--deny LEVEL] [--allow CODE]…`.
pub(super) fn lint(args: &LintArgs) -> Result<u8, AppError> {
    let (target, file) = read_target(&args.target)?;
    let at = |a: &Allowed| match (&file, a.at) {
        (Some(f), Some(p)) => format!(" at {f}:{}:{}", p.line, p.column),
        _ => String::new(),
    };
    let cli_allow: Vec<Allowed> = args
        .allow
        .iter()
        .map(|c| Allowed {
            code: c.clone(),
            at: None,
        })
        .collect();
    for (a, whose) in target
        .allow
        .iter()
        .map(|a| (a, "`lint.allow`"))
        .chain(
            target
                .tool_allow
                .iter()
                .map(|a| (a, "a tool's `lint.allow`")),
        )
        .chain(cli_allow.iter().map(|a| (a, "`--allow`")))
    {
        if !rules::is_known(&a.code) {
            let hint = match rules::closest(&a.code) {
                Some(c) => format!("did you mean `{c}`? docs/lint.md lists every rule"),
                None => "docs/lint.md lists every rule code".to_string(),
            };
            return Err(AppError::bad(
                format!("unknown rule code `{}` in {whose}{}", a.code, at(a)),
                Some(&hint),
            ));
        }
    }
    let mut config = LintConfig {
        openai_strict: args.openai_strict,
        ..LintConfig::default()
    };
    if let Some(n) = args
        .max_description_tokens
        .or(target.max_description_tokens)
    {
        config.max_description_tokens = n;
    }
    if let Some(n) = args.max_total_tokens.or(target.max_total_tokens) {
        config.max_total_tokens = n;
    }
    let allow: Vec<String> = target
        .allow
        .iter()
        .chain(&cli_allow)
        .map(|a| a.code.clone())
        .collect();
    let tools = target.sets.first().map_or(0, |(_, t)| t.len());
    let per_variant = target
        .sets
        .iter()
        .map(|(variant, set)| {
            let found = check_all(set, &config);
            (variant.clone(), apply_allow(found, set, &allow))
        })
        .collect();
    let mut findings = merge_variants(per_variant);
    if let Some(dir) = &args.run {
        let run = crate::lint::evidence::from_run(dir).map_err(|e| {
            AppError::bad(
                format!("--run: {e}"),
                Some("`--run` takes the directory `toolgauge run --out DIR` wrote for this suite"),
            )
        })?;
        let set = target.sets.first().map_or(&[][..], |(_, t)| t.as_slice());
        findings.extend(apply_allow(run_findings(&run, set), set, &allow));
    }
    findings.sort_by_key(|f| (f.at.is_none(), f.at));
    let report = Report {
        target: &args.target,
        file: file.as_deref(),
        tools,
        findings: &findings,
    };
    let out = match args.format {
        LintFormat::Text => crate::lint::output::text(&report),
        LintFormat::Json => crate::lint::output::json(&report),
        LintFormat::Sarif => crate::lint::sarif::render(&report),
    };
    say!("{out}");
    if !out.ends_with('\n') {
        sayln!();
    }
    let deny = match args.deny {
        LintLevel::Error => Severity::Error,
        LintLevel::Warning => Severity::Warning,
        LintLevel::Info => Severity::Info,
    };
    Ok(if findings.iter().any(|f| f.severity >= deny) {
        exit::THRESHOLD_FAILED
    } else {
        exit::OK
    })
}

/// The target's tools, and the file findings are located in (as given).
fn read_target(target: &str) -> Result<(Target, Option<String>), AppError> {
    let bad = |e: SourceError| AppError::BadInput {
        message: e.message,
        hint: e.hint,
    };
    let path = Path::new(target.trim());
    if !path.is_file() {
        return match source(target, false) {
            Ok(Source::Live(spec)) => {
                let listing = list_live(&spec)?;
                Ok((from_listing(&listing.tools), None))
            }
            _ => Err(AppError::bad(
                format!("failed to read `{target}`: no such file"),
                Some(
                    "give a suite file, an MCP snapshot or JSON file of tools, or a server as \"stdio:CMD ARGS\" or an http(s):// URL",
                ),
            )),
        };
    }
    let file = Some(target.trim().to_string());
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        let text = std::fs::read_to_string(path)
            .map_err(|e| AppError::bad(format!("failed to read `{target}`: {e}"), None))?;
        // A JSON suite (imported benchmarks) has cases; anything else is a file of tools.
        let is_suite = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .is_some_and(|v| v.get("cases").is_some());
        if !is_suite {
            return Ok((from_json(path, &text).map_err(bad)?, file));
        }
    }
    Ok((from_suite(path).map_err(bad)?, file))
}
