#!/usr/bin/env bash
# BFCL end-to-end bench: import every single-turn category from BFCL's data and score one
# model's result files, timed as processes with /usr/bin/time -v.
#
# The result files are built from the possible answers (the first acceptable value of
# every parameter; text for irrelevance items, a call for relevance items), in BFCL's
# layout (result/<model>/{non_live,live}/BFCL_v4_<category>_result.json) with token
# counts and latency, as BFCL's generation writes them. With BFCL_VENV set, BFCL's own
# `bfcl evaluate` scores the same files for comparison.
#
# BFCL's data and checker are those of bfcl-eval 2026.3.23 (the version toolgauge's BFCL
# decoder and checker reproduce); the bench refuses another version, or data whose version
# it cannot tell, unless ALLOW_OTHER_BFCL=1 (then it warns). Every timed command must
# succeed: a command that fails (or a run that scores fewer items than written) stops the
# bench with its output instead of being timed.
#
# Usage: BFCL_VENV=/path/to/venv benches/bfcl.sh       (data found in the venv)
#        BFCL_DATA=/path/to/site-packages/bfcl_eval/data benches/bfcl.sh
# Make the venv with:
#   python3 -m venv /tmp/bfcl && /tmp/bfcl/bin/pip install bfcl-eval==2026.3.23
# (`--no-deps` is enough without BFCL_VENV's `bfcl evaluate`, for the data alone.)
# Environment:
#   RUNS=3        timed runs of each command
#   KEEP=0        KEEP=1 keeps the temporary directory (suites, results, runs, BFCL scores)
#   TOOLGAUGE=    use this binary instead of building target/release/toolgauge
#   TIME_BIN=/usr/bin/time
#   ALLOW_OTHER_BFCL=0   ALLOW_OTHER_BFCL=1 runs on another bfcl-eval version, with a warning
set -euo pipefail
RUNS=${RUNS:-3}
TIME_BIN=${TIME_BIN:-/usr/bin/time}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
MODEL=gpt-4o-2024-11-20-FC
BFCL_VERSION=2026.3.23

if [[ -z "${BFCL_DATA:-}" && -n "${BFCL_VENV:-}" ]]; then
    BFCL_DATA=$("$BFCL_VENV/bin/python" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("bfcl_eval").origin), "data"))')
fi
if [[ -z "${BFCL_DATA:-}" || ! -d "$BFCL_DATA" ]]; then
    echo "error: set BFCL_DATA to BFCL's data directory (or BFCL_VENV to a venv with bfcl-eval)" >&2
    exit 2
fi

