//! Suite loading: parse and compile a realistic suite (15 tools with JSON Schemas and two
//! description variants, 200 cases) from text, as `toolgauge run` does once per suite.

mod common;

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn suite_load(c: &mut Criterion) {
    let text = common::suite_yaml(200);
    let path = Path::new("bench-suite.yaml");
    let suite = common::suite(200);
    eprintln!(
        "suite: {} tools, {} cases, {} bytes of YAML",
        suite.tools.len(),
        suite.cases.len(),
        text.len()
    );
    let mut g = c.benchmark_group("suite_load");
    g.sample_size(30);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("load_str/15_tools_200_cases", |b| {
        b.iter(|| toolgauge::suite::load_str(black_box(&text), path).expect("suite loads"))
    });
    g.bench_function("parse_yaml_only/15_tools_200_cases", |b| {
        b.iter(|| toolgauge::suite::load::parse_yaml(black_box(&text), path).expect("parses"))
    });
    g.finish();
}

criterion_group!(benches, suite_load);
criterion_main!(benches);
