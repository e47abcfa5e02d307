//! `run --shard K/N` and `toolgauge merge`: the shipped weather suite replayed from its
//! cassette, whole and as three shards, must give the same trials and summary once the
//! shards are merged; merge refuses what is not one run's complete set of shards.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::support::{
    BAD_INPUT, OK, Output, RUN_INCOMPLETE, RunDir, THRESHOLD_FAILED, Toolgauge, repo_root,
};

/// Trials of the shipped weather suite: 13 cases × 2 variants × 1 mode × 2 repeats.
const WEATHER_TRIALS: usize = 52;

/// A scratch directory holding the shipped weather suite and its cassette at their
/// repository paths (the suite names its cassette as `../fixtures/...`).
fn weather() -> Toolgauge {
    let t = Toolgauge::new();
    for dir in ["suites", "fixtures"] {
        std::fs::create_dir_all(t.path().join(dir)).unwrap();
    }
    for f in ["suites/weather.yaml", "fixtures/weather.cassette.jsonl"] {
        std::fs::copy(repo_root().join(f), t.path().join(f)).unwrap();
    }
    t
}

/// Run shard `k` of `n` (or everything) into `out` with `-j jobs`.
fn run(t: &Toolgauge, out: &str, shard: Option<&str>, jobs: &str) -> Output {
    let mut args = vec![
        "run",
        "suites/weather.yaml",
        "--out",
        out,
        "-j",
        jobs,
        "--quiet",
    ];
    if let Some(s) = shard {
        args.extend_from_slice(&["--shard", s]);
    }
    t.run(&args).expect_code(OK)
}

/// Each trial as canonical JSON text, sorted: the journal as a set.
fn trial_set(d: &RunDir) -> Vec<String> {
    let mut v: Vec<String> = d.trials().iter().map(Value::to_string).collect();
    v.sort();
    v
}

fn identity(t: &Value) -> (String, String, String, String, u64) {
    let s = |k: &str| t[k].as_str().unwrap().to_string();
    (
        s("target"),
        s("variant"),
        s("tool_choice"),
        s("case_id"),
        t["repeat"].as_u64().unwrap(),
    )
}

