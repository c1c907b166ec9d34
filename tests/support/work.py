"""Work counted, not timed: the lines of Python a call runs.

A count does not depend on the machine or its load, so a test can say that a
file four times longer costs about four times the work (and not sixteen).
Every line counts, the standard library's too: a quadratic difflib call is
as visible as a quadratic loop of hello-tui's own."""

from __future__ import annotations

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
