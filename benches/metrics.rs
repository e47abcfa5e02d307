//! Aggregation: `Metrics::of` over 100,000 trial records (two targets, two variants,
//! three tool_choice modes, three repeats, 2% provider errors), as a run summary
//! computes it for the overall figure.

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use toolgauge::score::Metrics;

const RECORDS: usize = 100_000;

fn metrics(c: &mut Criterion) {
    let suite = common::suite(200);
    let records = common::records(&suite, common::trials(&suite, RECORDS, 42));
    let m = Metrics::of(&records);
    eprintln!(
        "{} records: accuracy {:?}, invalid_call_rate {:?}, pass@k {:?}",
        m.trials,
        m.accuracy.value,
        m.invalid_call_rate.value,
        m.consistency.as_ref().map(|c| c.pass_at_k)
    );
    let mut g = c.benchmark_group("metrics");
    g.sample_size(20);
    g.throughput(Throughput::Elements(records.len() as u64));
    g.bench_function("metrics_of_100k_records", |b| {
        b.iter(|| Metrics::of(black_box(&records)))
    });
    g.finish();
}

criterion_group!(benches, metrics);
criterion_main!(benches);
