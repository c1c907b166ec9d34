"""The todo board grows with its items up to its share, scrolls beyond it, and says how
many items are out of view below."""

from __future__ import annotations

from hello_tui.widgets.todo_board import TodoBoard
from tests.ui.engine_double import fake_settings, make_app, wait_until


def todos(n: int) -> list[dict]:
    return [
        {"id": str(i), "title": f"item {i}", "status": "completed" if i <= 2 else "pending"}
        for i in range(1, n + 1)
    ]


async def test_a_long_board_names_the_items_out_of_view_and_scrolling_counts_down(tmp_path):
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        app.todos.set_items(todos(12))
        await pilot.pause()
        await pilot.pause()
        board = app.query_one(TodoBoard)
        hidden = board.hidden_below()
        assert hidden > 0
        assert board.border_title == f"Todo · {hidden} more ↓"
        shown = app.export_screenshot().replace("&#160;", " ")
        assert f"{hidden} more ↓" in shown
        board.scroll_end(animate=False)
        await pilot.pause()
        await pilot.pause()
        assert board.hidden_below() == 0 and board.border_title == "Todo"


async def test_a_short_board_grows_to_fit_and_says_nothing_more(tmp_path):
    app = make_app(fake_settings(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        app.todos.set_items(todos(6))
        await pilot.pause()
        await pilot.pause()
        board = app.query_one(TodoBoard)
        assert board.hidden_below() == 0 and board.border_title == "Todo"
        # every line is in view: two headings and six items
        assert board.scrollable_content_region.height >= 8
