"""The chat, day to day, on the real engine and the scripted model server: PgUp/PgDn and the
mouse wheel scroll it while the prompt keeps the focus, /copy puts the last answer or one of
its numbered code blocks on the clipboard (OSC 52), headings render as headings."""

from __future__ import annotations

from textual import events

from hello_tui.app import HelloApp
from hello_tui.screens.command_table import command_named
from hello_tui.widgets.chat_markdown import fenced_blocks
from tests.support.scripted_model import settings_for_server, text
from tests.ui.engine_double import DriverWrites, fake_settings, steady, wait_until

LONG_ANSWER = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(60))

ANSWER_WITH_CODE = (
    "# Fix\n\nChange the helper:\n\n"
    "```python\ndef total(values):\n    return sum(values)\n```\n\n"
    "## Check\n\nThen run:\n\n"
    "~~~sh\npytest -q\n~~~\n"
)


def _app(settings) -> HelloApp:
    return HelloApp(settings, preflight=False, clock=lambda: 0.0)


async def _turn(pilot, app: HelloApp, prompt: str) -> None:
    def answers() -> int:
        return sum(e.role == "assistant" for e in app.chat.history.entries)

    await wait_until(pilot, lambda: app.engine is not None, timeout=15)
    before = answers()
    app.prompt.load_text(prompt)
    await pilot.press("enter")
    await wait_until(
        pilot, lambda: answers() > before and not app.turn_running and app.chat.idle, timeout=15
    )
    await pilot.pause()


def _notices(app: HelloApp) -> list[str]:
    return [n.message for n in app._notifications]


# ---------------------------------------------------------------- scrolling


