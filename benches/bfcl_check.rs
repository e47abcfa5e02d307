//! BFCL checker throughput: the 2,000 function-calling results of the test sample
//! (`tests/integration/fixtures/bfcl/pairs.jsonl`, right and wrong answers of every
//! kind) decoded as BFCL decodes them and checked against their items, on one thread,
//! in strict and default mode. Preparing the items (functions, possible answers) is done
//! once, outside the timing, as a run does once per case.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use toolgauge::bfcl::checker::{self, Category, Function, GroundTruthCall, Options};
use toolgauge::bfcl::decode;

struct Item {
    category: Category,
    functions: Vec<Function>,
    truth: Vec<GroundTruthCall>,
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).expect("a JSON line"))
                .collect()
        })
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fixtures/bfcl");
    let mut items: HashMap<String, Item> = HashMap::new();
    for entry in std::fs::read_dir(root.join("data"))
        .expect("the sample")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(cat) = name
            .strip_prefix("BFCL_v4_")
            .and_then(|n| n.strip_suffix(".json"))
        else {
            continue;
        };
        let answers: HashMap<String, Value> = lines(&root.join("data/possible_answer").join(&name))
            .into_iter()
            .map(|a| {
                (
                    a["id"].as_str().unwrap().to_string(),
                    a["ground_truth"].clone(),
                )
            })
            .collect();
        for q in lines(&entry.path()) {
            let id = q["id"].as_str().unwrap().to_string();
            let functions = q["function"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| Function::from_bfcl(f).expect("a BFCL function"))
                .collect();
            let truth = answers
                .get(&id)
                .map(|gt| checker::ground_truth_from_bfcl(gt).expect("a possible answer"))
                .unwrap_or_default();
            items.insert(
                id,
                Item {
                    category: Category::from_name(cat),
                    functions,
                    truth,
                },
            );
        }
    }
    let pairs: Vec<(Value, String, bool)> = lines(&root.join("pairs.jsonl"))
        .into_iter()
        .map(|p| {
            let underscore = p["model_style"] == "fc";
            (
                p["result"].clone(),
                p["id"].as_str().unwrap().to_string(),
                underscore,
            )
        })
        .collect();
    let run = |strict: bool| {
        let mut valid = 0usize;
        for (result, id, underscore) in &pairs {
            let item = &items[id];
            let decoded = decode::decode_fc(result);
            let opts = Options {
                strict,
                underscore_names: *underscore,
            };
            if checker::check(item.category, &item.functions, &item.truth, &decoded, &opts).valid {
                valid += 1;
            }
        }
        valid
    };
    eprintln!(
        "{} results, {} valid (strict), {} valid (default)",
        pairs.len(),
        run(true),
        run(false)
    );

    let mut g = c.benchmark_group("bfcl_check");
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(pairs.len() as u64));
    g.bench_function("decode_and_check_strict", |b| {
        b.iter(|| black_box(run(true)))
    });
    g.bench_function("decode_and_check_default", |b| {
        b.iter(|| black_box(run(false)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
