//! Run directories are safe: `--out` never overwrites a run, a run's suite is found from
//! any working directory, `report`, `compare` and `run --resume` read a journal the same
//! way, and `--resume` never loses a scored trial (torn last lines, errored trials,
//! duplicates, a changed suite and a damaged journal).

use std::path::Path;

use serde_json::Value;

use crate::support::{BAD_INPUT, OK, THRESHOLD_FAILED, Toolgauge};

/// Trials of `fixtures/weather.yaml`: 4 cases × 2 variants × 2 modes.
const TRIALS: usize = 16;

/// The weather fixture run by the oracle into `out`; returns the suite's file name.
fn oracle_run(t: &Toolgauge, out: &str) -> String {
    let suite = t.fixture("weather.yaml");
    t.run(&["run", &suite, "--out", out, "--quiet"])
        .assert_code(OK);
    suite
}

fn journal_lines(t: &Toolgauge, dir: &str) -> Vec<String> {
    t.read(&format!("{dir}/trials.jsonl"))
        .lines()
        .map(str::to_string)
        .collect()
}

/// The trials of a journal that must be whole (every line parses), by identity.
fn journal_by_id(t: &Toolgauge, dir: &str) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = t
        .run_dir(dir)
        .trials()
        .into_iter()
        .map(|x| {
            let id = format!(
                "{} {} {} {}",
                x["case_id"].as_str().unwrap(),
                x["variant"].as_str().unwrap(),
                x["tool_choice"].as_str().unwrap(),
                x["repeat"]
            );
            (id, x)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Each trial's verdict, by identity.
fn verdicts(trials: &[(String, Value)]) -> Vec<(String, String)> {
    trials
        .iter()
        .map(|(id, x)| (id.clone(), x["verdict"].as_str().unwrap().to_string()))
        .collect()
}

/// The verdicts of a fresh, uninterrupted oracle run of the weather fixture (made in
/// `reference`): what a resumed run must end with. The oracle honours `tool_choice`, so
/// the should_not_call case fails under `required` (a call is forced there).
fn reference_verdicts(t: &Toolgauge) -> Vec<(String, String)> {
    oracle_run(t, "reference");
    let v = verdicts(&journal_by_id(t, "reference"));
    assert_eq!(v.len(), TRIALS);
    assert!(v.iter().any(|(_, x)| x == "fail") && v.iter().any(|(_, x)| x == "pass"));
    v
}

fn unique_ids(trials: &[(String, Value)]) -> usize {
    let mut ids: Vec<&String> = trials.iter().map(|(id, _)| id).collect();
    ids.dedup();
    ids.len()
}

/// An errored copy of the journal line `line`: what a timed-out trial writes.
fn as_error(line: &str) -> String {
    let mut v: Value = serde_json::from_str(line).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("response");
    o.remove("checks");
    o.insert("verdict".into(), "error".into());
    o.insert(
        "reasons".into(),
        serde_json::json!([{"code": "provider_error", "message": "request timed out"}]),
    );
    serde_json::to_string(&v).unwrap()
}

/// Mark the journal line `line` so a re-run of its trial would be seen: a scored
/// trial's recorded latency, which the oracle never produces.
fn marked(line: &str) -> String {
    let mut v: Value = serde_json::from_str(line).unwrap();
    v["response"]["latency_ms"] = 4242.5.into();
    serde_json::to_string(&v).unwrap()
}

#[test]
fn out_refuses_an_existing_run_and_overwrite_replaces_it() {
    let t = Toolgauge::new();
    let suite = oracle_run(&t, "out");
    let before = t.read("out/trials.jsonl");
    let meta = t.read("out/run.json");
    let o = t.run(&[
        "run",
        &suite,
        "--out",
        "out",
        "--target",
        "scripted:no_call",
    ]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "error: `out` already holds a run (suite weather, complete, 16 of 16 trials, started ",
        "a new run would overwrite it",
        "hint: finish it with `toolgauge run --resume out`",
        "--overwrite",
    ]);
    assert_eq!(t.read("out/trials.jsonl"), before, "the run is untouched");
    assert_eq!(t.read("out/run.json"), meta);

    // A stopped run (only a journal) is a run too.
    std::fs::create_dir(t.path().join("partial")).unwrap();
    t.write("partial/trials.jsonl", before.lines().next().unwrap());
    t.run(&["run", &suite, "--out", "partial"])
        .assert_code(BAD_INPUT);

    // A run that cannot start (a live target without its key) leaves the old run whole.
    let o = t.run(&[
        "run",
        &suite,
        "--out",
        "out",
        "--overwrite",
        "--target",
        "openai:gpt-4o-mini",
        "--live",
    ]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["OPENAI_API_KEY"]);
    assert_eq!(t.read("out/trials.jsonl"), before);

    // --overwrite replaces it: every file is the new run's.
    std::fs::remove_file(t.path().join("out/report.html")).unwrap();
    t.run(&[
        "run",
        &suite,
        "--out",
        "out",
        "--overwrite",
        "--target",
        "scripted:no_call",
        "--format",
        "json",
        "--quiet",
    ])
    .assert_code(THRESHOLD_FAILED);
    let trials = t.run_dir("out").trials();
    assert_eq!(trials.len(), TRIALS);
    assert!(trials.iter().all(|x| x["target"] == "scripted:no_call"));
    assert!(
        !t.run_dir("out").has("trials.csv"),
        "the old run's files are gone"
    );

    // A directory with files no run wrote is never written into.
    std::fs::create_dir(t.path().join("mine")).unwrap();
    t.write("mine/notes.txt", "keep me");
    let o = t.run(&["run", &suite, "--out", "mine"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["`mine` is not empty and holds no run"]);
    assert_eq!(t.read("mine/notes.txt"), "keep me");
    // An empty one is fine.
    std::fs::create_dir(t.path().join("empty")).unwrap();
    t.run(&["run", &suite, "--out", "empty", "--quiet"])
        .assert_code(OK);
    // --overwrite needs --out.
    t.run(&["run", &suite, "--overwrite"])
        .assert_code(BAD_INPUT);
}

#[test]
fn report_and_resume_find_the_suite_from_another_directory_and_a_moved_checkout() {
    let t = Toolgauge::new();
    std::fs::create_dir_all(t.path().join("project/suites")).unwrap();
    let suite = t.fixture("weather.yaml");
    std::fs::rename(
        t.path().join(&suite),
        t.path().join("project/suites/weather.yaml"),
    )
    .unwrap();
    let project = t.path().join("project");
    // A gated run whose threshold fails, so losing the suite would show in the exit code.
    t.run_in(
        &project,
        &[
            "run",
            "suites/weather.yaml",
            "--out",
            "runs/a",
            "--target",
            "scripted:no_call",
            "--quiet",
        ],
    )
    .assert_code(THRESHOLD_FAILED);
    let meta = t.run_dir("project/runs/a").json("run.json");
    assert_eq!(meta["suite"]["path"], "suites/weather.yaml", "as given");
    assert_eq!(
        meta["settings"]["paths"]["suite"]["from_run_dir"],
        "../../suites/weather.yaml"
    );
    let abs = project.join("suites/weather.yaml").canonicalize().unwrap();
    assert_eq!(
        meta["settings"]["paths"]["suite"]["absolute"],
        abs.to_str().unwrap()
    );

    // From the directory above and from inside the run directory: the thresholds apply
    // (exit 1) and nothing is said about a missing suite.
    for (cwd, dir) in [
        (t.path().to_path_buf(), "project/runs/a"),
        (project.join("runs/a"), "."),
    ] {
        let o = t.run_in(&cwd, &["report", dir, "--format", "json", "--no-color"]);
        o.assert_code(OK);
        assert!(!o.stderr.contains("warning"), "{}", o.stderr);
        let s = t.run_dir("project/runs/a").json("summary.json");
        assert_eq!(s["thresholds"][0]["metric"], "accuracy", "{s}");
        assert_eq!(s["thresholds"][0]["ok"], false);
    }

    // Move the whole checkout: the path relative to the run directory still finds it
    // (the absolute one no longer exists).
    std::fs::rename(&project, t.path().join("moved")).unwrap();
    let runs = t.path().join("moved/runs");
    let o = t.run_in(&runs, &["report", "a", "--format", "json"]);
    o.assert_code(OK);
    assert!(!o.stderr.contains("warning"), "{}", o.stderr);
    assert_eq!(
        t.run_dir("moved/runs/a").json("summary.json")["thresholds"][0]["ok"],
        false
    );

    // Resume from elsewhere: drop four trials and finish them.
    let lines = journal_lines(&t, "moved/runs/a");
    t.write("moved/runs/a/trials.jsonl", lines[..12].join("\n") + "\n");
    let o = t.run(&["run", "--resume", "moved/runs/a", "--quiet"]);
    o.assert_code(THRESHOLD_FAILED);
    assert!(!o.stderr.contains("missing"), "{}", o.stderr);
    let after = journal_by_id(&t, "moved/runs/a");
    assert_eq!(after.len(), TRIALS);
    assert_eq!(unique_ids(&after), TRIALS);
    // run.json keeps the path as first given and records the new locations.
    let meta = t.run_dir("moved/runs/a").json("run.json");
    assert_eq!(meta["suite"]["path"], "suites/weather.yaml");
    assert_eq!(
        meta["settings"]["paths"]["suite"]["from_run_dir"],
        "../../suites/weather.yaml"
    );
    let abs = t
        .path()
        .join("moved/suites/weather.yaml")
        .canonicalize()
        .unwrap();
    assert_eq!(
        meta["settings"]["paths"]["suite"]["absolute"],
        abs.to_str().unwrap()
    );

    // A missing suite: report warns naming the paths tried, resume refuses.
    std::fs::remove_file(t.path().join("moved/suites/weather.yaml")).unwrap();
    let o = t.run(&["report", "moved/runs/a", "--format", "json"]);
    o.assert_code(OK);
    o.stderr_has(&[
        "warning: the run's suite is missing (tried `moved/runs/a/../../suites/weather.yaml`",
        "reports are written without its thresholds",
    ]);
    let o = t.run(&["run", "--resume", "moved/runs/a"]);
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["the suite of the run in `moved/runs/a` is missing"]);
}

#[test]
fn resume_from_another_directory_finds_a_script_target_by_the_runs_working_directory() {
    let t = Toolgauge::new();
    let suite = t.fixture("weather.yaml");
    let script = t.fixture("weather_script.yaml");
    let target = format!("scripted:{script}");
    t.run(&[
        "run", &suite, "--out", "out", "--target", &target, "--quiet",
    ])
    .assert_code(THRESHOLD_FAILED);
    let before = journal_by_id(&t, "out");
    let lines = journal_lines(&t, "out");
    t.write("out/trials.jsonl", lines[..10].join("\n") + "\n");
    std::fs::create_dir(t.path().join("sub")).unwrap();
    // `scripted:weather_script.yaml` is relative to the run's working directory, not
    // to `sub`: the target keeps its name and the script is found.
    let o = t.run_in(
        &t.path().join("sub"),
        &["run", "--resume", "../out", "--quiet"],
    );
    o.assert_code(THRESHOLD_FAILED);
    let after = journal_by_id(&t, "out");
    assert_eq!(after.len(), TRIALS);
    assert!(after.iter().all(|(_, x)| x["target"] == target.as_str()));
    let verdicts = |v: &[(String, Value)]| -> Vec<(String, Value)> {
        v.iter()
            .map(|(id, x)| (id.clone(), x["verdict"].clone()))
            .collect()
    };
    assert_eq!(
        verdicts(&after),
        verdicts(&before),
        "the script answered again"
    );
}

#[test]
fn resume_after_a_torn_last_line_runs_only_that_trial_and_the_missing_ones() {
    let t = Toolgauge::new();
    oracle_run(&t, "out");
    let lines = journal_lines(&t, "out");
    assert_eq!(lines.len(), TRIALS);
    // A run killed while writing line 11: ten whole lines (the first marked, to see it
    // is kept and not re-run) and half of the eleventh.
    let mut kept: Vec<String> = lines[..10].to_vec();
    kept[0] = marked(&kept[0]);
    let torn = &lines[10][..lines[10].len() / 2];
    t.write("out/trials.jsonl", kept.join("\n") + "\n" + torn);

    // report and compare agree on what the journal holds: ten trials, with a warning.
    let o = t.run(&["report", "out", "--format", "json"]);
    o.assert_code(OK);
    o.stderr_has(&[
        "warning: `out/trials.jsonl` ends with a torn line (line 11, a write cut short)",
    ]);
    assert_eq!(
        t.run_dir("out").json("summary.json")["overall"]["trials"],
        10
    );
    let o = t.run(&["compare", "out", "out", "--format", "json"]);
    o.assert_code(OK);
    o.stderr_has(&["ends with a torn line (line 11"]);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], 10, "{c}");

    let o = t.run(&["run", "--resume", "out", "--quiet"]);
    o.assert_code(OK);
    o.stderr_has(&["ends with a torn line (line 11"]);
    let after = journal_by_id(&t, "out");
    assert_eq!(after.len(), TRIALS, "one whole line per trial");
    assert_eq!(unique_ids(&after), TRIALS);
    let marks = after
        .iter()
        .filter(|(_, x)| x["response"]["latency_ms"] == 4242.5)
        .count();
    assert_eq!(marks, 1, "the scored trial was kept, not run again");
    assert_eq!(verdicts(&after), reference_verdicts(&t));
    let meta = t.run_dir("out").json("run.json");
    assert_eq!(meta["status"], "complete");
    assert_eq!(meta["trials_written"], TRIALS);
    assert_eq!(
        t.run_dir("out").json("summary.json")["overall"]["trials"],
        TRIALS
    );
    // The rewrite left no temporary file behind.
    let names: Vec<String> = std::fs::read_dir(t.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
}

