#!/usr/bin/env python3
"""Generate BFCL multi-turn test data: sample items, model results, BFCL's verdicts.

This script is ours (toolgauge's). It writes, under tests/integration/fixtures/bfcl/:

* data/BFCL_v4_multi_turn_<category>.json, data/possible_answer/<same>: a sample
  of real items of the installed `bfcl_eval` package (lines copied verbatim), and
  data/multi_turn_func_doc/: the eight backends' function-doc files, verbatim;
* multi_turn_results/<style>/<variant>/<model>/multi_turn/BFCL_v4_<category>_result.json:
  model results of our own making in BFCL's result layout, one directory per
  (style, variant) so that every item id occurs once per directory. `style` is
  `fc` (model `gpt-4o-2024-11-20-FC`: each step is a list of
  `{name: "<JSON arguments>"}`) or `prompt` (model `gpt-4o-2024-11-20`: each step
  is text such as `[cd(folder='docs'), ls()]`);
* multi_turn_verdicts.jsonl: for every result line, the verdict of BFCL's own
  `bfcl evaluate` CLI on those files: `{style, variant, id, valid, error_type}`.

Variants (see README.md next to this script for the full list): the ones of
tests/bfcl_worlds/generate_verdicts.py (whose `variants_for` is reused, decoded
call lists that this script writes out in each style), plus closing text steps,
non-decodable steps in a turn, an inference error and a turn at BFCL's step
limit.

Run in the venv that has bfcl-eval and the dependencies its CLI imports:

    /tmp/bfcl-venv/bin/python tests/bfcl_multi/generate.py
    /tmp/bfcl-venv/bin/python tests/bfcl_multi/generate.py --check
"""

import argparse
import ast
import importlib
import importlib.util
import inspect
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Python's string hashing and the time zone change BFCL's results; pin both.
if os.environ.get("PYTHONHASHSEED") != "0" or os.environ.get("TZ") != "UTC":
    env = dict(os.environ, PYTHONHASHSEED="0", TZ="UTC")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import bfcl_eval  # noqa: E402
from bfcl_eval.constants.executable_backend_config import (  # noqa: E402
    CLASS_FILE_PATH_MAPPING,
    MULTI_TURN_FUNC_DOC_FILE_MAPPING,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = REPO / "tests" / "integration" / "fixtures" / "bfcl"
DATA = Path(bfcl_eval.__file__).parent / "data"
BFCL = Path(sys.executable).parent / "bfcl"

CATEGORIES = [
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
]
PER_CATEGORY = 6
SEED = 3333
CLASSES = [
    "GorillaFileSystem",
    "MathAPI",
    "MessageAPI",
    "TwitterAPI",
    "TicketAPI",
    "TradingBot",
    "TravelAPI",
    "VehicleControlAPI",
]
MODELS = {"fc": "gpt-4o-2024-11-20-FC", "prompt": "gpt-4o-2024-11-20"}
# BFCL stops a turn once more than this many steps were executed.
MAXIMUM_STEP_LIMIT = 20

# The variants of the checker-level generator, reused.
_spec = importlib.util.spec_from_file_location(
    "bfcl_worlds_generate_verdicts", REPO / "tests" / "bfcl_worlds" / "generate_verdicts.py"
)
_gv = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gv)


def load_jsonl_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def pick():
    """(category, question line, answer line) of the sampled items, in id order."""
    out = []
    for cat in CATEGORIES:
        q = load_jsonl_lines(DATA / f"BFCL_v4_{cat}.json")
        a = load_jsonl_lines(DATA / "possible_answer" / f"BFCL_v4_{cat}.json")
        rng = random.Random(f"{SEED}:{cat}")
        for i in sorted(rng.sample(range(len(q)), PER_CATEGORY)):
            assert json.loads(q[i])["id"] == json.loads(a[i])["id"]
            out.append((cat, q[i], a[i]))
    return out


def signatures(classes):
    """Each public method's parameter names (without self), by method name."""
    out = {}
    for c in classes:
        cls = getattr(importlib.import_module(CLASS_FILE_PATH_MAPPING[c]), c)
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_"):
                out[name] = [p for p in inspect.signature(fn).parameters if p != "self"]
    return out


