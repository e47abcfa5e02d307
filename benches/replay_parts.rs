//! The per-trial parts of a cassette replay (`toolgauge run` with a recorded target),
//! to see where the end-to-end time of `benches/replay.sh` goes: building each trial's
//! request, hashing it for the cassette lookup, and reading the cassette.
//!
//! The plan is the generated 200-case suite × 2 variants × {auto, required} × 2 repeats
//! (1,600 trials); every figure is per trial (criterion Throughput::Elements), so
//! multiply by 10,000 for the replay bench's run.

mod common;

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use toolgauge::provider::cassette::{
    Cassette, CassetteEntry, CassetteHeader, CassetteSource, CassetteWriter, request_hash,
};
use toolgauge::provider::{Target, ToolChoice};
use toolgauge::runner::Plan;

fn write_cassette(path: &Path, plan: &Plan, with_request: bool) {
    let header = CassetteHeader {
        toolgauge_cassette: toolgauge::provider::cassette::CASSETTE_VERSION,
        source: CassetteSource::HandWritten,
        provider: Some("openai".into()),
        model: Some("gpt-4o-mini".into()),
        recorded_at: None,
        note: Some("benches/replay_parts.rs".into()),
    };
    let mut w = CassetteWriter::create(path, &header).expect("cassette file");
    for (i, t) in plan.trials().into_iter().enumerate() {
        let (request, key) = plan.request(t);
        let case = &plan.suite.cases[t.case];
        let kind = common::MIX[i % common::MIX.len()].0;
        let response = common::response(&plan.suite, case, &key.tool_choice, kind, i);
        let target = &plan.cells[t.cell].target;
        w.append(&CassetteEntry {
            key: request_hash(target, &request),
            repeat: key.repeat,
            case_id: key.case_id.clone(),
            target: key.target.clone(),
            variant: key.variant.clone(),
            tool_choice: key.tool_choice.to_string(),
            request: with_request.then_some(request),
            response,
            raw: None,
        })
        .expect("cassette entry");
    }
}

fn replay_parts(c: &mut Criterion) {
    let suite = Arc::new(common::suite(200));
    let target = Target::parse("openai:gpt-4o-mini").expect("target");
    let plan = Plan::new(
        suite,
        std::slice::from_ref(&target),
        &["vague".to_string(), "clear".to_string()],
        &[ToolChoice::Auto, ToolChoice::Required],
        2,
    );
    let trials = plan.trials();
    let n = trials.len() as u64;
    let requests: Vec<_> = trials.iter().map(|t| plan.request(*t).0).collect();

    let dir = tempfile::tempdir().expect("temp dir");
    let full = dir.path().join("full.jsonl");
    let lean = dir.path().join("lean.jsonl");
    write_cassette(&full, &plan, true);
    write_cassette(&lean, &plan, false);
    let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
    eprintln!(
        "{n} trials; cassette {} bytes with requests, {} bytes without",
        size(&full),
        size(&lean)
    );

    let mut g = c.benchmark_group("replay_parts");
    g.throughput(Throughput::Elements(n));
    g.sample_size(20);
    g.bench_function("plan_request", |b| {
        b.iter(|| {
            for t in &trials {
                black_box(plan.request(*t));
            }
        })
    });
    g.bench_function("request_hash", |b| {
        b.iter(|| {
            for r in &requests {
                black_box(request_hash(&target, r));
            }
        })
    });
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.bench_function("cassette_open/with_requests", |b| {
        b.iter(|| Cassette::open(black_box(&full)).expect("opens"))
    });
    g.bench_function("cassette_open/without_requests", |b| {
        b.iter(|| Cassette::open(black_box(&lean)).expect("opens"))
    });
    g.finish();
}

criterion_group!(benches, replay_parts);
criterion_main!(benches);