#[test]
fn resume_runs_errored_trials_again_and_keeps_every_scored_one() {
    let t = Toolgauge::new();
    oracle_run(&t, "out");
    let lines = journal_lines(&t, "out");
    // Trials 3 and 7 errored; trial 1 is marked to show it is kept as it was.
    let mut edited = lines.clone();
    edited[0] = marked(&lines[0]);
    edited[2] = as_error(&lines[2]);
    edited[6] = as_error(&lines[6]);
    t.write("out/trials.jsonl", edited.join("\n") + "\n");
    let o = t.run(&["report", "out", "--format", "json"]);
    o.assert_code(OK);
    assert_eq!(
        t.run_dir("out").json("summary.json")["overall"]["errors"],
        2
    );

    t.run(&["run", "--resume", "out", "--quiet"])
        .assert_code(OK);
    let after = journal_by_id(&t, "out");
    assert_eq!(after.len(), TRIALS);
    assert_eq!(unique_ids(&after), TRIALS);
    assert_eq!(
        verdicts(&after),
        reference_verdicts(&t),
        "the errored trials ran again and were scored as in an uninterrupted run"
    );
    assert_eq!(
        after
            .iter()
            .filter(|(_, x)| x["response"]["latency_ms"] == 4242.5)
            .count(),
        1
    );
    assert_eq!(
        t.run_dir("out").json("summary.json")["overall"]["errors"],
        0
    );
}

