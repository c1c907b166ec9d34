"""`hello-tui mcp list`: the configured MCP servers, their state and tools, without the app.

Servers the user configured, and repo servers the user approved, are started
to list their tools (`--no-start` skips that); a repo server not approved yet
is listed as "not approved" and never started from here. `doctor` prints the
same check, one line per server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TextIO

from hello_tui.config import ConfigError, Settings, settings_from_args
from hello_tui.core.approval import PolicyApprover
from hello_tui.mcp import McpManager, McpServerState
from hello_tui.mcp.report import render, server_lines
from hello_tui.tools.registry import ToolRegistry


async def server_states(
    settings: Settings, *, start: bool = True
) -> tuple[list[McpServerState], list[str]]:
    """Every configured server's state (started and stopped again when `start`), and notices."""
    manager = McpManager(
        settings.repo,
        ToolRegistry(),
        log_dir=settings.state.logs,
        secrets=(settings.api_key,) if settings.api_key else (),
    )
    try:
        if start:
            # Headless and without --yes: repo servers not approved yet stay unstarted.
            await manager.ensure_started(PolicyApprover(yes=False))
        states = manager.states()
        notices = [n for n in manager.take_notices() if "was not approved" not in n]
    finally:
        await manager.aclose()
    return states, notices


def run_mcp(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = out or sys.stdout, err or sys.stderr
    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=err)
        return 2
    states, notices = asyncio.run(server_states(settings, start=not args.no_start))
    for notice in notices:
        print(f"note: {notice}", file=err)
    if args.json:
        json.dump([s.to_dict() for s in states], out, indent=2)
        out.write("\n")
    else:
        print(render(states), file=out)
    return 1 if any(s.state == "failed" for s in states) else 0


def doctor_lines(settings: Settings) -> list[str]:
    """One line per configured server for `doctor`: started and listed, or why not."""
    states, notices = asyncio.run(server_states(settings))
    if not states:
        return ["mcp: no servers configured"]
    lines = []
    for state in states:
        head = server_lines(state, tools=False)[0]
        if state.state == "running":  # it started and listed its tools (stopped again since)
            head = head.replace(": running", f": OK, {len(state.tools)} tools")
        elif state.state == "not approved":
            head += " (approve it in the app, or run exec with --yes)"
        lines.append(f"mcp: {head}")
    lines += [f"mcp: note: {n}" for n in notices]
    return lines