# The installed bfcl-eval version: asked of the venv's Python, else read from the
# package's dist-info next to the data directory (site-packages/bfcl_eval/data).
found=
if [[ -n "${BFCL_VENV:-}" ]]; then
    found=$("$BFCL_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("bfcl-eval"))' 2>/dev/null || true)
else
    for meta in "$BFCL_DATA"/../../bfcl_eval-*.dist-info/METADATA; do
        [[ -f "$meta" ]] && found=$(awk -F': ' '/^Version: / {print $2; exit}' "$meta")
    done
fi
if [[ "$found" != "$BFCL_VERSION" ]]; then
    what=${found:-an unknown version (no bfcl_eval-*.dist-info next to $BFCL_DATA)}
    if [[ "${ALLOW_OTHER_BFCL:-0}" == 1 ]]; then
        echo "warning: bfcl-eval is $what, not $BFCL_VERSION; figures and agreement may differ" >&2
    else
        echo "error: bfcl-eval is $what; this bench is pinned to $BFCL_VERSION." >&2
        echo "install it with: pip install bfcl-eval==$BFCL_VERSION (or set ALLOW_OTHER_BFCL=1 to run anyway)" >&2
        exit 2
    fi
fi
if [[ ! -x "$TIME_BIN" ]]; then
    echo "error: $TIME_BIN is missing (Debian package \`time\`)" >&2
    exit 2
fi
if [[ -z "${TOOLGAUGE:-}" ]]; then
    (cd "$root" && cargo build --release --quiet)
    TOOLGAUGE="$root/target/release/toolgauge"
fi

tmp=$(mktemp -d /tmp/toolgauge-bfcl.XXXXXX)
if [[ "${KEEP:-0}" == 1 ]]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi

CATEGORIES=(simple_python multiple parallel parallel_multiple irrelevance live_simple live_multiple
    live_parallel live_parallel_multiple live_irrelevance live_relevance)
ITEMS=$(python3 - "$BFCL_DATA" "$tmp/root/result/$MODEL" "${CATEGORIES[@]}" <<'PY'
import json, os, sys
data, out, cats = sys.argv[1], sys.argv[2], sys.argv[3:]
NONE = object()  # "only \"\" is acceptable": leave the parameter out
def first(opts):
    if not isinstance(opts, list):
        return inst(opts)
    for o in opts:
        if o != "":
            return inst(o)
    return NONE
def inst(v):
    if isinstance(v, dict):
        return {k: first(o) for k, o in v.items() if first(o) is not NONE}
    if isinstance(v, list):
        return [inst(x) for x in v]
    return v
n = 0
for c in cats:
    group = "live" if c.startswith("live") else "non_live"
    os.makedirs(os.path.join(out, group), exist_ok=True)
    answers = {}
    ap = os.path.join(data, "possible_answer", f"BFCL_v4_{c}.json")
    if os.path.exists(ap):
        for l in open(ap):
            if l.strip():
                a = json.loads(l); answers[a["id"]] = a["ground_truth"]
    with open(os.path.join(out, group, f"BFCL_v4_{c}_result.json"), "w") as f:
        for l in open(os.path.join(data, f"BFCL_v4_{c}.json")):
            if not l.strip():
                continue
            q = json.loads(l)
            if "irrelevance" in c:
                result = "I can not answer that with the functions I have."
            elif "relevance" in c:
                result = [{q["function"][0]["name"].replace(".", "_"): "{}"}]
            else:
                result = []
                for call in answers[q["id"]]:
                    name, params = next(iter(call.items()))
                    args = {p: first(o) for p, o in params.items() if first(o) is not NONE}
                    result.append({name.replace(".", "_"): json.dumps(args)})
            f.write(json.dumps({"id": q["id"], "result": result, "input_token_count": 812,
                                "output_token_count": 31, "latency": 0.74}) + "\n")
            n += 1
print(n)
PY
)
echo "$ITEMS result lines written" >&2

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# Stop the bench: a failed command is never timed as a success.
die() {
    echo "error: $*" >&2
    for f in "$tmp/err.txt" "$tmp/out.txt"; do [[ -s "$f" ]] && tail -n 20 "$f" >&2; done
    exit 1
}
# The trials the last run wrote in $tmp/runs, which must be every item.
check_trials() {
    local written
    written=$(cat "$tmp"/runs/*/trials.jsonl 2>/dev/null | wc -l)
    ((written == ITEMS)) || die "$1: the run wrote $written trials, expected $ITEMS"
}
import_suites() {
    rm -rf "$tmp/suites" "$tmp/runs"
    "$TOOLGAUGE" import bfcl "$BFCL_DATA" --out "$tmp/suites" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
        die "toolgauge import bfcl failed (exit $?)"
}
measure() { # name, accepted exit codes (e.g. "0 1"), command...
    local name=$1 ok=$2; shift 2
    local walls=() rss=() code
    for i in $(seq 1 "$RUNS"); do
        if [[ "$name" == import* ]]; then rm -rf "$tmp/suites" "$tmp/runs"; else import_suites; fi
        code=0
        "$TIME_BIN" -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" || code=$?
        # GNU time exits with the command's code, and reports a signal in its output.
        if ! grep -qw -- "$code" <<<"$ok" || grep -q "Command terminated by signal" "$tmp/time.txt"; then
            die "$name: run $i exited with $code (accepted: $ok)"
        fi
        [[ "$name" == run* || "$name" == "import + run" ]] && check_trials "$name"
        walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$tmp/time.txt")")
        rss+=("$(awk -F': ' '/Maximum resident set size/ {print $2/1024}' "$tmp/time.txt")")
    done
    local med
    med=$(printf '%s\n' "${walls[@]}" | median)
    WALL[$name]=$med
    printf '%-34s wall median %6.3f s   peak RSS max %6.1f MB\n' "$name" \
        "$med" "$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)"
}
declare -A WALL

echo "toolgauge: $TOOLGAUGE; data: $BFCL_DATA (bfcl-eval ${found:-unknown}); runs: $RUNS"
run_args="-t bfcl-result:\"$tmp/root/result/$MODEL\" --bfcl-strict --bfcl-underscore-names --reports-dir \"$tmp/runs\" --quiet"
# toolgauge run: 0 when every threshold held, 1 when one failed (the run completed all the
# same); 2 and 3 are failures. import: 0 only.
measure import 0 "$TOOLGAUGE" import bfcl "$BFCL_DATA" --out "$tmp/suites"
measure "run (11 suites, csv)" "0 1" bash -c "\"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args --format csv"
measure "run (every report)" "0 1" bash -c "\"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args"
measure "import + run" "0 1" bash -c "\"$TOOLGAUGE\" import bfcl \"$BFCL_DATA\" --out \"$tmp/suites\" >/dev/null && \"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args --format csv"
grep -h "passed" "$tmp/out.txt" | head -11

if [[ -n "${BFCL_VENV:-}" ]]; then
    measure "bfcl evaluate (BFCL's checker)" 0 env BFCL_PROJECT_ROOT="$tmp/root" OPENAI_API_KEY=unused \
        "$BFCL_VENV/bin/bfcl" evaluate --model "$MODEL" --test-category single_turn
    for c in "${CATEGORIES[@]}"; do
        [[ -n $(find "$tmp/root/score" -name "BFCL_v4_${c}_score.json" 2>/dev/null) ]] ||
            die "bfcl evaluate wrote no score file for $c"
    done
fi

if [[ -n "${BFCL_VENV:-}" ]]; then
    bfcl=${WALL["bfcl evaluate (BFCL's checker)"]}
    awk -v b="$bfcl" -v r="${WALL["run (11 suites, csv)"]}" -v ir="${WALL["import + run"]}" \
        'BEGIN {printf "times faster than bfcl evaluate: run %.1f, import + run %.1f\n", b/r, b/ir}'
    # Item by item: toolgauge --bfcl-strict against BFCL's own score files.
    import_suites
    code=0
    bash -c "\"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args --format csv" >"$tmp/out.txt" 2>"$tmp/err.txt" || code=$?
    ((code <= 1)) || die "toolgauge run for the item-by-item comparison exited with $code"
    check_trials "the item-by-item run"
    python3 - "$tmp" <<'PY'
import csv, glob, json, sys
tmp = sys.argv[1]
bfcl = {}
for f in glob.glob(f"{tmp}/root/score/**/*_score.json", recursive=True):
    for line in open(f).read().splitlines()[1:]:
        d = json.loads(line)
        bfcl[d["id"]] = d.get("error_type")
ours, n = {}, 0
for f in glob.glob(f"{tmp}/runs/*/trials.csv"):
    for row in csv.DictReader(open(f)):
        n += 1
        if row["passed"] != "true":
            ours[row["case_id"]] = row["reasons"].split(": ")[0]
same = n - len(set(bfcl) ^ set(ours)) - sum(1 for k in set(bfcl) & set(ours) if bfcl[k] != ours[k])
print(f"item verdicts equal to BFCL's (valid and error type): {same} of {n}")
print("failed in both:", ", ".join(sorted(bfcl)))
PY
fi
