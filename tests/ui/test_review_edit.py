"""The review's `e`: the editor holds the file as the accepted hunks leave it, a declined
hunk stays out of the user's version (on screen, in the decision and on disk), the
re-planned hunks keep the proposal's function context, and every re-plan is the engine's."""

from __future__ import annotations

import json
import sys

from hello_tui.demo import build_demo_app, copy_demo_repo
from hello_tui.demo.script import DemoModel
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.review import PatchReviewScreen
from hello_tui.widgets.diff_view import DiffView
from tests.ui.engine_double import armed, wait_until
from tests.ui.review_fixtures import settle

FIX = "    return total(values) / count\n"
USERS_FIX = "    return total(values) / max(count, 1)\n"
GUARD = "    if not values:\n        return 0.0\n"


def recording_editor(tmp_path, monkeypatch):
    """$EDITOR: records the text it was given, then writes the user's own fix over the
    model's one. Returns a function listing the texts it was given so far."""
    seen = tmp_path / "editor-saw.json"
    script = tmp_path / "editor.py"
    script.write_text(
        "import json, sys\n"
        "path = sys.argv[1]\n"
        "text = open(path).read()\n"
        f"seen = {str(seen)!r}\n"
        "try:\n    old = json.load(open(seen))\nexcept OSError:\n    old = []\n"
        "json.dump(old + [text], open(seen, 'w'))\n"
        f"open(path, 'w').write(text.replace({FIX!r}, {USERS_FIX!r}))\n"
    )
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    return lambda: json.loads(seen.read_text()) if seen.exists() else []


async def _to_review(pilot, app) -> PatchReviewScreen:
    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen), timeout=20)
    await armed(pilot)
    await pilot.press("a")
    await wait_until(pilot, lambda: isinstance(app.screen, PatchReviewScreen), timeout=20)
    await settle(pilot)
    assert isinstance(app.screen, PatchReviewScreen)
    return app.screen


async def test_a_declined_hunk_stays_out_of_the_edit_and_off_the_disk(
    tmp_path, scripted_server, monkeypatch
):
    seen = recording_editor(tmp_path, monkeypatch)
    repo = copy_demo_repo(tmp_path)
    app = build_demo_app(repo, scripted_server(DemoModel()))
    async with app.run_test(size=(120, 40)) as pilot:
        review = await _to_review(pilot, app)
        await pilot.press("j", "space")  # decline the guard in spread()
        await pilot.press("e")
        await settle(pilot)
        (given,) = seen()
        assert FIX in given and GUARD not in given  # what accepting would write
        shown = review.plan.files[0]
        assert USERS_FIX in shown.new_text and GUARD not in shown.new_text
        assert len(shown.hunks) == 1
        status = str(review.query_one("#review-status").render())
        assert "edited by you, 1 hunk you declined left out" in status
        assert "1 hunk ·" in str(review.query_one("#review-title").render())
        await pilot.press("a")
        await wait_until(pilot, lambda: not app.turn_running, timeout=30)
    written = (repo / "stats.py").read_text()
    assert USERS_FIX in written
    assert "if not values:" not in written


async def test_the_edited_hunks_keep_the_function_context(tmp_path, scripted_server, monkeypatch):
    recording_editor(tmp_path, monkeypatch)
    repo = copy_demo_repo(tmp_path)
    app = build_demo_app(repo, scripted_server(DemoModel()))
    async with app.run_test(size=(120, 40)) as pilot:
        review = await _to_review(pilot, app)
        headers = [h.header for h in review.plan.files[0].hunks]
        assert headers == [
            "def mean(values: list[float]) -> float:",
            "def spread(values: list[float]) -> float:",
        ]
        await pilot.press("e")
        await settle(pilot)
        assert [h.header for h in review.plan.files[0].hunks] == headers
        rows = review.query_one(DiffView).rows
        titles = [row.label for row in rows if row.kind == "header"]
        assert titles and titles[0].endswith("def mean(values: list[float]) -> float:")
        await pilot.press("r")
        await pilot.pause()


async def test_the_edit_keeps_the_other_hunks_decisions_across_files(
    tmp_path, scripted_server, monkeypatch
):
    """Editing twice starts from the user's own version with its own declines applied."""
    seen = recording_editor(tmp_path, monkeypatch)
    repo = copy_demo_repo(tmp_path)
    app = build_demo_app(repo, scripted_server(DemoModel()))
    async with app.run_test(size=(120, 40)) as pilot:
        review = await _to_review(pilot, app)
        await pilot.press("e")
        await settle(pilot)
        assert len(review.plan.files[0].hunks) == 2
        await pilot.press("j", "space", "e")  # decline the guard of the user's version
        await settle(pilot)
        first, second = seen()
        assert GUARD in first and GUARD not in second
        assert USERS_FIX in second
        await pilot.press("r")
        await pilot.pause()
