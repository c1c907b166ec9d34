"""The demo on a plain install: its sample tests run with the standard library alone, and
the scripted model ticks a todo only when its step worked (a failing rerun stays open)."""

from __future__ import annotations

import shlex
import subprocess
import sys

from hello_tui.demo import build_demo_app, copy_demo_repo
from hello_tui.demo.script import TEST_COMMAND, DemoModel
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.review import PatchReviewScreen
from tests.ui.engine_double import armed, wait_until


def _run_tests_without_site_packages(repo) -> subprocess.CompletedProcess[str]:
    """The demo's command as a plain install runs it: `-S` leaves site-packages (where
    a test runner would be installed) off the path, as a venv with only hello-tui has
    no pytest."""
    argv = shlex.split(TEST_COMMAND)
    assert argv[0] == "python"
    return subprocess.run(
        [sys.executable, "-S", *argv[1:]], cwd=repo, capture_output=True, text=True, check=False
    )


def test_the_sample_tests_run_with_the_standard_library_alone(tmp_path):
    repo = copy_demo_repo(tmp_path)
    before = _run_tests_without_site_packages(repo)
    assert before.returncode == 1, before.stderr
    assert "FAILED (failures=1)" in before.stderr
    stats = repo / "stats.py"
    stats.write_text(stats.read_text().replace("/ (count - 1)", "/ count"))
    after = _run_tests_without_site_packages(repo)
    assert after.returncode == 0, after.stderr
    assert "Ran 2 tests" in after.stderr


def _answer(app) -> str:
    return [e.text for e in app.chat.history.entries if e.role == "assistant"][-1]


async def _drive(tmp_path, scripted_server, review_keys: tuple[str, ...]):
    repo = copy_demo_repo(tmp_path)
    app = build_demo_app(repo, scripted_server(DemoModel()))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=20)
        await armed(pilot)
        await pilot.press("a")  # allowed for the session: the rerun asks nothing
        await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen), timeout=20)
        await armed(pilot)
        await pilot.press(*review_keys)
        await wait_until(pilot, lambda: not app.turn_running, timeout=30)
        await wait_until(pilot, lambda: app.chat.idle)
        return app, _answer(app), app.todos.by_status("completed")


async def test_the_demo_ends_with_the_tests_passing(tmp_path, scripted_server):
    _, answer, completed = await _drive(tmp_path, scripted_server, ("a",))
    assert "The tests pass now." in answer
    assert completed == ["Read stats.py", "Run the tests", "Fix mean()", "Rerun the tests"]


async def test_a_failing_rerun_leaves_its_todo_open(tmp_path, scripted_server):
    # Decline the fix (the first hunk), keep the guard: the rerun still fails.
    app, answer, completed = await _drive(tmp_path, scripted_server, ("space", "a"))
    assert "The tests still fail" in answer
    assert "The tests pass now." not in answer
    assert "Rerun the tests" not in completed
    assert app.todos.by_status("in_progress") == ["Rerun the tests"]
