"""Whole sessions in the app: the real agent, the real patch engine, the scripted model server.

1. the demo bug: read, run the tests (allowed for the session), review a two-hunk
   patch with one hunk turned off, accept, rerun the tests;
2. reject the patch; 3. deny a command; 4. Esc while the answer streams;
5. the sidebar: open a note, a backup's diff, restore a file, undo the restore.
"""

from __future__ import annotations

import json
from pathlib import Path

from hello_tui.app import HelloApp
from hello_tui.core.display import ChatMessage
from hello_tui.demo import build_demo_app, copy_demo_repo
from hello_tui.demo.script import TEST_COMMAND, DemoModel
from hello_tui.patch import commit_plan, list_backups, plan_patch_text
from hello_tui.screens.backup_diff import BackupDiffScreen
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.confirm import ConfirmScreen
from hello_tui.screens.note_viewer import NoteViewerScreen
from hello_tui.screens.reject import RejectReasonScreen
from hello_tui.screens.review import PatchReviewScreen
from hello_tui.store.notes import NoteStore
from hello_tui.store.sessions import SessionStore
from tests.support.scripted_model import call, held, settings_for_server, text, tool_calls
from tests.ui.engine_double import armed, wait_until

ORIGINAL = (
    Path(__file__).resolve().parents[2] / "hello_tui" / "demo" / "repo" / "stats.py"
).read_text()
FIXED_MEAN_ONLY = ORIGINAL.replace("/ (count - 1)", "/ count")


def _screen_is(app, kind) -> bool:
    return isinstance(app.screen, kind)


def _tool_messages(server) -> list[str]:
    """Every tool result the model was sent, in order (last request has them all)."""
    last = server.chat_requests[-1]
    return [m.get("content") or "" for m in last["messages"] if m.get("role") == "tool"]


async def _send(pilot, app: HelloApp, prompt: str | None = None) -> None:
    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    if prompt is not None:
        app.prompt.load_text(prompt)
    await pilot.press("enter")


async def test_demo_bug_partial_accept_fixes_the_file_and_reruns_the_tests(
    tmp_path, scripted_server
):
    repo = copy_demo_repo(tmp_path)
    server = scripted_server(DemoModel())
    app = build_demo_app(repo, server)
    approvals_seen = 0
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app)
        await wait_until(pilot, lambda: _screen_is(app, CommandApprovalScreen), timeout=20)
        await armed(pilot)
        assert app.screen.command == TEST_COMMAND
        approvals_seen += 1
        await pilot.press("a")  # allow for the session
        await wait_until(pilot, lambda: _screen_is(app, PatchReviewScreen), timeout=20)
        await armed(pilot)
        review = app.screen
        assert [f.path for f in review.plan.files] == ["stats.py"]
        assert len(review.plan.files[0].hunks) == 2
        await wait_until(pilot, lambda: app.status.state == "waiting for you")
        await pilot.press("j", "space", "a")  # second hunk off, accept the rest
        while app.turn_running:
            # The rerun must not ask again: "allow for the session" covers it.
            if _screen_is(app, CommandApprovalScreen):
                approvals_seen += 1
                await pilot.press("y")
            await pilot.pause(0.05)
        assert approvals_seen == 1
        assert (repo / "stats.py").read_text() == FIXED_MEAN_ONLY

        tools = [line.split()[1] for line in app.trace.summary_lines() if line.split()[1] != "-"]
        assert [t for t in tools if t != "todo"] == ["read", "terminal", "apply_patch", "terminal"]
        statuses = {r.record.tool: r.record.status for r in app.trace.rows if r.record.tool}
        assert statuses["apply_patch"] == "partial"  # one hunk was declined
        last_terminal = [r for r in app.trace.rows if r.record.tool == "terminal"][-1]
        assert "exit code: 0" in last_terminal.record.output
        assert "Ran 2 tests" in last_terminal.record.output
        assert app.todos.by_status("completed") == [
            "Read stats.py",
            "Run the tests",
            "Fix mean()",
            "Rerun the tests",
        ]
        chat = "\n".join(app.chat.history.plain_lines())
        assert "1 hunk applied, 1 declined" in chat
        assert "The tests pass now." in chat
        assert "Patch applied" in [n.title for n in NoteStore(app.settings.state.notes).list()]
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: bool(app.sidebar.backups))
        assert any("Patch applied" in title for title in app.sidebar.visible_note_titles())
        assert app.sidebar.backups[0].files == ["stats.py"]


