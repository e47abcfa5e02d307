"""Hostile and odd MCP servers over stdio, for toolgauge's client tests.

Usage: python3 hostile.py MODE

Plain Python (no SDK): each mode breaks one rule, or stresses one corner, of the
protocol on purpose. Every mode but `modern*` is a legacy (initialize) server that
answers `server/discover` with "method not found" unless the mode says otherwise.

  silent-discover   never answers server/discover; fine otherwise
  die-on-discover   exits (status 3) when it reads server/discover
  die-mid-call      exits (status 7) in the middle of tools/call, after a stderr line
  malformed         answers tools/call with a line that is not JSON
  not-jsonrpc       answers tools/call with JSON that is not a JSON-RPC message
  is-error          tools/call returns isError: true
  unknown-tool      tools/call of an unknown tool is a JSON-RPC error -32602
  huge              10,000 tools over five pages, the second cursor an empty string
  loop-cursor       tools/list sends the same nextCursor forever
  bad-tool          tools/list whose third tool has no name
  stderr-junk       writes junk (binary, ANSI, a 100 kB line) to stderr; fine otherwise
  schema-mismatch   a tool with an outputSchema its structuredContent does not match
  server-requests   sends ping and elicitation/create requests during tools/call
  old-version       answers initialize with protocol version 2024-11-05
  future-only       answers server/discover with -32022, supported: ["2031-01-01"]
  stubborn          ignores stdin EOF and SIGTERM (only SIGKILL ends it)
  modern-sampling   a 2026-07-28 server whose tool asks for sampling (input_required)
  modern-state      a 2026-07-28 server whose tool needs two state-only rounds
  plain (any other) a well-behaved legacy server with tools `echo` and `shape`
"""

import json
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else ""
MODERN = MODE.startswith("modern")
SERVER_INFO = {"name": f"hostile-{MODE}", "version": "0.0.1"}


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(id_, res):
    if MODERN:
        res = {"resultType": "complete", **res}
    send({"jsonrpc": "2.0", "id": id_, "result": res})


def error(id_, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": id_, "error": err})


def read():
    line = sys.stdin.readline()
    if not line:
        return None
    return json.loads(line)


def tool(name, **extra):
    return {
        "name": name,
        "description": f"The {name} tool.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
        **extra,
    }


TOOLS = [
    tool("echo", annotations={"readOnlyHint": True}, **{"x-vendor": {"kept": True}}),
    tool("shape", outputSchema={
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
    }),
]


def list_tools(id_, params):
    cursor = (params or {}).get("cursor")
    if MODE == "huge":
        # Pages: no cursor -> 0..1999, "" -> 2000..3999, "p3" -> ..., "p5" -> last.
        pages = [None, "", "p3", "p4", "p5"]
        if cursor not in pages:
            return error(id_, -32602, f"unknown cursor {cursor!r}")
        i = pages.index(cursor)
        tools = [tool(f"tool_{n:05d}") for n in range(i * 2000, (i + 1) * 2000)]
        res = {"tools": tools}
        if i + 1 < len(pages):
            res["nextCursor"] = pages[i + 1]
        return result(id_, res)
    if MODE == "loop-cursor":
        return result(id_, {"tools": [tool(f"t{cursor or 0}")], "nextCursor": "again"})
    if MODE == "bad-tool":
        return result(id_, {"tools": [tool("a"), tool("b"), {"description": "nameless"}]})
    return result(id_, {"tools": TOOLS})


def call_tool(id_, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if MODE == "die-mid-call":
        sys.stderr.write("fatal: the tool crashed the server\n")
        sys.stderr.flush()
        sys.exit(7)
    if MODE == "malformed":
        sys.stdout.write("Traceback (most recent call last): oops {not json\n")
        sys.stdout.flush()
        return
    if MODE == "not-jsonrpc":
        sys.stdout.write('{"hello": "world"}\n')
        sys.stdout.flush()
        return
    if MODE == "is-error":
        return result(id_, {"content": [{"type": "text", "text": f"no such record: {args.get('text')}"}], "isError": True})
    if MODE == "server-requests":
        send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
        send({"jsonrpc": "2.0", "id": "srv-2", "method": "elicitation/create",
              "params": {"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}}})
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}})
        answers = {}
        while len(answers) < 2:
            msg = read()
            if msg is None:
                sys.exit(0)
            if msg.get("id") in ("srv-1", "srv-2"):
                answers[msg["id"]] = msg.get("result", msg.get("error"))
        return result(id_, {"content": [{"type": "text", "text": json.dumps(answers, sort_keys=True)}]})
    if MODE == "modern-sampling":
        if not params.get("inputResponses"):
            return send({"jsonrpc": "2.0", "id": id_, "result": {
                "resultType": "input_required",
                "inputRequests": {"s": {"method": "sampling/createMessage", "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}}},
                "requestState": "s1"}})
    if MODE == "modern-state":
        state = params.get("requestState")
        if state != "step-2":
            nxt = "step-1" if state is None else "step-2"
            return send({"jsonrpc": "2.0", "id": id_, "result": {"resultType": "input_required", "requestState": nxt}})
        return result(id_, {"content": [{"type": "text", "text": f"done after {state}"}]})
    if name == "echo":
        return result(id_, {"content": [{"type": "text", "text": args.get("text", "")}]})
    if name == "shape":
        if MODE == "schema-mismatch":
            return result(id_, {"content": [{"type": "text", "text": "{\"count\": \"many\"}"}],
                                "structuredContent": {"count": "many"}})
        return result(id_, {"content": [], "structuredContent": {"count": 3}})
    if MODE == "unknown-tool":
        return error(id_, -32602, f"Unknown tool: {name}")
    return result(id_, {"content": [{"type": "text", "text": f"Unknown tool: {name}"}], "isError": True})


def main():
    if MODE == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if MODE == "stderr-junk":
        err = sys.stderr.buffer
        err.write(b"\x1b[31mred warning\x1b[0m\n")
        err.write(b"bytes \xff\xfe not utf-8\n")
        err.write(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {}}\n")
        err.write(b"x" * 100_000 + b"\n")
        err.write(b"last junk line")
        err.flush()
    while True:
        msg = read()
        if msg is None:
            if MODE == "stubborn":
                while True:
                    time.sleep(60)
            return
        method = msg.get("method")
        id_ = msg.get("id")
        params = msg.get("params") or {}
        if id_ is None:
            continue  # notifications
        if method == "server/discover":
            if MODE == "silent-discover":
                continue
            if MODE == "die-on-discover":
                sys.stderr.write("unknown method server/discover, exiting\n")
                sys.stderr.flush()
                sys.exit(3)
            if MODE == "future-only":
                error(id_, -32022, "Unsupported protocol version",
                      {"supported": ["2031-01-01"], "requested": "2026-07-28"})
                continue
            if MODERN:
                result(id_, {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                             "ttlMs": 0, "cacheScope": "private",
                             "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}})
                continue
            error(id_, -32601, "Method not found")
        elif method == "initialize":
            version = "2024-11-05" if MODE == "old-version" else "2025-06-18"
            result(id_, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO})
        elif method == "tools/list":
            list_tools(id_, params)
        elif method == "tools/call":
            call_tool(id_, params)
        elif method == "ping":
            result(id_, {})
        else:
            error(id_, -32601, "Method not found")


if __name__ == "__main__":
    main()