#[test]
fn three_merged_shards_equal_the_unsharded_run() {
    let t = weather();
    run(&t, "whole", None, "8");
    // Different concurrency per shard: the split must not depend on it.
    for (k, jobs) in [("1/3", "1"), ("2/3", "8"), ("3/3", "3")] {
        let o = run(&t, &format!("shard{}", &k[..1]), Some(k), jobs);
        // The suite's thresholds are gated on the merged run, not on a shard's part.
        o.stderr_has(&[&format!(
            "note: thresholds are not checked on a shard (shard {k})"
        )]);
    }
    let whole = t.run_dir("whole");
    let shards: Vec<RunDir> = (1..=3).map(|k| t.run_dir(&format!("shard{k}"))).collect();
    // Shard 2 alone fails one of the suite's thresholds, yet exited 0 above.
    let failing = shards[1].json("summary.json")["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["ok"] == false)
        .count();
    assert_eq!(failing, 1);

    // Each trial is in exactly one shard, the one its identity names in run.json.
    let mut seen = BTreeSet::new();
    for (k, d) in shards.iter().enumerate() {
        let meta = d.json("run.json");
        assert_eq!(
            meta["selection"]["shards"],
            serde_json::json!({"count": 3, "indices": [k + 1]})
        );
        let trials = d.trials();
        assert_eq!(meta["trials_planned"], trials.len());
        for tr in &trials {
            assert!(seen.insert(identity(tr)), "{tr} is in two shards");
        }
        assert!(
            d.json("summary.json")["selection"]
                .as_str()
                .unwrap()
                .contains(&format!("shard {}/3", k + 1))
        );
    }
    assert_eq!(seen.len(), WEATHER_TRIALS);
    let all: BTreeSet<_> = whole.trials().iter().map(identity).collect();
    assert_eq!(seen, all);

    let o = t.run(&["merge", "shard3", "shard1", "shard2", "--out", "merged"]);
    o.assert_code(OK);
    o.stdout_has(&["weather: 52 trials"]);
    let merged = t.run_dir("merged");
    merged.assert_complete();
    assert_eq!(trial_set(&merged), trial_set(&whole));
    assert_eq!(merged.json("summary.json"), whole.json("summary.json"));
    let meta = merged.json("run.json");
    assert_eq!(meta["status"], "complete");
    assert_eq!(meta["trials_planned"], WEATHER_TRIALS);
    assert_eq!(meta["trials_written"], WEATHER_TRIALS);
    assert!(meta.get("selection").is_none(), "{meta}");
    let from: Vec<&str> = meta["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["dir"].as_str().unwrap())
        .collect();
    assert_eq!(from, ["shard3", "shard1", "shard2"]);
    let counts: u64 = meta["merged_from"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["trials"].as_u64().unwrap())
        .sum();
    assert_eq!(counts, WEATHER_TRIALS as u64);

    // Compare pairs every trial, with no flip.
    let o = t.run(&["compare", "merged", "whole", "--format", "json"]);
    o.assert_code(OK);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], WEATHER_TRIALS);
    assert_eq!(
        (c["overall"]["n10"].as_u64(), c["overall"]["n01"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(
        (c["only_baseline"].as_u64(), c["only_candidate"].as_u64()),
        (Some(0), Some(0))
    );

    // `report` on the merged run writes the same summary again.
    t.run(&["report", "merged", "--format", "json"])
        .assert_code(OK);
    assert_eq!(merged.json("summary.json"), whole.json("summary.json"));

    // From another directory, where the suite's path as given (`suites/weather.yaml`)
    // names nothing: merge finds it from the shards' directories, as `report` does, and
    // the merged run.json locates it from the merged directory.
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let merge = [
        "merge",
        "../shard2",
        "../shard1",
        "../shard3",
        "--out",
        "../merged2",
        "-q",
    ];
    t.run_in(&elsewhere, &merge).assert_code(OK);
    let merged2 = t.run_dir("merged2");
    assert_eq!(trial_set(&merged2), trial_set(&whole));
    let paths = &merged2.json("run.json")["settings"]["paths"];
    assert_eq!(paths["suite"]["from_run_dir"], "../suites/weather.yaml");
    assert_eq!(
        paths["cassette"]["from_run_dir"],
        "../fixtures/weather.cassette.jsonl"
    );
    let cwd = std::path::PathBuf::from(paths["working_dir"].as_str().unwrap());
    assert_eq!(cwd, elsewhere.canonicalize().unwrap());
    t.run_in(&elsewhere, &["report", "../merged2", "--format", "json"])
        .assert_code(OK);
    assert_eq!(merged2.json("summary.json"), whole.json("summary.json"));
}

#[test]
fn a_stopped_shard_is_refused_until_resumed() {
    let t = weather();
    run(&t, "whole", None, "8");
    run(&t, "s1", Some("1/2"), "8");
    // Shard 2 stops after its first trial on a token budget.
    let o = t.run(&[
        "run",
        "suites/weather.yaml",
        "--shard",
        "2/2",
        "--out",
        "s2",
        "-j",
        "1",
        "--max-tokens",
        "1",
    ]);
    o.assert_code(RUN_INCOMPLETE);
    let o = t.run(&["merge", "s1", "s2", "--out", "m"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "shard 2/2 in `s2` is unfinished",
        "toolgauge run --resume s2",
    ]);
    assert!(
        !t.path().join("m").exists(),
        "a refused merge writes nothing"
    );

    // Resume runs the rest of shard 2 only (the selection is kept in run.json).
    t.run(&["run", "--resume", "s2", "--quiet"]).assert_code(OK);
    let s2 = t.run_dir("s2");
    // It found the cassette as `s2/../fixtures/...` but names it as the run was given
    // it, as shard 1 does: the shards' sources are compared by merge.
    assert_eq!(
        s2.json("run.json")["sources"],
        t.run_dir("s1").json("run.json")["sources"]
    );
    assert_eq!(
        s2.json("run.json")["selection"]["shards"]["indices"],
        serde_json::json!([2])
    );
    for tr in s2.trials() {
        let (target, variant, mode, case, repeat) = identity(&tr);
        let k = shard_of(&target, &variant, &mode, &case, repeat, 2);
        assert_eq!(k, 2, "{tr}");
    }
    t.run(&["merge", "s1", "s2", "--out", "m", "--quiet"])
        .assert_code(OK);
    assert_eq!(trial_set(&t.run_dir("m")), trial_set(&t.run_dir("whole")));
    assert_eq!(
        t.run_dir("m").json("summary.json"),
        t.run_dir("whole").json("summary.json")
    );
}

/// The documented split: sha256 of `[target, variant, tool_choice, case_id, repeat]`
/// as compact JSON, first 8 bytes big-endian, modulo N, plus one (docs/ci.md).
fn shard_of(target: &str, variant: &str, mode: &str, case: &str, repeat: u64, n: u64) -> u64 {
    use sha2::{Digest, Sha256};
    let text = serde_json::json!([target, variant, mode, case, repeat]).to_string();
    let d = Sha256::digest(text.as_bytes());
    u64::from_be_bytes(d[..8].try_into().unwrap()) % n + 1
}

#[test]
fn merge_refuses_what_is_not_one_runs_shards() {
    let t = weather();
    run(&t, "a1", Some("1/3"), "8");
    run(&t, "a2", Some("2/3"), "8");
    run(&t, "a3", Some("3/3"), "8");
    run(&t, "whole", None, "8");
    let refuse = |args: &[&str], needles: &[&str]| {
        let mut argv = vec!["merge"];
        argv.extend_from_slice(args);
        let o = t.run(&argv);
        o.assert_code(BAD_INPUT);
        o.stderr_has(needles);
    };
    refuse(
        &["a1", "a3", "--out", "m"],
        &["shard 2 of 3 is missing", "--allow-partial"],
    );
    refuse(&["a1", "--out", "m"], &["shards 2, 3 of 3 are missing"]);
    refuse(
        &["a1", "a2", "a1", "a3", "--out", "m"],
        &["shard 1/3 is given twice: in `a1` and in `a1`"],
    );
    refuse(
        &["a1", "whole", "--out", "m"],
        &["`whole` is not a shard: its run was made without --shard"],
    );

    // Other settings, or another N.
    t.run(&[
        "run",
        "suites/weather.yaml",
        "--shard",
        "2/3",
        "--repeats",
        "1",
        "--out",
        "r1",
        "-q",
    ])
    .assert_code(OK);
    refuse(
        &["a1", "r1", "a3", "--out", "m"],
        &["`a1` and `r1` are not shards of one run: their matrices differ"],
    );
    run(&t, "half", Some("2/2"), "8");
    refuse(
        &["a1", "half", "--out", "m"],
        &["their shard counts differ (N = 3 vs N = 2)"],
    );
    t.run(&[
        "run",
        "suites/weather.yaml",
        "--shard",
        "2/3",
        "--tag",
        "zh",
        "--out",
        "zh2",
        "-q",
    ])
    .assert_code(OK);
    refuse(
        &["a1", "zh2", "a3", "--out", "m"],
        &["their case selections differ (every case vs --tag zh)"],
    );

    // A trial twice, and a trial in the wrong shard.
    let before = trial_set(&t.run_dir("a2"));
    let journal = t.path().join("a2/trials.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let first = text.lines().next().unwrap().to_string();
    std::fs::write(&journal, format!("{text}{first}\n")).unwrap();
    refuse(
        &["a1", "a2", "a3", "--out", "m"],
        &[
            "appears twice in `a2/trials.jsonl` (again at line",
            "toolgauge run --resume a2",
        ],
    );
    // As the hint says, resume compacts the journal: each trial once, none lost.
    t.run(&["run", "--resume", "a2", "-q"]).assert_code(OK);
    assert_eq!(t.run_dir("a2").trials().len(), before.len());
    assert_eq!(trial_set(&t.run_dir("a2")), before);
    let foreign = std::fs::read_to_string(t.path().join("a1/trials.jsonl")).unwrap();
    let foreign = foreign.lines().next().unwrap();
    std::fs::write(&journal, format!("{text}{foreign}\n")).unwrap();
    refuse(
        &["a1", "a2", "a3", "--out", "m"],
        &["belongs to shard 1/3, not to shard 2/3"],
    );
    std::fs::write(&journal, &text).unwrap();

    // An existing --out is never overwritten.
    std::fs::create_dir(t.path().join("taken")).unwrap();
    std::fs::write(t.path().join("taken/keep.txt"), "x").unwrap();
    refuse(
        &["a1", "a2", "a3", "--out", "taken"],
        &["--out `taken` already exists and is not empty"],
    );

    // --allow-partial merges what is there, recorded and shown as partial.
    let o = t.run(&["merge", "a1", "a3", "--out", "part", "--allow-partial"]);
    o.assert_code(OK);
    o.stderr_has(&["warning: shard 2 of 3 is missing"]);
    o.stdout_has(&["partial run: shards 1, 3 of 3"]);
    let part = t.run_dir("part");
    assert_eq!(
        part.json("run.json")["selection"]["shards"],
        serde_json::json!({"count": 3, "indices": [1, 3]})
    );
    let n = |d: &str| t.run_dir(d).trials().len();
    assert_eq!(part.trials().len(), n("a1") + n("a3"));
    // A partial merge plus the missing shard is the whole run.
    t.run(&["merge", "part", "a2", "--out", "all", "-q"])
        .assert_code(OK);
    assert_eq!(
        t.run_dir("all").json("summary.json"),
        t.run_dir("whole").json("summary.json")
    );
}

#[test]
fn the_merged_run_gates_the_thresholds_its_shards_did_not() {
    let t = weather();
    // A stricter overall limit than the shipped 0.1: the vague wording's invalid calls
    // (weather's cassette has some) break it on the whole run.
    let suite = t.read("suites/weather.yaml");
    let strict = suite.replace(
        "- { metric: invalid_call_rate, max: 0.1 }",
        "- { metric: invalid_call_rate, max: 0.01 }",
    );
    assert_ne!(
        strict, suite,
        "weather.yaml's overall invalid_call_rate threshold moved"
    );
    t.write("suites/weather.yaml", strict);
    let o = t.run(&["run", "suites/weather.yaml", "--out", "whole", "-q"]);
    o.assert_code(THRESHOLD_FAILED);
    for k in ["1/2", "2/2"] {
        run(&t, &format!("s{}", &k[..1]), Some(k), "8");
    }
    let o = t.run(&["merge", "s1", "s2", "--out", "m", "-q"]);
    o.assert_code(THRESHOLD_FAILED);
    assert_eq!(
        o.stderr.lines().last(),
        Some("threshold failed: invalid_call_rate (overall)")
    );
}

/// The GitHub Actions example of docs/ci.md's sharding section, its `toolgauge` steps run
/// as written (replayed: `--live` dropped, no key): each shard job in its own checkout,
/// its `shard/` directory moved where `download-artifact` puts it, then the merge step.
#[test]
fn the_sharded_workflow_in_docs_ci_md_merges_into_the_unsharded_run() {
    let doc = std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap();
    let section = &doc[doc
        .find("## Sharding a run across machines")
        .expect("docs/ci.md has the sharding section")..];
    let workflow = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section starts with a YAML workflow");
    let shards: u32 = workflow
        .lines()
        .find_map(|l| l.trim().strip_prefix("SHARDS:"))
        .and_then(|v| v.split('#').next())
        .and_then(|v| v.trim().parse().ok())
        .expect("the workflow sets SHARDS");
    assert!(workflow.contains(&format!(
        "shard: [{}]",
        (1..=shards).map(|k| k.to_string()).collect::<Vec<_>>().join(", ")
    )));
    // A `run: >` step: its folded lines joined.
    let step = |needle: &str| -> String {
        let lines: Vec<&str> = workflow.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no step with {needle}"));
        let mut start = at;
        while !lines[start].trim_start().starts_with("- run:") {
            start -= 1;
        }
        let mut text = lines[start].trim_start()["- run:".len()..]
            .trim()
            .to_string();
        for l in &lines[start + 1..] {
            let indented = l.starts_with("          ");
            if !indented || l.trim_start().starts_with("env:") {
                break;
            }
            text.push(' ');
            text.push_str(l.trim());
        }
        text.trim_start_matches('>').trim().to_string()
    };
    let run_step = step("--shard");
    let merge_step = step("toolgauge merge");

    let t = weather();
    run(&t, "whole", None, "8");
    let checkout = |name: &str| {
        let dir = t.path().join(name);
        for sub in ["suites", "fixtures"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        for f in ["suites/weather.yaml", "fixtures/weather.cassette.jsonl"] {
            std::fs::copy(repo_root().join(f), dir.join(f)).unwrap();
        }
        dir
    };
    let merge_job = checkout("merge-job");
    std::fs::create_dir(merge_job.join("shards")).unwrap();
    for k in 1..=shards {
        let job = checkout(&format!("job{k}"));
        let cmd = run_step
            .replace("${{ matrix.shard }}", &k.to_string())
            .replace("${{ env.SHARDS }}", &shards.to_string());
        let args: Vec<&str> = cmd
            .split_whitespace()
            .skip(1) // `toolgauge`
            .filter(|a| *a != "--live")
            .collect();
        t.run_in(&job, &args).assert_code(OK);
        std::fs::rename(
            job.join("shard"),
            merge_job.join(format!("shards/toolgauge-shard-{k}")),
        )
        .unwrap();
    }
    // The shell expands `shards/toolgauge-shard-*` in name order.
    let mut args: Vec<String> = Vec::new();
    for a in merge_step.split_whitespace().skip(1) {
        if a == "shards/toolgauge-shard-*" {
            args.extend((1..=shards).map(|k| format!("shards/toolgauge-shard-{k}")));
        } else {
            args.push(a.to_string());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    t.run_in(&merge_job, &args).assert_code(OK);
    let merged = RunDir::new(merge_job.join("merged"));
    assert_eq!(trial_set(&merged), trial_set(&t.run_dir("whole")));
    assert_eq!(
        merged.json("summary.json"),
        t.run_dir("whole").json("summary.json")
    );
}
