//! The README's main command, run from the repository root.

use crate::support::{OK, RUN_FILES, RunDir, Toolgauge, repo_root};

const SUITES: &[&str] = &[
    "suites/weather.yaml",
    "suites/enum.yaml",
    "suites/parallel.yaml",
    "suites/tool_choice.yaml",
    "suites/variants.yaml",
    "suites/when_to_call.yaml",
    "suites/loops.yaml",
    "suites/safety.yaml",
    "suites/mcp_tools.yaml",
];

#[test]
fn readme_command_runs_every_example_suite_with_a_run_directory_each() {
    let root = repo_root();
    for s in SUITES {
        assert!(root.join(s).is_file(), "{s} is missing from the repository");
    }
    let t = Toolgauge::new();
    let reports = t.path().join("reports");
    let reports_arg = reports.to_string_lossy().into_owned();
    let mut args = vec!["run"];
    args.extend_from_slice(SUITES);
    args.extend_from_slice(&["--reports-dir", &reports_arg]);
    let o = t.run_in(&root, &args).expect_code(OK);

    // One summary table per suite.
    assert_eq!(
        o.stdout.matches("run written to ").count(),
        SUITES.len(),
        "stdout:\n{}",
        o.stdout
    );
    let tables = o.stdout.lines().filter(|l| l.starts_with('┌')).count();
    assert_eq!(tables, SUITES.len(), "stdout:\n{}", o.stdout);

    // One complete run directory per suite, each naming its suite.
    let mut dirs: Vec<RunDir> = std::fs::read_dir(&reports)
        .expect("the reports directory was created")
        .map(|e| RunDir::new(e.unwrap().path()))
        .collect();
    dirs.sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(dirs.len(), SUITES.len(), "one run directory per suite");
    let mut ran: Vec<String> = Vec::new();
    for d in &dirs {
        for f in RUN_FILES {
            assert!(d.has(f), "{} lacks {f}", d.path.display());
        }
        let meta = d.json("run.json");
        let name = meta["suite"]["name"].as_str().unwrap().to_string();
        assert!(
            o.stdout
                .lines()
                .any(|l| l.starts_with(&format!("{name}: ")) && l.contains(" trials, ")),
            "stdout has a summary headed `{name}: N trials, ...`"
        );
        assert_eq!(meta["trials_written"], meta["trials_planned"]);
        ran.push(meta["suite"]["path"].as_str().unwrap().to_string());
    }
    ran.sort();
    let mut expected: Vec<String> = SUITES.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(ran, expected);
}
