#!/usr/bin/env python3
"""Write tests/integration/fixtures/bfcl/multi_turn_gt_results.jsonl: for every item of
the multi-turn sample (tests/integration/fixtures/bfcl/data), the result text BFCL's own
executor gives each ground-truth call, in order, turn after turn on one set of instances
(as a model that makes exactly the ground truth's calls would read them).

toolgauge's test replays the same calls through its loop and its Rust backends and must
read the same texts, byte for byte (tests/integration/bfcl_multi.rs). Calls are sent in
the keyword form BFCL's function-calling handlers make of JSON arguments
(positional arguments named by the method's signature), as generate.py writes them.

    /tmp/bfcl-venv/bin/python tests/bfcl_multi/generate_gt_results.py          # rewrite
    /tmp/bfcl-venv/bin/python tests/bfcl_multi/generate_gt_results.py --check  # exit 1 if stale
"""
import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

if os.environ.get("PYTHONHASHSEED") != "0" or os.environ.get("TZ") != "UTC":
    env = dict(os.environ, PYTHONHASHSEED="0", TZ="UTC")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[1] / "tests" / "integration" / "fixtures" / "bfcl"
OUT = FIXTURES / "multi_turn_gt_results.jsonl"

_spec = importlib.util.spec_from_file_location("generate", HERE / "generate.py")
g = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(g)
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import (  # noqa: E402
    execute_multi_turn_func_call,
)


def build():
    lines = []
    for cat in g.CATEGORIES:
        qs = (FIXTURES / "data" / f"BFCL_v4_{cat}.json").read_text(encoding="utf-8").splitlines()
        ans = {
            a["id"]: a["ground_truth"]
            for a in map(json.loads, (FIXTURES / "data" / "possible_answer" / f"BFCL_v4_{cat}.json").read_text(encoding="utf-8").splitlines())
        }
        for q in map(json.loads, qs):
            sigs = g.signatures(q["involved_classes"])
            results = []
            for turn in ans[q["id"]]:
                calls = []
                for c in turn:
                    name, args = g.keyword_call(c, sigs)
                    calls.append(f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})")
                if calls:
                    r, _ = execute_multi_turn_func_call(
                        calls,
                        q.get("initial_config", {}),
                        q["involved_classes"],
                        "gt_results",
                        q["id"],
                        long_context=("long_context" in cat),
                        is_evaL_run=False,
                    )
                    results.extend(r)
            lines.append(json.dumps({"id": q["id"], "results": results}))
    return "".join(l + "\n" for l in lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    text = build()
    if ap.parse_args().check:
        sys.exit(0 if OUT.exists() and OUT.read_text(encoding="utf-8") == text else 1)
    OUT.write_text(text, encoding="utf-8")
    print(f"{OUT}: {len(text.splitlines())} items")


if __name__ == "__main__":
    main()
