"""Pathname expansion by bash's rules, so the policy checks the files bash will really use.

bash expands an unquoted word with `*`, `?` or `[` against the filesystem one
path component at a time: `*` and `?` never match `/`, a name starting with
`.` is matched only by a pattern starting with `.`, `.` and `..` are never
matched (bash 5.2's globskipdots; older bash lets `.*` match them), bracket
expressions take `!` or `^` for negation, ranges, escapes and the POSIX
classes (`[[:alpha:]]`), and `**` is `*` (globstar is off in `bash -c`).
Directories are listed through symbolic links, exactly as bash does, so a
match below a linked folder is found and can be judged by where it leads.

A pattern that matches nothing stays as it is, like bash without nullglob.
Extended globs (`@(...)`, `!(...)`, ...) and patterns too large to expand
within the limits give None: the caller must not guess.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

MAX_MATCHES = 5000
MAX_COMPONENT_CHARS = 1024
MAX_ENTRIES_READ = 50_000
_GLOB_CHARS = "*?["
_EXTGLOB = re.compile(r"[?*+@!]\(")

_CLASSES = {
    "alpha": str.isalpha,
    "digit": lambda c: "0" <= c <= "9",
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": str.isspace,
    "blank": lambda c: c in " \t",
    "punct": lambda c: c.isascii() and not c.isalnum() and c.isprintable() and c != " ",
    "print": str.isprintable,
    "graph": lambda c: c.isprintable() and c != " ",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "word": lambda c: c.isalnum() or c == "_",
}


class GlobTooComplex(Exception):
    """The pattern uses syntax this module does not expand, or expands to too much."""


@lru_cache(maxsize=1)
def bash_skips_dots() -> bool:
    """bash 5.2 and later never match `.` and `..` (globskipdots); older ones do for `.*`."""
    try:
        done = subprocess.run(
            ["bash", "-c", "shopt -q globskipdots"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


# ---------------------------------------------------------------- one component


@dataclass(frozen=True)
class _Set:
    negated: bool
    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    classes: tuple[str, ...]

    def matches(self, ch: str) -> bool:
        hit = (
            ch in self.chars
            or any(lo <= ch <= hi for lo, hi in self.ranges)
            or any(_CLASSES[name](ch) for name in self.classes)
        )
        return hit != self.negated


# A compiled component: STAR (any run), ONE (any one character), a _Set, or a literal str.
STAR = object()
ONE = object()
_Token = object


def has_glob(pattern: str) -> bool:
    """True when the (unquoted) text has an unescaped glob character."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] in _GLOB_CHARS:
            return True
        i += 1
    return False


def _parse_bracket(pattern: str, start: int) -> tuple[_Set, int] | None:
    """The bracket expression at `start` ('['), and the index after it; None if unclosed."""
    i = start + 1
    n = len(pattern)
    negated = False
    if i < n and pattern[i] in "!^":
        negated = True
        i += 1
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    classes: list[str] = []
    first = True
    while i < n:
        ch = pattern[i]
        if ch == "]" and not first:
            return _Set(negated, frozenset(chars), tuple(ranges), tuple(classes)), i + 1
        first = False
        if ch == "[" and i + 1 < n and pattern[i + 1] in ":=.":
            kind = pattern[i + 1]
            close = pattern.find(kind + "]", i + 2)
            if close == -1:
                chars.add(ch)
                i += 1
                continue
            name = pattern[i + 2 : close]
            if kind == ":":
                if name not in _CLASSES:
                    raise GlobTooComplex(f"unknown character class [:{name}:]")
                classes.append(name)
            else:  # [=a=] and [.a.]: one character stands for itself
                chars.update(name)
            i = close + 2
            continue
        if ch == "\\" and i + 1 < n:
            ch = pattern[i + 1]
            i += 1
        if i + 2 < n and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            high = pattern[i + 2]
            if high == "\\" and i + 3 < n:
                high = pattern[i + 3]
                i += 1
            ranges.append((ch, high))
            i += 3
            continue
        chars.add(ch)
        i += 1
    return None


