"""An MCP server written with the official Python SDK, for toolgauge's tests and bench.

Usage: sdk_server.py stdio
       sdk_server.py http PORT          (Streamable HTTP at http://127.0.0.1:PORT/mcp)

The SDK speaks both protocol eras: a client that probes `server/discover` gets the
2026-07-28 era, one that sends `initialize` gets the legacy one.
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("toolgauge-sdk-peer", version="1.0.0")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers and return the sum."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def fail(reason: str) -> str:
    """Always fails with the given reason (a tool error, isError: true)."""
    raise ValueError(reason)


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_record(record_id: str) -> str:
    """Delete a record by id. Destructive."""
    return f"deleted {record_id}"


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        sys.exit(f"usage: {sys.argv[0]} stdio | http PORT")


if __name__ == "__main__":
    main()
