"""Regular expressions compiled at their first use instead of at import.

The patch engine's modules name many patterns that a typical `hello-tui apply`
never uses (mail headers, git's colour codes, Codex sections in a unified diff,
leftover temp names); compiling them all at import cost each apply about 1.5 ms.
`lazy_compile` returns a stand-in that compiles on its first use and from then on
holds the compiled pattern's methods and attributes itself, so a use costs what a
compiled pattern's does. Only attribute use works (`.match`, `.sub`, `.pattern`):
the stand-in is not an `re.Pattern` for `isinstance` or for `re.sub(pattern, ...)`.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any


class _LazyPattern:
    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only while nothing is compiled
        compiled = re.compile(*self._source)
        for attribute in dir(compiled):
            if not attribute.startswith("__"):
                setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)


def lazy_compile(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, done when the pattern is first used."""
    return _LazyPattern(pattern, flags)  # type: ignore[return-value]
