"""`.env` files, which hold keys: which files they are, and asking before a tool reads one.

`is_env_file` is the one rule for what counts (`.env`, `.env.local`,
`.envrc`, `prod.env`, and their backups: `.env~`, `prod.env.bak`); `reaches_env_file` applies it to a path on disk, whose
name or, through links, whose target may be one. The file tools and the
terminal policy both use them.

read, grep and context_fetch call `approve_env_read` before they open a
`.env`-like file the model named. The question goes through the same
approver as commands (the TUI's modal; `exec` declines unless --yes), and the
answer is reported like a command's: a "no" is an answer, not a tool failure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from hello_tui.core.events import CommandApprovalNeeded, CommandApprovalResolved
from hello_tui.core.tools import ToolContext, ToolResult

# An env file's name, and the copies of it editors and people leave beside it, which
# hold the same keys: `.env-local` / `.env_prod` spellings, a backup (`.env~`,
# `prod.env.bak`), an autosave (`#.env#`), vim's swap file (`..env.swp`).
_ENV_NAME = r"#?(?:\.env(?:[._-].*)?|\.envrc|.+\.env(?:\..*)?)[~#]?"
# In any case: on a case-insensitive file system (macOS, Windows, a casefolded ext4
# folder) `cat .ENV` reads `.env`.
_ENV_FILE = re.compile(f"^(?:{_ENV_NAME})$", re.IGNORECASE)
# The same rule over many names at once, one per line: a walk asks it once per folder.
_ENV_LINE = re.compile(f"^(?:{_ENV_NAME})$", re.MULTILINE | re.IGNORECASE)
_VISIBLE_ENV_LINE = re.compile(f"^(?=[^.\n])(?:{_ENV_NAME})$", re.MULTILINE | re.IGNORECASE)


def is_env_file(path: str) -> bool:
    """`.env`, `.env.local`, `.envrc`...: files that usually hold keys (judged by name)."""
    # A bare name (the walks ask for every entry) needs no path object.
    name = path if "/" not in path else PurePosixPath(path).name
    return bool(_ENV_FILE.match(name))


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


def env_file_names(names: list[str], *, hidden: bool = True) -> set[str]:
    """The names among `names` that `is_env_file` accepts (`hidden=False`: dotfiles left
    out, for walks that skip them), in one regex pass over the folder's names instead of
    a Python call per name: 10,000 files stay cheap."""
    joined = "\n".join(names)
    if ".env" not in joined.lower():
        return set()  # every name the rule accepts holds ".env"; most folders have none
    if joined.count("\n") != max(0, len(names) - 1):
        # A name holding a newline would read as two lines: judge each name alone.
        return {n for n in names if (hidden or not n.startswith(".")) and is_env_file(n)}
    # Every match is a whole line: the rule's alternatives are anchored at both ends.
    pattern = _ENV_LINE if hidden else _VISIBLE_ENV_LINE
    return {m.group(0) for m in pattern.finditer(joined)}


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