def compile_component(pattern: str) -> list[_Token]:
    if _EXTGLOB.search(pattern):
        raise GlobTooComplex("extended glob patterns are not expanded")
    tokens: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            tokens.append(pattern[i + 1])  # an escaped character is itself, even * or ?
            i += 2
        elif ch == "*":
            if not tokens or tokens[-1] is not STAR:
                tokens.append(STAR)
            i += 1
        elif ch == "?":
            tokens.append(ONE)
            i += 1
        elif ch == "[":
            parsed = _parse_bracket(pattern, i)
            if parsed is None:
                tokens.append("[")
                i += 1
            else:
                tokens.append(parsed[0])
                i = parsed[1]
        else:
            tokens.append(ch)
            i += 1
    return tokens


def matches(pattern: str, name: str) -> bool:
    """Does one path component match the pattern (bash rules, leading dot aside)?"""
    if len(pattern) > MAX_COMPONENT_CHARS:
        raise GlobTooComplex(f"a pattern component longer than {MAX_COMPONENT_CHARS} characters")
    tokens = compile_component(pattern)
    # reachable[s]: the tokens so far can consume exactly name[:s] (no recursion, no blow-up).
    reachable = [True] + [False] * len(name)
    for token in tokens:
        following = [False] * (len(name) + 1)
        if token is STAR:
            seen = False
            for s in range(len(name) + 1):
                seen = seen or reachable[s]
                following[s] = seen
        else:
            for s in range(len(name)):
                if not reachable[s]:
                    continue
                ch = name[s]
                if token is ONE or (isinstance(token, _Set) and token.matches(ch)) or token == ch:
                    following[s + 1] = True
        reachable = following
        if not any(reachable):
            return False
    return reachable[len(name)]


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


# ---------------------------------------------------------------- whole words


def expand(pattern: str, cwd: Path) -> list[str]:
    """The words bash makes of `pattern` (sorted), or [pattern unescaped] when nothing matches.

    Raises GlobTooComplex for patterns it will not expand.
    """
    if _EXTGLOB.search(pattern):
        raise GlobTooComplex("extended glob patterns are not expanded")
    if not has_glob(pattern):
        return [_unescape(pattern)]
    absolute = pattern.startswith("/")
    parts = [p for p in pattern.split("/") if p]
    prefixes = ["/"] if absolute else [""]
    budget = [MAX_ENTRIES_READ]
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        following: list[str] = []
        for prefix in prefixes:
            if not has_glob(part):
                following.append(prefix + _unescape(part) + ("" if last else "/"))
                continue
            for name in _list(prefix, cwd, budget):
                if not _name_matches(part, name):
                    continue
                if not last and not os.path.isdir(_full(prefix + name, cwd)):
                    continue
                following.append(prefix + name + ("" if last else "/"))
            if len(following) > MAX_MATCHES:
                raise GlobTooComplex(f"{pattern} matches more than {MAX_MATCHES} paths")
        prefixes = following
        if not prefixes:
            return [_unescape(pattern)]
    if pattern.endswith("/"):
        prefixes = [p if p.endswith("/") else p + "/" for p in prefixes]
    return sorted(p.rstrip("/") if not pattern.endswith("/") else p for p in prefixes)


def _full(path: str, cwd: Path) -> str:
    return path if path.startswith("/") else os.path.join(cwd, path)


def _list(prefix: str, cwd: Path, budget: list[int]) -> list[str]:
    folder = _full(prefix or ".", cwd)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    budget[0] -= len(names)
    if budget[0] < 0:
        raise GlobTooComplex("the pattern would read too many directory entries")
    if not bash_skips_dots():
        names += [".", ".."]
    return names


def _name_matches(part: str, name: str) -> bool:
    if name in (".", "..") and bash_skips_dots():
        return False
    if name.startswith(".") and not part.startswith((".", "\\.")):
        return False
    return matches(part, name)
