"""The footer rebuilds its keys only when what it shows changes."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from hello_tui.widgets.footer import SteadyFooter


class Host(App[None]):
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [Binding("x", "go", "Go"), Binding("y", "stay", "Stay")]

    def __init__(self) -> None:
        super().__init__()
        self.go_enabled = True
        self.recomposes = 0

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "go" and not self.go_enabled:
            return None  # shown dimmed
        return True

    def keys_shown(self) -> dict[str, bool]:
        footer = self.query_one(SteadyFooter)
        return {key.key: not key.has_class("-disabled") for key in footer.query("FooterKey")}


async def _settle(pilot) -> None:
    for _ in range(3):
        await pilot.pause()


async def test_unchanged_bindings_do_not_rebuild_the_footer(monkeypatch):
    app = Host()
    recompose = SteadyFooter.recompose

    async def counted(footer: SteadyFooter) -> None:
        app.recomposes += 1
        await recompose(footer)

    monkeypatch.setattr(SteadyFooter, "recompose", counted)
    async with app.run_test(size=(60, 10)) as pilot:
        await _settle(pilot)
        assert app.keys_shown() == {"x": True, "y": True}
        before = app.recomposes
        for _ in range(5):  # a turn's state changes: thinking, running a tool, thinking...
            app.refresh_bindings()
            await _settle(pilot)
        assert app.recomposes == before
        app.go_enabled = False
        app.refresh_bindings()
        await _settle(pilot)
        assert app.recomposes == before + 1
        assert app.keys_shown() == {"x": False, "y": True}
        app.go_enabled = True
        app.refresh_bindings()
        await _settle(pilot)
        assert app.keys_shown() == {"x": True, "y": True}
