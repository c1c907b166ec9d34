"""The app draws a model's answer and a command's output as text: what it writes to the
terminal holds no escape sequence that came from them."""

from __future__ import annotations

from hello_tui.app import HelloApp
from tests.support.scripted_model import call, settings_for_server, text, tool_calls
from tests.ui.engine_double import wait_until

ATTACK = "clip \x1b]52;c;aGk=\x07 clear \x1b[2J csi8 \x9b2J title \x1b]0;owned\x07 end"


async def test_answer_and_tool_output_reach_the_screen_as_text(tmp_path, scripted_server):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "evil.txt").write_text(ATTACK + "\n")
    server = scripted_server(
        [tool_calls([call("terminal", {"command": "cat evil.txt"})]), text("Said: " + ATTACK)]
    )
    app = HelloApp(settings_for_server(server, repo), preflight=False)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.prompt.load_text("look")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.turn_running and app.trace.rows, timeout=30)
        await pilot.pause()
        # Everything the screen would send to the terminal, drawn in full.
        drawn = app.screen._compositor.render_update(full=True).render_segments(app.console)
        shown = "\n".join(app.chat.history.plain_lines())
        session_id = app.engine.session_id
    assert "Said: clip ␛]52;c;aGk=␇ clear ␛[2J csi8 \\x9b2J" in shown
    for raw in ("\x1b]52", "\x1b]0;", "\x1b[2J", "\x9b"):
        assert raw not in drawn
    assert any("␛]52;c;aGk=␇" in row.record.output for row in app.trace.rows)

    # The saved session keeps what happened; resumed, it is drawn as text again.
    resumed = HelloApp(app.settings, resume=session_id, preflight=False)
    async with resumed.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: resumed.engine is not None, timeout=15)
        await wait_until(pilot, lambda: resumed.chat.idle and resumed.chat.history.entries)
        await pilot.pause()
        drawn = resumed.screen._compositor.render_update(full=True).render_segments(app.console)
        shown = "\n".join(resumed.chat.history.plain_lines())
    assert "Said: clip ␛]52;c;aGk=␇ clear ␛[2J csi8 \\x9b2J" in shown
    for raw in ("\x1b]52", "\x1b]0;", "\x1b[2J", "\x9b"):
        assert raw not in drawn
    assert any("␛]52;c;aGk=␇" in row.record.output for row in resumed.trace.rows)
