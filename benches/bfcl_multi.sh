#!/usr/bin/env bash
# BFCL multi-turn end-to-end bench: import BFCL's four multi-turn categories (800 items)
# and score one model's result files, timed as processes with /usr/bin/time -v, against
# BFCL's own `bfcl evaluate` on the same files in the same invocation.
#
# The result files are one function-calling model's, in BFCL's layout
# (result/<model>/multi_turn/BFCL_v4_<category>_result.json), with per-step token counts
# and latency. Each item's result is one of the variants tests/bfcl_multi/generate.py
# makes (the ground truth in one or several steps, a closing text, undecodable steps, a
# dropped call, a wrong argument, an empty turn, too many steps in a turn, too few turns,
# an inference error...), chosen by the item's position, so the verdicts are a mix of
# passes and every failure BFCL reports. The bench then compares toolgauge's verdict and
# error type with BFCL's, item by item.
#
# BFCL's data and checker are those of bfcl-eval 2026.3.23. `bfcl evaluate` imports every
# model SDK BFCL supports, so the venv needs bfcl-eval's dependencies (see
# tests/bfcl_multi/README.md for a list that is enough).
#
# Usage: BFCL_VENV=/path/to/venv benches/bfcl_multi.sh
# Environment:
#   RUNS=3        timed runs of each command
#   KEEP=0        KEEP=1 keeps the temporary directory (suites, results, runs, BFCL scores)
#   TOOLGAUGE=    use this binary instead of building target/release/toolgauge
#   TIME_BIN=/usr/bin/time
set -euo pipefail
RUNS=${RUNS:-3}
TIME_BIN=${TIME_BIN:-/usr/bin/time}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
MODEL=gpt-4o-2024-11-20-FC
BFCL_VERSION=2026.3.23

if [[ -z "${BFCL_VENV:-}" || ! -x "$BFCL_VENV/bin/python" ]]; then
    echo "error: set BFCL_VENV to a venv with bfcl-eval==$BFCL_VERSION and its dependencies" >&2
    exit 2
