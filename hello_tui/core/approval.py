"""The one interface through which the engine asks the user to decide.

The TUI implements it with modal screens; `exec` and `apply` with a policy
(`--yes` or decline). The engine never knows which one it talks to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:  # the plan is the patch engine's; core only names it
    from hello_tui.patch.types import PatchPlan, Selection


@dataclass
class PatchDecision:
    accepted: bool
    selection: Selection = None  # None = every hunk of every file
    high_risk_confirmed: bool = False
    # Files the user rewrote in $EDITOR during review: path -> new text.
    user_edits: dict[str, str] = field(default_factory=dict)
    reason: str = ""  # shown to the model when declined


# once: run it this time; session: run it unasked until the app closes; network: run
# it this time with network access (every other command runs without network).
CommandVerdict = Literal["once", "session", "network", "deny"]

# once: this call; session: this tool unasked until the app closes; always: this tool of
# this server definition unasked from now on (remembered in the user's state).
ToolVerdict = Literal["once", "session", "always", "deny"]
# always: start it now and from now on (remembered); once: start it for this session only.
ServerVerdict = Literal["always", "once", "deny"]


@dataclass(frozen=True)
class ToolCallRequest:
    """A call to an external (MCP) tool, as the user is asked about it."""

    server: str
    tool: str
    arguments: dict[str, Any]
    description: str = ""


@dataclass(frozen=True)
class ServerStartRequest:
    """A server a repo's configuration wants to start on the user's machine."""

    server: str
    origin: str  # the file that defines it, e.g. .mcp.json
    summary: str  # the command line, or the URL
    env_names: tuple[str, ...] = ()  # the variables its definition sets (values not shown)
    header_names: tuple[str, ...] = ()  # the HTTP headers it sends (values not shown)

    def names_line(self) -> str:
        """What the definition hands the server besides its command line or URL, by name
        only ("" when nothing): the values may be secrets, the names say what is asked."""
        parts = []
        if self.env_names:
            parts.append("sets the environment variables " + ", ".join(self.env_names))
        if self.header_names:
            parts.append("sends the HTTP headers " + ", ".join(self.header_names))
        return ("Its definition " + " and ".join(parts) + ".") if parts else ""


class Approver(Protocol):
    async def review_patch(self, plan: PatchPlan) -> PatchDecision: ...

    async def approve_command(self, command: str, reason: str) -> CommandVerdict: ...

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict: ...

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict: ...


class PolicyApprover:
    """Headless approvals: everything is allowed with --yes, declined otherwise.

    `network=True` lets approved commands use the network too (`once` becomes
    `network`); without it they run offline, even with --yes.
    """

    def __init__(self, yes: bool, network: bool = False) -> None:
        self.yes = yes
        self.network = network

    async def review_patch(self, plan: PatchPlan) -> PatchDecision:
        if self.yes:
            return PatchDecision(accepted=True, high_risk_confirmed=True)
        return PatchDecision(accepted=False, reason="declined: running headless without --yes")

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        if not self.yes:
            return "deny"
        return "network" if self.network else "once"

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict:
        return "once" if self.yes else "deny"

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict:
        # --yes starts a repo's servers for this run; it never approves them for good.
        return "once" if self.yes else "deny"