#[test]
fn resume_refuses_a_changed_suite_a_damaged_journal_and_foreign_trials_untouched() {
    let t = Toolgauge::new();
    let suite = oracle_run(&t, "out");
    let lines = journal_lines(&t, "out");
    let whole = t.read("out/trials.jsonl");
    let resume = || t.run(&["run", "--resume", "out"]);

    // A changed suite.
    let original = t.read(&suite);
    t.write(&suite, original.clone() + "# edited\n");
    let o = resume();
    o.assert_code(BAD_INPUT);
    o.stderr_has(&[
        "error: suite `out/../weather.yaml` changed since the run in `out` began",
        "hint: resuming would mix results of two different suites",
    ]);
    assert_eq!(t.read("out/trials.jsonl"), whole);
    t.write(&suite, original);

    // A damaged line in the middle: resume, report and compare all refuse, naming it.
    let mut damaged = lines.clone();
    damaged[4] = "{\"case_id\": \"beijing-today\", garbage".into();
    let text = damaged.join("\n") + "\n";
    t.write("out/trials.jsonl", &text);
    for o in [
        resume(),
        t.run(&["report", "out"]),
        t.run(&["compare", "out", "out"]),
    ] {
        o.assert_code(BAD_INPUT);
        o.stderr_has(&["`out/trials.jsonl` line 5 is damaged: not a trial record"]);
    }
    assert_eq!(
        t.read("out/trials.jsonl"),
        text,
        "resume did not rewrite it"
    );

    // A trial of another run (a case this suite does not have).
    let mut foreign = lines.clone();
    foreign[3] = foreign[3].replace("\"case_id\":\"", "\"case_id\":\"other-");
    let text = foreign.join("\n") + "\n";
    t.write("out/trials.jsonl", &text);
    let o = resume();
    o.assert_code(BAD_INPUT);
    o.stderr_has(&["holds 1 trial(s) that are not in this run's plan (first: other-"]);
    assert_eq!(t.read("out/trials.jsonl"), text);
}

