//! `toolgauge improve` from the command line: the worked example finds the planted fact
//! (and only it), a target that ignores wording gets nothing accepted across seeds, a
//! resumed search pays nothing twice, a model proposer is recorded into the cassette and
//! the whole search replays offline, and bad input is refused before anything is made.

use std::path::Path;

use serde_json::{Value, json};

use crate::live::Fake;
use crate::support::{BAD_INPUT, OK, Toolgauge, repo_root};

const SUITE: &str = "examples/improve/weather.yaml";
const PROPOSER: &str = "scripted:examples/improve/proposer.yaml";

fn example(t: &Toolgauge, out: &str, extra: &[&str]) -> Value {
    let out_dir = t.path().join(out);
    let out_arg = out_dir.display().to_string();
    let mut args = vec![
        "improve",
        SUITE,
        "--target",
        "scripted:lexical",
        "--proposer",
        PROPOSER,
        "--out",
        &out_arg,
        "-q",
    ];
    args.extend_from_slice(extra);
    t.run_in(&repo_root(), &args).expect_code(OK);
    json_file(&out_dir.join("improve.json"))
}

fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn the_worked_example_finds_the_planted_fact_and_nothing_else() {
    let t = Toolgauge::new();
    let written = t.path().join("weather.improved.yaml");
    let written_arg = written.display().to_string();
    let r = example(&t, "search", &["--write", &written_arg]);

    // The split: 30% of each kind held out, seeded.
    assert_eq!(r["sets"]["training"].as_array().unwrap().len(), 29);
    assert_eq!(r["sets"]["held_out"].as_array().unwrap().len(), 13);

    // Round 1: the wording that states what the tool covers wins, on both sets.
    let rounds = r["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3, "{r:#}");
    let r1 = &rounds[0];
    assert_eq!(r1["current"], "default");
    assert_eq!(r1["current_training"]["n"], 29);
    assert_eq!(r1["candidates"].as_array().unwrap().len(), 3);
    assert_eq!(r1["best"], 2);
    let (neutral, harmful, planted) = (
        &r1["candidates"][0]["training"]["value"],
        &r1["candidates"][1]["training"]["value"],
        &r1["candidates"][2]["training"]["value"],
    );
    let current = r1["current_training"]["value"].as_f64().unwrap();
    assert!((current - 10.0 / 29.0).abs() < 1e-9, "{current}");
    assert!(neutral.as_f64().unwrap() <= current, "{neutral}");
    assert!(harmful.as_f64().unwrap() < current, "{harmful}");
    assert!((planted.as_f64().unwrap() - 26.0 / 29.0).abs() < 1e-9);
    assert_eq!(r1["accepted"], true);
    let d = &r1["decision"];
    // 9 held-out cases flipped to pass and none back: exact McNemar p = 2 / 2^9.
    assert!(
        (d["p_value"].as_f64().unwrap() - 2.0 / 512.0).abs() < 1e-12,
        "{d}"
    );
    assert!((d["level"].as_f64().unwrap() - 0.025).abs() < 1e-12);
    assert_eq!(d["cases"], 13);
    assert!(
        d["guards"]
            .as_array()
            .unwrap()
            .iter()
            .all(|g| g["blocks"] == false)
    );

    // Round 2: an unreadable answer is asked again once; neither candidate beats it.
    let r2 = &rounds[1];
    assert_eq!(r2["proposer"]["attempts"], 2);
    assert_eq!(r2["proposer"]["errors"].as_array().unwrap().len(), 1);
    assert_eq!(r2["accepted"], false);
    assert!(
        r2.get("best_held_out").is_none(),
        "not tested on held-out: {r2}"
    );
    assert_eq!(rounds[2]["accepted"], false);
    assert_eq!(r["stop"], "2 round(s) in a row kept nothing (--patience 2)");

    // The contract keys.
    let accepted = r["accepted"].as_array().unwrap();
    assert_eq!(accepted.len(), 1);
    assert_eq!(accepted[0]["round"], 1);
    assert_eq!(accepted[0]["variant"], "r1c3");
    let desc = accepted[0]["tools"]["get_weather"]["description"]
        .as_str()
        .unwrap();
    assert!(desc.starts_with("Weather forecast for one city"), "{desc}");
    assert_eq!(r["final"]["get_weather"]["description"], desc);
    assert_eq!(
        r["final"]["get_weather"]["parameters"]["city"],
        "The city, as the user names it (Paris, 北京)."
    );
    assert_eq!(
        r["final"]["get_stock_price"], r["original"]["get_stock_price"],
        "an untouched tool keeps its wording"
    );
    assert!(r["definition_tokens"]["final"].as_u64() > r["definition_tokens"]["original"].as_u64());

    // The story page shows the accepted wording as a diff.
    let html = std::fs::read_to_string(t.path().join("search/improve.html")).unwrap();
    assert!(html.contains("r1c3"), "the page names the accepted wording");
    assert!(html.contains("<ins"), "the page diffs the wording");

    // The copy loads, and a run of it confirms the gain on every case.
    t.run(&["run", &written_arg, "--out", "confirm", "-q"])
        .expect_code(OK);
    let summary = t.run_dir("confirm").json("summary.json");
    let acc = |v: &str| -> f64 {
        summary["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["variant"] == v)
            .unwrap_or_else(|| panic!("no cell of {v}: {summary:#}"))["metrics"]["accuracy"]
            ["value"]
            .as_f64()
            .unwrap()
    };
    assert!((acc("default") - 14.0 / 42.0).abs() < 1e-9);
    assert!((acc("improved") - 39.0 / 42.0).abs() < 1e-9);
}

#[test]
fn a_target_that_ignores_the_wording_gets_nothing_accepted() {
    // `scripted:coin-N` answers each wording by an independent coin: every difference
    // between wordings is noise. The search must keep its false-acceptance rate.
    let t = Toolgauge::new();
    let seeds = 40;
    let mut accepted = 0;
    let mut tested = 0;
    for n in 0..seeds {
        let out = t.path().join(format!("coin-{n}"));
        let out_arg = out.display().to_string();
        let target = format!("scripted:coin-{n}");
        let seed = n.to_string();
        t.run_in(
            &repo_root(),
            &[
                "improve",
                SUITE,
                "--target",
                &target,
                "--proposer",
                PROPOSER,
                "--seed",
                &seed,
                "--out",
                &out_arg,
                "-q",
            ],
        )
        .expect_code(OK);
        let r = json_file(&out.join("improve.json"));
        accepted += usize::from(!r["accepted"].as_array().unwrap().is_empty());
        tested += r["rounds"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|rd| rd["decision"]["p_value"].is_number())
            .count();
    }
    assert!(
        accepted * 20 <= seeds,
        "{accepted} of {seeds} searches accepted a wording on a target that ignores wording"
    );
    // Not vacuous: held-out tests were made.
    assert!(
        tested >= 20,
        "only {tested} held-out tests in {seeds} searches"
    );
}

#[test]
fn a_resumed_search_pays_nothing_twice_and_ends_alike() {
    let t = Toolgauge::new();
    let first = example(&t, "search", &[]);
    let journal = t.path().join("search/trials.jsonl");
    let before = lines(&journal);
    let again = example(&t, "search", &["--resume"]);
    assert_eq!(lines(&journal), before, "a resumed search ran trials again");
    for key in ["rounds", "accepted", "final", "stop"] {
        assert_eq!(first[key], again[key], "{key}");
    }
    // Without --resume or --overwrite the directory is refused.
    let out = t.path().join("search").display().to_string();
    t.run_in(
        &repo_root(),
        &["improve", SUITE, "--proposer", PROPOSER, "--out", &out],
    )
    .expect_code(BAD_INPUT)
    .stderr_has(&["already holds a search", "--resume"]);
}

/// The contract answer of a model proposer: the example's planted wording.
fn proposer_answer() -> String {
    json!({"candidates": [
        {"rationale": "forecast words", "tools": {"get_weather": {
            "description": "Weather forecast for one city: temperature, rain, snow, wind, sunny skies, umbrella, tomorrow, tonight, weekend. 气象预报：气温、下雨、刮风、带伞、今晚、周末。"}}},
        {"rationale": "shorter", "tools": {"get_weather": {"description": "City conditions."}}}
    ]})
    .to_string()
}

#[test]
fn a_model_proposer_is_recorded_and_the_search_replays_offline() {
    const KEY: &str = "sk-test-improve-4455";
    let fake = Fake::start(|body, _| {
        // The answer is fenced in prose, as models often give it.
        let text = format!("Here you go:\n```json\n{}\n```", proposer_answer());
        let mut v: Value = serde_json::from_str(include_str!(
            "../../src/provider/testdata/openai/chat_text_answer_recorded.json"
        ))
        .unwrap();
        v["choices"][0]["message"]["content"] = json!(text);
        v["usage"]["prompt_tokens"] = json!(1000);
        v["usage"]["completion_tokens"] = json!(200);
        v["usage"]["total_tokens"] = json!(1200);
        assert!(
            body.get("tools").is_none(),
            "a proposer is offered no tools"
        );
        wiremock::ResponseTemplate::new(200).set_body_json(v)
    });
    let t = Toolgauge::new();
    let proposer = format!("openai:gpt-4o-mini@{}/v1", fake.uri());
    let cassette = t
        .path()
        .join("improve.cassette.jsonl")
        .display()
        .to_string();
    let run = |out: &str, extra: &[&str], env: &[(&str, &str)]| -> Value {
        let out_arg = t.path().join(out).display().to_string();
        let mut args = vec![
            "improve",
            SUITE,
            "--target",
            "scripted:lexical",
            "--proposer",
            &proposer,
            "--cassette",
            &cassette,
            "--rounds",
            "2",
            "--out",
            &out_arg,
            "-q",
        ];
        args.extend_from_slice(extra);
        let mut cmd = t.command_in(&repo_root(), &args);
        cmd.envs(env.iter().copied());
        crate::support::execute(cmd, &args).expect_code(OK);
        json_file(&t.path().join(out).join("improve.json"))
    };
    let live = run("recorded", &["--record"], &[("OPENAI_API_KEY", KEY)]);
    let seen = fake.seen();
    assert_eq!(seen.len(), 2, "one request per round");
    let prompt = seen[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(prompt.contains("### get_weather"), "{prompt}");
    assert!(
        prompt.contains("Propose 3 different new wordings"),
        "{prompt}"
    );
    assert!(
        prompt.contains("called no tool; expected get_weather"),
        "{prompt}"
    );
    assert_eq!(live["accepted"].as_array().unwrap().len(), 1, "{live:#}");
    // Round 1's proposer request was priced (gpt-4o-mini: 0.15 / 0.60 per Mtok).
    let cost = live["rounds"][0]["proposer"]["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - (1000.0 * 0.15 + 200.0 * 0.6) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains(KEY), "the key reached the cassette");
    drop(fake);

    // The server is gone and no key is set: the cassette answers the proposer.
    let replayed = run("replayed", &[], &[]);
    for key in ["rounds", "accepted", "final", "stop"] {
        assert_eq!(live[key], replayed[key], "{key}");
    }

    // A budget below one proposer answer: the round ends without a decision, and so
    // does the search.
    let capped = run("capped", &["--max-cost", "0.0001"], &[]);
    assert_eq!(capped["rounds"].as_array().unwrap().len(), 1, "{capped:#}");
    assert!(capped["accepted"].as_array().unwrap().is_empty());
    let why = capped["rounds"][0]["untested"].as_str().unwrap();
    assert!(
        why.starts_with("--max-cost 0.0001 was reached ($0.0003 spent)"),
        "{why}"
    );
    assert_eq!(capped["stop"], "--max-cost 0.0001 reached in round 1");
}

#[test]
fn bad_input_is_refused_before_anything_is_made() {
    let t = Toolgauge::new();
    let out = t.path().join("never");
    let out_arg = out.display().to_string();
    let root = repo_root();
    let improve = |extra: &[&str]| {
        let mut args = vec!["improve", SUITE, "--out", &out_arg];
        args.extend_from_slice(extra);
        t.run_in(&root, &args)
    };
    improve(&["--proposer", PROPOSER, "--objective", "acuracy"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["unknown metric `acuracy`", "did you mean `accuracy`"]);
    improve(&["--proposer", PROPOSER, "--guard", "false_calls"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["--guard: unknown metric `false_calls`"]);
    t.write("bad.yaml", "answers: []\n");
    let bad = format!("scripted:{}", t.path().join("bad.yaml").display());
    improve(&["--proposer", &bad])
        .expect_code(BAD_INPUT)
        .stderr_has(&["bad.yaml", "`rounds:`"]);
    improve(&["--proposer", "nosuch:model"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["nosuch"]);
    improve(&["--proposer", PROPOSER, "--holdout", "1.5"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["--holdout 1.5"]);
    improve(&["--proposer", PROPOSER, "--alpha", "0"])
        .expect_code(BAD_INPUT)
        .stderr_has(&["--alpha must be between 0 and 1"]);
    t.write(
        "held.yaml",
        "tools:\n  - name: other\n    description: Other.\n    parameters: {type: object}\ncases:\n  - id: h1\n    kind: should_not_call\n    prompt: hi\n",
    );
    let held = t.path().join("held.yaml").display().to_string();
    improve(&["--proposer", PROPOSER, "--holdout-suite", &held])
        .expect_code(BAD_INPUT)
        .stderr_has(&["has tools other", "the same tools"]);
    // A copy away from a suite that names files relative to itself would lose them.
    let copy = t.path().join("copy.yaml").display().to_string();
    t.run_in(
        &root,
        &[
            "improve",
            "suites/weather.yaml",
            "--proposer",
            PROPOSER,
            "--out",
            &out_arg,
            "--write",
            &copy,
        ],
    )
    .expect_code(BAD_INPUT)
    .stderr_has(&[
        "is not in the directory of `suites/weather.yaml`",
        "cassette: ../fixtures/weather.cassette.jsonl",
    ]);
    assert!(!out.exists(), "bad input left a directory behind");
    t.run_in(
        &root,
        &[
            "improve",
            SUITE,
            "--proposer",
            PROPOSER,
            "--out",
            &out_arg,
            "--resume",
        ],
    )
    .expect_code(BAD_INPUT)
    .stderr_has(&["holds no search"]);
}

#[test]
fn a_held_out_suite_replaces_the_split() {
    let t = Toolgauge::new();
    // The held-out file: four forecast questions and one that needs no tool.
    let mut held = String::from(
        "tools:\n  - name: get_weather\n    description: x\n    parameters: {type: object, properties: {city: {type: string}}, required: [city]}\n  - name: get_stock_price\n    description: y\n    parameters: {type: object, properties: {ticker: {type: string}}, required: [ticker]}\ncases:\n",
    );
    for (id, city) in [
        ("h-oslo", "Oslo"),
        ("h-lima", "Lima"),
        ("h-kyiv", "Kyiv"),
        ("h-riga", "Riga"),
    ] {
        held.push_str(&format!(
            "  - id: {id}\n    kind: should_call\n    prompt: \"Forecast for {city} tomorrow: rain or snow?\"\n    expect: {{calls: [{{tool: get_weather, args: {{city: {city}}}}}]}}\n"
        ));
    }
    held.push_str("  - id: h-poem\n    kind: should_not_call\n    prompt: \"Write a haiku.\"\n");
    t.write("held.yaml", held);
    let held_arg = t.path().join("held.yaml").display().to_string();
    let r = example(
        &t,
        "search",
        &["--holdout-suite", &held_arg, "--rounds", "1"],
    );
    assert_eq!(r["sets"]["training"].as_array().unwrap().len(), 42);
    assert_eq!(
        r["sets"]["held_out"],
        json!(["h-oslo", "h-lima", "h-kyiv", "h-riga", "h-poem"])
    );
    assert!(
        r["sets"]["source"]
            .as_str()
            .unwrap()
            .starts_with("--holdout-suite")
    );
    // Four flips are too few for round 1's level (2/2^4 = 0.125 > 0.025): kept out.
    let d = &r["rounds"][0]["decision"];
    assert_eq!(d["cases"], 5, "{d}");
    assert!(
        (d["p_value"].as_f64().unwrap() - 0.125).abs() < 1e-12,
        "{d}"
    );
    assert!(r["accepted"].as_array().unwrap().is_empty());
}

#[test]
fn a_target_that_scores_nothing_ends_the_search_instead_of_comparing_nothing() {
    let t = Toolgauge::new();
    let out = t.path().join("search").display().to_string();
    t.run_in(
        &repo_root(),
        &[
            "improve",
            SUITE,
            "--target",
            "scripted:error",
            "--proposer",
            PROPOSER,
            "--out",
            &out,
            "-q",
        ],
    )
    .expect_code(crate::support::RUN_INCOMPLETE)
    .stderr_has(&[
        "no training trial of wording `default` was scored",
        "--resume --out",
    ]);
}

#[test]
fn candidates_a_cassette_cannot_answer_are_dropped_with_the_reason() {
    // suites/weather.yaml replays its target from a cassette: the original wording's
    // requests are in it, a new wording's are not.
    let t = Toolgauge::new();
    let out = t.path().join("search");
    let out_arg = out.display().to_string();
    t.run_in(
        &repo_root(),
        &[
            "improve",
            "suites/weather.yaml",
            "--proposer",
            PROPOSER,
            "--out",
            &out_arg,
        ],
    )
    .expect_code(OK)
    .stdout_has(&["no usable candidate (r1c1: every training trial ended in an error"]);
    let r = json_file(&out.join("improve.json"));
    let first = &r["rounds"][0];
    assert!(first["current_training"]["n"].as_u64().unwrap() > 0);
    for c in first["candidates"].as_array().unwrap() {
        let why = c["dropped"][0].as_str().unwrap();
        assert!(
            why.contains("no cassette entry") && why.contains("--record"),
            "{why}"
        );
    }
    assert!(first.get("best").is_none());
    assert!(r["accepted"].as_array().unwrap().is_empty());
}
