"""The Python SDK test server (sdk_server.py) plus tools for toolgauge's loop tests:
state that lives as long as the server process, a request for input, slow calls, and a
crash.

Usage: loop_server.py stdio | http PORT   (as sdk_server.py)

A separate script that imports sdk_server's server, so the shared server file keeps
its own tools unchanged.
"""

import os
import sys

import anyio

from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from sdk_server import main, server

_count = 0


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
def count() -> str:
    """Add one to this server's counter and return it (starts at 0 in a new process)."""
    global _count
    _count += 1
    return f"count={_count}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def confirm_order(order_id: str, ctx: Context):
    """Ask the user to confirm an order before answering (a request for input)."""
    answers = ctx.input_responses
    if not answers:
        ask = ElicitRequest(
            params=ElicitRequestFormParams(
                message=f"Confirm order {order_id}?",
                requested_schema={
                    "type": "object",
                    "properties": {"ok": {"type": "boolean"}},
                    "required": ["ok"],
                },
            )
        )
        return InputRequiredResult(input_requests={"confirm": ask})
    answer = answers.get("confirm")
    action = getattr(answer, "action", None)
    content = getattr(answer, "content", None)
    return f"order {order_id}: {action} {content}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def wait(ms: int) -> str:
    """Answer after `ms` milliseconds (keeps a call in flight while another one runs)."""
    await anyio.sleep(ms / 1000)
    return f"waited {ms} ms"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
async def slow_count(ms: int) -> str:
    """Wait `ms` milliseconds, then add one to the counter (a slow call that changes state)."""
    global _count
    await anyio.sleep(ms / 1000)
    _count += 1
    return f"count={_count}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
async def crash(after_ms: int = 0) -> str:
    """Kill this server process in the middle of the call, after `after_ms` milliseconds."""
    await anyio.sleep(after_ms / 1000)
    sys.stderr.write("loop_server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


if __name__ == "__main__":
    main()
