//! Choosing distractors (`toolgauge::suite::distractors::pick::first_k`) from a large
//! pool: the per-case cost when a suite loads, one hash per pool tool and a heap of the
//! largest count.
//!
//! `first_k/<pool>/<k>` picks `k` of a pool of `pool` tools for one case (10,000 tools is
//! the "huge tools list"; 100 and 1,000 are the counts a suite asks for).
//!
//! Run: `cargo bench --bench distractors`; `cargo bench --bench distractors -- --test`
//! runs each once.

use std::collections::HashSet;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use toolgauge::provider::ToolDefinition;
use toolgauge::suite::distractors::pick::first_k;

fn pool(n: usize) -> Vec<ToolDefinition> {
    let schema = Arc::new(serde_json::json!({"type": "object"}));
    (0..n)
        .map(|i| ToolDefinition {
            name: format!("server_{}_tool_{i}", i % 70),
            description: String::new(),
            parameters: schema.clone(),
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("first_k");
    let offered: HashSet<&str> = ["get_weather", "get_time"].into_iter().collect();
    for size in [1_000usize, 10_000] {
        let p = pool(size);
        g.throughput(Throughput::Elements(size as u64));
        for k in [100usize, 1_000] {
            g.bench_with_input(BenchmarkId::new(size.to_string(), k), &k, |b, &k| {
                b.iter(|| first_k(black_box(&p), 7, black_box("case_42"), &offered, k))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
