#!/usr/bin/env python3
"""Generate fixtures/bfcl_worlds/verdicts.jsonl: BFCL's own multi-turn verdicts.

toolgauge ports BFCL's multi-turn checker to Rust. This script (ours) takes
real items of the installed `bfcl_eval` package's multi-turn data, builds model
results of our own making for each (variants below), runs BFCL's own checker on
them and records what it returns, so the Rust port can be tested item by item.

The checker called, for every variant:

    bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker.multi_turn_checker(
        multi_turn_model_result_list_decoded,   # per turn, per step, [call str]
        multi_turn_ground_truth_list,           # possible_answer ground_truth
        test_entry,                             # the question item (id,
                                                #  initial_config, involved_classes)
        test_category,                          # e.g. "multi_turn_base"
        model_name,                             # MODEL_NAME below
    )

Model results are given in the *decoded* form (what the runner hands to the
checker after `decode_execute`), so no model handler is involved.

Variants (not every item has every one; see `pick_*` below):

    gt                 the ground truth, all calls of a turn in one step
    gt_split_steps     the ground truth, one call per step
    drop_state_call    one ground-truth call removed whose absence changes state
    drop_response_call one ground-truth call removed whose absence leaves the
                       state right but loses a result string
    drop_harmless_call one ground-truth call removed and the item still passes
    wrong_arg          one literal argument of one call changed
    extra_read         an extra read-only call as an additional first step
    empty_turn         a turn with ground-truth calls left without any step
    early_calls        (items with an empty ground-truth turn) the next turn's
                       calls made in the empty turn, the next turn only reads
    fewer_turns        the last turn left out (BFCL's runner reports this as
                       force_terminated *before* calling the checker; the
                       checker itself is still called here and its exception
                       recorded)

Run in a throwaway virtualenv (see fixtures/bfcl_worlds/README.md):

    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_verdicts.py
    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_verdicts.py --check
"""

import argparse
import ast
import copy
import decimal
import importlib
import importlib.util
import json
import os
import random
import sys
from pathlib import Path

# Same pinning as generate.py: set iteration order of strings and the timezone.
if os.environ.get("PYTHONHASHSEED") != "0" or os.environ.get("TZ") != "UTC":
    env = dict(os.environ, PYTHONHASHSEED="0", TZ="UTC")
    os.execve(sys.executable, [sys.executable] + sys.argv, env)

import bfcl_eval  # noqa: E402
import mpmath  # noqa: E402
from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import (  # noqa: E402
    multi_turn_checker,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = Path(bfcl_eval.__file__).parent / "data"
MODEL_NAME = "toolgauge_verdicts"

# The tagged-JSON encoder of the backend fixtures (one encoding for both files).
_spec = importlib.util.spec_from_file_location("bfcl_worlds_generate", HERE / "generate.py")
_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gen)
enc = _gen.enc

try:
    from importlib.metadata import version as _pkg_version

    BFCL_VERSION = _pkg_version("bfcl-eval")
except Exception:  # pragma: no cover
    BFCL_VERSION = "unknown"

# How many items per category, drawn with a fixed seed.
SAMPLE = {"multi_turn_base": 18, "multi_turn_miss_param": 16, "multi_turn_miss_func": 6}
SEED = 33

# One read-only call per class: no state change, no random draw.
READ_CALL = {
    "GorillaFileSystem": "pwd()",
    "MathAPI": "add(a=1, b=2)",
    "MessageAPI": "list_users()",
    "TwitterAPI": "posting_get_login_status()",
    "TicketAPI": "ticket_get_login_status()",
    "TradingBot": "get_current_time()",
    "TravelAPI": "list_all_airports()",
    "VehicleControlAPI": "check_tire_pressure()",
}


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_category(cat):
    questions = load_jsonl(DATA / f"BFCL_v4_{cat}.json")
    answers = {a["id"]: a for a in load_jsonl(DATA / "possible_answer" / f"BFCL_v4_{cat}.json")}
    return [(q, answers[q["id"]]["ground_truth"]) for q in questions]


def fresh_process_state(classes):
    """As a new Python process would have it: backend modules re-executed (new
    mutable default arguments), mpmath's and decimal's precision at defaults."""
    for c in classes:
        importlib.reload(importlib.import_module(CLASS_FILE_PATH_MAPPING[c]))
    mpmath.mp.dps = 15
    decimal.setcontext(decimal.Context())


def drop_instances():
    """BFCL keeps instances in the executor module's globals, keyed by model
    name, item id and class; remove ours so the next run builds new ones."""
    g = vars(multi_turn_utils)
    for k in [k for k in g if k.startswith(MODEL_NAME)]:
        del g[k]


def run_checker(item, category, ground_truth, model_turns):
    """BFCL's verdict, or the exception the checker raised."""
    fresh_process_state(item["involved_classes"])
    drop_instances()
    test_entry = copy.deepcopy(item)
    try:
        out = multi_turn_checker(
            copy.deepcopy(model_turns),
            copy.deepcopy(ground_truth),
            test_entry,
            category,
            MODEL_NAME,
        )
    except Exception as e:  # noqa: BLE001
        out = {"exception": type(e).__name__, "message": str(e)}
    finally:
        drop_instances()
    return out


def gt_turns(ground_truth):
    return [[list(t)] if t else [] for t in ground_truth]


def without_call(ground_truth, ti, ci):
    turns = gt_turns(ground_truth)
    calls = [c for i, c in enumerate(ground_truth[ti]) if i != ci]
    turns[ti] = [calls] if calls else []
    return turns


