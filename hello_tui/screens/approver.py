"""TuiApprover: the Approver protocol answered by the user through modal screens.

The engine's turn runs as a task started from a Textual worker (it inherits the
worker's context); there `push_screen_wait` suspends the turn until the user
decides, while the app keeps handling input.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App
from textual.screen import Screen
from textual.worker import NoActiveWorker, get_current_worker

from hello_tui.config import Settings
from hello_tui.core.approval import (
    CommandVerdict,
    PatchDecision,
    ServerStartRequest,
    ServerVerdict,
    ToolCallRequest,
    ToolVerdict,
)
from hello_tui.engine.types import PatchPlan
from hello_tui.screens.command_approval import USERS_OWN_COMMAND, CommandApprovalScreen
from hello_tui.screens.mcp_approval import ServerApprovalScreen, ToolApprovalScreen
from hello_tui.screens.review import PatchReviewScreen, ReplanFn


def engine_replan(settings: Settings) -> ReplanFn:
    """The engine's re-planner, bound to the repository's settings."""

    def replan(plan: PatchPlan, edits: dict[str, str]) -> PatchPlan:
        from hello_tui.engine.facade import replan_with_edits

        return replan_with_edits(plan, settings, edits)

    return replan


class TuiApprover:
    """Asks the user: the review modal for patches, the approval modal for commands."""

    def __init__(
        self,
        app: App[Any],
        settings: Settings | None = None,
        replan: ReplanFn | None = None,
    ) -> None:
        self.app = app
        # How the review recomputes a plan from the user's $EDITOR version: the
        # patch engine when settings are known (given, or the app's own).
        settings = settings or getattr(app, "settings", None)
        if replan is None and isinstance(settings, Settings):
            replan = engine_replan(settings)
        self.replan = replan

    async def review_patch(self, plan: PatchPlan) -> PatchDecision:
        decision = await self._ask(PatchReviewScreen(plan, replan=self.replan))
        if isinstance(decision, PatchDecision):
            return decision
        return PatchDecision(accepted=False, reason="the review closed without a decision")

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        screen = CommandApprovalScreen(command, reason, by_user=USERS_OWN_COMMAND.get())
        verdict = await self._ask(screen)
        if verdict in ("once", "session", "network"):
            return verdict
        return "deny"

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict:
        verdict = await self._ask(ToolApprovalScreen(request))
        if verdict in ("once", "session", "always"):
            return verdict
        return "deny"

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict:
        verdict = await self._ask(ServerApprovalScreen(request))
        if verdict in ("once", "always"):
            return verdict
        return "deny"

    async def _ask(self, screen: Screen[Any]) -> Any:
        try:
            return await self._wait_for(screen)
        except asyncio.CancelledError:
            # The turn was interrupted while the user was deciding: the question is moot.
            self._close(screen)
            raise

    def _close(self, screen: Screen[Any]) -> None:
        """Take `screen` (and anything it opened on top of it) off the stack."""
        stack = self.app.screen_stack
        if screen not in stack:
            return
        for _ in range(len(stack) - stack.index(screen)):
            self.app.pop_screen()

    async def _wait_for(self, screen: Screen[Any]) -> Any:
        try:
            get_current_worker()
        except NoActiveWorker:
            # Called on the app's loop outside a worker (a handler, a test):
            # wait on the dismiss callback instead of push_screen_wait.
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def resolve(result: Any) -> None:
                if not future.done():
                    future.set_result(result)

            self.app.push_screen(screen, resolve)
            return await future
        return await self.app.push_screen_wait(screen)
