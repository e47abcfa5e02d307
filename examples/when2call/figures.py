#!/usr/bin/env python3
"""Print the behaviour figures of a run of the When2Call example as Markdown.

Reads the run directory's summary.json (the `behaviour` metrics of each cell) and prints a
summary table (macro-F1, tool and answer hallucination, right answers per label) and each
cell's confusion matrix (rows: expected behaviour, columns: observed). These are the figures
quoted in README.md and docs/when2call.md:

  toolgauge run examples/when2call/when2call_test_llm_judge.json --out runs/when2call \\
    -t scripted:examples/when2call/sim/oracle.yaml -t scripted:examples/when2call/sim/always_call.yaml \\
    -t scripted:examples/when2call/sim/cautious.yaml -t scripted:examples/when2call/sim/mixed.yaml
  python3 examples/when2call/figures.py runs/when2call

Standard library only.
"""

import json
import os
import sys

ORDER = ["tool_call", "request_for_info", "cannot_answer", "direct"]


def pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def rate(r):
    if not r or r.get("den", 0) == 0:
        return "-"
    return f"{pct(r['value'])} [{pct(r['low'])[:-1]}-{pct(r['high'])}] ({r['num']}/{r['den']})"


def name(target):
    base = os.path.basename(target)
    return base[: -len(".yaml")] if base.endswith(".yaml") else target


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: figures.py RUN_DIR")
    path = os.path.join(sys.argv[1], "summary.json")
    try:
        with open(path, encoding="utf-8") as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"cannot read {path}: {e}")
    cells = [c for c in summary.get("cells", []) if c.get("metrics", {}).get("behaviour")]
    if not cells:
        sys.exit(f"{path} has no behaviour metrics (run the example first)")

    print("| simulated model | macro-F1 [95% CI] | tool hallucination | answer hallucination | right: tool_call / request_for_info / cannot_answer |")
    print("|---|---|---|---|---|")
    for c in cells:
        b = c["metrics"]["behaviour"]
        m = b["macro_f1"]
        right = " / ".join(
            f"{b['confusion'][e][e]}/{sum(b['confusion'][e].values())}"
            for e in ORDER[:3]
        )
        print(
            f"| `{name(c['target'])}` | {m['value']:.2f} [{m['low']:.2f}-{m['high']:.2f}] "
            f"| {rate(b['tool_hallucination_rate'])} | {rate(b['answer_hallucination_rate'])} | {right} |"
        )
    for c in cells:
        b = c["metrics"]["behaviour"]
        print()
        print(f"`{name(c['target'])}` (rows: expected, columns: observed)")
        print()
        print("| | " + " | ".join(ORDER) + " |")
        print("|---|" + "---:|" * len(ORDER))
        for e in ORDER:
            row = b["confusion"].get(e, {})
            if sum(row.values()) == 0:
                continue
            print(f"| **{e}** | " + " | ".join(str(row.get(o, 0)) for o in ORDER) + " |")


if __name__ == "__main__":
    main()