def mutate_call(call):
    """Change one literal argument of a call string, keeping the rest of the
    text as written. Returns (new_call, description) or None."""
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    args = [(None, a) for a in node.args] + [(k.arg, k.value) for k in node.keywords]
    for name, v in args:
        try:
            val = ast.literal_eval(v)
        except ValueError:
            continue
        if isinstance(val, bool):
            new = not val
        elif isinstance(val, (int, float)):
            new = val + 1
        elif isinstance(val, str):
            new = val + "_x"
        elif isinstance(val, list) and val:
            new = val[:-1]
        else:
            continue
        s, e = v.col_offset, v.end_col_offset
        where = f"argument {name!r}" if name else "a positional argument"
        return call[:s] + repr(new) + call[e:], f"{where}: {val!r} -> {new!r}"
    return None


def error_type(verdict):
    if "exception" in verdict:
        return "exception:" + verdict["exception"]
    return "valid" if verdict.get("valid") else verdict.get("error_type")


def variants_for(item, category, gt):
    """The model results for one item, as (variant, note, model_turns)."""
    out = []
    nonempty = [i for i, t in enumerate(gt) if t]
    out.append(("gt", "the ground truth, one step per turn", gt_turns(gt)))
    out.append(
        (
            "gt_split_steps",
            "the ground truth, one call per step",
            [[[c] for c in t] for t in gt],
        )
    )

    # Remove each ground-truth call in turn and keep the first removal of each kind.
    found = {}
    for ti in nonempty:
        for ci in range(len(gt[ti])):
            turns = without_call(gt, ti, ci)
            et = error_type(run_checker(item, category, gt, turns))
            kind = {
                "multi_turn:instance_state_mismatch": "drop_state_call",
                "multi_turn:execution_response_mismatch": "drop_response_call",
                "valid": "drop_harmless_call",
            }.get(et)
            if kind and kind not in found:
                found[kind] = (ti, ci, turns)
    for kind in ("drop_state_call", "drop_response_call", "drop_harmless_call"):
        if kind in found:
            ti, ci, turns = found[kind]
            out.append((kind, f"turn {ti}: call {ci} {gt[ti][ci]!r} removed", turns))

    # Wrong argument: in the state-changing call if there is one, else the first
    # call with a literal argument.
    cands = []
    if "drop_state_call" in found:
        ti, ci, _ = found["drop_state_call"]
        cands.append((ti, ci))
    cands += [(ti, ci) for ti in nonempty for ci in range(len(gt[ti]))]
    for ti, ci in cands:
        m = mutate_call(gt[ti][ci])
        if m:
            turns = gt_turns(gt)
            calls = list(gt[ti])
            calls[ci] = m[0]
            turns[ti] = [calls]
            out.append(("wrong_arg", f"turn {ti}: call {ci} {gt[ti][ci]!r}, {m[1]}", turns))
            break

    if nonempty:
        ti = nonempty[0]
        read = READ_CALL[item["involved_classes"][0]]
        turns = gt_turns(gt)
        turns[ti] = [[read]] + turns[ti]
        out.append(("extra_read", f"turn {ti}: extra first step [{read!r}]", turns))

        # Empty turn: the last turn with calls for odd item numbers, else the first.
        n = int(item["id"].rsplit("_", 1)[1])
        ti = nonempty[-1] if n % 2 else nonempty[0]
        turns = gt_turns(gt)
        turns[ti] = []
        out.append(("empty_turn", f"turn {ti}: no step", turns))

    # Calls made a turn early: in the first turn whose ground truth is empty
    # (not checked), the next turn's calls; that next turn then only reads.
    # Its results count because the response check looks at all turns so far.
    for ti in range(len(gt) - 1):
        if not gt[ti] and gt[ti + 1]:
            read = READ_CALL[item["involved_classes"][0]]
            turns = gt_turns(gt)
            turns[ti] = [list(gt[ti + 1])]
            turns[ti + 1] = [[read]]
            out.append(
                (
                    "early_calls",
                    f"turn {ti} (no ground truth calls): the calls of turn {ti + 1}; "
                    f"turn {ti + 1}: [{read!r}]",
                    turns,
                )
            )
            break

    out.append(
        (
            "fewer_turns",
            f"last turn left out ({len(gt) - 1} of {len(gt)} turns)",
            gt_turns(gt)[:-1],
        )
    )
    return out


def pick_items():
    picked = []
    for cat, n in SAMPLE.items():
        items = load_category(cat)
        rng = random.Random(f"{SEED}:{cat}")
        idx = sorted(rng.sample(range(len(items)), n))
        picked += [(cat, *items[i]) for i in idx]
    return picked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "fixtures" / "bfcl_worlds" / "verdicts.jsonl"))
    ap.add_argument("--check", action="store_true", help="fail if the file would change")
    opts = ap.parse_args()

    lines = []
    counts = {}
    for cat, item, gt in pick_items():
        for variant, note, turns in variants_for(item, cat, gt):
            verdict = run_checker(item, cat, gt, turns)
            counts[(variant, error_type(verdict))] = counts.get((variant, error_type(verdict)), 0) + 1
            rec = {
                "id": item["id"],
                "category": cat,
                "involved_classes": item["involved_classes"],
                "initial_config": item["initial_config"],
                "ground_truth": gt,
                "variant": variant,
                "note": note,
                "model_result_decoded": turns,
                "verdict": enc(verdict),
            }
            lines.append(json.dumps(rec, ensure_ascii=False) + "\n")
    text = "".join(lines)
    out = Path(opts.out)
    if opts.check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            print("differs:", out)
            return 1
        print("verdicts up to date")
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"{len(lines)} lines, {len(text.encode())} bytes (bfcl-eval {BFCL_VERSION})")
    for (variant, et), n in sorted(counts.items()):
        print(f"  {variant:20} {et:45} {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
