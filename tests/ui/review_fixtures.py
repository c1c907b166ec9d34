"""Plans built by hand (the writer's hunks of two texts) and a tiny app that pushes one screen and keeps its result."""

from __future__ import annotations

from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.worker import WorkerCancelled

from hello_tui.engine.types import text_hunks
from hello_tui.patch.types import FilePlan, PatchPlan, Risk
from tests.ui.engine_double import armed

STATS_OLD = '''\
"""Small statistics helpers."""


def total(values):
    return sum(values)


def count(values):
    return len(values)


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return total(values) / (count(values) - 1)


def spread(values):
    return max(values) - min(values)


def describe(values):
    return {"mean": mean(values), "spread": spread(values)}
'''

STATS_NEW = STATS_OLD.replace(
    "    return total(values) / (count(values) - 1)\n",
    "    return total(values) / count(values)\n",
).replace(
    '    return {"mean": mean(values), "spread": spread(values)}\n',
    '    return {"mean": mean(values), "spread": spread(values), "n": count(values)}\n',
)


def file_plan(path: str, old: str | None, new: str | None, op: str = "update") -> FilePlan:
    return FilePlan(
        path=path,
        op=op,  # type: ignore[arg-type]
        old_text=old,
        new_text=new,
        hunks=text_hunks(old or "", new or ""),
        git_lines=True,  # text_hunks split the lines as git does
    )


def stats_plan(high_risk: bool = False, reasons: list[str] | None = None) -> PatchPlan:
    """The demo bug fix: two hunks in stats.py, plus a new test file."""
    test_text = "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
    return PatchPlan(
        files=[
            file_plan("stats.py", STATS_OLD, STATS_NEW),
            file_plan("tests/test_stats.py", None, test_text, op="add"),
        ],
        risk=Risk(high=high_risk, reasons=reasons or []),
    )


class ScreenApp(App[Any]):
    """Pushes `screen` at start; `results` collects what it dismisses with."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.screen_under_test = screen
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.screen_under_test, self.results.append)


async def settle(pilot) -> None:
    """Wait for the diff workers and the repaint that follows them.

    Only the diff view's workers: a worker waiting on a modal would wait forever.
    A decision modal on top is waited for until it has armed (it takes keys then).
    """
    await armed(pilot)
    for _ in range(2):
        await pilot.pause()
        for worker in [w for w in pilot.app.workers if w.group == "diff-view"]:
            try:
                await worker.wait()
            except WorkerCancelled:
                pass  # superseded by a newer request (exclusive group)
    await pilot.pause()
