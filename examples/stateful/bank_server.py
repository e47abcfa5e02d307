"""A small stateful world for toolgauge's `expect.end_state` (docs/suite-format.md):
three bank accounts behind an MCP server written with the official Python SDK.

Usage: bank_server.py stdio

Every process starts from the same balances, so with `tools_from.isolation: trial` each
trial gets a fresh bank, and the checks made after an episode (`end_state`) read what
that episode did and nothing else.
"""

import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("toolgauge-bank-example", version="1.0.0")

# Balances in whole euros; the state an episode changes.
BALANCES = {"ACC-1": 250, "ACC-2": 190, "ACC-3": 40}


def account(account_id: str) -> str:
    if account_id not in BALANCES:
        known = ", ".join(sorted(BALANCES))
        raise ToolError(f"unknown account {account_id!r} (accounts: {known})")
    return account_id


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_accounts() -> list[str]:
    """List the ids of the user's accounts."""
    return sorted(BALANCES)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_balance(account_id: str) -> dict:
    """Return the balance of one account, in euros: {"account_id": ..., "balance": ...}."""
    return {"account_id": account(account_id), "balance": BALANCES[account_id]}


@server.tool(annotations=ToolAnnotations(destructiveHint=True, idempotentHint=False))
def transfer(from_account: str, to_account: str, amount: int) -> dict:
    """Move `amount` whole euros from one account to another. Fails, changing nothing,
    when the source account has less than `amount`."""
    account(from_account)
    account(to_account)
    if amount <= 0:
        raise ToolError(f"amount must be positive, got {amount}")
    if BALANCES[from_account] < amount:
        raise ToolError(
            f"insufficient funds: {from_account} has {BALANCES[from_account]}, "
            f"the transfer needs {amount}"
        )
    BALANCES[from_account] -= amount
    BALANCES[to_account] += amount
    return {"from_balance": BALANCES[from_account], "to_balance": BALANCES[to_account]}


if __name__ == "__main__":
    if sys.argv[1:] != ["stdio"]:
        sys.exit("usage: bank_server.py stdio")
    server.run("stdio")
