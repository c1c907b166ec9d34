"""Git's hunk header (`@@ -a,b +c,d @@ func`), shared by the review's hunk titles
and every diff hello-tui writes (patch/written_diff.py)."""

from __future__ import annotations


def git_range(start: int, count: int) -> str:
    """One side of a hunk header as git writes it, from a 0-based start index.

    A side with no lines names the line after which the change goes (0 at the
    top of the file), not the line it would start at; a count of 1 is omitted.
    """
    number = start + 1 if count else start
    return str(number) if count == 1 else f"{number},{count}"


def hunk_header(
    old_start: int, old_count: int, new_start: int, new_count: int, func: str = ""
) -> str:
    """The whole `@@` line: both sides' ranges, then the function context if any."""
    ranges = f"@@ -{git_range(old_start, old_count)} +{git_range(new_start, new_count)} @@"
    return f"{ranges} {func}" if func else ranges
