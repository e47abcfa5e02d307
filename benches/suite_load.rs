//! Suite loading: parse and compile a realistic suite (15 tools with JSON Schemas and two
//! description variants, 200 cases) from text, as `toolgauge run` does once per suite,
//! written as YAML and as JSON; and the same suite with every case declaring its own
//! tools (as imported benchmarks such as BFCL are written), in both formats. The JSON and
//! YAML figures of `load_str` are those quoted in docs/suite-format.md ("JSON suites").
//!
//! Run: `cargo bench --bench suite_load`.

mod common;

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;

/// `yaml` (a suite) as JSON text, tools written one per line as `toolgauge import bfcl`
/// writes them; with `own_tools`, every case declares a copy of the suite's tools.
fn as_json(yaml: &str, own_tools: bool) -> String {
    let mut v: Value = serde_saphyr::from_str(yaml).expect("the generated suite is YAML");
    if own_tools {
        let tools = v
            .as_object_mut()
            .and_then(|o| o.shift_remove("tools"))
            .expect("the suite has tools");
        for case in v["cases"].as_array_mut().expect("cases") {
            case["tools"] = tools.clone();
        }
    }
    serde_json::to_string_pretty(&v).expect("serialises")
}

/// `json` back as YAML text (block style, as people write it).
fn as_yaml(json: &str) -> String {
    let v: Value = serde_json::from_str(json).expect("JSON");
    serde_saphyr::to_string(&v).expect("serialises as YAML")
}

fn suite_load(c: &mut Criterion) {
    let yaml = common::suite_yaml(200);
    let inputs = [
        ("shared_tools", "yaml", yaml.clone()),
        ("shared_tools", "json", as_json(&yaml, false)),
        ("own_tools", "yaml", as_yaml(&as_json(&yaml, true))),
        ("own_tools", "json", as_json(&yaml, true)),
    ];
    let mut g = c.benchmark_group("suite_load");
    g.sample_size(20);
    for (shape, format, text) in &inputs {
        let path = format!("bench-suite.{format}");
        let suite = toolgauge::suite::load_str(text, Path::new(&path))
            .unwrap_or_else(|e| panic!("{shape} {format} suite does not load:\n{e}"));
        eprintln!(
            "{shape}/{format}: {} tools, {} cases, {} bytes",
            suite.tools.len(),
            suite.cases.len(),
            text.len()
        );
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(
            BenchmarkId::new(format!("load_str/{shape}"), format),
            text,
            |b, text| {
                b.iter(|| {
                    toolgauge::suite::load_str(black_box(text), Path::new(&path))
                        .expect("suite loads")
                })
            },
        );
    }
    g.bench_function("parse_yaml_only/shared_tools", |b| {
        let path = Path::new("bench-suite.yaml");
        b.iter(|| toolgauge::suite::load::parse_yaml(black_box(&yaml), path).expect("parses"))
    });
    g.finish();
}

criterion_group!(benches, suite_load);
criterion_main!(benches);
