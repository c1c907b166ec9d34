"""Snapshots of the review modal (split and unified, scrolled, wrapped, one file, a new file),
the high-risk confirm, command approval and backup diff."""

from __future__ import annotations

from typing import Any

import pytest
from textual.screen import Screen

from hello_tui.patch.types import PatchPlan, Risk
from hello_tui.screens.backup_diff import BackupDiffScreen
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import HighRiskConfirmScreen
from hello_tui.screens.review import PatchReviewScreen
from tests.ui.review_fixtures import (
    STATS_NEW,
    STATS_OLD,
    ScreenApp,
    file_plan,
    settle,
    stats_plan,
)

WIDE, NARROW = (120, 40), (80, 24)


class SnapshotApp(ScreenApp):
    """No animations, so every run draws the same frame."""

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__(screen)
        self.animation_level = "none"


async def second_hunk_declined(pilot) -> None:
    await settle(pilot)
    await pilot.press("j", "space")
    await settle(pilot)


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["120x40", "80x24"])
def test_review_default_layout(snap_compare, size):
    # Side by side at 120 columns, unified at 80: the layout follows the width.
    app = SnapshotApp(PatchReviewScreen(stats_plan()))
    assert snap_compare(app, terminal_size=size, run_before=second_hunk_declined)


def test_review_unified_by_toggle_at_120(snap_compare):
    async def toggle(pilot) -> None:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)

    app = SnapshotApp(PatchReviewScreen(stats_plan()))
    assert snap_compare(app, terminal_size=WIDE, run_before=toggle)


@pytest.mark.parametrize("size", [WIDE, NARROW], ids=["120x40", "80x24"])
def test_high_risk_review_then_confirm(snap_compare, size):
    async def accept(pilot) -> None:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)  # the confirm has armed

    plan = stats_plan(high_risk=True, reasons=["deletes 1 file", "touches a sensitive file: .env"])
    app = SnapshotApp(PatchReviewScreen(plan))
    assert snap_compare(app, terminal_size=size, run_before=accept)


def test_high_risk_confirm_alone(snap_compare):
    app = SnapshotApp(HighRiskConfirmScreen(["rewrites stats.py entirely"]))
    assert snap_compare(app, terminal_size=NARROW, run_before=settle)


def test_command_approval(snap_compare):
    app = SnapshotApp(
        CommandApprovalScreen("pytest -q tests/test_stats.py", "pytest is not on the allow list")
    )
    assert snap_compare(app, terminal_size=WIDE, run_before=settle)


def test_backup_diff(snap_compare):
    screen = BackupDiffScreen(
        "stats.py · backup 20250101_120000_000000", STATS_OLD, STATS_NEW, path="stats.py"
    )
    assert snap_compare(SnapshotApp(screen), terminal_size=WIDE, run_before=settle)


LONG_LINE_OLD = (
    '"""Averages."""\n'
    "\n"
    "def mean(values):\n"
    "    return total(values) / (count(values) - 1) if values and all(isinstance(v, (int, "
    "float)) for v in values) else 0.0  # off by one\n"
    "\n"
    "def other():\n"
    "    return 1\n"
)
LONG_LINE_NEW = LONG_LINE_OLD.replace("(count(values) - 1) if", "count(values) if").replace(
    "else 0.0  # off by one", "else float('nan')  # fixed"
)


def one_file_long_lines() -> PatchPlan:
    return PatchPlan([file_plan("stats.py", LONG_LINE_OLD, LONG_LINE_NEW)], Risk(False))


def pressing(*keys: str):
    async def run(pilot) -> None:
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)

    return run


SIZES = pytest.mark.parametrize("size", [WIDE, NARROW], ids=["120x40", "80x24"])


@SIZES
def test_review_one_file_collapsed_with_long_lines_cut(snap_compare, size):
    app = SnapshotApp(PatchReviewScreen(one_file_long_lines()))
    assert snap_compare(app, terminal_size=size, run_before=settle)


@SIZES
def test_review_scrolled_sideways(snap_compare, size):
    app = SnapshotApp(PatchReviewScreen(one_file_long_lines()))
    assert snap_compare(app, terminal_size=size, run_before=pressing(*["l"] * 7))


@SIZES
def test_review_wrapped(snap_compare, size):
    app = SnapshotApp(PatchReviewScreen(one_file_long_lines()))
    assert snap_compare(app, terminal_size=size, run_before=pressing("w"))


@SIZES
def test_review_new_file_is_one_pane(snap_compare, size):
    # j past stats.py's last hunk goes on to the new test file.
    app = SnapshotApp(PatchReviewScreen(stats_plan()))
    assert snap_compare(app, terminal_size=size, run_before=pressing("j", "j"))