def keyword_call(call, sigs):
    """(name, {arg: value}) of a call string: positional arguments named by the
    method's signature, every value a literal."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name), call
    name = node.func.id
    args = {}
    params = sigs.get(name, [])
    for i, a in enumerate(node.args):
        args[params[i] if i < len(params) else f"arg{i}"] = ast.literal_eval(a)
    for k in node.keywords:
        args[k.arg] = ast.literal_eval(k.value)
    return name, args


def fc_step(calls, sigs):
    out = []
    for c in calls:
        name, args = keyword_call(c, sigs)
        out.append({name: json.dumps(args)})
    return out


def prompt_step(calls, sigs):
    parts = []
    for c in calls:
        name, args = keyword_call(c, sigs)
        parts.append(f"{name}({', '.join(f'{k}={v!r}' for k, v in args.items())})")
    return "[" + ", ".join(parts) + "]"


# Steps BFCL's evaluation drops, one pair per style: (text answer, undecodable calls).
CLOSING_TEXT = "I have completed the requested steps."
BAD_STEP = {
    "fc": [{"ls": "{not json"}],
    "prompt": "Let me look at the files first: ls(a=",
}
EMPTY_STEP = {"fc": [], "prompt": "[]"}


def write_step(style, step, sigs):
    """A decoded step (a call list) or an already raw step ({"raw": value})."""
    if isinstance(step, dict):
        return step["raw"][style] if isinstance(step["raw"], dict) else step["raw"]
    return fc_step(step, sigs) if style == "fc" else prompt_step(step, sigs)


def raw(v):
    """A step written as is in both styles (or per style, given a dict by style)."""
    return {"raw": v}


def variants(item, cat, gt):
    """(variant, note, turns of steps) for one item; a step is a call list or raw."""
    out = [(v, note, turns) for v, note, turns in _gv.variants_for(item, cat, gt)]
    nonempty = [i for i, t in enumerate(gt) if t]
    text = raw(CLOSING_TEXT)
    out.append(
        (
            "closing_text",
            "the ground truth, then a text step ending every turn",
            [([list(t)] if t else []) + [text] for t in gt],
        )
    )
    if nonempty:
        ti = nonempty[0]
        turns = [[list(t)] if t else [] for t in gt]
        calls = gt[ti]
        turns[ti] = [calls[:1], raw(BAD_STEP), raw(EMPTY_STEP)] + ([calls[1:]] if calls[1:] else [])
        turns[ti].append(text)
        out.append(
            (
                "undecodable_steps",
                f"turn {ti}: an undecodable and an empty step after the first call",
                turns,
            )
        )
        read = _gv.READ_CALL[item["involved_classes"][0]]
        turns = [[list(t)] if t else [] for t in gt][: ti + 1]
        turns[ti] = [[read]] * MAXIMUM_STEP_LIMIT + [list(gt[ti])]
        out.append(
            (
                "step_limit",
                f"turn {ti}: {MAXIMUM_STEP_LIMIT} read steps then the calls "
                f"({MAXIMUM_STEP_LIMIT + 1} steps, BFCL's forced stop); later turns absent",
                turns,
            )
        )
    out.append(("inference_error", "the result is an error text, not a list", None))
    return out


def usage(turns):
    """Per turn, per step counts and latencies, as BFCL stores them."""
    return {
        "input_token_count": [[1000 + 10 * t + s for s in range(len(st))] for t, st in enumerate(turns)],
        "output_token_count": [[20 + s for s in range(len(st))] for t, st in enumerate(turns)],
        "latency": [[0.5 + s / 4 for s in range(len(st))] for t, st in enumerate(turns)],
    }


def build(out_root):
    """Write data and results under out_root (a fixtures/bfcl layout). Returns the
    (style, variant) result directories written."""
    data = out_root / "data"
    (data / "possible_answer").mkdir(parents=True, exist_ok=True)
    (data / "multi_turn_func_doc").mkdir(parents=True, exist_ok=True)
    for c in CLASSES:
        f = MULTI_TURN_FUNC_DOC_FILE_MAPPING[c]
        shutil.copyfile(DATA / "multi_turn_func_doc" / f, data / "multi_turn_func_doc" / f)
    picked = pick()
    for cat in CATEGORIES:
        qs = [q for c, q, _ in picked if c == cat]
        ans = [a for c, _, a in picked if c == cat]
        name = f"BFCL_v4_{cat}.json"
        (data / name).write_text("".join(q + "\n" for q in qs), encoding="utf-8")
        (data / "possible_answer" / name).write_text("".join(a + "\n" for a in ans), encoding="utf-8")

    # results[(style, variant)][category] = [line, ...]
    results = {}
    notes = []
    for cat, q, a in picked:
        item = json.loads(q)
        gt = json.loads(a)["ground_truth"]
        sigs = signatures(item["involved_classes"])
        for variant, note, turns in variants(item, cat, gt):
            notes.append({"id": item["id"], "variant": variant, "note": note})
            for style, model in MODELS.items():
                if turns is None:
                    line = {"id": item["id"], "result": f"Error during inference: {note}"}
                else:
                    steps = [[write_step(style, s, sigs) for s in t] for t in turns]
                    line = {"id": item["id"], "result": steps, **usage(steps)}
                results.setdefault((style, variant), {}).setdefault(cat, []).append(line)
    base = out_root / "multi_turn_results"
    for (style, variant), by_cat in results.items():
        d = base / style / variant / MODELS[style] / "multi_turn"
        d.mkdir(parents=True, exist_ok=True)
        for cat, lines in by_cat.items():
            text = "".join(json.dumps(line) + "\n" for line in lines)
            (d / f"BFCL_v4_{cat}_result.json").write_text(text, encoding="utf-8")
    (base / "notes.jsonl").write_text(
        "".join(json.dumps(n) + "\n" for n in notes), encoding="utf-8"
    )
    return sorted(results)


def evaluate(out_root, dirs):
    """Run `bfcl evaluate` on every result directory; the verdict lines."""
    lines = []
    for style, variant in dirs:
        rdir = out_root / "multi_turn_results" / style / variant
        with tempfile.TemporaryDirectory() as root:
            score = Path(root) / "score"
            env = dict(os.environ, BFCL_PROJECT_ROOT=root, OPENAI_API_KEY="unused")
            cmd = [
                str(BFCL), "evaluate",
                "--model", MODELS[style],
                "--test-category", "multi_turn",
                "--result-dir", str(rdir),
                "--score-dir", str(score),
                "--partial-eval",
            ]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                sys.stderr.write(done.stdout + done.stderr)
                raise SystemExit(f"bfcl evaluate failed for {style}/{variant}")
            failed = {}
            for f in score.rglob("BFCL_v4_multi_turn_*_score.json"):
                for i, line in enumerate(f.read_text(encoding="utf-8").splitlines()):
                    if i == 0 or not line.strip():
                        continue  # the summary line
                    e = json.loads(line)
                    failed[e["id"]] = e["error"]["error_type"]
        for f in sorted((rdir / MODELS[style]).rglob("*_result.json")):
            for line in f.read_text(encoding="utf-8").splitlines():
                i = json.loads(line)["id"]
                lines.append(
                    {
                        "style": style,
                        "variant": variant,
                        "id": i,
                        "valid": i not in failed,
                        "error_type": failed.get(i),
                    }
                )
        print(f"  {style:6} {variant:20} {sum(1 for l in lines if l['variant'] == variant and l['style'] == style)} items", flush=True)
    lines.sort(key=lambda l: (l["style"], l["variant"], l["id"]))
    return "".join(json.dumps(l) + "\n" for l in lines)


def snapshot(root):
    """Every file under the generated parts of root, by relative path."""
    out = {}
    for part in ["data", "multi_turn_results"]:
        for p in sorted((root / part).rglob("*")):
            if p.is_file() and (part != "data" or "multi_turn" in p.name or p.parent.name == "multi_turn_func_doc"):
                out[str(p.relative_to(root))] = p.read_bytes()
    v = root / "multi_turn_verdicts.jsonl"
    if v.exists():
        out[v.name] = v.read_bytes()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if any output would change")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        dirs = build(tmp)
        verdicts = evaluate(tmp, dirs)
        (tmp / "multi_turn_verdicts.jsonl").write_text(verdicts, encoding="utf-8")
        new = snapshot(tmp)
        old = snapshot(FIXTURES)
        if opts.check:
            diff = sorted(k for k in set(new) | set(old) if new.get(k) != old.get(k))
            for k in diff:
                print("differs:", k)
            if diff:
                return 1
            print("multi-turn fixtures up to date")
            return 0
        shutil.rmtree(FIXTURES / "multi_turn_results", ignore_errors=True)
        for k, b in new.items():
            p = FIXTURES / k
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(b)
        for k in set(old) - set(new):
            (FIXTURES / k).unlink(missing_ok=True)
    rows = [json.loads(l) for l in verdicts.splitlines()]
    counts = {}
    for r in rows:
        key = (r["variant"], r["error_type"] or "valid")
        counts[key] = counts.get(key, 0) + 1
    print(f"{len(rows)} verdicts, {sum(r['valid'] for r in rows)} valid")
    for (variant, et), n in sorted(counts.items()):
        print(f"  {variant:20} {et:45} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
