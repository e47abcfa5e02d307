//! Report rendering: each file exporter (`json`, `csv`, `junit`, `md`, `html`) and
//! `report::write_files` (all of them side by side, as `toolgauge run` ends) over the
//! trial records of a finished run, plus the run summary they share (`Summary::build`).
//!
//! This is the time between a run's last answer and its exit, so it adds to every live
//! run's wall time (`benches/fake_openai.rs` measures the whole run). Sizes: 1,600 trials
//! (the live bench's -j 64 run) and 10,000 (the replay bench's run); the records are the
//! generated suite's scored trials (two targets, two variants, three repeats, 2% provider
//! errors), as `benches/metrics.rs` uses them.
//!
//! ```sh
//! cargo bench --bench report_render
//! cargo bench --bench report_render -- junit     # one exporter
//! ```

mod common;

use std::hint::black_box;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use toolgauge::report::{RunMeta, RunReport, Summary, VariantTokens, exporter, write_files};

/// A finished run's report over `n` generated trial records.
fn report(n: usize) -> RunReport {
    let suite = common::suite(200);
    let trials = common::records(&suite, common::trials(&suite, n, 42));
    let mut cells: Vec<(String, String, String)> = Vec::new();
    for t in &trials {
        let cell = (
            t.target.clone(),
            t.variant.clone(),
            t.tool_choice.to_string(),
        );
        if !cells.contains(&cell) {
            cells.push(cell);
        }
    }
    let variants: Vec<VariantTokens> = ["vague", "clear"]
        .into_iter()
        .map(|v| VariantTokens {
            variant: v.into(),
            tool_definition_tokens: 900,
            ..VariantTokens::default()
        })
        .collect();
    let summary = Summary::build(&suite.name, &cells, &variants, &trials, &[]);
    // As the run.json of such a run reads.
    let meta: RunMeta = serde_json::from_value(serde_json::json!({
        "run_format": 1,
        "toolgauge_version": env!("CARGO_PKG_VERSION"),
        "suite": {"name": suite.name, "path": "bench.yaml", "hash": "00"},
        "matrix": {
            "targets": ["openai:gpt-4o-mini", "anthropic:claude-haiku"],
            "variants": ["vague", "clear"],
            "tool_choice": ["auto", "required", "none"],
            "repeats": 3,
        },
        "sources": {},
        "tools": {},
        "tool_definition_tokens": {},
        "trials_planned": trials.len(),
        "trials_written": trials.len(),
        "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:01:00Z",
        "status": "complete",
    }))
    .expect("a run.json");
    RunReport {
        meta,
        trials,
        summary,
    }
}

fn render(c: &mut Criterion) {
    let formats: Vec<String> = ["json", "csv", "junit", "md", "html"]
        .map(String::from)
        .to_vec();
    for n in [1_600, 10_000] {
        let report = report(n);
        let mut g = c.benchmark_group(format!("report_{n}"));
        g.sample_size(10);
        g.sampling_mode(SamplingMode::Flat);
        g.throughput(Throughput::Elements(n as u64));
        for f in &formats {
            let e = exporter(f).expect("a file format");
            let bytes: usize = e
                .render(&report)
                .expect("renders")
                .iter()
                .map(|(_, b)| b.len())
                .sum();
            eprintln!("{n} trials: {f} is {bytes} bytes");
            g.bench_function(f.as_str(), |b| {
                b.iter(|| e.render(black_box(&report)).expect("renders"))
            });
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        g.bench_function("write_files_all", |b| {
            b.iter(|| write_files(dir.path(), black_box(&report), &formats).expect("written"))
        });
        let trials = &report.trials;
        let cells: Vec<(String, String, String)> = report
            .summary
            .cells
            .iter()
            .map(|c| (c.target.clone(), c.variant.clone(), c.tool_choice.clone()))
            .collect();
        g.bench_function("summary_build", |b| {
            b.iter(|| Summary::build("bench", &cells, &[], black_box(trials), &[]))
        });
        g.finish();
    }
}

criterion_group!(benches, render);
criterion_main!(benches);