#[test]
fn duplicate_lines_count_once_in_report_compare_and_resume() {
    let t = Toolgauge::new();
    oracle_run(&t, "out");
    let lines = journal_lines(&t, "out");
    let is_pass = |l: &String| serde_json::from_str::<Value>(l).unwrap()["verdict"] == "pass";
    let passed = lines.iter().filter(|l| is_pass(l)).count();
    let failed_before = TRIALS - passed;
    // A passing trial's line appears again as a failure, then as an error (which never
    // replaces a scored copy): the trial counts once, as the failure.
    let edited = lines.iter().position(is_pass).unwrap();
    let mut failed: Value = serde_json::from_str(&lines[edited]).unwrap();
    failed["verdict"] = "fail".into();
    failed["reasons"] = serde_json::json!([{"code": "wrong_tool", "message": "edited"}]);
    let mut dup = lines.clone();
    dup.push(serde_json::to_string(&failed).unwrap());
    dup.push(as_error(&lines[edited]));
    t.write("out/trials.jsonl", dup.join("\n") + "\n");

    let o = t.run(&["report", "out", "--format", "json"]);
    o.assert_code(OK);
    o.stderr_has(&["warning: `out/trials.jsonl` has 2 duplicate line(s) (first: line 17"]);
    let s = t.run_dir("out").json("summary.json");
    assert_eq!(s["overall"]["trials"], TRIALS);
    assert_eq!(s["overall"]["errors"], 0);
    assert_eq!(s["overall"]["passed"], passed - 1, "{}", s["overall"]);

    let o = t.run(&["compare", "out", "out", "--format", "json"]);
    o.assert_code(OK);
    o.stderr_has(&["has 2 duplicate line(s)"]);
    let c: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(c["overall"]["n"], TRIALS, "{c}");
    assert_eq!(c["overall"]["n00"], failed_before + 1, "{c}");
    assert_eq!(c["duplicates"], 0, "the reader already merged them: {c}");

    // Resume compacts the journal to one line per trial and runs nothing again.
    t.run(&["run", "--resume", "out", "--quiet"])
        .assert_code(OK);
    let after = journal_by_id(&t, "out");
    assert_eq!(after.len(), TRIALS);
    assert_eq!(unique_ids(&after), TRIALS);
    assert_eq!(
        after.iter().filter(|(_, x)| x["verdict"] == "fail").count(),
        failed_before + 1,
        "the scored copy that won was kept"
    );
}

#[test]
fn a_missing_run_directory_is_bad_input_for_report_and_resume() {
    let t = Toolgauge::new();
    for o in [
        t.run(&["report", "nowhere"]),
        t.run(&["run", "--resume", "nowhere"]),
    ] {
        o.assert_code(BAD_INPUT);
        o.stderr_has(&["nowhere/run.json"]);
    }
    assert!(!Path::new(&t.path().join("nowhere")).exists());
}
