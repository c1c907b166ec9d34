"""The patch commands' flags (apply, undo, redo, history, recover), as data.

`cli` builds their argparse subparsers from it, and `read_plain` reads their
usual command lines (`apply --yes PATCH`, `undo --repo DIR`) from it without
argparse, whose import (with gettext, locale and shutil behind it) and parser
cost each `hello-tui apply` about 5 ms. Anything else it does not read: help,
`--`, abbreviations, a value that looks like a flag, a missing or extra argument
go to argparse, which answers as it always did.
"""

from __future__ import annotations

from types import SimpleNamespace

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any

REPO_HELP = "repository to work in (default: .)"
_JSON = ("--json", "print the result as JSON")
# Each command's on/off flags and their help, then its positional argument (if any).
SWITCHES: dict[str, tuple[tuple[str, str], ...]] = {
    "apply": (
        ("--yes", "confirm high-risk patches"),
        ("--dry-run", "plan and check, write nothing"),
        _JSON,
    ),
    "undo": (("--force", "undo even files changed since (edits backed up first)"), _JSON),
    "redo": (("--force", "redo even files changed since (edits backed up first)"), _JSON),
    "history": (("--json", "print the history as JSON"),),
    "recover": (("--json", "print what was found as JSON"),),
}
POSITIONAL: dict[str, tuple[str, str]] = {"apply": ("patch", "patch file, or - for standard input")}
PATCH_COMMANDS = tuple(SWITCHES)


def add_flags(command: str, parser: Any) -> None:
    """Declare `command`'s flags on its argparse subparser."""
    parser.add_argument("--repo", default=".", help=REPO_HELP)
    for flag, help_text in SWITCHES[command]:
        parser.add_argument(flag, action="store_true", help=help_text)
    if command in POSITIONAL:
        name, help_text = POSITIONAL[command]
        parser.add_argument(name, help=help_text)


def _dest(flag: str) -> str:
    return flag.removeprefix("--").replace("-", "_")


def read_plain(argv: list[str]) -> SimpleNamespace | None:
    """The namespace argparse would give for `argv` (a patch command first), or None when
    `argv` is anything but flags spelt out in full and the one argument it takes."""
    if not argv or argv[0] not in SWITCHES:
        return None
    command, words = argv[0], argv[1:]
    switches = {flag for flag, _ in SWITCHES[command]}
    values: dict[str, Any] = {"command": command, "repo": "."}
    values.update({_dest(flag): False for flag in switches})
    positional = POSITIONAL.get(command, ("", ""))[0]
    i = 0
    while i < len(words):
        word = words[i]
        if word in switches:
            values[_dest(word)] = True
        elif word.startswith("--repo="):
            values["repo"] = word.removeprefix("--repo=")
        elif word == "--repo" and i + 1 < len(words) and not words[i + 1].startswith("-"):
            values["repo"] = words[i + 1]
            i += 1
        elif positional and positional not in values and (word == "-" or word[:1] != "-"):
            values[positional] = word
        else:
            return None
        i += 1
    if positional and positional not in values:
        return None
    return SimpleNamespace(**values)
