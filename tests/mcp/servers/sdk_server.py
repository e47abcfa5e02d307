"""An MCP server written with the official Python SDK, for toolgauge's tests and bench.

Usage: sdk_server.py stdio
       sdk_server.py stdio --legacy     (the initialize handshake only, as pre-2026 servers)
       sdk_server.py http PORT          (Streamable HTTP at http://127.0.0.1:PORT/mcp)

The SDK speaks both protocol eras: a client that probes `server/discover` gets the
2026-07-28 era, one that sends `initialize` gets the legacy one. With `--legacy` the
server runs the SDK's handshake-only loop, so `server/discover` is not served and a
client has to fall back to `initialize`.

`confirm_delete` and `ask_forever` ask the client for input through 2026-07-28
`input_required` results (modern era only).
"""

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    ToolAnnotations,
)

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
    raise ToolError(reason)


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def delete_record(record_id: str) -> str:
    """Delete a record by id. Destructive."""
    return f"deleted {record_id}"


CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Delete it?"}},
    "required": ["confirm"],
}


@server.tool(annotations=ToolAnnotations(destructiveHint=True))
def confirm_delete(record_id: str, ctx: Context) -> str | InputRequiredResult:
    """Delete a record after the user confirms it (asks through input_required)."""
    answers = ctx.input_responses or {}
    expected = f"confirm:{record_id}"
    if "confirm" not in answers:
        return InputRequiredResult(
            input_requests={
                "confirm": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=f"Really delete record {record_id}?",
                        requested_schema=CONFIRM_SCHEMA,
                    )
                )
            },
            request_state=expected,
        )
    # The SDK seals requestState on the wire; what arrives here is the unsealed echo.
    if ctx.request_state != expected:
        raise ToolError(f"requestState was not echoed: got {ctx.request_state!r}")
    answer = answers["confirm"]
    content = getattr(answer, "content", None) or {}
    if getattr(answer, "action", None) == "accept" and content.get("confirm") is True:
        return f"deleted {record_id} (confirmed)"
    return f"kept {record_id}: the confirmation was {getattr(answer, 'action', 'missing')}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def ask_forever(ctx: Context) -> str | InputRequiredResult:
    """Asks for input again on every round (tests a client's round cap)."""
    state = ctx.request_state or "round-0"
    n = int(state.removeprefix("round-")) + 1
    return InputRequiredResult(
        input_requests={
            f"q{n}": ElicitRequest(
                params=ElicitRequestFormParams(
                    message=f"Question {n}?",
                    requested_schema=CONFIRM_SCHEMA,
                )
            )
        },
        request_state=f"round-{n}",
    )


async def run_legacy_stdio() -> None:
    """Serve stdio with the SDK's handshake-only loop (no era routing, no discover)."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        async with low.lifespan(low) as state:
            await serve_loop(
                low,
                read_stream,
                write_stream,
                lifespan_state=state,
                init_options=low.create_initialization_options(),
            )


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio" and "--legacy" in sys.argv[2:]:
        anyio.run(run_legacy_stdio)
    elif mode == "stdio":
        server.run("stdio")
    elif mode == "http":
        port = int(sys.argv[2])
        server.run("streamable-http", host="127.0.0.1", port=port, log_level="WARNING")
    else:
        sys.exit(f"usage: {sys.argv[0]} stdio [--legacy] | http PORT")


if __name__ == "__main__":
    main()
