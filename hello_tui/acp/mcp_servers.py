"""The MCP servers an ACP client names in `session/new`, in `.mcp.json`'s shape.

A stdio server becomes `{"command", "args", "env"}`, an HTTP one
`{"type": "http", "url", "headers"}`, keyed by the server's name, so they join
the servers hello-tui reads from `.mcp.json` and the user config. SSE
servers are not supported (the capability says so) and are reported back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def mcp_configs(servers: Iterable[Any]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(configs by server name, names of servers that cannot be used)."""
    configs: dict[str, dict[str, Any]] = {}
    refused: list[str] = []
    for server in servers:
        name = str(getattr(server, "name", "")).strip()
        if not name:
            continue
        kind = getattr(server, "type", None)
        if kind is None and getattr(server, "command", None):
            configs[name] = {
                "command": server.command,
                "args": list(server.args or []),
                "env": {e.name: e.value for e in server.env or []},
            }
        elif kind == "http":
            configs[name] = {
                "type": "http",
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers or []},
            }
        else:
            refused.append(name)
    return configs, refused
