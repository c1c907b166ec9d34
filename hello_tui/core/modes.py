"""Permission modes, enforced where decisions are made: an approver wrapper.

The engine facade hands the tools a `ModeApprover` around the caller's approver, so the
mode acts on every patch and every command that would need the user, whatever
the prompt says:

- `ask`: every decision goes to the user (the wrapped approver);
- `auto-edit`: a patch within the limits (the planner did not mark it
  high-risk) is accepted without asking; it is still planned, backed up,
  noted and undoable by the normal commit path. High-risk patches and every
  command that needs approval still go to the user;
- `read-only`: every patch, every command that would need approval and every
  MCP tool call (an outside tool may change anything) is declined without
  asking (read-only commands never reach the approver).

Starting an MCP server is the user's decision in every mode.

The mode is read on each decision, so switching it mid-session takes effect at
once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hello_tui.config import MODES, Mode, parse_mode
from hello_tui.core.approval import (
    Approver,
    CommandVerdict,
    PatchDecision,
    ServerStartRequest,
    ServerVerdict,
    ToolCallRequest,
    ToolVerdict,
)

if TYPE_CHECKING:
    from hello_tui.patch.types import PatchPlan

__all__ = ["MODES", "Mode", "ModeApprover", "next_mode", "parse_mode"]

READ_ONLY_PATCH_REASON = (
    "the session is in read-only (plan) mode, so nothing may be written. Describe the "
    "change as a plan instead; the user can switch mode and ask for it to be carried out"
)
READ_ONLY_COMMAND_REASON = "read-only (plan) mode: commands that need approval are not run"

# Said to the model at the top of every turn in read-only mode (the refusals above hold anyway).
READ_ONLY_PROMPT = (
    "You are in read-only (plan) mode. Explore the repository with read-only tools and "
    "answer with a plan: the files to change and how, step by step. Do not propose "
    "patches or run commands that change anything: they will be declined. The user can "
    "switch to another mode and ask you to carry the plan out."
)

# A patch the mode accepted on its own: (plan) -> None, so the UI can show what was written.
OnAutoAccept = Callable[["PatchPlan"], None]


def next_mode(mode: str) -> Mode:
    """The mode after `mode` in the shift+tab cycle: ask -> auto-edit -> read-only -> ask."""
    index = MODES.index(mode) if mode in MODES else -1
    return MODES[(index + 1) % len(MODES)]  # type: ignore[return-value]


class ModeApprover:
    """Answers for the mode first; asks the wrapped approver only when the mode says so."""

    def __init__(
        self,
        inner: Approver,
        mode: Callable[[], str],
        on_auto_accept: OnAutoAccept | None = None,
    ) -> None:
        self.inner = inner
        self._mode = mode
        self.on_auto_accept = on_auto_accept

    @property
    def mode(self) -> str:
        return self._mode()

    async def review_patch(self, plan: PatchPlan) -> PatchDecision:
        mode = self.mode
        if mode == "read-only":
            return PatchDecision(accepted=False, reason=READ_ONLY_PATCH_REASON)
        if mode == "auto-edit" and not plan.risk.high:
            if self.on_auto_accept is not None:
                self.on_auto_accept(plan)
            return PatchDecision(accepted=True)
        return await self.inner.review_patch(plan)

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        if self.mode == "read-only":
            return "deny"
        return await self.inner.approve_command(command, reason)

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict:
        if self.mode == "read-only":
            return "deny"
        return await self.inner.approve_tool_call(request)

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict:
        return await self.inner.approve_server(request)
