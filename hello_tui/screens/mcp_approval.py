"""The approval modals for MCP: a call to a server's tool, and starting a repo's server.

Both look like the command-approval modal. A tool call answers with a
ToolVerdict: `y` once, `a` this tool for the session, `r` always for this
server's tool (remembered), `n`/escape deny. A server start answers with a
ServerVerdict: `y` for this session, `r` approve and remember, `n`/escape
deny. Both are DecisionModals: only a lone key after a moment of quiet
answers them; typing goes to the prompt. Focus starts on Deny so a stray
Enter runs nothing.
"""

from __future__ import annotations

import json
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from hello_tui.core.approval import (
    ServerStartRequest,
    ServerVerdict,
    ToolCallRequest,
    ToolVerdict,
)
from hello_tui.screens.decision import DecisionModal

ARGUMENTS_SHOWN = 2000

_CSS = """
{name} {{ align: center middle; }}
{name} > #mcp-dialog {{
    width: 84; max-width: 95%; height: auto; max-height: 90%;
    border: thick $warning; background: $surface; padding: 1 2;
}}
{name} #mcp-title {{ text-style: bold; }}
{name} #mcp-text {{
    background: $boost; padding: 0 1; margin: 1 0; height: auto; max-height: 14;
}}
{name} #mcp-reason {{ height: auto; color: $text-muted; }}
{name} #mcp-buttons {{ height: auto; align-horizontal: right; margin-top: 1; }}
{name} Button {{ margin-left: 1; }}
{name} #arming {{ margin-top: 1; }}
"""

_NAV: list[BindingType] = [
    Binding("left", "app.focus_previous", "Previous button", show=False, id="mcp.left"),
    Binding("right", "app.focus_next", "Next button", show=False, id="mcp.right"),
]


def _arguments(arguments: dict[str, object]) -> str:
    shown = json.dumps(arguments, ensure_ascii=False, indent=2, default=str)
    if len(shown) > ARGUMENTS_SHOWN:
        shown = shown[:ARGUMENTS_SHOWN] + f"\n… ({len(shown) - ARGUMENTS_SHOWN} more characters)"
    return shown


class ToolApprovalScreen(DecisionModal[ToolVerdict]):
    ready_text = "Ready: y once · a for the session · r always · n deny"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "y", "answer('once')", "Allow once", id="mcp-tool.once", tooltip="Call it this time"
        ),
        Binding(
            "a",
            "answer('session')",
            "Allow for session",
            id="mcp-tool.session",
            tooltip="Call this tool without asking until the app closes",
        ),
        Binding(
            "r",
            "answer('always')",
            "Always",
            id="mcp-tool.always",
            tooltip="Call this server's tool without asking from now on (remembered)",
        ),
        Binding("n,escape", "answer('deny')", "Deny", id="mcp-tool.deny", tooltip="Do not call it"),
        *_NAV,
    ]
    DEFAULT_CSS = _CSS.format(name="ToolApprovalScreen")

    def __init__(self, request: ToolCallRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        with Vertical(id="mcp-dialog"):
            yield Static(
                f"The agent wants to call {request.tool} on MCP server '{request.server}'",
                id="mcp-title",
                markup=False,
            )
            yield Static(_arguments(request.arguments), id="mcp-text", markup=False)
            if request.description:
                yield Static(request.description, id="mcp-reason", markup=False)
            with Horizontal(id="mcp-buttons"):
                yield Button("Allow once (y)", id="mcp-once", variant="warning")
                yield Button("For session (a)", id="mcp-session", variant="warning")
                yield Button("Always (r)", id="mcp-always", variant="warning")
                yield Button("Deny (n)", id="mcp-deny", variant="primary")
            yield self.arming_line()

    def on_armed(self) -> None:
        self.query_one("#mcp-deny", Button).focus()

    def action_answer(self, verdict: ToolVerdict) -> None:
        self.dismiss(verdict)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        verdicts: dict[str, ToolVerdict] = {
            "mcp-once": "once",
            "mcp-session": "session",
            "mcp-always": "always",
            "mcp-deny": "deny",
        }
        if event.button.id in verdicts:
            self.dismiss(verdicts[event.button.id])


class ServerApprovalScreen(DecisionModal[ServerVerdict]):
    ready_text = "Ready: y this session · r approve and remember · n deny"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "y", "answer('once')", "This session", id="mcp-server.once", tooltip="Start it now only"
        ),
        Binding(
            "r",
            "answer('always')",
            "Approve",
            id="mcp-server.always",
            tooltip="Start it now and in later sessions (remembered until its definition changes)",
        ),
        Binding(
            "n,escape", "answer('deny')", "Deny", id="mcp-server.deny", tooltip="Do not start it"
        ),
        *_NAV,
    ]
    DEFAULT_CSS = _CSS.format(name="ServerApprovalScreen")

    def __init__(self, request: ServerStartRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        request = self.request
        env = f"\n{request.names_line()}" if request.names_line() else ""
        with Vertical(id="mcp-dialog"):
            yield Static(
                f"{request.origin} wants to start MCP server '{request.server}'",
                id="mcp-title",
                markup=False,
            )
            yield Static(request.summary, id="mcp-text", markup=False)
            yield Static(
                "A repository's server runs code on your machine. Start it only if you trust "
                f"this repository.{env}",
                id="mcp-reason",
                markup=False,
            )
            with Horizontal(id="mcp-buttons"):
                yield Button("This session (y)", id="mcp-once", variant="warning")
                yield Button("Approve (r)", id="mcp-always", variant="warning")
                yield Button("Deny (n)", id="mcp-deny", variant="primary")
            yield self.arming_line()

    def on_armed(self) -> None:
        self.query_one("#mcp-deny", Button).focus()

    def action_answer(self, verdict: ServerVerdict) -> None:
        self.dismiss(verdict)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        verdicts: dict[str, ServerVerdict] = {
            "mcp-once": "once",
            "mcp-always": "always",
            "mcp-deny": "deny",
        }
        if event.button.id in verdicts:
            self.dismiss(verdicts[event.button.id])
