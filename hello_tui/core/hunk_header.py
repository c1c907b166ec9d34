"""Git's numbering of a hunk header (`@@ -a,b +c,d @@`), shared by the review's
hunk titles and the diff a "Patch applied" note records."""

from __future__ import annotations


def git_range(start: int, count: int) -> str:
    """One side of a hunk header as git writes it, from a 0-based start index.

    A side with no lines names the line after which the change goes (0 at the
    top of the file), not the line it would start at; a count of 1 is omitted.
    """
    number = start + 1 if count else start
    return str(number) if count == 1 else f"{number},{count}"