async def test_rejected_patch_leaves_the_file_and_tells_the_model(tmp_path, scripted_server):
    repo = copy_demo_repo(tmp_path)
    server = scripted_server(DemoModel())
    app = build_demo_app(repo, server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app)
        await wait_until(pilot, lambda: _screen_is(app, CommandApprovalScreen), timeout=20)
        await armed(pilot)
        await pilot.press("y")  # once
        await wait_until(pilot, lambda: _screen_is(app, PatchReviewScreen), timeout=20)
        await armed(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: _screen_is(app, RejectReasonScreen), timeout=10)
        await armed(pilot)
        await pilot.press("enter")  # no reason
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert (repo / "stats.py").read_text() == ORIGINAL
        assert list_backups(app.settings) == []
        patch_result = [m for m in _tool_messages(server) if "patch" in m.lower()][-1]
        assert patch_result.startswith("The user rejected the patch. Nothing was written")
        chat = "\n".join(app.chat.history.plain_lines())
        assert "Patch not applied" in chat or "rejected" in chat
        assert "left stats.py unchanged" in chat


async def test_denied_command_does_not_run_and_the_model_is_told(tmp_path, scripted_server):
    repo = tmp_path / "stats-demo"
    repo.mkdir()
    command = "python -c \"open('ran.txt', 'w').write('x')\""
    server = scripted_server(
        [tool_calls([call("terminal", {"command": command})]), text("Fine, I will not run it.")]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "create ran.txt with python")
        await wait_until(pilot, lambda: _screen_is(app, CommandApprovalScreen), timeout=20)
        await armed(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: not app.turn_running, timeout=20)
        assert not (repo / "ran.txt").exists()
        told = _tool_messages(server)[-1].lower()
        assert "denied" in told or "declined" in told
        row = next(r for r in app.trace.rows if r.record.tool == "terminal")
        assert row.record.status == "error"
        chat = "\n".join(app.chat.history.plain_lines())
        assert "denied" in chat and "Fine, I will not run it." in chat


async def test_escape_while_streaming_stops_the_turn_and_keeps_the_session_valid(
    tmp_path, scripted_server
):
    repo = tmp_path / "stats-demo"
    repo.mkdir()
    # Held open after 20 chunks until the server stops: the turn lasts until Esc.
    long_answer = held(text("word " * 2000, chunk_size=5), after_chunks=20)
    server = scripted_server([long_answer, text("Second answer.")])
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "write a lot")
        await wait_until(pilot, lambda: app.chat.streaming and len(app.chat.live_text) > 50)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.turn_running)
        assert "Turn cancelled." in "\n".join(app.chat.history.plain_lines())
        assert app.status.state == "idle"
        assert not app.chat.streaming
        session_id = app.engine.session_id
        await _send(pilot, app, "and now?")
        await wait_until(pilot, lambda: not app.turn_running and server.remaining == 0)
        await wait_until(pilot, lambda: not app.turn_running)
        assert "Second answer." in "\n".join(app.chat.history.plain_lines())
    session = SessionStore(app.settings.state).load(session_id)
    raw = json.loads(session.path.read_text())
    assert raw["turns"] == 2
    assert any(d.get("text") == "Turn cancelled." for d in raw["display"])
    roles = [m["role"] for m in session.history]
    assert roles.count("user") == 2 and roles[-1] == "assistant"


def _chat_count(app, line: str) -> int:
    return "\n".join(app.chat.history.plain_lines()).count(line)


