"""Pilot tests of the review modal, the confirm and approval modals, the backup viewer and TuiApprover."""

from __future__ import annotations

import asyncio
import stat
import sys
from contextlib import contextmanager
from typing import Any

import pytest
from textual import work
from textual.app import App
from textual.widgets import Button, Static

from hello_tui.core.approval import PatchDecision
from hello_tui.patch.types import FilePlan, PatchPlan, Risk
from hello_tui.screens.approver import TuiApprover
from hello_tui.screens.backup_diff import BackupDiffScreen
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import ConfirmScreen, HighRiskConfirmScreen
from hello_tui.screens.reject import RejectReasonScreen
from hello_tui.screens.review import PatchReviewScreen, editor_command
from hello_tui.screens.review_help import ReviewHelpScreen
from hello_tui.widgets.diff_view import DiffView
from tests.ui.engine_double import armed, wait_until
from tests.ui.review_fixtures import STATS_NEW, STATS_OLD, ScreenApp, file_plan, settle, stats_plan


@pytest.fixture(autouse=True)
def _no_visual(monkeypatch):
    # $VISUAL wins over $EDITOR; the tests choose the editor through $EDITOR.
    monkeypatch.delenv("VISUAL", raising=False)


def review_app(plan: PatchPlan, **kwargs: Any) -> ScreenApp:
    return ScreenApp(PatchReviewScreen(plan, **kwargs))


def status_text(app: App[Any]) -> str:
    return str(app.screen.query_one("#review-status", Static).render())


# ---- hunks and decisions -------------------------------------------------------


async def test_accept_everything_returns_selection_none():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
    assert app.results == [PatchDecision(accepted=True, selection=None)]


async def test_space_declines_the_current_hunk_and_accept_leaves_it_out():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        assert view.hunk_count == 2 and view.current_hunk == 0
        await pilot.press("j")  # second hunk of stats.py
        assert view.current_hunk == 1
        await pilot.press("space")
        assert view.declined == {1}
        assert "1/2 hunks accepted" in status_text(app)
        await pilot.press("a")
        await pilot.pause()
    decision = app.results[0]
    assert decision.accepted
    assert decision.selection == {"stats.py": {0}, "tests/test_stats.py": {0}}


async def test_space_twice_accepts_the_hunk_again():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space", "space", "a")
        await pilot.pause()
    assert app.results[0].selection is None


async def test_declining_every_hunk_then_accept_is_a_rejection():
    plan = PatchPlan([file_plan("stats.py", STATS_OLD, STATS_NEW)], Risk(False))
    app = review_app(plan)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space", "j", "space", "a")
        await pilot.pause()
    decision = app.results[0]
    assert not decision.accepted
    assert decision.reason == "the user declined every hunk"


async def test_r_asks_for_a_reason_that_goes_with_the_rejection():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RejectReasonScreen))
        await armed(pilot)
        await pilot.press(*"use a guard", "enter")
        await pilot.pause()
    assert app.results == [PatchDecision(accepted=False, reason="use a guard")]


async def test_enter_skips_the_reason_and_escape_goes_back_to_the_review():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RejectReasonScreen))
        await armed(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
        assert app.results == []
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RejectReasonScreen))
        await armed(pilot)
        await pilot.press("enter")
        await pilot.pause()
    assert app.results == [PatchDecision(accepted=False)]


