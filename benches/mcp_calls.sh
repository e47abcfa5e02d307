#!/usr/bin/env bash
# tools/call round trips per second over stdio: toolgauge's MCP client (the bench binary
# benches/mcp_calls.rs, release build) next to the official Python SDK's own client
# (benches/mcp_calls_sdk.py), both against the Python SDK server
# tests/mcp/servers/sdk_server.py (tool `echo`), in the same run.
#
# The two clients alternate, ROUNDS times each, so a machine that slows down or speeds up
# during the run affects both alike; each round spawns a fresh server, connects outside the
# timing, makes WARMUP untimed calls, then CALLS timed sequential calls, checking every
# answer. Printed: each round's line, then per client the median over rounds of calls/s and
# of the p50/p95 latencies, and the ratio of the calls/s medians (toolgauge / SDK).
#
# Usage: benches/mcp_calls.sh            (from anywhere in the repository)
# Needs the Python SDK venv: python3 -m venv tests/mcp/.venv &&
#   tests/mcp/.venv/bin/pip install --require-hashes -r tests/mcp/requirements.txt   (as .ci/run does)
# Environment:
#   CALLS=2000    timed calls per round
#   WARMUP=50     untimed calls per round first
#   ROUNDS=3      rounds per client
#   SDK_MODE=auto the SDK client's mode: auto (discover, as toolgauge does) or legacy
#   PROFILE=bench the cargo profile of toolgauge's side (`dev` for a quick unoptimised
#                 check; quote only `bench` figures)
# Exit status: 0 when both clients completed every round, 1 when one failed, 2 when the
# venv is missing.
set -euo pipefail

CALLS=${CALLS:-2000}
WARMUP=${WARMUP:-50}
ROUNDS=${ROUNDS:-3}
SDK_MODE=${SDK_MODE:-auto}
PROFILE=${PROFILE:-bench}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
python="$root/tests/mcp/.venv/bin/python"

if [[ ! -x "$python" ]]; then
    echo "error: $python is missing: the Python SDK venv is not installed." >&2
    echo "install it with: python3 -m venv tests/mcp/.venv && tests/mcp/.venv/bin/pip install --require-hashes -r tests/mcp/requirements.txt" >&2
    exit 2
fi

echo "building the bench binary (profile $PROFILE)..." >&2
(cd "$root" && cargo bench --quiet --profile "$PROFILE" --bench mcp_calls --no-run)

results=$(mktemp "${TMPDIR:-/tmp}/toolgauge-mcp-calls.XXXXXX")
trap 'rm -f "$results"' EXIT

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round/$ROUNDS: toolgauge" >&2
    (cd "$root" && cargo bench --quiet --profile "$PROFILE" --bench mcp_calls -- --calls "$CALLS" --warmup "$WARMUP") | tee -a "$results"
    echo "round $round/$ROUNDS: python-sdk" >&2
    "$python" "$here/mcp_calls_sdk.py" --calls "$CALLS" --warmup "$WARMUP" --mode "$SDK_MODE" | tee -a "$results"
done

"$python" - "$results" <<'PY'
import json
import statistics
import sys

lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for line in lines:
    by.setdefault(line["client"], []).append(line)
print()
print(f"{'client':<12} {'era':<8} {'rounds':>6} {'calls/s':>9} {'p50 ms':>8} {'p95 ms':>8}")
median = {}
for client in ("toolgauge", "python-sdk"):
    rows = by.get(client, [])
    if not rows:
        sys.exit(f"error: no results from {client}")
    m = {k: statistics.median(r[k] for r in rows) for k in ("calls_per_s", "p50_ms", "p95_ms")}
    median[client] = m
    print(f"{client:<12} {rows[0]['era']:<8} {len(rows):>6} {m['calls_per_s']:>9.1f} {m['p50_ms']:>8.3f} {m['p95_ms']:>8.3f}")
ratio = median["toolgauge"]["calls_per_s"] / median["python-sdk"]["calls_per_s"]
print(f"\nratio (toolgauge / python-sdk calls/s): {ratio:.2f}x")
PY