fi
found=$("$BFCL_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("bfcl-eval"))' 2>/dev/null || true)
if [[ "$found" != "$BFCL_VERSION" ]]; then
    echo "error: bfcl-eval is ${found:-missing} in $BFCL_VENV; this bench is pinned to $BFCL_VERSION" >&2
    exit 2
fi
BFCL_DATA=$("$BFCL_VENV/bin/python" -c 'import importlib.util, os; print(os.path.join(os.path.dirname(importlib.util.find_spec("bfcl_eval").origin), "data"))')
if [[ ! -x "$TIME_BIN" ]]; then
    echo "error: $TIME_BIN is missing (Debian package \`time\`)" >&2
    exit 2
fi
if [[ -z "${TOOLGAUGE:-}" ]]; then
    (cd "$root" && cargo build --release --quiet)
    TOOLGAUGE="$root/target/release/toolgauge"
fi

tmp=$(mktemp -d /tmp/toolgauge-bfcl-multi.XXXXXX)
if [[ "${KEEP:-0}" == 1 ]]; then echo "keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi

CATEGORIES=(multi_turn_base multi_turn_miss_func multi_turn_miss_param multi_turn_long_context)
# The result files: generate.py's variants, one per item (PYTHONHASHSEED and TZ pinned
# as generate.py pins them, so BFCL's results are reproducible).
ITEMS=$(PYTHONHASHSEED=0 TZ=UTC "$BFCL_VENV/bin/python" - "$root" "$BFCL_DATA" "$tmp/root/result/$MODEL/multi_turn" "${CATEGORIES[@]}" <<'PY'
import importlib.util, json, os, sys
root, data, out, cats = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
spec = importlib.util.spec_from_file_location("generate", os.path.join(root, "tests/bfcl_multi/generate.py"))
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
os.makedirs(out, exist_ok=True)
n = 0
for cat in cats:
    qs = [json.loads(l) for l in open(os.path.join(data, f"BFCL_v4_{cat}.json")) if l.strip()]
    ans = {a["id"]: a["ground_truth"] for a in (json.loads(l) for l in open(os.path.join(data, "possible_answer", f"BFCL_v4_{cat}.json")) if l.strip())}
    with open(os.path.join(out, f"BFCL_v4_{cat}_result.json"), "w") as f:
        for i, item in enumerate(qs):
            gt = ans[item["id"]]
            sigs = g.signatures(item["involved_classes"])
            vs = g.variants(item, cat, gt)
            # Mostly right answers, as a good model's: every third item gets another variant.
            variant, _, turns = vs[0] if i % 3 else vs[(i // 3) % len(vs)]
            if turns is None:
                line = {"id": item["id"], "result": "Error during inference: the model failed"}
            else:
                steps = [[g.write_step("fc", s, sigs) for s in t] for t in turns]
                line = {"id": item["id"], "result": steps, **g.usage(steps)}
            f.write(json.dumps(line) + "\n")
            n += 1
print(n)
PY
)
echo "$ITEMS result lines written" >&2

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
die() {
    echo "error: $*" >&2
    for f in "$tmp/err.txt" "$tmp/out.txt"; do [[ -s "$f" ]] && tail -n 20 "$f" >&2; done
    exit 1
}
check_trials() {
    local written
    written=$(cat "$tmp"/runs/*/trials.jsonl 2>/dev/null | wc -l)
    ((written == ITEMS)) || die "$1: the run wrote $written trials, expected $ITEMS"
}
cats=$(IFS=,; echo "${CATEGORIES[*]}")
import_suites() {
    rm -rf "$tmp/suites" "$tmp/runs"
    "$TOOLGAUGE" import bfcl "$BFCL_DATA" --category "$cats" --out "$tmp/suites" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
        die "toolgauge import bfcl failed (exit $?)"
}
measure() { # name, accepted exit codes, command...
    local name=$1 ok=$2; shift 2
    local walls=() rss=() code
    for i in $(seq 1 "$RUNS"); do
        if [[ "$name" == import* ]]; then rm -rf "$tmp/suites" "$tmp/runs"; else import_suites; fi
        rm -rf "$tmp/root/score"
        code=0
        "$TIME_BIN" -v -o "$tmp/time.txt" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" || code=$?
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

echo "toolgauge: $TOOLGAUGE; data: $BFCL_DATA (bfcl-eval $found); runs: $RUNS"
run_args="-t bfcl-result:\"$tmp/root/result/$MODEL\" --bfcl-strict --reports-dir \"$tmp/runs\" --quiet"
measure import 0 "$TOOLGAUGE" import bfcl "$BFCL_DATA" --category "$cats" --out "$tmp/suites"
measure "run (4 suites, csv)" "0 1" bash -c "\"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args --format csv"
measure "run (every report)" "0 1" bash -c "\"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args"
measure "import + run" "0 1" bash -c "\"$TOOLGAUGE\" import bfcl \"$BFCL_DATA\" --category $cats --out \"$tmp/suites\" >/dev/null && \"$TOOLGAUGE\" run \"$tmp\"/suites/*.json $run_args --format csv"
measure "bfcl evaluate (BFCL's checker)" 0 env BFCL_PROJECT_ROOT="$tmp/root" OPENAI_API_KEY=unused \
    PYTHONHASHSEED=0 TZ=UTC "$BFCL_VENV/bin/bfcl" evaluate --model "$MODEL" --test-category multi_turn
for c in "${CATEGORIES[@]}"; do
    [[ -n $(find "$tmp/root/score" -name "BFCL_v4_${c}_score.json" 2>/dev/null) ]] ||
        die "bfcl evaluate wrote no score file for $c"
done
bfcl=${WALL["bfcl evaluate (BFCL's checker)"]}
awk -v b="$bfcl" -v r="${WALL["run (4 suites, csv)"]}" -v ir="${WALL["import + run"]}" \
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
        bfcl[d["id"]] = d["error"]["error_type"]
ours, n = {}, 0
for f in glob.glob(f"{tmp}/runs/*/trials.csv"):
    for row in csv.DictReader(open(f)):
        n += 1
        if row["passed"] != "true":
            ours[row["case_id"]] = row["reasons"].split(": ")[0]
same = n - len(set(bfcl) ^ set(ours)) - sum(1 for k in set(bfcl) & set(ours) if bfcl[k] != ours[k])
print(f"item verdicts equal to BFCL's (valid and error type): {same} of {n}; {n - len(bfcl)} valid per BFCL")
for k in sorted(set(bfcl) ^ set(ours))[:10]:
    print("  differs:", k, "BFCL", bfcl.get(k, "valid"), "toolgauge", ours.get(k, "valid"))
for k in sorted(k for k in set(bfcl) & set(ours) if bfcl[k] != ours[k])[:10]:
    print("  differs:", k, "BFCL", bfcl[k], "toolgauge", ours[k])
PY
