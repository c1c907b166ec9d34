"""What the user approved for good: repo servers, and "always" for one server's tool.

Kept in the user's state folder, `$XDG_STATE_HOME/hello-tui/mcp-approvals.json`
(default `~/.local/state/...`), never in the repo: a repo must not be able to
approve its own servers. Each approval is bound to the repo (its resolved
path), the server's name and the fingerprint of its definition, so an edited
`.mcp.json` entry is a new server that asks again.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hello_tui.core.file_lock import FileLock
from hello_tui.mcp.config import McpServerConfig
from hello_tui.store.atomic import write_text_atomic

log = logging.getLogger(__name__)

FILE_NAME = "mcp-approvals.json"


def user_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_STATE_HOME") or str(
        Path(environ.get("HOME") or "~") / ".local" / "state"
    )
    return Path(base).expanduser() / "hello-tui"


def scope_of(config: McpServerConfig, repo: Path) -> str:
    """Repo servers are approved per repo; the user's and an editor's servers everywhere."""
    if config.source == "repo":
        return "repo:" + str(repo.resolve())
    return config.source


class ApprovalMemory:
    """Read and record approvals; every change is a locked read-modify-write."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or user_state_dir() / FILE_NAME

    def _key(self, config: McpServerConfig, repo: Path) -> str:
        return f"{scope_of(config, repo)}|{config.name}|{config.fingerprint()}"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            # An unreadable memory approves nothing: the user is asked again.
            log.warning("the MCP approval file %s is unreadable", self.path, exc_info=True)
            return {}
        return data if isinstance(data, dict) else {}

    def _update(self, change: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=10):
            data = self._load()
            change(data)
            write_text_atomic(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def server_approved(self, config: McpServerConfig, repo: Path) -> bool:
        if not config.needs_approval:
            return True
        return self._key(config, repo) in self._load().get("servers", {})

    def approve_server(self, config: McpServerConfig, repo: Path) -> None:
        key = self._key(config, repo)

        def change(data: dict[str, Any]) -> None:
            data.setdefault("servers", {})[key] = {"summary": config.summary()}

        self._update(change)

    def tool_always_allowed(self, config: McpServerConfig, repo: Path, tool: str) -> bool:
        allowed = self._load().get("tools", {}).get(self._key(config, repo), [])
        return isinstance(allowed, list) and tool in allowed

    def always_allow_tool(self, config: McpServerConfig, repo: Path, tool: str) -> None:
        key = self._key(config, repo)

        def change(data: dict[str, Any]) -> None:
            tools = data.setdefault("tools", {}).setdefault(key, [])
            if tool not in tools:
                tools.append(tool)

        self._update(change)
