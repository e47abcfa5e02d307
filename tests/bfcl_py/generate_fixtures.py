#!/usr/bin/env python3
"""Fixtures for toolgauge's Python text forms and Python `random` (src/bfcl/pyfmt.rs,
src/bfcl/pyrandom.rs), produced by CPython's own implementation: `repr`, `str`,
`json.dumps` and `random.Random` of the interpreter that runs this script. Plain
Python 3, standard library only.

Regenerate (from the repository root) with the interpreter BFCL's results should match
(the committed files come from CPython 3.11; the header line of each fixture records the
exact version and Unicode database):

    python3 tests/bfcl_py/generate_fixtures.py

It writes:
  fixtures/bfcl_py/pyfmt.jsonl       one value per line with its repr, str, json.dumps
                                     (or the TypeError text) and BFCL's result text
  fixtures/bfcl_py/random.jsonl      one seed per line with the first outputs of
                                     random(), getrandbits, randint, randrange, choice,
                                     shuffle and uniform, each from a fresh Random(seed)
  src/bfcl/pyfmt/unprintable.rs      the code points `str.isprintable()` rejects (which
                                     repr escapes), as ranges: Python's table depends on
                                     its Unicode version, so it is taken from Python

Values are written with an explicit type tag so that Rust rebuilds exactly the Python
value: {"t": "int", "v": "12"} (text, ints may exceed 64 bits), {"t": "float", "bits":
N} (the IEEE-754 bits, so no float parsing is involved), {"t": "str", "v": "..."},
{"t": "bool", "v": true}, {"t": "none"}, {"t": "list"|"tuple", "v": [...]},
{"t": "dict", "v": [[key, value], ...]} (keys tagged too, insertion order kept),
{"t": "other", "type": "bytes", "repr": "b'x'"} (any other type, as toolgauge keeps it).
The script is deterministic: its own random cases come from a fixed seed.
"""

import json
import math
import os
import platform
import random
import struct
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def header(kind):
    return {
        "fixture": kind,
        "generator": "tests/bfcl_py/generate_fixtures.py",
        "implementation": platform.python_implementation(),
        "python": sys.version.split()[0],
        "unicode": unicodedata.unidata_version,
    }


def float_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def tag(v):
    # bool before int: bool is an int subclass.
    if v is None:
        return {"t": "none"}
    if isinstance(v, bool):
        return {"t": "bool", "v": v}
    if isinstance(v, int):
        return {"t": "int", "v": str(v)}
    if isinstance(v, float):
        return {"t": "float", "bits": float_bits(v)}
    if isinstance(v, str):
        return {"t": "str", "v": v}
    if isinstance(v, list):
        return {"t": "list", "v": [tag(x) for x in v]}
    if isinstance(v, tuple):
        return {"t": "tuple", "v": [tag(x) for x in v]}
    if isinstance(v, dict):
        return {"t": "dict", "v": [[tag(k), tag(x)] for k, x in v.items()]}
    # Any other value (bytes, complex): toolgauge keeps its type name and repr.
    return {"t": "other", "type": type(v).__name__, "repr": repr(v)}


def result_text(v):
    # What BFCL's multi-turn executor does with a function's return value.
    if type(v) == str:
        return v
    if type(v) == dict:
        try:
            return json.dumps(v)
        except Exception:
            return str(v)
    return str(v)


def fmt_case(v):
    case = {"value": tag(v), "repr": repr(v), "str": str(v)}
    try:
        case["json"] = json.dumps(v)
    except TypeError as e:
        case["json_error"] = str(e)
    case["result"] = result_text(v)
    return case


def unprintable_ranges():
    ranges = []
    for c in range(0x110000):
        if not chr(c).isprintable():
            if ranges and ranges[-1][1] == c - 1:
                ranges[-1][1] = c
            else:
                ranges.append([c, c])
    return ranges


FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.30000000000000004, 1.5, 2.5, 100.0, 1e15, 1e16,
    1e17, 9999999999999998.0, 1234567890123456.0, 12345678901234567.0, 1e22, 1e23,
    1.7976931348623157e308, 5e-324, 2.2250738585072014e-308, 1e-4, 1e-5, 0.0001,
    0.00012, 0.00001, 1.5e-07, 123.456, -123.456, 3.141592653589793, 2.718281828459045,
    1 / 3, 2 / 3, 0.5, 0.25, 1e100, 1e-100, 1.0e-10, 4.35, 0.07, 72.5, 99.99, 1e300 * 10,
    -1e300 * 10, float("nan"), 2.0**53, 2.0**53 + 2, 2.0**63, 2.0**64, 123e-20, 1e5,
    1e-7, 9.5, 10.0, 0.1 + 0.7, 47.72, 3.0e-5, 5e-5, 12.345e+30, 1.0e16 - 2,
]

