"""An auto-applied diff in the chat folds: a long one starts folded under its first
line, ctrl+o or a click on it unfolds and folds it again, and a resumed session
keeps it foldable."""

from __future__ import annotations

from hello_tui.app import HelloApp
from hello_tui.core import events as ev
from hello_tui.core.display import DisplayRecorder, entry_from_dict, entry_to_dict
from hello_tui.store.sessions import SessionStore
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.engine_double import steady, wait_until

OLD = [f"line {n}" for n in range(1, 31)]
NEW = [line.upper() for line in OLD]
LONG_PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n"
    + "".join(f"-{o}\n" for o in OLD)
    + "".join(f"+{n}\n" for n in NEW)
    + "*** End Patch\n"
)
SHORT_PATCH = "*** Begin Patch\n*** Update File: b.txt\n@@\n-one\n+ONE\n*** End Patch\n"


def _app(settings) -> HelloApp:
    return HelloApp(settings, preflight=False, clock=lambda: 0.0)


def _chat(app: HelloApp) -> str:
    return "\n".join(app.chat.history.plain_lines())


def _long_patch_app(repo, scripted_server) -> HelloApp:
    """auto-edit, and a model whose first step rewrites all 30 lines of a.txt."""
    (repo / "a.txt").write_text("\n".join(OLD) + "\n")
    server = scripted_server([tool_calls([call("apply_patch", {"patch": LONG_PATCH})]), text("ok")])
    return _app(settings_for_server(server, repo, mode="auto-edit"))


async def _run(pilot, app: HelloApp, prompt: str) -> None:
    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    app.prompt.load_text(prompt)
    await pilot.press("enter")
    await wait_until(pilot, lambda: not app.turn_running and app.chat.idle, timeout=15)


async def test_a_long_auto_applied_diff_starts_folded_and_ctrl_o_unfolds_it(
    tmp_path, scripted_server
):
    app = _long_patch_app(tmp_path, scripted_server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _run(pilot, app, "shout")
        assert (tmp_path / "a.txt").read_text() == "\n".join(NEW) + "\n"
        chat = _chat(app)
        assert "Applied without review" in chat
        assert "+LINE 20" not in chat and "more lines folded" in chat
        # Folded, the first line still says what changed (unidiff's count of the diff).
        assert "/undo reverts it): M a.txt +30 −30" in " ".join(chat.split())

        await pilot.press("ctrl+o")
        await pilot.pause()
        chat = _chat(app)
        assert "-line 1" in chat and "+LINE 20" in chat and "folds this" in chat
        assert app.focused is app.prompt

        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "+LINE 20" not in _chat(app)


async def test_a_click_on_the_diff_flips_it_and_a_click_elsewhere_does_not(
    tmp_path, scripted_server
):
    app = _long_patch_app(tmp_path, scripted_server)
    async with app.run_test(size=(120, 40)) as pilot:
        await _run(pilot, app, "shout")
        history = app.chat.history
        entry = history.newest_foldable()
        assert entry is not None and entry.folded is True
        lines = history.plain_lines()
        diff_line = next(i for i, line in enumerate(lines) if "Applied without review" in line)
        you_line = next(i for i, line in enumerate(lines) if line.strip() == "shout")
        assert history.entry_at(diff_line) is entry
        assert history.entry_at(you_line) is not entry

        # Real clicks: on the question nothing happens, on the diff it unfolds.
        await steady(pilot, lambda: (history.virtual_region, app.chat.scroll_offset))
        top = history.virtual_region.y - app.chat.scroll_offset.y
        await pilot.click(app.chat, offset=(6, top + you_line))
        await pilot.pause()
        assert entry.folded is True
        await pilot.click(app.chat, offset=(6, top + diff_line))
        await pilot.pause()
        assert entry.folded is False and "+LINE 20" in _chat(app)
        assert app.focused is app.prompt  # what is typed next still goes to the prompt
        await pilot.press("x")
        assert app.prompt.text == "x"


async def test_a_short_diff_is_shown_whole_but_can_be_folded(tmp_path, scripted_server):
    (tmp_path / "b.txt").write_text("one\n")
    server = scripted_server(
        [tool_calls([call("apply_patch", {"patch": SHORT_PATCH})]), text("ok")]
    )
    app = _app(settings_for_server(server, tmp_path, mode="auto-edit"))
    async with app.run_test(size=(120, 40)) as pilot:
        await _run(pilot, app, "loud")
        assert "+ONE" in _chat(app) and "folds this" in _chat(app)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert "+ONE" not in _chat(app) and "folded" in _chat(app)


async def test_ctrl_o_with_nothing_foldable_says_so(tmp_path, scripted_server):
    server = scripted_server([])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert any("Nothing in the chat to fold" in n.message for n in app._notifications)


async def test_a_resumed_session_keeps_the_diff_foldable(tmp_path, scripted_server):
    app = _long_patch_app(tmp_path, scripted_server)
    settings = app.settings
    async with app.run_test(size=(120, 40)) as pilot:
        await _run(pilot, app, "shout")
    assert SessionStore(settings.state).list()  # the session was saved
    again = HelloApp(settings, preflight=False, clock=lambda: 0.0, continue_latest=True)
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: "Applied without review" in _chat(again), timeout=15)
        entry = again.chat.history.newest_foldable()
        assert entry is not None and entry.folded is True
        assert "+LINE 20" not in _chat(again)


def test_the_record_carries_foldable_from_the_notice_and_through_the_session_file():
    recorder = DisplayRecorder()
    [message] = recorder.feed(ev.Notice(text="Applied\n```diff\n+x\n```", foldable=True))
    assert message.foldable
    assert entry_from_dict(entry_to_dict(message)) == message
    [plain] = recorder.feed(ev.Notice(text="a retry"))
    assert not plain.foldable and not entry_from_dict(entry_to_dict(plain)).foldable


def test_the_fold_hint_counts_the_lines_it_hides_not_the_fence_lines():
    from rich.console import Console

    from hello_tui.widgets.chat_log import foldable_entry, render_entry

    body = "\n".join(f"+{n}" for n in range(13)) + "\n \n-x"  # a blank context line counts
    entry = foldable_entry("notice", "Applied:\n```diff\n" + body + "\n```")
    assert entry.folded is True
    console = Console(width=80, force_terminal=True)
    shown = "\n".join(strip.text for strip in render_entry(entry, 80, console))
    assert "15 more lines folded" in shown and "+12" not in shown
