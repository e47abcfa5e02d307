#!/usr/bin/env python3
"""Generate src/bfcl/worlds/filesystem_long_context.json: GorillaFileSystem's
long-context padding.

With `_load_scenario(scenario, long_context=True)` BFCL's GorillaFileSystem appends
a long filler text to every file it loads (except a few names) and adds a fixed
list of empty image files to every directory that holds no subdirectory. The
texts and names are constants of bfcl-eval's `long_context.py`; toolgauge's Rust
port (src/bfcl/worlds/filesystem.rs) reads them from the JSON file written here.

This script is ours. It only *imports* the installed `bfcl_eval` package and
dumps the constants the backend module itself imports.

    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_fs_long_context.py          # write
    /tmp/bfcl-venv/bin/python tests/bfcl_worlds/generate_fs_long_context.py --check  # exit 1 if stale

(Set up the virtualenv as described in tests/bfcl_worlds/generate.py.)
"""

import argparse
import json
import sys
from importlib.metadata import version as pkg_version
from pathlib import Path

from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import gorilla_file_system as gfs

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "src" / "bfcl" / "worlds" / "filesystem_long_context.json"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args()
    data = {
        "_source": {
            "generated_by": "tests/bfcl_worlds/generate_fs_long_context.py",
            "license": "Apache-2.0",
            "package": "bfcl-eval",
            "version": pkg_version("bfcl-eval"),
            "note": "Long-context padding of BFCL's GorillaFileSystem, from "
            "bfcl_eval/eval_checker/multi_turn_eval/func_source_code/long_context.py "
            "(Copyright the Gorilla / BFCL authors, Apache-2.0).",
        },
        # appended to the content of each loaded file whose name is not in files_tail_used
        "file_content_extension": gfs.FILE_CONTENT_EXTENSION,
        # names excluded from the padding
        "files_tail_used": list(gfs.FILES_TAIL_USED),
        # empty files added, in this order, to each loaded directory without subdirectories
        "populate_file_extension": list(gfs.POPULATE_FILE_EXTENSION),
    }
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
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
