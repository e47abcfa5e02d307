"""tools/call round trips over stdio by the official Python SDK's own client (`mcp.Client`).

The reference side of benches/mcp_calls.sh: the same server, the same tool (`echo`), the
same warm-up, sequential calls and percentile definition as toolgauge's bench binary
(benches/mcp_calls.rs), and the same one-line JSON result.

Usage: tests/mcp/.venv/bin/python benches/mcp_calls_sdk.py [--calls N] [--warmup N]
           [--mode auto|legacy] [--server-python PATH] [--server-script PATH]
"""

import argparse
import asyncio
import json
import math
import sys
import time
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

ROOT = Path(__file__).resolve().parent.parent


def percentile(sorted_samples: list[float], q: float) -> float:
    """Nearest rank, as benches/mcp_calls.rs computes it."""
    rank = math.ceil(q * len(sorted_samples))
    return sorted_samples[min(max(rank, 1), len(sorted_samples)) - 1]


async def bench(args: argparse.Namespace) -> dict:
    params = StdioServerParameters(command=args.server_python, args=[args.server_script, "stdio"])
    # `cache=None`: tools/call is not cacheable anyway; this keeps the client's work to
    # what toolgauge's does (no response-cache bookkeeping).
    async with Client(params, mode=args.mode, cache=None) as client:

        async def one(i: int) -> float:
            text = f"hello {i}"
            started = time.perf_counter()
            result = await client.call_tool("echo", {"text": text})
            took = time.perf_counter() - started
            got = "".join(getattr(block, "text", "") for block in result.content)
            if result.is_error or got != text:
                raise SystemExit(f"error: call {i}: unexpected answer (is_error {result.is_error}): {got}")
            return took

        for i in range(args.warmup):
            await one(i)
        latencies = []
        started = time.perf_counter()
        for i in range(args.calls):
            latencies.append(await one(i))
        wall = time.perf_counter() - started
        version = client.protocol_version
    latencies.sort()
    return {
        "client": "python-sdk",
        "era": "modern" if version in MODERN_PROTOCOL_VERSIONS else "legacy",
        "protocol_version": version,
        "calls": args.calls,
        "calls_per_s": round(args.calls / wall, 1),
        "p50_ms": round(percentile(latencies, 0.50) * 1000, 3),
        "p95_ms": round(percentile(latencies, 0.95) * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--mode", default="auto", help="auto (discover, else initialize) or legacy")
    parser.add_argument("--server-python", default=str(ROOT / "tests/mcp/.venv/bin/python"))
    parser.add_argument("--server-script", default=str(ROOT / "tests/mcp/servers/sdk_server.py"))
    args = parser.parse_args()
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    print(json.dumps(asyncio.run(bench(args))))


if __name__ == "__main__":
    sys.exit(main())
