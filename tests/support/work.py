"""Work counted, not timed: the lines of Python a call runs.

A count does not depend on the machine or its load, so a test can say that a
file four times longer costs about four times the work (and not sixteen).
Every line counts, the standard library's too: a quadratic difflib call is
as visible as a quadratic loop of hello-tui's own."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any


class TooMuchWork(AssertionError):
    """The call ran past its budget of lines (and was stopped there, not left to finish)."""


def lines_run(call: Callable[[], Any], budget: int | None = None) -> int:
    """How many lines of Python `call()` executes; past `budget` lines it is stopped."""
    steps = 0

    def count(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += event == "line"
        if budget is not None and steps > budget:
            raise TooMuchWork(f"more than {budget} lines run")
        return count

    previous = sys.gettrace()
    sys.settrace(count)
    try:
        call()
    finally:
        sys.settrace(previous)
    return steps


# Lines of Python a diff may run per line of its two versions (the line diff runs about 50).
WORK_PER_LINE = 200


def code_with_blank_lines(n_lines: int, edits: int) -> tuple[str, str]:
    """A file of small functions (one line in four is blank) and a copy with `edits`
    scattered changes that add, remove and replace blank and repeated lines."""
    rng = random.Random(n_lines)
    old: list[str] = []
    for k in range(n_lines // 4):
        old += [f"def f_{k}():", f"    return {k % 10}", "    pass", ""]
    new = list(old)
    for k in range(edits):
        at = rng.randrange(len(new))
        choices = ["", "    pass", f"    return {rng.randrange(10)}", f"x_{k} = 1"]
        new[at : at + rng.randrange(3)] = [rng.choice(choices) for _ in range(rng.randrange(3))]
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


def assert_linear_work(diff: Callable[[str, str], object]) -> None:
    """`diff` of 5,000 lines (1,250 blank) runs at most WORK_PER_LINE lines of Python a line,
    and of 20,000 lines (5,000 blank) at most six times that: linear, not quadratic (16)."""
    small, large = (code_with_blank_lines(n, 50) for n in (5_000, 20_000))
    small_work = lines_run(lambda: diff(*small), budget=WORK_PER_LINE * 2 * 5_000)
    lines_run(lambda: diff(*large), budget=6 * small_work)