async def test_escape_asks_before_rejecting():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await armed(pilot)
        await pilot.press("n")  # back to the review: nothing decided
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
        assert app.results == []
        await armed(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await armed(pilot)
        await pilot.press("y")
        await pilot.pause()
    assert app.results == [PatchDecision(accepted=False)]


async def test_hunk_indices_come_from_the_plan_not_from_display_order():
    old = "".join(f"line {i}\n" for i in range(30))
    new = old.replace("line 2\n", "two\n").replace("line 25\n", "twenty-five\n")
    plan_file = file_plan("notes.txt", old, new)
    # The engine numbers hunks its own way; the review must answer with those numbers.
    plan_file.hunks[0].index, plan_file.hunks[1].index = 7, 3
    plan_file.hunks.reverse()
    app = review_app(PatchPlan([plan_file], Risk(False)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space", "a")  # first hunk on screen is the one at line 3 (index 7)
        await pilot.pause()
    assert app.results[0].selection == {"notes.txt": {3}}


async def test_clicking_a_hunk_header_toggles_it():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        header_row = view.hunk_rows[0] - int(view.scroll_offset.y)
        await pilot.click(DiffView, offset=(10, header_row))
        await pilot.pause()
        assert view.declined == {0}


# ---- navigation and layout -------------------------------------------------------


async def test_j_and_k_move_between_hunks_and_scroll_to_them():
    old = "".join(f"line {i}\n" for i in range(400))
    new = old.replace("line 10\n", "ten\n").replace("line 350\n", "three fifty\n")
    app = review_app(PatchPlan([file_plan("big.txt", old, new)], Risk(False)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        # Folded context keeps this file short; make it scroll by showing every line.
        assert view.current_hunk == 0
        await pilot.press("j")
        assert view.current_hunk == 1
        assert "hunk 2/2" in status_text(app)
        await pilot.press("j")  # stays on the last hunk
        assert view.current_hunk == 1
        await pilot.press("k")
        assert view.current_hunk == 0
        await pilot.press("down")
        assert view.current_hunk == 1
        await pilot.press("up")
        assert view.current_hunk == 0


async def test_j_scrolls_a_long_diff_to_the_hunk():
    old = "".join(f"line {i}\n" for i in range(400))
    new = "".join(f"changed {i}\n" if i % 40 == 0 else f"line {i}\n" for i in range(400))
    app = review_app(PatchPlan([file_plan("big.txt", old, new)], Risk(False)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        assert view.scroll_offset.y == 0
        for _ in range(8):
            await pilot.press("j")
        await pilot.pause()
        header = view.hunk_rows[8]
        assert view.scroll_offset.y > 0
        assert view.scroll_offset.y <= header < view.scroll_offset.y + view.size.height


async def test_layout_is_split_when_wide_unified_when_narrow():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.screen.query_one(DiffView).is_split
        assert "side by side" in status_text(app)
    app = review_app(stats_plan())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one(DiffView).is_split
        assert "unified" in status_text(app)


async def test_s_toggles_split_and_unified():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        split_rows = len(view.rows)
        await pilot.press("s")
        await pilot.pause()
        assert not view.is_split
        assert "unified" in status_text(app)
        # Unified draws removed and added lines on separate rows: more rows.
        assert len(view.rows) > split_rows
        await pilot.press("s")
        await pilot.pause()
        assert view.is_split
        assert "side by side" in status_text(app)


async def test_tab_and_shift_tab_move_between_files():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        view = screen.query_one(DiffView)
        assert screen.file_index == 0 and view.diff.path == "stats.py"
        await pilot.press("tab")
        await settle(pilot)
        assert screen.file_index == 1 and view.diff.path == "tests/test_stats.py"
        assert "file 2/2" in status_text(app)
        await pilot.press("tab")  # wraps around
        await settle(pilot)
        assert screen.file_index == 0
        await pilot.press("shift+tab")
        await settle(pilot)
        assert screen.file_index == 1


async def test_hunk_states_survive_moving_between_files():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space", "tab")
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        assert app.screen.query_one(DiffView).declined == {0}
        await pilot.press("a")
        await pilot.pause()
    assert app.results[0].selection == {"stats.py": {1}, "tests/test_stats.py": {0}}


async def test_file_keys_are_hidden_for_a_single_file_and_edit_for_a_delete():
    plan = PatchPlan(
        [file_plan("gone.py", "x = 1\n", None, op="delete")], Risk(True, ["deletes gone.py"])
    )

    def unchanged(plan: PatchPlan, edits: dict[str, str]) -> PatchPlan:
        return plan

    app = review_app(plan, replan=unchanged)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        actions = {b.binding.action for b in app.screen.active_bindings.values()}
        assert "next_file" not in actions and "edit" not in actions
        assert {"accept", "reject_with_reason", "toggle_hunk", "help"} <= actions
    app = review_app(stats_plan(), replan=unchanged)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        actions = {b.binding.action for b in app.screen.active_bindings.values()}
        assert {"next_file", "edit"} <= actions
    # Without the engine's re-planner nothing could turn the user's text into hunks.
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        actions = {b.binding.action for b in app.screen.active_bindings.values()}
        assert "edit" not in actions


async def test_every_binding_has_an_id_and_a_description():
    for screen_class in (
        PatchReviewScreen,
        ReviewHelpScreen,
        ConfirmScreen,
        CommandApprovalScreen,
        BackupDiffScreen,
        DiffView,
    ):
        for binding in screen_class.BINDINGS:
            assert binding.id, (screen_class.__name__, binding.key)
            assert binding.description, (screen_class.__name__, binding.key)


async def test_file_list_shows_badges_counts_and_risk_flags():
    plan = PatchPlan(
        [
            file_plan("stats.py", STATS_OLD, STATS_NEW),
            file_plan("new.txt", None, "a\nb\n", op="add"),
            file_plan("old.txt", "x\n", None, op="delete"),
            FilePlan("a.txt", "move", move_to="b.txt", old_text="same\n", new_text="same\n"),
        ],
        Risk(True, ["deletes old.txt"]),
    )
    app = review_app(plan)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        files = app.screen.query_one("#review-files")
        prompts = [str(files.get_option_at_index(i).prompt) for i in range(4)]
        assert prompts[0].startswith("✓ M +2 −2 stats.py")
        assert prompts[1].startswith("✓ A +2 −0 new.txt")
        assert prompts[2] == "✓ D +0 −1 old.txt ⚠"
        assert prompts[3].startswith("✓ R +0 −0 a.txt → b.txt")
        title = str(app.screen.query_one("#review-title", Static).render())
        assert "4 files" in title and "HIGH RISK" in title
        await pilot.press("space")
        assert str(files.get_option_at_index(0).prompt).startswith("◐ M")


async def test_a_move_without_content_changes_is_one_unit():
    plan = PatchPlan(
        [
            FilePlan("a.txt", "move", move_to="b.txt", old_text="same\n", new_text="same\n"),
            file_plan("c.txt", "1\n", "2\n"),
        ],
        Risk(False),
    )
    app = review_app(plan)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        assert "renamed a.txt → b.txt" in view.rows[0].label
        await pilot.press("a")
        await pilot.pause()
    assert app.results[0].selection is None
    app = review_app(plan)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("space", "a")
        await pilot.pause()
    assert app.results[0].selection == {"c.txt": {0}}


async def test_help_overlay_opens_and_closes():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, ReviewHelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, PatchReviewScreen)
    assert app.results == []


# ---- high risk -------------------------------------------------------------------


async def test_high_risk_accept_needs_y_and_says_why():
    app = review_app(stats_plan(high_risk=True, reasons=["rewrites 2 files entirely"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, HighRiskConfirmScreen)
        await armed(pilot)
        message = str(app.screen.query_one("#confirm-message", Static).render())
        assert "rewrites 2 files entirely" in message
        assert app.focused is not None and app.focused.id == "confirm-no"
        await pilot.press("y")
        await pilot.pause()
    assert app.results == [PatchDecision(accepted=True, selection=None, high_risk_confirmed=True)]


@pytest.mark.parametrize("cancel_key", ["n", "escape", "enter"])
async def test_high_risk_cancel_goes_back_to_the_review(cancel_key: str):
    app = review_app(stats_plan(high_risk=True, reasons=["deletes a file"]))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        await armed(pilot)
        await pilot.press(cancel_key)  # enter presses the focused, safe button
        await pilot.pause()
        assert isinstance(app.screen, PatchReviewScreen)
        assert app.results == []
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RejectReasonScreen))
        await armed(pilot)
        await pilot.press("enter")
        await pilot.pause()
    assert app.results[0].accepted is False


# ---- editing in $EDITOR ------------------------------------------------------------


def write_editor(tmp_path, body: str) -> str:
    script = tmp_path / "fake_editor.py"
    script.write_text(f"import sys\npath = sys.argv[1]\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return f"{sys.executable} {script}"


def edit_review_app(tmp_path) -> ScreenApp:
    """The review of the engine's plan for STATS_NEW, with the engine's re-planner (`e`
    is offered only where the engine can re-plan the user's text)."""
    from hello_tui.patch import plan_file_change
    from hello_tui.screens.approver import engine_replan

    settings = engine_settings(tmp_path)
    plan = plan_file_change(settings, "stats.py", STATS_NEW)
    return review_app(plan, replan=engine_replan(settings))


async def test_edit_in_editor_yields_user_edits_and_a_recomputed_plan(tmp_path, monkeypatch):
    editor = write_editor(
        tmp_path,
        "text = open(path).read()\n"
        "open(path, 'w').write(text.replace('count(values)}', 'len(values)}'))",
    )
    monkeypatch.setenv("EDITOR", editor)
    app = edit_review_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("e")
        await settle(pilot)
        edited = screen.plan.files[0]
        assert '"n": len(values)}' in edited.new_text
        assert "edited by you" in status_text(app)
        view = screen.query_one(DiffView)
        assert view.diff is not None and any(
            "len(values)}" in (row.new.text if row.new else "") for row in view.rows
        )
        await pilot.press("a")
        await pilot.pause()
    decision = app.results[0]
    assert decision.accepted
    assert decision.user_edits == {"stats.py": STATS_NEW.replace("count(values)}", "len(values)}")}


async def test_edit_uses_the_given_replan(tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", write_editor(tmp_path, "open(path, 'w').write('mine\\n')"))
    calls: list[dict[str, str]] = []

    def replan(plan: PatchPlan, edits: dict[str, str]) -> PatchPlan:
        calls.append(dict(edits))
        return PatchPlan(
            [file_plan("stats.py", STATS_OLD, edits["stats.py"])], Risk(True, ["rewrite"])
        )

    app = review_app(stats_plan(), replan=replan)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert calls == [{"stats.py": "mine\n"}]
        assert len(app.screen.plan.files) == 1
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, RejectReasonScreen))
        await armed(pilot)
        await pilot.press("enter")
        await pilot.pause()
    assert app.results[0].user_edits == {"stats.py": "mine\n"}


async def test_a_failing_editor_changes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", write_editor(tmp_path, "open(path, 'w').write('x')\nsys.exit(3)"))
    app = edit_review_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert app.screen.user_edits == {}
        await pilot.press("a")
        await pilot.pause()
    assert app.results[0].user_edits == {}


def record_suspends(app: App[Any]) -> list[str]:
    """Stand in for App.suspend as Textual writes it: the screen resumes only when the
    block ends normally, so an exception escaping it would leave no "resume"."""
    events: list[str] = []

    @contextmanager
    def suspend():
        events.append("suspend")
        yield
        events.append("resume")

    app.suspend = suspend  # type: ignore[method-assign]
    return events


async def edit_and_expect_error(app: ScreenApp, text: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        events = record_suspends(app)
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, PatchReviewScreen)
        assert any(text in n.message for n in app._notifications), [
            n.message for n in app._notifications
        ]
        assert events in ([], ["suspend", "resume"])
        # The review still answers keys.
        await pilot.press("space", "a")
        await pilot.pause()
    assert app.results and app.results[0].accepted
    assert app.results[0].user_edits == {}


async def test_a_missing_editor_is_reported_not_raised(monkeypatch, tmp_path):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
    await edit_and_expect_error(edit_review_app(tmp_path), "is not installed or not on PATH")


async def test_an_editor_that_cannot_start_is_reported_and_the_screen_resumes(
    monkeypatch, tmp_path
):
    # Found on PATH, but exec fails (its interpreter is missing): the error comes from
    # inside the suspended block.
    script = tmp_path / "broken-editor"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(script))
    app = edit_review_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        events = record_suspends(app)
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert events == ["suspend", "resume"]
        assert any("Could not start the editor" in n.message for n in app._notifications)
        assert isinstance(app.screen, PatchReviewScreen)


async def test_a_failing_editor_is_reported_and_the_screen_resumes(monkeypatch, tmp_path):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", write_editor(tmp_path, "sys.exit(4)"))
    await edit_and_expect_error(edit_review_app(tmp_path), "exited with status 4")


async def test_visual_comes_before_editor_and_is_split_like_a_shell(monkeypatch, tmp_path):
    # `code --wait` style: the value's words are the program and its arguments.
    visual = write_editor(
        tmp_path,
        "assert sys.argv[1] == '--wait', sys.argv\n"
        "path = sys.argv[2]\n"
        "open(path, 'w').write(open(path).read().replace('count(values)}', 'len(values)}'))",
    )
    monkeypatch.setenv("VISUAL", f"{visual} --wait")
    monkeypatch.setenv("EDITOR", str(tmp_path / "no-such-editor"))
    app = edit_review_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert "edited by you" in status_text(app)


def test_editor_command_rules(tmp_path):
    program = tmp_path / "my editor"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    path = f"{tmp_path}:/usr/bin:/bin"
    quoted = f"'{program}' --wait -n"
    assert editor_command({"VISUAL": quoted, "EDITOR": "nano", "PATH": path}) == [
        str(program),
        "--wait",
        "-n",
    ]
    assert editor_command({"VISUAL": "  ", "EDITOR": quoted, "PATH": path})[0] == str(program)
    assert "not a valid command" in editor_command({"EDITOR": "vim 'unclosed", "PATH": path})
    missing = editor_command({"EDITOR": "no-such-editor-xyz", "PATH": path})
    assert isinstance(missing, str) and "no-such-editor-xyz" in missing
    fallback = editor_command({"PATH": str(tmp_path)})  # no vi in that folder
    assert isinstance(fallback, str) and "vi" in fallback


# ---- command approval and confirm -------------------------------------------------


@pytest.mark.parametrize(
    "key, verdict",
    [("y", "once"), ("a", "session"), ("n", "deny"), ("escape", "deny"), ("enter", "deny")],
)
async def test_command_approval_keys(key: str, verdict: str):
    app = ScreenApp(CommandApprovalScreen("pytest -q", "runs the test suite"))
    async with app.run_test(size=(100, 30)) as pilot:
        await armed(pilot)
        assert app.focused is not None and app.focused.id == "command-deny"
        text = str(app.screen.query_one("#command-text", Static).render())
        assert "pytest -q" in text
        await pilot.press(key)
        await pilot.pause()
    assert app.results == [verdict]


async def test_command_approval_buttons():
    app = ScreenApp(CommandApprovalScreen("make", "not on the allow list"))
    async with app.run_test(size=(100, 30)) as pilot:
        await armed(pilot)
        await pilot.click("#command-session")
        await pilot.pause()
    assert app.results == ["session"]


@pytest.mark.parametrize("key, answer", [("y", True), ("n", False), ("escape", False)])
async def test_confirm_screen(key: str, answer: bool):
    app = ScreenApp(ConfirmScreen("Restore?", "Overwrite stats.py with the backup."))
    async with app.run_test(size=(80, 24)) as pilot:
        await armed(pilot)
        assert isinstance(app.focused, Button) and app.focused.id == "confirm-no"
        await pilot.press(key)
        await pilot.pause()
    assert app.results == [answer]


# ---- backup viewer ----------------------------------------------------------------


async def test_backup_diff_shows_both_versions_and_escape_closes():
    app = ScreenApp(
        BackupDiffScreen("stats.py (backup 20250101_120000)", STATS_OLD, STATS_NEW, path="stats.py")
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        assert view.is_split and view.hunk_count == 2
        changed = [row for row in view.rows if row.kind == "change"]
        assert changed[0].old.text.strip() == "return total(values) / (count(values) - 1)"
        assert changed[0].new.text.strip() == "return total(values) / count(values)"
        drawn = [view.render_line(y).text for y in range(view.size.height)]
        assert any("hunk 1/2" in line for line in drawn)
        assert not any("accepted" in line for line in drawn)  # read-only: no hunk states
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_backup_identical_to_the_file_says_so():
    app = ScreenApp(BackupDiffScreen("stats.py", STATS_OLD, STATS_OLD))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        view = app.screen.query_one(DiffView)
        assert "identical" in view.rows[0].label


# ---- the approver ------------------------------------------------------------------


class ApproverApp(App[Any]):
    """Runs approvals inside a worker, the way the agent turn does."""

    def __init__(self) -> None:
        super().__init__()
        self.approver = TuiApprover(self)
        self.answers: list[Any] = []

    @work(exclusive=True, group="turn")
    async def ask_patch(self, plan: PatchPlan) -> None:
        self.answers.append(await self.approver.review_patch(plan))

    @work(exclusive=True, group="turn")
    async def ask_command(self, command: str) -> None:
        self.answers.append(await self.approver.approve_command(command, "needs approval"))


async def test_tui_approver_reviews_patches_from_a_worker():
    app = ApproverApp()
    async with app.run_test(size=(120, 40)) as pilot:
        app.ask_patch(stats_plan())
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
        await settle(pilot)
        assert isinstance(app.screen, PatchReviewScreen)
        await pilot.press("j", "space", "a")
        await app.workers.wait_for_complete()
    assert app.answers == [
        PatchDecision(accepted=True, selection={"stats.py": {0}, "tests/test_stats.py": {0}})
    ]


async def test_tui_approver_asks_about_commands_from_a_worker():
    app = ApproverApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask_command("pytest -q")
        await pilot.pause()
        assert isinstance(app.screen, CommandApprovalScreen)
        await armed(pilot)
        await pilot.press("a")
        await app.workers.wait_for_complete()
        app.ask_command("rm -rf build")
        await pilot.pause()
        await armed(pilot)
        await pilot.press("n")
        await app.workers.wait_for_complete()
    assert app.answers == ["session", "deny"]


async def test_tui_approver_also_works_outside_a_worker():
    app = ApproverApp()
    async with app.run_test(size=(100, 30)) as pilot:
        asking = asyncio.ensure_future(app.approver.approve_command("ls", "why not"))
        await pilot.pause()
        assert isinstance(app.screen, CommandApprovalScreen)
        await armed(pilot)
        await pilot.press("y")
        verdict = await asyncio.wait_for(asking, 10)
    assert verdict == "once"


# ---- with the real patch engine -------------------------------------------------------


class EngineApp(ApproverApp):
    def __init__(self, settings) -> None:
        super().__init__()
        self.approver = TuiApprover(self, settings)


def engine_settings(tmp_path):
    from hello_tui.config import load_settings

    (tmp_path / "stats.py").write_text(STATS_OLD)
    return load_settings(tmp_path, environ={})


async def test_engine_plan_one_hunk_declined_writes_exactly_the_accepted_hunk(tmp_path):
    from hello_tui.patch import commit_plan, plan_file_change

    settings = engine_settings(tmp_path)
    plan = plan_file_change(settings, "stats.py", STATS_NEW)
    assert len(plan.files[0].hunks) == 2
    app = EngineApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.ask_patch(plan)
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
        await settle(pilot)
        await pilot.press("j", "space", "a")  # keep the mean fix, decline the describe change
        await app.workers.wait_for_complete()
    decision = app.answers[0]
    commit_plan(plan, settings, selection=decision.selection)
    expected = STATS_OLD.replace(
        "    return total(values) / (count(values) - 1)\n",
        "    return total(values) / count(values)\n",
    )
    assert (tmp_path / "stats.py").read_text() == expected


async def test_engine_replan_after_editing_in_editor(tmp_path, monkeypatch):
    from hello_tui.engine.facade import replan_with_edits
    from hello_tui.patch import commit_plan, plan_file_change

    monkeypatch.setenv(
        "EDITOR",
        write_editor(
            tmp_path,
            "text = open(path).read()\n"
            "open(path, 'w').write(text.replace('count(values)}', 'len(values)}'))",
        ),
    )
    settings = engine_settings(tmp_path)
    plan = plan_file_change(settings, "stats.py", STATS_NEW)
    app = EngineApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        app.ask_patch(plan)
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        shown = app.screen.plan.files[0]
        assert shown.old_hash == plan.files[0].old_hash  # the engine's plan, not a local diff
        assert "len(values)}" in shown.new_text
        await pilot.press("a")
        await app.workers.wait_for_complete()
    decision = app.answers[0]
    final = replan_with_edits(plan, settings, decision.user_edits)
    commit_plan(final, settings, selection=decision.selection)
    assert (tmp_path / "stats.py").read_text() == STATS_NEW.replace(
        "count(values)}", "len(values)}"
    )


# ---- counts, file list, crossing files, long lines -----------------------------------


def title_text(app: App[Any]) -> str:
    return str(app.screen.query_one("#review-title", Static).render())


async def test_header_counts_follow_what_is_accepted():
    # stats.py: two one-line replacements; tests/test_stats.py: one hunk of 5 new lines.
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "2 files · 3 hunks · +7 −2" in title_text(app)
        await pilot.press("space")
        assert "2 files · 2 of 3 hunks accepted · +6 −1" in title_text(app)
        files = app.screen.query_one("#review-files")
        assert str(files.get_option_at_index(0).prompt).startswith("◐ M +1 −1 stats.py")
        await pilot.press("tab", "space")
        assert "1 of 3 hunks accepted · +1 −1" in title_text(app)
        await pilot.press("space", "shift+tab", "space")
        assert "2 files · 3 hunks · +7 −2" in title_text(app)


async def test_a_one_file_patch_has_no_file_list():
    app = review_app(PatchPlan([file_plan("stats.py", STATS_OLD, STATS_NEW)], Risk(False)))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert not app.screen.query_one("#review-files").display
        view = app.screen.query_one(DiffView)
        assert view.size.width >= 115
        assert "Review patch · stats.py · 2 hunks" in title_text(app)


@pytest.mark.parametrize("width", [80, 100, 120, 200])
async def test_the_file_list_takes_at_most_a_quarter_of_the_width(width: int):
    long_name = "src/" + "deeply/nested/" * 6 + "module.py"
    plan = stats_plan()
    plan.files.append(file_plan(long_name, "a\n", "b\n"))
    app = review_app(plan)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(pilot)
        files = app.screen.query_one("#review-files")
        assert files.display
        if width >= 100:  # side by side with the diff
            assert files.size.width <= width // 4
            assert app.screen.query_one(DiffView).size.width >= width * 3 // 4 - 4


async def test_j_and_k_cross_file_boundaries():
    app = review_app(stats_plan())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        view = screen.query_one(DiffView)
        files = screen.query_one("#review-files")
        await pilot.press("j")
        assert (screen.file_index, view.current_hunk) == (0, 1)
        await pilot.press("j")  # past stats.py's last hunk: the new test file
        await settle(pilot)
        assert (screen.file_index, view.current_hunk, files.highlighted) == (1, 0, 1)
        assert "file 2/2" in status_text(app)
        await pilot.press("down")  # the end of the patch: stays
        await settle(pilot)
        assert (screen.file_index, view.current_hunk) == (1, 0)
        await pilot.press("k")  # back to the previous file's last hunk
        await settle(pilot)
        assert (screen.file_index, view.current_hunk, files.highlighted) == (0, 1, 0)
        assert "hunk 2/2" in status_text(app)
        assert view.scroll_offset.y <= view.hunk_rows[1] < view.scroll_offset.y + view.size.height
        await pilot.press("up", "up")  # the first hunk, then the start of the patch: stays
        await settle(pilot)
        assert (screen.file_index, view.current_hunk) == (0, 0)


async def test_status_shows_sideways_scroll_wrap_and_new_files():
    long_old = "x = " + "1 + " * 60 + "1\n"
    long_new = long_old.replace("1\n", "2\n")
    plan = PatchPlan(
        [
            file_plan("calc.py", long_old, long_new),
            file_plan("tests/test_stats.py", None, "a = 1\n", op="add"),
        ],
        Risk(False),
    )
    app = review_app(plan)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("l", "l")
        assert "scrolled → 16 columns" in status_text(app)
        await pilot.press("w")
        assert "wrapped (w)" in status_text(app) and "scrolled" not in status_text(app)
        await pilot.press("w", "home")
        assert "scrolled" not in status_text(app) and "wrapped" not in status_text(app)
        await pilot.press("tab")
        await settle(pilot)
        assert "new file" in status_text(app)


def test_help_and_the_bindings_table_name_the_long_line_keys():
    from hello_tui.screens.command_table import binding_rows
    from hello_tui.screens.review_help import REVIEW_HELP

    rows = dict(binding_rows([*PatchReviewScreen.BINDINGS, *DiffView.BINDINGS]))
    assert "both sides aligned" in rows["w"]
    assert "right" in rows["l, →"] and "left" in rows["h, ←"]
    assert "next file" in rows["j, ↓"]
    for key in ("← → / h l", "w ", "home", "$VISUAL"):
        assert key in REVIEW_HELP
