"""The status bar by priority: at any width the fields shown are whole and the most
important ones (turn state, mode, model) stay; with no model it says so."""

from __future__ import annotations

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult

from hello_tui.widgets.status_bar import StatusBar
from tests.ui.engine_double import fake_settings, make_app, wait_until

SEPARATOR = " │ "

# The bar during a turn, as a priced, confined session shows it.
TURN = {
    "repo": "stats-demo",
    "model": "gpt-4o-mini",
    "protocol": "tools",
    "mode": "auto-edit",
    "state": "running a tool",
    "step": 3,
    "max_steps": 12,
    "context": (12_345, 128_000),
    "tokens": 45_600,
    "cost": 0.0123,
    "sandbox": "sandbox: landlock v7",
}
WHOLE_FIELDS = {
    "stats-demo",
    "gpt-4o-mini",
    "gpt-4o-mini (tools)",
    "⚡ auto-edit",
    "⚙ running a tool",
    "step 3/12",
    "ctx 12.3k/128k",
    "45.6k tokens",
    "$0.0123",
    "sandbox: landlock v7",
}


class BarApp(App[None]):
    def __init__(self, **values) -> None:
        super().__init__()
        self.values = values

    def compose(self) -> ComposeResult:
        bar = StatusBar()
        for name, value in self.values.items():
            setattr(bar, name, value)
        yield bar


@pytest.mark.parametrize("width", [200, 120, 100, 80, 60, 40])
async def test_each_width_shows_whole_fields_and_keeps_the_important_ones(width):
    app = BarApp(**TURN)
    async with app.run_test(size=(width, 5)) as pilot:
        await pilot.pause()
        bar = app.query_one(StatusBar)
        shown = bar.render().plain
        assert cell_len(shown) <= bar.content_size.width
        pieces = shown.split(SEPARATOR)
        assert set(pieces) <= WHOLE_FIELDS, pieces
        assert {"⚙ running a tool", "⚡ auto-edit"} <= set(pieces)
        if width >= 60:
            assert any(p.startswith("gpt-4o-mini") for p in pieces)
        if width >= 80:
            assert "step 3/12" in pieces and "$0.0123" in pieces
        if width >= 120:
            assert "ctx 12.3k/128k" in pieces and "45.6k tokens" in pieces
        if width >= 160:
            assert "sandbox: landlock v7" in pieces and "stats-demo" in pieces


async def test_an_unconfined_sandbox_outranks_the_counts():
    app = BarApp(**{**TURN, "sandbox": "sandbox: none"})
    async with app.run_test(size=(80, 5)) as pilot:
        await pilot.pause()
        pieces = app.query_one(StatusBar).render().plain.split(SEPARATOR)
        assert "sandbox: none" in pieces


async def test_without_a_model_the_bar_says_so(tmp_path):
    app = make_app(fake_settings(tmp_path, configured=False))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None)
        shown = app.status.render().plain
        assert "no model configured: /setup" in shown
        assert app.settings.model not in shown