STRINGS = [
    "", "a", "hello world", "it's", 'say "hi"', "both ' and \"", "back\\slash",
    "tab\there", "new\nline", "cr\rreturn", "bell\x07", "nul\x00", "del\x7f", "\x1b[0m",
    "caf\u00e9", "\u00a0nbsp", "soft\u00adhyphen", "\u00ff\u0100", "\u4e2d\u6587",
    "emoji \U0001F600", "\U0001F468\u200d\U0001F469", "zero\u200bwidth", "\u2028\u2029",
    "\ufeffbom", "\ue000private", "\U000F0000plane15", "unassigned\u0378", "\u0301combining",
    "\u3000ideographic space", "\U0001FAE8", "\u0085nel", "x" * 40, "'", '"', "'\"",
    "\\'", "\U0010FFFF", "\uffff", "\u00e9\u0301", "$100 & <tag>", "/path/to/file.txt",
    "2024-01-01 10:00:00", "{\"json\": 1}", "\u0600arabic", "\u061c", "\U0001D11E",
]


def hand_cases():
    cases = []
    ints = [0, 1, -1, 42, -42, 10**12, 2**31, 2**63 - 1, -(2**63), 2**64, 10**30, -(10**30)]
    for v in [None, True, False] + ints + FLOATS + STRINGS:
        cases.append(v)
    cases += [
        [], (), {}, [1, "a"], (1,), (1, 2), ("a",), [(1,)], ((),), [[]], [{}],
        {"a": 1}, {"a": 1.0, "b": [1, 2.5, None]}, {1: "one", 2: "two"}, {1.5: "x"},
        {True: 1, None: 2}, {False: "f"}, {float("nan"): 1}, {float("inf"): 1, -0.0: 2},
        {1: "int", "1": "str"}, {"nested": {"deep": {"deeper": [1, (2, 3), {"k": "v"}]}}},
        {"quote": "it's", "dq": 'a "b"', "uni": "caf\u00e9 \U0001F600"},
        {"status": True, "balance": 1234.5, "items": ["a", "b"]},
        {(1, 2): "tuple key"}, {"t": (1, 2)}, [1, 1.0, True, None, "1"],
        {"file": "a.txt", "content": "line1\nline2\ttab"}, [float("nan"), float("inf"),
        float("-inf")], {"error": "No such file: 'x'"}, ["it's", 'say "x"'],
        {"k\u00e9y": "v\u00e4l"}, {"\U0001F600": "\U0001F600"}, {"": ""},
        {"list_of_dicts": [{"a": 1}, {"b": (2,)}]}, (None, True, 1.0, "s", [], {}),
        {"a": {1: {True: {None: 0.5}}}}, {10**20: "big"}, {-5: -5.0},
        [{"ok": 1}, {(1,): 2}], {"outer": {(): 1}}, b"bytes", [b"x"], {"k": b"x"},
        {"c": 1j}, (1j,),
    ]
    return cases


def random_string(rng):
    pools = [
        (0x20, 0x7E), (0x00, 0x1F), (0x7F, 0xFF), (0x100, 0x2FF), (0x300, 0x36F),
        (0x370, 0x52F), (0x590, 0x6FF), (0x2000, 0x206F), (0x3000, 0x30FF),
        (0x4E00, 0x9FFF), (0xE000, 0xE0FF), (0xFFF0, 0xFFFF), (0x1F300, 0x1FAFF),
        (0x10000, 0x10FFFF),
    ]
    out = []
    for _ in range(rng.randint(0, 12)):
        lo, hi = rng.choice(pools)
        c = rng.randint(lo, hi)
        if 0xD800 <= c <= 0xDFFF:
            continue
        out.append(chr(c))
    return "".join(out)


def random_float(rng):
    kind = rng.randint(0, 5)
    if kind == 0:
        # Any bit pattern: every magnitude, subnormals, NaN payloads (repr 'nan').
        return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
    if kind == 1:
        return round(rng.uniform(-1000, 1000), rng.randint(0, 6))
    if kind == 2:
        return rng.uniform(-1, 1) * 10.0 ** rng.randint(-25, 25)
    if kind == 3:
        # Near the switches to exponent notation (1e16 and 1e-4).
        return rng.choice([1e16, 1e-4, 1e-5, 1e15]) * rng.uniform(0.9, 1.1)
    if kind == 4:
        return float(rng.randint(-(10**17), 10**17))
    # Exactly halfway between two shortest candidates (961224003834359.25): Python
    # rounds the last digit to even.
    return rng.randint(10**14, 10**15) + rng.choice([0.25, 0.75])


def random_scalar(rng):
    kind = rng.randint(0, 5)
    if kind == 0:
        return rng.randint(-(10**25), 10**25)
    if kind == 1:
        return random_float(rng)
    if kind == 2:
        return random_string(rng)
    if kind == 3:
        return rng.choice([None, True, False])
    if kind == 4:
        return rng.randint(-100, 100)
    return rng.choice(STRINGS)


def random_value(rng, depth=0):
    kind = rng.randint(0, 5) if depth < 3 else 0
    if kind <= 1:
        return random_scalar(rng)
    n = rng.randint(0, 4)
    if kind == 2:
        return [random_value(rng, depth + 1) for _ in range(n)]
    if kind == 3:
        return tuple(random_value(rng, depth + 1) for _ in range(n))
    d = {}
    for _ in range(n):
        key = random_scalar(rng) if rng.random() < 0.3 else random_string(rng)
        d[key] = random_value(rng, depth + 1)
    return d


