"""Where bash evaluates text as arithmetic, and when that text is safe to evaluate.

bash's arithmetic runs commands: evaluating a name whose value is
`a[$(id)]`, or an array subscript, expands the subscript as a word first,
`$( )` included, and it does so for text that came from single quotes or
from a variable's value. So `[[ 'a[$(id)]' -eq 1 ]]`, `[[ -v 'a[$(id)]' ]]`,
`${x:'a[$(id)]'}` and `${a['$(id)']}` all run `id`. bash evaluates
arithmetic in:

- the operands of `-eq -ne -lt -le -gt -ge` in `[[ ]]` (and, to be safe, in
  `[ ]` and `test`, where bash wants integers);
- the subscript in the name given to `-v` / `-R`, `${name[...]}`,
  `${!name}` (the value names the variable) and `{name[...]}>` redirects;
- `${x:offset:length}`; `(( ))`, `$(( ))`, `let`, `declare -i` (those ask
  as unchecked syntax or as setting variables).

The rule (`expression_problem`): after bash's own quote removal and
expansion, arithmetic text may hold integer literals, operators and plain
names, nothing else; a plain name is evaluated too, so its value must be
known (the command's environment, and not a name the command mentions,
which it could set) and safe by the same rule. Anything else asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable

ARITHMETIC_TEST_OPERATORS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
VARIABLE_TEST_OPERATORS = frozenset({"-v", "-R"})

# A name's value is evaluated again, and so on: deeper than this is not worth following.
_MAX_DEPTH = 8
_ALLOWED = re.compile(r"[0-9A-Za-z_#@\s+\-*/%<>=!&|^~?:(),]*")
_TOKEN = re.compile(r"\d[0-9A-Za-z_#@]*|[A-Za-z_][A-Za-z0-9_]*|\s+|.")
# `=` that assigns (not `==`, `!=`, `<=`, `>=`), and `++` / `--`.
_ASSIGNS = re.compile(r"(?<![=!<>])=(?!=)|\+\+|--")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[(.*)\]", re.DOTALL)

Lookup = Callable[[str], str | None]  # a variable's value; None: can't be known


def expression_problem(text: str, lookup: Lookup | None, depth: int = 0) -> str | None:
    """Why evaluating `text` as bash arithmetic could run a command; None when it can't."""
    shown = text.strip()[:60]
    if depth > _MAX_DEPTH:
        return f"{shown!r} names variables too deeply to follow"
    if not _ALLOWED.fullmatch(text):
        return (
            f"{shown!r} is evaluated as arithmetic, where anything but numbers, operators and "
            "plain names can run a command (a subscript like a[$(cmd)] does)"
        )
    if _ASSIGNS.search(text):
        return f"{shown!r} assigns a variable in arithmetic"
    for token in _TOKEN.findall(text):
        if not _NAME.fullmatch(token):
            continue
        problem = name_problem(token, lookup, depth)
        if problem:
            return problem
    return None


def name_problem(name: str, lookup: Lookup | None, depth: int = 0) -> str | None:
    """A plain name in arithmetic: bash evaluates its value, so that must be safe too."""
    value = lookup(name) if lookup is not None else None
    if value is None:
        return (
            f"bash evaluates the value of {name} as arithmetic, and it can't be known before "
            "running (a value like a[$(cmd)] runs cmd)"
        )
    return expression_problem(value, lookup, depth + 1) if value.strip() else None


def reference_problem(text: str, lookup: Lookup | None) -> str | None:
    """A variable named by text (`-v NAME`, `${!x}`, `{NAME}>`): a plain name, or
    `name[subscript]` with a safe subscript."""
    if _NAME.fullmatch(text):
        return None
    match = _REFERENCE.fullmatch(text)
    if match is None:
        return f"{text[:60]!r} is not a plain variable name"
    return subscript_problem(match.group(2), lookup)


def subscript_problem(text: str, lookup: Lookup | None) -> str | None:
    """An array subscript: `@` and `*` list the array; anything else is arithmetic."""
    if text in ("@", "*"):
        return None
    return expression_problem(text, lookup)