async def test_sidebar_note_backup_diff_restore_and_undo(tmp_path, scripted_server):
    repo = copy_demo_repo(tmp_path)
    server = scripted_server([])
    settings = settings_for_server(server, repo)
    patch = (
        "*** Begin Patch\n*** Update File: stats.py\n@@\n     count = len(values)\n"
        "-    return total(values) / (count - 1)\n+    return total(values) / count\n"
        "*** End Patch\n"
    )
    commit_plan(plan_patch_text(patch, settings), settings, user_task="fix mean")
    assert (repo / "stats.py").read_text() == FIXED_MEAN_ONLY
    backup = list_backups(settings)[0]
    app = HelloApp(settings, preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: bool(app.sidebar.backups))
        titles = app.sidebar.visible_note_titles()
        # A patch note's label ends with the lines its diff added and removed.
        assert any(t.endswith("Patch applied +1 −1") for t in titles), titles
        # Open the note.
        await pilot.press("enter")
        await wait_until(pilot, lambda: _screen_is(app, NoteViewerScreen))
        assert app.screen.note_title == "Patch applied"
        assert "stats.py" in app.screen.markdown
        assert app.screen.meta.endswith("\n1 file, +1 −1: M stats.py +1 −1")
        await pilot.press("escape")
        # The backup's diff against the current file.
        tree = app.query_one("#backups-tree")
        tree.focus()
        await pilot.pause()
        folder = tree.root.children[0]
        assert folder.data.backup == backup.name
        tree.move_cursor(folder.children[0])
        await pilot.press("enter")
        await wait_until(pilot, lambda: _screen_is(app, BackupDiffScreen))
        assert app.screen.old_text == ORIGINAL
        assert app.screen.new_text == FIXED_MEAN_ONLY
        await pilot.press("escape")
        # Restore it: a confirm first (cancel keeps the file), then for real.
        tree.move_cursor(folder.children[0])
        await pilot.press("R")
        await wait_until(pilot, lambda: _screen_is(app, ConfirmScreen))
        await armed(pilot)
        await pilot.press("n")
        await pilot.pause()
        assert (repo / "stats.py").read_text() == FIXED_MEAN_ONLY
        await pilot.press("R")
        await wait_until(pilot, lambda: _screen_is(app, ConfirmScreen))
        await armed(pilot)
        await pilot.press("y")
        await wait_until(pilot, lambda: (repo / "stats.py").read_text() == ORIGINAL)
        await wait_until(pilot, lambda: len(app.sidebar.backups) == 2)
        await wait_until(pilot, lambda: _chat_count(app, "Restored from") == 1)
        # The restore is itself undoable.
        app.prompt.focus()
        await pilot.press(*"/undo", "enter")
        await wait_until(pilot, lambda: (repo / "stats.py").read_text() == FIXED_MEAN_ONLY)
        # The chat hears of it after the file is written: wait for the line, not only the file.
        await wait_until(pilot, lambda: _chat_count(app, "Undone: M stats.py") == 1)
        # A second /undo steps one further back (the patch itself), /redo forward again.
        await pilot.press(*"/undo", "enter")
        await wait_until(pilot, lambda: (repo / "stats.py").read_text() == ORIGINAL)
        await pilot.press(*"/redo", "enter")
        await wait_until(pilot, lambda: (repo / "stats.py").read_text() == FIXED_MEAN_ONLY)
        await wait_until(pilot, lambda: _chat_count(app, "Redone: M stats.py") == 1)


async def test_plan_command_asks_the_planner_and_writes_nothing(tmp_path, scripted_server):
    repo = copy_demo_repo(tmp_path)
    plan = (
        "## Plan\n1. Read stats.py\n2. Run the tests\n3. Fix mean\n4. Add a test\n"
        "5. Rerun the tests\n\n## Risks\n- none\n\n## Validation\n- pytest passes\n"
    )
    server = scripted_server([text(plan)])
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, ":plan fix the mean")
        await wait_until(pilot, lambda: not app.turn_running and server.remaining == 0)
        await wait_until(pilot, lambda: not app.turn_running)
        chat = "\n".join(app.chat.history.plain_lines())
        assert "Read stats.py" in chat and "Validation" in chat
        assert "fix the mean" in server.chat_requests[-1]["messages"][-1]["content"]
        assert "tools" not in server.chat_requests[-1]
        assert app.trace.rows == []
        assert (repo / "stats.py").read_text() == ORIGINAL