def boundary_strings(ranges):
    # Every edge of Python's printable table, 40 code points per string.
    cps = []
    for lo, hi in ranges:
        for c in (lo - 1, lo, hi, hi + 1):
            if 0 <= c < 0x110000 and not 0xD800 <= c <= 0xDFFF:
                cps.append(c)
    return ["".join(chr(c) for c in cps[i : i + 40]) for i in range(0, len(cps), 40)]


def write_pyfmt(ranges):
    rng = random.Random(20240601)
    values = hand_cases()
    values += [random_float(rng) for _ in range(400)]
    values += [random_string(rng) for _ in range(200)]
    values += [random_value(rng) for _ in range(300)]
    values += boundary_strings(ranges)
    path = os.path.join(ROOT, "fixtures", "bfcl_py", "pyfmt.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(header("pyfmt")) + "\n")
        for v in values:
            f.write(json.dumps(fmt_case(v)) + "\n")
    return len(values)


SEEDS = [
    0, 1, 42, 12345, 2**32 + 7, 141053, 1053520, 200191, -5, 2**64 + 123, 2**100 + 5,
    2**130 + 99, "hello", "", "\u00fcn\u00ef",
]


def seq(rng_factory, f, n):
    r = rng_factory()
    return [f(r) for _ in range(n)]


def shuffled(r):
    x = list(range(10))
    r.shuffle(x)
    return x


def mixed(r):
    # Calls interleaved on one generator, as a backend makes them.
    out = []
    for i in range(6):
        out.append(str(r.randint(100000, 999999)))
        out.append(float_bits(r.uniform(-10.0, 40.0)))
        out.append(str(r.getrandbits(i * 13)))
        out.append(str(r.randrange(10, -20, -3)))
    return out


def write_random():
    lines = []
    for seed in SEEDS:
        def make(seed=seed):
            return random.Random(seed)

        floats = seq(make, lambda r: r.random(), 12)
        line = {
            "seed": tag(seed),
            "random": [float_bits(x) for x in floats],
            "random_repr": [repr(x) for x in floats],
            "getrandbits32": [str(x) for x in seq(make, lambda r: r.getrandbits(32), 10)],
            "getrandbits64": [str(x) for x in seq(make, lambda r: r.getrandbits(64), 10)],
            "getrandbits100": [str(x) for x in seq(make, lambda r: r.getrandbits(100), 10)],
            "getrandbits7": [str(x) for x in seq(make, lambda r: r.getrandbits(7), 10)],
            "randint_1_10": [str(x) for x in seq(make, lambda r: r.randint(1, 10), 30)],
            "randint_0_1e12": [str(x) for x in seq(make, lambda r: r.randint(0, 10**12), 10)],
            "randint_bfcl_ids": [
                str(x) for x in seq(make, lambda r: r.randint(100000000000, 999999999999), 10)
            ],
            "randrange_0_1000_7": [
                str(x) for x in seq(make, lambda r: r.randrange(0, 1000, 7), 10)
            ],
            "randrange_1": [str(x) for x in seq(make, lambda r: r.randrange(1), 5)],
            "randrange_big": [
                str(x) for x in seq(make, lambda r: r.randrange(-(2**70), 2**90), 5)
            ],
            "choice17": [str(x) for x in seq(make, lambda r: r.choice(range(17)), 20)],
            "shuffle10": seq(make, shuffled, 3),
            "uniform_1_5": [float_bits(x) for x in seq(make, lambda r: r.uniform(1, 5), 10)],
            "mixed": mixed(make()),
        }
        lines.append(line)
    path = os.path.join(ROOT, "fixtures", "bfcl_py", "random.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(header("random")) + "\n")
        for line in lines:
            f.write(json.dumps(line) + "\n")
    return len(lines)


def write_unprintable(ranges):
    path = os.path.join(ROOT, "src", "bfcl", "pyfmt", "unprintable.rs")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    h = header("unprintable")
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            "//! The code points Python's `str.isprintable()` rejects, which `repr` escapes\n"
            "//! (categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs but the space), as inclusive\n"
            f"//! ranges. Generated by {h['generator']} from {h['implementation']} "
            f"{h['python']}\n"
            f"//! (Unicode {h['unicode']}); do not edit by hand.\n\n"
            "/// Sorted, disjoint, inclusive ranges of unprintable code points.\n"
            "#[rustfmt::skip]\n"
            "pub(super) const UNPRINTABLE: &[(u32, u32)] = &[\n"
        )
        for i in range(0, len(ranges), 6):
            row = ", ".join(f"(0x{lo:X}, 0x{hi:X})" for lo, hi in ranges[i : i + 6])
            f.write(f"    {row},\n")
        f.write("];\n")


def main():
    ranges = unprintable_ranges()
    n = write_pyfmt(ranges)
    m = write_random()
    write_unprintable(ranges)
    print(f"{n} pyfmt cases, {m} seeds, {len(ranges)} unprintable ranges "
          f"({platform.python_implementation()} {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