async def test_page_keys_scroll_the_chat_and_the_prompt_keeps_the_focus(tmp_path, scripted_server):
    server = scripted_server([text(LONG_ANSWER, chunk_size=400)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _turn(pilot, app, "write a lot")
        chat = app.chat
        assert chat.max_scroll_y > 2 * chat.scrollable_content_region.height
        await steady(pilot, lambda: (chat.scroll_y, chat.max_scroll_y))
        assert chat.scroll_y == chat.max_scroll_y  # anchored at the newest line
        bottom = chat.scroll_y
        # A key is handled when the app gets to it (later than one pause on a busy
        # machine): wait for the scroll it makes, then measure it.
        await pilot.press("pageup")
        await wait_until(pilot, lambda: chat.scroll_y != bottom)
        assert app.focused is app.prompt
        first = chat.scroll_y
        assert 0 < bottom - first <= chat.scrollable_content_region.height
        await pilot.press("pageup")
        await wait_until(pilot, lambda: chat.scroll_y != first)
        assert chat.scroll_y < first
        await pilot.press("pagedown", "pagedown")
        await wait_until(pilot, lambda: chat.scroll_y == chat.max_scroll_y)
        assert app.focused is app.prompt
        # Typing goes on in the prompt.
        await pilot.press("o", "k")
        assert app.prompt.text == "ok"


async def test_a_prompt_taller_than_its_box_keeps_its_own_page_keys(tmp_path, scripted_server):
    server = scripted_server([text(LONG_ANSWER, chunk_size=400)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _turn(pilot, app, "write a lot")
        app.prompt.load_text("\n".join(f"line {n}" for n in range(30)))
        app.prompt.move_cursor(app.prompt.document.end)
        await steady(pilot, lambda: (app.prompt.size, app.chat.size, app.chat.scroll_y))
        assert app.prompt.max_scroll_y > 0
        chat_before = app.chat.scroll_y
        row_before = app.prompt.cursor_location[0]
        await pilot.press("pageup")
        await pilot.pause()
        assert app.prompt.cursor_location[0] < row_before  # the prompt paged
        assert app.chat.scroll_y == chat_before  # the chat did not move


async def test_the_mouse_wheel_over_the_chat_scrolls_it_without_taking_the_focus(
    tmp_path, scripted_server
):
    server = scripted_server([text(LONG_ANSWER, chunk_size=400)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _turn(pilot, app, "write a lot")
        chat = app.chat
        bottom = chat.scroll_y
        for _ in range(3):
            await pilot._post_mouse_events([events.MouseScrollUp], widget=chat, offset=(5, 5))
        await wait_until(pilot, lambda: chat.scroll_y < bottom)
        assert app.focused is app.prompt
        await steady(pilot, lambda: chat.scroll_y)  # a wheel scroll may still be moving
        up = chat.scroll_y
        await pilot._post_mouse_events([events.MouseScrollDown], widget=chat, offset=(5, 5))
        await wait_until(pilot, lambda: up < chat.scroll_y)
        assert app.focused is app.prompt


# ---------------------------------------------------------------- /copy


def test_copy_is_in_the_command_table(tmp_path):
    command = command_named("copy")
    assert command is not None and command.usage == "/copy [N]"
    assert "copy" in _app(fake_settings(tmp_path)).prompt_ctl.commands


def test_fenced_blocks_follow_commonmark():
    source = (
        "````md\n```inner\nnot a block\n```\n````\n\n"
        "    indented code is not numbered\n\n"
        "- item\n\n  ```js\n  let a = 1;\n  ```\n\n"
        "> ~~~\n> quoted\n> ~~~\n\n"
        "```\nunclosed at the end"
    )
    blocks = fenced_blocks(source)
    assert [(b.language, b.code) for b in blocks] == [
        ("md", "```inner\nnot a block\n```"),
        ("js", "let a = 1;"),
        ("", "quoted"),
        ("", "unclosed at the end"),
    ]


async def test_copy_puts_the_last_answer_on_the_clipboard_with_osc52(tmp_path, scripted_server):
    server = scripted_server([text("An older answer."), text(ANSWER_WITH_CODE)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _turn(pilot, app, "first")
        await _turn(pilot, app, "second")
        writes = DriverWrites(app)
        app.prompt.load_text("/copy")
        await pilot.press("enter")
        await pilot.pause()
        assert writes.osc52() == [ANSWER_WITH_CODE.rstrip("\n")]
        assert app.clipboard == ANSWER_WITH_CODE.rstrip("\n")
        notice = _notices(app)[-1]
        assert "Copied the last answer" in notice and "/copy 1" in notice and "/copy 2" in notice
        assert app.focused is app.prompt


async def test_copy_n_takes_code_block_n_as_numbered_in_the_chat(tmp_path, scripted_server):
    server = scripted_server([text(ANSWER_WITH_CODE)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _turn(pilot, app, "fix it")
        lines = app.chat.history.plain_lines()
        assert any(line.strip() == "1  python" for line in lines)
        assert any(line.strip() == "2  sh" for line in lines)
        writes = DriverWrites(app)
        for typed in ("/copy 2", "/copy 1"):
            app.prompt.load_text(typed)
            await pilot.press("enter")
            await pilot.pause()
        assert writes.osc52() == ["pytest -q", "def total(values):\n    return sum(values)"]
        assert "code block 1 (python, 2 lines)" in _notices(app)[-1]


async def test_copy_with_nothing_to_copy_says_so_and_writes_nothing(tmp_path, scripted_server):
    server = scripted_server([text("No code here.")])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        writes = DriverWrites(app)
        app.prompt.load_text("/copy")
        await pilot.press("enter")
        await pilot.pause()
        assert "no answer to copy yet" in _notices(app)[-1].lower()
        await _turn(pilot, app, "explain")
        for typed, expected in (
            ("/copy 1", "has no code blocks"),
            ("/copy 0", "/copy N"),
            ("/copy two", "/copy N"),
        ):
            app.prompt.load_text(typed)
            await pilot.press("enter")
            await pilot.pause()
            assert expected in _notices(app)[-1]
        assert writes.osc52() == []


async def test_copy_n_beyond_the_blocks_names_the_range(tmp_path, scripted_server):
    server = scripted_server([text(ANSWER_WITH_CODE)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _turn(pilot, app, "fix it")
        writes = DriverWrites(app)
        app.prompt.load_text("/copy 3")
        await pilot.press("enter")
        await pilot.pause()
        assert "2 code blocks" in _notices(app)[-1] and "/copy 1 to /copy 2" in _notices(app)[-1]
        assert writes.osc52() == []


# ---------------------------------------------------------------- headings


def _styles_of(app: HelloApp, word: str) -> list[str]:
    history = app.chat.history
    found = []
    for strip in history._lines:
        for segment in strip:
            if word in segment.text and segment.style is not None:
                found.append(str(segment.style))
    return found


async def test_headings_render_bold_and_coloured_with_rules_not_underlined(
    tmp_path, scripted_server
):
    answer = "# Alpha heading\n\ntext\n\n## Beta heading\n\ntext\n\n### Gamma heading\n\ntext\n"
    server = scripted_server([text(answer)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _turn(pilot, app, "headings")
        lines = app.chat.history.plain_lines()
        for word, rule in (("Alpha", "━"), ("Beta", "─"), ("Gamma", None)):
            styles = _styles_of(app, word)
            assert styles and all("bold" in s and "#" in s for s in styles), (word, styles)
            assert not any("underline" in s for s in styles)
            at = next(i for i, line in enumerate(lines) if word in line)
            assert lines[at] == f"  {word} heading"  # left-aligned (the body's indent), not centred
            below = lines[at + 1].strip()
            if rule:
                assert below and set(below) == {rule}
            else:
                assert below == ""


async def test_numbering_goes_on_across_the_parts_of_a_long_streamed_answer(
    tmp_path, scripted_server
):
    filler = "\n\n".join(f"Paragraph {n} explains one more detail of the fix." for n in range(80))
    answer = (
        "```python\nfirst = 1\n```\n\n"
        + filler
        + "\n\n```python\nsecond = 2\n```\n\n"
        + filler
        + "\n\n```sh\nthird\n```\n"
    )
    server = scripted_server([text(answer, chunk_size=200)])
    app = _app(settings_for_server(server, tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await _turn(pilot, app, "a long one")
        roles = [e.role for e in app.chat.history.entries]
        assert roles.count("continued") >= 1  # the reply was shown in several parts
        labels = [
            line.strip()
            for line in app.chat.history.plain_lines()
            if line.strip() in ("1  python", "2  python", "3  sh")
        ]
        assert labels == ["1  python", "2  python", "3  sh"]
        writes = DriverWrites(app)
        for typed in ("/copy 3", "/copy 2", "/copy"):
            app.prompt.load_text(typed)
            await pilot.press("enter")
            await pilot.pause()
        assert writes.osc52() == ["third", "second = 2", answer.rstrip("\n")]
