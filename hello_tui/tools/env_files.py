"""`.env` files, which hold keys: which files they are, and asking before a tool reads one.

`is_env_file` is the one rule for what counts (`.env`, `.env.local`,
`.envrc`, `prod.env`); the file tools and the terminal policy both use it.

read, grep and context_fetch call `approve_env_read` before they open a
`.env`-like file the model named. The question goes through the same
approver as commands (the TUI's modal; `exec` declines unless --yes), and the
answer is reported like a command's: a "no" is an answer, not a tool failure.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved
from hello_tui.core.tools import ToolContext, ToolResult

_ENV_FILE = re.compile(r"^\.env(\..*)?$|^\.envrc$|.+\.env$")


def is_env_file(path: str) -> bool:
    """`.env`, `.env.local`, `.envrc`...: files that usually hold keys (judged by name)."""
    return bool(_ENV_FILE.match(PurePosixPath(path).name))


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
