"""The MCP servers an ACP client names in `session/new` / `session/load`, as engine configs.

A stdio server keeps its `command`, `args` and `env`; an HTTP one its `url`
and `headers` (ACP sends both as `[{name, value}]` lists). They become
`McpServerConfig`s with source "client": the editor's user configured them,
so they start without a question, but every call to their tools is still
approved. SSE servers are not supported (the capability says so) and are
reported back by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hello_tui.engine.types import McpServerConfig


def mcp_configs(servers: Iterable[Any]) -> tuple[list[McpServerConfig], list[str]]:
    """(configs, names of servers that cannot be used)."""
    configs: list[McpServerConfig] = []
    refused: list[str] = []
    for server in servers:
        name = str(getattr(server, "name", "")).strip()
        if not name:
            continue
        kind = getattr(server, "type", None)
        if kind in (None, "stdio") and getattr(server, "command", None):
            configs.append(
                McpServerConfig(
                    name=name,
                    transport="stdio",
                    command=str(server.command),
                    args=tuple(str(a) for a in server.args or []),
                    env={e.name: e.value for e in server.env or []},
                    source="client",
                    origin="the editor (ACP)",
                )
            )
        elif kind == "http" and getattr(server, "url", None):
            configs.append(
                McpServerConfig(
                    name=name,
                    transport="http",
                    url=str(server.url),
                    headers={h.name: h.value for h in server.headers or []},
                    source="client",
                    origin="the editor (ACP)",
                )
            )
        else:
            refused.append(name)
    return configs, refused
