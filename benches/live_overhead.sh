#!/usr/bin/env bash
# Per-request overhead of live runs: `toolgauge run --live` next to bare clients sending the
# same requests to the same local fake OpenAI-compatible servers, in one run
# (benches/fake_openai.rs does the work; see its header for the details):
#   wiremock   hyper, keep-alive, each answer in one write
#   close      Python http.server: headers and body in two writes, closes after each reply
#   keepalive  Python http.server: two writes, keeps connections alive
# at -j 1, 16 and 64, each server answering after 50 ms, 5 interleaved runs (medians).
# Ends with the Markdown table of the README ("Live-run overhead").
#
# Usage: benches/live_overhead.sh [BENCH OPTIONS]   e.g. --runs 3, --server close -j 16
# Needs cargo and python3; no timing tool (the bench times itself and reads peak memory
# with wait4). Exit status: the bench's (1 when toolgauge's wall is over 1.10 × the fastest
# bare client's anywhere, or a run fails).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
cargo bench --bench fake_openai -- "$@" | tee "$log" || status=$?
echo
echo "README table (machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)):"
grep '^|' "$log" || true
exit "$status"
