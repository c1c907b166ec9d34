"""The command approval's "allow with network" choice, through the modal and the TUI approver."""

from __future__ import annotations

from typing import Any

from textual import work
from textual.app import App

from hello_tui.screens.approver import TuiApprover
from hello_tui.screens.command_approval import CommandApprovalScreen
from tests.ui.engine_double import armed
from tests.ui.review_fixtures import ScreenApp


async def test_w_allows_the_command_once_with_network():
    app = ScreenApp(CommandApprovalScreen("pip install -e .", "pip is not read-only"))
    async with app.run_test(size=(100, 30)) as pilot:
        await armed(pilot)
        await pilot.press("w")
        await pilot.pause()
    assert app.results == ["network"]


async def test_the_network_button_answers_network():
    app = ScreenApp(CommandApprovalScreen("curl -O https://example.org/x", "curl is not read-only"))
    async with app.run_test(size=(100, 30)) as pilot:
        await armed(pilot)
        await pilot.click("#command-network")
        await pilot.pause()
    assert app.results == ["network"]


class _ApproverApp(App[Any]):
    def __init__(self) -> None:
        super().__init__()
        self.approver = TuiApprover(self)
        self.answers: list[Any] = []

    @work(exclusive=True, group="turn")
    async def ask_command(self, command: str) -> None:
        self.answers.append(await self.approver.approve_command(command, "needs approval"))


async def test_the_tui_approver_passes_the_network_choice_on():
    app = _ApproverApp()
    async with app.run_test(size=(100, 30)) as pilot:
        app.ask_command("pip download requests")
        await pilot.pause()
        assert isinstance(app.screen, CommandApprovalScreen)
        await armed(pilot)
        await pilot.press("w")
        await app.workers.wait_for_complete()
    assert app.answers == ["network"]
