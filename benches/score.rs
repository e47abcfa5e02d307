//! Scoring throughput: 100,000 synthetic trials (right calls, wrong arguments, wrong
//! tool, no call, bad JSON, schema violations, parallel calls, text answers) over a
//! 200-case suite, scored on one thread with one `CaseScorer` prepared per case.
//!
//! Goal: at least 300,000 trials/s on one core (`score/mixed_100k_trials`). The
//! `score_by_kind` group scores 10,000 trials of each response kind to show where the
//! time goes.

mod common;

use std::hint::black_box;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};

const TRIALS: usize = 100_000;
const PER_KIND: usize = 10_000;

fn score(c: &mut Criterion) {
    let suite = common::suite(200);
    let scorers = common::scorers(&suite);
    let trials = common::trials(&suite, TRIALS, 42);
    let passed = common::score_all(&scorers, &trials);
    let calls: usize = trials.iter().map(|t| t.response.tool_calls.len()).sum();
    eprintln!(
        "{} trials over {} cases: {} tool calls, {} passed",
        trials.len(),
        suite.cases.len(),
        calls,
        passed
    );

    let mut g = c.benchmark_group("score");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.throughput(Throughput::Elements(trials.len() as u64));
    g.bench_function("mixed_100k_trials", |b| {
        b.iter(|| common::score_all(black_box(&scorers), black_box(&trials)))
    });
    g.finish();

    let mut g = c.benchmark_group("score_by_kind");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.throughput(Throughput::Elements(PER_KIND as u64));
    for (kind, _) in common::MIX {
        let trials = common::trials_of(&suite, PER_KIND, 7, Some(*kind));
        g.bench_with_input(
            BenchmarkId::from_parameter(format!("{kind:?}")),
            &trials,
            |b, trials| b.iter(|| common::score_all(black_box(&scorers), black_box(trials))),
        );
    }
    g.finish();

    let mut g = c.benchmark_group("score_prepare");
    g.sample_size(20);
    g.throughput(Throughput::Elements(suite.cases.len() as u64));
    g.bench_function("case_scorers_200_cases", |b| {
        b.iter(|| common::scorers(black_box(&suite)))
    });
    g.finish();
}

criterion_group!(benches, score);
criterion_main!(benches);
