"""The one table of the main screen's commands and keys: help, F1 and completion read it.

Slash commands are listed here with their usage and one-line help; the prompt
controller refuses a handler table that does not name exactly these commands.
Keys are not copied: they are read from the real `BINDINGS` of the app, the
review and approval screens and their widgets, so the help cannot drift from
what the keys do. The prompt's own editing keys live in its key handler, so
they are listed here by hand (`PROMPT_KEYS`), next to the code that names them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from textual.binding import Binding, BindingType


@dataclass(frozen=True)
class SlashCommand:
    name: str  # without the slash: "resume"
    usage: str  # as typed: "/resume [ID]"
    help: str  # one line


SLASH_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "/help", "keys and commands (also F1)"),
    SlashCommand("model", "/model [NAME]", "pick a model, or switch to NAME for this session"),
    SlashCommand(
        "mode", "/mode [MODE]", "show or set the permission mode: ask, auto-edit, read-only (plan)"
    ),
    SlashCommand("resume", "/resume [ID]", "pick a saved session, or switch to the one with ID"),
    SlashCommand("new", "/new", "start a fresh session"),
    SlashCommand(
        "clear",
        "/clear",
        "clear the chat and the model's context; the session goes on, after a divider",
    ),
    SlashCommand(
        "copy",
        "/copy [N]",
        "copy the last answer, or its code block N (numbered in the chat), to the clipboard",
    ),
    SlashCommand("undo", "/undo", "undo the last applied patch (or restore)"),
    SlashCommand("redo", "/redo", "bring back the last undone patch"),
    SlashCommand("compact", "/compact", "summarise the older conversation to free context"),
    SlashCommand("mcp", "/mcp", "MCP servers: where they come from, their state, their tools"),
    SlashCommand("init", "/init", "let the agent explore the repo and propose an AGENTS.md"),
    SlashCommand("setup", "/setup", "how to configure a model; save an API key"),
)

# Prompt lines that are not slash commands.
PROMPT_SYNTAX: tuple[tuple[str, str], ...] = (
    ("!COMMAND", "run a shell command yourself (read-only ones at once, others ask first)"),
    (":plan <goal>", "ask for a plan (steps, risks, validation) without changing files"),
    ("@path", "attach a file (Tab / Enter picks from the completion list)"),
    (":quit, :q", "quit"),
)

# The prompt's editing keys (handled in PromptInput._on_key, not bindings).
PROMPT_KEYS: tuple[tuple[str, str], ...] = (
    ("Enter", "send the prompt"),
    ("shift+enter, ctrl+j", "new line in the prompt"),
    ("↑ / ↓ on the first / last line", "previous / next prompt"),
    ("ctrl+x", "cut the selection (nothing without one)"),
)


def command_named(name: str) -> SlashCommand | None:
    return next((c for c in SLASH_COMMANDS if c.name == name), None)


def matching_commands(typed: str) -> list[SlashCommand]:
    """Commands whose name starts with what follows the slash ("" lists them all)."""
    prefix = typed.removeprefix("/").lower()
    return [c for c in SLASH_COMMANDS if c.name.startswith(prefix)]


def key_label(key: str) -> str:
    names = {
        "question_mark": "?",
        "space": "Space",
        "escape": "Esc",
        "enter": "Enter",
        "up": "↑",
        "down": "↓",
        "left": "←",
        "right": "→",
        "pageup": "PgUp",
        "pagedown": "PgDn",
    }
    return ", ".join(names.get(k.strip(), k.strip()) for k in key.split(","))


def binding_rows(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    """(keys, what they do) for each binding with a description, keys of one action joined."""
    rows: dict[str, list[str]] = {}
    order: list[str] = []
    for item in bindings:
        if not isinstance(item, Binding) or not item.description:
            continue
        description = item.tooltip or item.description
        if description not in rows:
            rows[description] = []
            order.append(description)
        rows[description].append(key_label(item.key))
    return [(", ".join(rows[d]), d) for d in order]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(header: tuple[str, str], rows: Iterable[tuple[str, str]]) -> str:
    lines = [f"| {header[0]} | {header[1]} |", "| --- | --- |"]
    lines += [f"| {_cell(a)} | {_cell(b)} |" for a, b in rows]
    return "\n".join(lines)


def help_markdown(sections: Iterable[tuple[str, Iterable[BindingType]]]) -> str:
    """The help page: the commands, the prompt's syntax and keys, then each screen's bindings."""
    parts = [
        "# hello-tui",
        (
            "Type a task and press **Enter**. The agent explores the repository with tools, "
            "keeps a todo list, and proposes patches; nothing is written until you accept a "
            "patch in the review screen (or, in auto-edit mode, until it passes the limits)."
        ),
        "## Commands",
        _table(("command", "what it does"), [(f"`{c.usage}`", c.help) for c in SLASH_COMMANDS]),
        _table(("in the prompt", "what it does"), [(f"`{a}`", b) for a, b in PROMPT_SYNTAX]),
        "## Keys",
        _table(("key", "action"), PROMPT_KEYS),
    ]
    for title, bindings in sections:
        rows = binding_rows(bindings)
        if rows:
            parts += [f"### {title}", _table(("key", "action"), rows)]
    return "\n\n".join(parts) + "\n"
