#!/usr/bin/env python3
"""Generate src/bfcl/worlds/trading_long_context.json: TradingBot's long-context padding.

With `long_context=True` (the `multi_turn_long_context` category) BFCL's TradingBot
pads several answers with constant data from `func_source_code/long_context.py`:
moving-average lists (get_stock_info), order metadata texts with a `{symbol}`
placeholder (get_order_details), extra watch-list symbols (get_watchlist), extra
transactions (get_transaction_history) and extra sector symbols
(get_available_stocks). Nothing is random. toolgauge's Rust port
(src/bfcl/worlds/trading.rs) reads that data from the JSON file written here.

This script is ours; it only imports the installed `bfcl_eval` package and writes
the constants out as JSON. Python-only values are encoded: the watch-list padding
ends with Python's `...` (Ellipsis), recorded as `watch_list_ends_with_ellipsis`.
The metadata templates keep their order as `[key, template]` pairs.

    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_trading_long_context.py          # write
    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_trading_long_context.py --check  # exit 1 if stale
"""

import argparse
import json
import sys
from importlib.metadata import version as pkg_version
from pathlib import Path

from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context as lc

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "src" / "bfcl" / "worlds" / "trading_long_context.json"


def strings(values, name):
    assert all(isinstance(v, str) for v in values), f"{name}: non-str item"
    return list(values)


def floats(values, name):
    assert all(type(v) is float for v in values), f"{name}: non-float item"
    return list(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()

    watch = list(lc.WATCH_LIST_EXTENSION)
    ellipsis = bool(watch) and watch[-1] is Ellipsis
    if ellipsis:
        watch.pop()

    templates = []
    for key, template in lc.ORDER_DETAIL_EXTENSION.items():
        # The port substitutes `{symbol}` textually; make sure that is all str.format does.
        probe = "\x00sym\x00"
        assert template.format(symbol=probe) == template.replace("{symbol}", probe), key
        templates.append([key, template])

    history = []
    for t in lc.TRANSACTION_HISTORY_EXTENSION:
        assert list(t) == ["type", "amount", "timestamp"], t
        assert type(t["amount"]) is float and isinstance(t["type"], str), t
        history.append(t)

    data = {
        "_source": {
            "generated_by": "tests/bfcl_worlds/generate_trading_long_context.py",
            "license": "Apache-2.0",
            "package": "bfcl-eval",
            "version": pkg_version("bfcl-eval"),
            "note": "TradingBot's long-context padding constants from "
            "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py "
            "(Copyright the Gorilla / BFCL authors, Apache-2.0).",
        },
        "ma_5": floats(lc.MA_5_EXTENSION, "MA_5_EXTENSION"),
        "ma_20": floats(lc.MA_20_EXTENSION, "MA_20_EXTENSION"),
        "order_metadata": templates,
        "watch_list": strings(watch, "WATCH_LIST_EXTENSION"),
        "watch_list_ends_with_ellipsis": ellipsis,
        "transaction_history": history,
        "technology": strings(lc.TECHNOLOGY_EXTENSION, "TECHNOLOGY_EXTENSION"),
        "automobile": strings(lc.AUTOMOBILE_EXTENSION, "AUTOMOBILE_EXTENSION"),
    }
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n"
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else None
        if current != text:
            print(f"{OUT} is stale", file=sys.stderr)
            sys.exit(1)
        return
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