async def test_failed_preflight_is_shown_with_its_hint(tmp_path):
    repo = tmp_path / "stats-demo"
    repo.mkdir()
    from hello_tui.config import load_settings

    # Nothing listens on port 9 of this machine: the start-up check must say so.
    settings = load_settings(repo, base_url="http://127.0.0.1:9/v1", model="m", environ={})
    app = HelloApp(settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.preflight_report is not None, timeout=30)
        await wait_until(pilot, lambda: app.chat.idle)
        assert not app.preflight_report.ok
        chat = " ".join(" ".join(app.chat.history.plain_lines()).split())
        assert "start-up check" in chat and "LLM_BASE_URL" in chat
        # the hint is said once, not repeated after a message that already holds it
        assert chat.count(app.preflight_report.hint) == 1
        assert app.focused is app.prompt


async def test_sidebar_restores_a_whole_backup_folder(tmp_path, scripted_server):
    repo = copy_demo_repo(tmp_path)
    server = scripted_server([])
    settings = settings_for_server(server, repo)
    test_before = (repo / "test_stats.py").read_text()
    patch = (
        "*** Begin Patch\n*** Update File: stats.py\n@@\n     count = len(values)\n"
        "-    return total(values) / (count - 1)\n+    return total(values) / count\n"
        "*** Update File: test_stats.py\n@@\n+# checked by hand\n"
        "*** Add File: NOTES.md\n+fixed\n*** End Patch\n"
    )
    commit_plan(plan_patch_text(patch, settings), settings)
    assert (repo / "NOTES.md").exists()
    app = HelloApp(settings, preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        await pilot.press("ctrl+b")
        await wait_until(pilot, lambda: bool(app.sidebar.backups))
        tree = app.query_one("#backups-tree")
        tree.focus()
        await pilot.pause()
        tree.move_cursor(tree.root.children[0])  # the folder, not one of its files
        await pilot.press("R")
        await wait_until(pilot, lambda: _screen_is(app, ConfirmScreen))
        await armed(pilot)
        await pilot.press("y")
        await wait_until(pilot, lambda: (repo / "stats.py").read_text() == ORIGINAL)
        await wait_until(pilot, lambda: (repo / "test_stats.py").read_text() == test_before)
        await wait_until(pilot, lambda: len(app.sidebar.backups) == 2)
        assert not (repo / "NOTES.md").exists()  # the folder's patch added it


async def test_slash_resume_switches_to_a_saved_session(tmp_path, scripted_server):
    repo = copy_demo_repo(tmp_path)
    server = scripted_server([text("answer in the resumed session")])
    settings = settings_for_server(server, repo)
    earlier = SessionStore(settings.state).new()
    earlier.display = [
        ChatMessage("user", "earlier question"),
        ChatMessage("assistant", "earlier answer"),
    ]
    earlier.history = [
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer"},
    ]
    earlier.save()
    app = HelloApp(settings, preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await _send(pilot, app, "/resume no-such-session")
        await pilot.pause()
        assert "No saved session" in "\n".join(app.chat.history.plain_lines())
        first = app.engine.session_id
        assert first != earlier.id
        await _send(pilot, app, f"/resume {earlier.id}")
        await wait_until(pilot, lambda: app.engine.session_id == earlier.id, timeout=15)
        await wait_until(
            pilot, lambda: "earlier answer" in "\n".join(app.chat.history.plain_lines())
        )
        # The next turn continues that session's model history.
        await _send(pilot, app, "and now?")
        await wait_until(pilot, lambda: not app.turn_running and server.remaining == 0)
        sent = [m.get("content") for m in server.chat_requests[-1]["messages"]]
        assert "earlier question" in sent and "and now?" in "\n".join(map(str, sent))
