//! Tests of the multi-turn import: the written case shape on the sample data, and the
//! errors for malformed items.

use super::*;

fn sample_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fixtures/bfcl/data")
}

fn import_to(dir: &Path, category: &str) -> Value {
    let q = data::question_file(&sample_dir(), category).unwrap();
    let w = import_one(&q, category, dir, SuiteFormat::Json).unwrap();
    serde_json::from_str(&std::fs::read_to_string(w.path).unwrap()).unwrap()
}

/// The question and ground-truth lines of the sample, parsed, by id.
fn sample(category: &str) -> Vec<(Value, Value)> {
    let q = data::question_file(&sample_dir(), category).unwrap();
    let answers = data::read_answers(&data::answer_file(&q).unwrap()).unwrap();
    std::fs::read_to_string(&q)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let gt = answers[v["id"].as_str().unwrap()].clone();
            (v, gt)
        })
        .collect()
}

#[test]
fn every_sample_item_becomes_a_case_in_the_contract_shape() {
    let dir = tempfile::tempdir().unwrap();
    let mut withheld_seen = 0;
    for category in CATEGORIES {
        let suite = import_to(dir.path(), category);
        assert_eq!(suite["name"], format!("bfcl_{category}"));
        assert_eq!(suite["profile"], json!({"bfcl": {"category": category}}));
        assert_eq!(suite["limits"]["max_rounds_per_turn"], 20);
        let items = sample(category);
        let cases = suite["cases"].as_array().unwrap();
        assert_eq!(cases.len(), items.len());
        for (case, (item, gt)) in cases.iter().zip(&items) {
            let id = item["id"].as_str().unwrap();
            assert_eq!(case["id"], id);
            assert_eq!(case["kind"], "should_call");
            let question = item["question"].as_array().unwrap();
            let turns = case["turns"].as_array().unwrap();
            assert_eq!(turns.len() + 1, question.len(), "{id}");
            for (t, q) in question.iter().enumerate() {
                let shown = if t == 0 {
                    &case["prompt"]
                } else {
                    &turns[t - 1]
                };
                match q.as_array().unwrap().as_slice() {
                    [m] => assert_eq!(shown, &m["content"], "{id} turn {t}"),
                    [] => assert_eq!(shown, ADDITIONAL_FUNCTIONS_PROMPT, "{id} turn {t}"),
                    _ => panic!("{id}: a turn of several messages in the sample"),
                }
            }
            let world = &case["world"]["bfcl"];
            assert_eq!(world["classes"], item["involved_classes"]);
            assert_eq!(world["initial_config"], item["initial_config"]);
            assert_eq!(world["long_context"], category.contains("long_context"));
            assert_eq!(&world["ground_truth"], gt);
            assert_eq!(gt.as_array().unwrap().len(), question.len());
            // Every function of every involved class, in class then file order.
            let names: Vec<&str> = case["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            let mut want = Vec::new();
            for class in item["involved_classes"].as_array().unwrap() {
                let file = CLASSES.iter().find(|(c, _)| c == class).unwrap().1;
                let text =
                    std::fs::read_to_string(sample_dir().join("multi_turn_func_doc").join(file))
                        .unwrap();
                for l in text.lines() {
                    let f: Value = serde_json::from_str(l).unwrap();
                    want.push(f["name"].as_str().unwrap().to_string());
                }
            }
            assert_eq!(names, want, "{id}");
            // Withheld functions: exactly BFCL's missed functions, at their turn.
            match item.get("missed_function").and_then(Value::as_object) {
                Some(missed) => {
                    let mut expected = Map::new();
                    for (t, names) in missed {
                        for n in names.as_array().unwrap() {
                            let turn: usize = t.parse().unwrap();
                            assert!(question[turn].as_array().unwrap().is_empty());
                            expected.insert(n.as_str().unwrap().into(), json!(turn));
                        }
                    }
                    assert_eq!(case["withheld"], Value::Object(expected), "{id}");
                    withheld_seen += 1;
                }
                None => assert!(case.get("withheld").is_none(), "{id}"),
            }
        }
    }
    assert!(withheld_seen >= 6, "{withheld_seen}");
}

#[test]
fn tools_are_converted_as_the_single_turn_importer_converts_functions() {
    let dir = tempfile::tempdir().unwrap();
    let suite = import_to(dir.path(), "multi_turn_base");
    let tool = &suite["cases"][0]["tools"][0];
    assert_eq!(tool["parameters"]["type"], "object");
    let text =
        std::fs::read_to_string(sample_dir().join("multi_turn_func_doc/gorilla_file_system.json"))
            .unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    if suite["cases"][0]["world"]["bfcl"]["classes"][0] == "GorillaFileSystem" {
        assert_eq!(tool["name"], first["name"]);
        assert_eq!(tool["description"], first["description"]);
        assert_eq!(
            tool["parameters"],
            crate::functions::to_json_schema(&first["parameters"])
        );
    }
}

/// Write a one-item category `multi_turn_base` into a data directory copy and import it.
fn import_item(question: Value, ground_truth: Value) -> Result<Value, String> {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("possible_answer")).unwrap();
    std::fs::create_dir_all(data.join("multi_turn_func_doc")).unwrap();
    for (_, f) in CLASSES {
        std::fs::copy(
            sample_dir().join("multi_turn_func_doc").join(f),
            data.join("multi_turn_func_doc").join(f),
        )
        .unwrap();
    }
    let name = "BFCL_v4_multi_turn_base.json";
    std::fs::write(data.join(name), format!("{question}\n")).unwrap();
    std::fs::write(
        data.join("possible_answer").join(name),
        format!(
            "{}\n",
            json!({"id": question["id"], "ground_truth": ground_truth})
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let w = import_one(&data.join(name), "multi_turn_base", &out, SuiteFormat::Json)
        .map_err(|e| e.to_string())?;
    Ok(serde_json::from_str(&std::fs::read_to_string(w.path).unwrap()).unwrap())
}

#[test]
fn malformed_items_are_import_errors_naming_the_item_and_turn() {
    let user = |s: &str| json!([{"role": "user", "content": s}]);
    let item = |question: Value, classes: Value| {
        json!({"id": "multi_turn_base_7", "question": question,
               "initial_config": {}, "involved_classes": classes})
    };
    // A valid item, with a class absent from initial_config.
    let ok = import_item(
        item(json!([user("a"), user("b")]), json!(["MathAPI"])),
        json!([["add(a=1,b=2)"], []]),
    )
    .unwrap();
    assert_eq!(ok["cases"][0]["turns"], json!(["b"]));
    assert_eq!(ok["cases"][0]["world"]["bfcl"]["initial_config"], json!({}));

    for (question, classes, gt, want) in [
        (
            json!([user("a")]),
            json!(["MathAPI", "Weather"]),
            json!([[]]),
            "item `multi_turn_base_7`: unknown class `Weather` in `involved_classes`; \
             the known classes are GorillaFileSystem, MathAPI",
        ),
        (
            json!([user("a"), []]),
            json!(["MathAPI"]),
            json!([[], []]),
            "item `multi_turn_base_7`: turn 1 has no message",
        ),
        (
            json!([user("a"), [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}]]),
            json!(["MathAPI"]),
            json!([[], []]),
            "item `multi_turn_base_7`: turn 1 has 2 messages",
        ),
        (
            json!([[{"role": "system", "content": "x"}]]),
            json!(["MathAPI"]),
            json!([[]]),
            "item `multi_turn_base_7`: turn 0: the message's role is `system`",
        ),
        (
            json!([user("a"), user("b")]),
            json!(["MathAPI"]),
            json!([[]]),
            "item `multi_turn_base_7`: the ground truth has 1 turns, the question 2",
        ),
    ] {
        let e = import_item(item(question, classes), gt).unwrap_err();
        assert!(e.starts_with(want), "{e}\nwant: {want}");
    }
    let mut missed = item(json!([user("a"), user("b")]), json!(["MathAPI"]));
    missed["missed_function"] = json!({"1": ["add"]});
    let e = import_item(missed, json!([[], []])).unwrap_err();
    assert!(
        e.contains("turn 1 adds withheld functions, so it must have no message"),
        "{e}"
    );
    let mut missed = item(json!([user("a"), []]), json!(["MathAPI"]));
    missed["missed_function"] = json!({"1": ["cd"]});
    let e = import_item(missed, json!([[], []])).unwrap_err();
    assert!(e.contains("withholds `cd` until turn 1"), "{e}");
}
