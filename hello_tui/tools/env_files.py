"""`.env` files, which hold keys: which files they are, and asking before a tool reads one.

`reaches_env_file` applies the rule for what counts (`core/env_names.py`: `.env`,
`.env.local`, `.envrc`, `prod.env`, and their backups: `.env~`, `prod.env.bak`) to
a path on disk, whose name or, through links, whose target may be one. The file
tools and the terminal policy both use it.

read, grep and context_fetch call `approve_env_read` before they open a
`.env`-like file the model named. The question goes through the same
approver as commands (the TUI's modal; `exec` declines unless --yes), and the
answer is reported like a command's: a "no" is an answer, not a tool failure.
"""

from __future__ import annotations

import os
from pathlib import Path

from hello_tui.core.env_names import is_env_file
from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved
from hello_tui.core.tools import ToolContext, ToolResult


def reaches_env_file(path: Path) -> bool:
    """Reading `path` reads an env file: by its own name, or by its target's when a link
    (of the file or of a folder above it) leads there (`notes.txt -> .env`)."""
    if is_env_file(path.name):
        return True
    try:
        target = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return False
    return target != path and is_env_file(target.name)


ENV_READ_REASON = "it reads {rel}, which usually holds API keys and passwords"


async def approve_env_read(ctx: ToolContext, tool: str, rel: str) -> ToolResult | None:
    """None when the user allowed it; otherwise the result to return (declined)."""
    asked = f"{tool} {rel}"
    if asked in ctx.allowed_commands:
        return None
    reason = ENV_READ_REASON.format(rel=rel)
    ctx.emit(CommandApprovalNeeded(ctx.call_id, asked, reason))
    answer = await ctx.approver.approve_command(asked, reason)
    ctx.emit(CommandApprovalResolved(ctx.call_id, asked, answer))
    if answer == "session":
        ctx.allowed_commands.add(asked)
    if answer in ("once", "session", "network"):
        return None
    return ToolResult.refused_by_user(
        f"The user declined to let {tool} read '{rel}' ({reason}). Nothing was read; "
        "do not retry it unchanged.",
        data={"path": rel, "approval": "deny"},
    )
