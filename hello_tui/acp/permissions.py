"""The `Approver` for ACP: every patch and command is asked of the client first.

A patch is asked with `session/request_permission` on the tool call that
proposed it, carrying one `{"type": "diff", "path", "oldText", "newText"}`
block per file; a command (or a read of a `.env` file) likewise, with the
reason it needs approval. The options and what they mean:

| optionId       | kind            | patch                              | command                 |
|----------------|-----------------|------------------------------------|-------------------------|
| `allow`        | `allow_once`    | write this patch                   | run it once (offline)   |
| `allow_always` | `allow_always`  | write this and later patches of    | run it unasked for the  |
|                |                 | the session (a high-risk one still | rest of the session     |
|                |                 | asks)                              |                         |
| `reject`       | `reject_once`   | write nothing                      | do not run it           |

Clients that announce `clientCapabilities._meta["hello-tui"]["hunkChoices"]
= true` are offered two more options, with `_`-prefixed kinds (ACP's
extension namespace) so other clients never see them:

- `hunks`, kind `_select_hunks` (patches): its `_meta["hello-tui"]["hunks"]`
  lists every hunk as `{"path", "index", "header", "added", "removed"}`. The
  client answers `{"outcome": "selected", "optionId": "hunks", "_meta":
  {"hello-tui": {"hunks": {"<path>": [<index>, …]}}}}`: only those hunks are
  written. A path left out writes nothing of that file; a listed file without
  hunks (a rename, a binary file) is written whole; nothing chosen writes nothing.
- `network`, kind `_allow_once_network` (commands): run it once with network
  access (every other approved command runs offline).

MCP tool calls (`approve_tool_call`) ask on their tool call with the same
three options (`allow_always`: this tool unasked for the rest of the session);
an MCP server a repository's `.mcp.json` wants to start (`approve_server`)
asks on a tool call of its own (kind `execute`): `allow` starts it for this
session, `allow_always` for good (remembered), `reject` does not start it.

The session's mode is not handled here: the engine puts its mode approver in
front of this one, so in `read-only` nothing reaches the client, and in
`auto-edit` only high-risk patches and commands do.

The tool call that asks is found by pairing: the engine reports
`PatchProposed` / `CommandApprovalNeeded` (with the call's id) right before it
asks the approver, and the prompt loop hands every event to `observe`. A
cancelled turn cancels the waiting request; a `cancelled` outcome from the
client declines, so nothing is written or run.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)
from pydantic import BaseModel

from hello_tui.core.approval import (
    CommandVerdict,
    PatchDecision,
    ServerStartRequest,
    ServerVerdict,
    ToolCallRequest,
    ToolVerdict,
)
from hello_tui.core.events import (
    CommandApprovalNeeded,
    Event,
    PatchProposed,
    ToolCallFinished,
    ToolCallStarted,
)
from hello_tui.core.markdown_fence import fence
from hello_tui.core.terminal_text import safe_text, safe_value

if TYPE_CHECKING:
    from hello_tui.engine.types import PatchPlan, Selection

log = logging.getLogger(__name__)

META_KEY = "hello-tui"
ALLOW, ALLOW_ALWAYS, REJECT, HUNKS, NETWORK = "allow", "allow_always", "reject", "hunks", "network"
# How long to wait for the event that names the asking tool call (it comes right before).
PAIRING_WAIT = 5.0

RequestPermission = Callable[[str, ToolCallUpdate, list[PermissionOption]], Awaitable[Any]]
Notify = Callable[[Any], Awaitable[None]]


def client_offers_hunks(client_meta: dict[str, Any] | None) -> bool:
    ours = (client_meta or {}).get(META_KEY)
    return isinstance(ours, dict) and ours.get("hunkChoices") is True


def _option(option_id: str, name: str, kind: str, meta: dict[str, Any] | None = None) -> Any:
    meta = safe_value(meta)  # a hunk's path and header are the repository's text
    if kind.startswith("_"):
        # The SDK's model lists the spec's kinds only; an extension kind is built as is.
        return PermissionOption.model_construct(
            option_id=option_id, name=name, kind=kind, field_meta=meta
        )
    return PermissionOption(option_id=option_id, name=name, kind=cast(Any, kind), field_meta=meta)


class AcpApprover:
    """Asks the ACP client; one per ACP session."""

    def __init__(
        self,
        request: RequestPermission,
        session_id: str,
        repo: Path,
        *,
        hunk_choices: bool = False,
        notify: Notify | None = None,
    ) -> None:
        self._request = request
        self._notify = notify
        self.session_id = session_id
        self.repo = repo
        self.hunk_choices = hunk_choices
        self.always_patches = False
        self._patches: deque[tuple[tuple[str, ...], str]] = deque()
        self._commands: deque[tuple[str, str]] = deque()
        self._external: deque[tuple[str, str]] = deque()  # MCP tool calls: (tool, call id)
        self._servers_asked = 0
        self._arrived = asyncio.Condition()

    # ------------------------------------------------------------------ pairing

    async def observe(self, event: Event) -> None:
        """Every event of the turn, in order: remembers which tool call is about to ask."""
        if isinstance(event, PatchProposed):
            paths = tuple(str(f.get("path", "")) for f in event.files)
            self._patches.append((paths, event.call_id))
        elif isinstance(event, CommandApprovalNeeded):
            self._commands.append((event.command, event.call_id))
        elif isinstance(event, ToolCallStarted) and event.tool.startswith("mcp__"):
            self._external.append((event.tool, event.call_id))
        elif isinstance(event, ToolCallFinished):
            # A call that finished without asking (e.g. a tool already allowed) asks no more.
            pendings: tuple[deque[tuple[Any, str]], ...] = (
                self._patches,
                self._commands,
                self._external,
            )
            for pending in pendings:
                for item in [i for i in pending if i[1] == event.call_id]:
                    pending.remove(item)
            return
        else:
            return
        async with self._arrived:
            self._arrived.notify_all()

    def forget(self) -> None:
        """A turn ended: nothing of it is still waiting to ask."""
        self._patches.clear()
        self._commands.clear()
        self._external.clear()

    async def _call_id(self, pending: deque[tuple[Any, str]], key: Any, fallback: str) -> str:
        def matches(k: Any) -> bool:
            return key is None or k == key

        def take() -> str | None:
            for item in pending:
                if matches(item[0]):
                    pending.remove(item)
                    return item[1]
            return None

        async with self._arrived:
            try:
                found = await asyncio.wait_for(
                    self._arrived.wait_for(lambda: any(matches(k) for k, _ in pending)),
                    PAIRING_WAIT,
                )
            except TimeoutError:
                found = False
            call_id = take() if found else None
        if call_id is None:
            log.warning("no tool call announced the approval for %r", key)
            return fallback
        return call_id

    # ------------------------------------------------------------------ patches

    async def review_patch(self, plan: PatchPlan) -> PatchDecision:
        paths = tuple(f.path for f in plan.files)
        call_id = await self._call_id(self._patches, paths, "patch")
        if self.always_patches and not plan.risk.high:
            return PatchDecision(accepted=True)
        options = [
            _option(ALLOW, "Allow", "allow_once"),
            _option(ALLOW_ALWAYS, "Allow patches for this session", "allow_always"),
            _option(REJECT, "Reject", "reject_once"),
        ]
        if self.hunk_choices and any(f.hunks for f in plan.files):
            options.append(
                _option(
                    HUNKS, "Choose hunks…", "_select_hunks", {META_KEY: {"hunks": _hunks(plan)}}
                )
            )
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=_patch_title(plan),
            kind="edit",
            status="pending",
            content=[*_risk_content(plan), *self._diffs(plan)],
            locations=[ToolCallLocation(path=str(self.repo / f.path)) for f in plan.files],
        )
        outcome = await self._ask(tool_call, options)
        if outcome is None:
            return PatchDecision(accepted=False, reason="the permission request was cancelled")
        if outcome.option_id == ALLOW:
            return PatchDecision(accepted=True, high_risk_confirmed=True)
        if outcome.option_id == ALLOW_ALWAYS:
            self.always_patches = True
            return PatchDecision(accepted=True, high_risk_confirmed=True)
        if outcome.option_id == HUNKS and self.hunk_choices:
            selection = _selection(plan, outcome.field_meta)
            if selection:
                return PatchDecision(accepted=True, selection=selection, high_risk_confirmed=True)
            return PatchDecision(accepted=False, reason="no hunk was chosen")
        return PatchDecision(accepted=False, reason="rejected in the editor")

    def _diffs(self, plan: PatchPlan) -> list[FileEditToolCallContent]:
        blocks = []
        for f in plan.files:
            target = f.move_to or f.path
            blocks.append(
                FileEditToolCallContent(
                    type="diff",
                    path=str(self.repo / target),
                    old_text=f.old_text,
                    new_text="" if f.op == "delete" else (f.new_text or ""),
                )
            )
        return blocks

    # ------------------------------------------------------------------ commands

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        call_id = await self._call_id(self._commands, command, "command")
        options = [
            _option(ALLOW, "Allow once", "allow_once"),
            _option(ALLOW_ALWAYS, "Allow for this session", "allow_always"),
            _option(REJECT, "Reject", "reject_once"),
        ]
        if self.hunk_choices:
            options.append(_option(NETWORK, "Allow once, with network", "_allow_once_network"))
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=f"Run `{command}`",
            kind="execute",
            status="pending",
            content=[_text(f"Needs approval because {reason}.")],
        )
        outcome = await self._ask(tool_call, options)
        if outcome is None:
            return "deny"
        return {ALLOW: "once", ALLOW_ALWAYS: "session", NETWORK: "network"}.get(
            outcome.option_id, "deny"
        )  # type: ignore[return-value]

    # ------------------------------------------------------------------ MCP

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict:
        """An MCP tool call: asked on the tool call that runs it."""
        # MCP tools run one at a time, right after their ToolCallStarted: the oldest is this one.
        call_id = await self._call_id(self._external, None, "mcp-call")
        options = [
            _option(ALLOW, "Allow once", "allow_once"),
            _option(ALLOW_ALWAYS, "Allow this tool for this session", "allow_always"),
            _option(REJECT, "Reject", "reject_once"),
        ]
        about = f"{request.description}\n\n" if request.description else ""
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=f"{request.server}: {request.tool}",
            kind="other",
            status="pending",
            # Clients show content, not rawInput: the arguments are what is being approved.
            content=[
                _text(f"{about}MCP tool {request.tool} of server '{request.server}'."),
                _text(arguments_text(request.arguments)),
            ],
            raw_input=request.arguments,
        )
        outcome = await self._ask(tool_call, options)
        if outcome is None:
            return "deny"
        verdicts: dict[str, ToolVerdict] = {ALLOW: "once", ALLOW_ALWAYS: "session"}
        return verdicts.get(outcome.option_id, "deny")

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict:
        """A repository's MCP server wants to start: asked on a tool call of its own."""
        self._servers_asked += 1
        call_id = f"mcp-server-{self._servers_asked}-{request.server}"
        title = f"Start MCP server '{request.server}' from {request.origin}"
        names = request.names_line()
        detail = f"It runs: {request.summary}" + (f"\n{names}" if names else "")
        if self._notify is not None:  # the request names a tool call: the client sees it first
            await self._notify(
                _safe(
                    ToolCallStart(
                        session_update="tool_call",
                        tool_call_id=call_id,
                        title=title,
                        kind="execute",
                        status="pending",
                        content=[_text(detail)],
                    )
                )
            )
        options = [
            _option(ALLOW, "Start it for this session", "allow_once"),
            _option(ALLOW_ALWAYS, "Start it now and from now on", "allow_always"),
            _option(REJECT, "Do not start it", "reject_once"),
        ]
        tool_call = ToolCallUpdate(
            tool_call_id=call_id, title=title, kind="execute", status="pending"
        )
        outcome = await self._ask(tool_call, options)
        verdicts: dict[str, ServerVerdict] = {ALLOW: "once", ALLOW_ALWAYS: "always"}
        verdict = verdicts.get(outcome.option_id, "deny") if outcome is not None else "deny"
        if self._notify is not None:
            await self._notify(
                _safe(
                    ToolCallProgress(
                        session_update="tool_call_update",
                        tool_call_id=call_id,
                        status="completed" if verdict != "deny" else "failed",
                    )
                )
            )
        return verdict

    # ------------------------------------------------------------------ the request

    async def _ask(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> AllowedOutcome | None:
        """The option the user chose; None when the request was cancelled or failed."""
        try:
            response = await self._request(self.session_id, _safe(tool_call), options)
        except Exception:  # a client that cannot answer declines (a cancel passes through)
            log.warning("session/request_permission failed", exc_info=True)
            return None
        if not isinstance(response, RequestPermissionResponse):
            return None
        outcome = response.outcome
        return outcome if isinstance(outcome, AllowedOutcome) else None


_Sent = TypeVar("_Sent", bound=BaseModel)


def _safe(message: _Sent) -> _Sent:
    """`message` with every string in it made safe to show (`core.terminal_text`), as the
    session's updates are: the editor draws a question like any update, and a command the
    model wrote, a file the repository named, its lines in a diff or a hunk's header, a
    repository's MCP server all reach it as text. The ids become what the updates said."""
    dumped = message.model_dump(by_alias=True, exclude_unset=True)
    return type(message).model_validate(safe_value(dumped))


ARGUMENT_SHOWN_CHARS = 20_000  # per argument; the rest is counted, not shown


def arguments_text(arguments: dict[str, Any]) -> str:
    """An MCP call's arguments for a person: each one named, its value in a fence that the
    value cannot close (Markdown in a value stays text), long values cut with a count."""
    if not arguments:
        return "Arguments: none."
    parts = ["Arguments:"]
    for name, value in arguments.items():
        shown = (
            value
            if isinstance(value, str)
            else json.dumps(value, ensure_ascii=False, indent=2, default=str)
        )
        if len(shown) > ARGUMENT_SHOWN_CHARS:
            rest = len(shown) - ARGUMENT_SHOWN_CHARS
            shown = f"{shown[:ARGUMENT_SHOWN_CHARS]}\n[… {rest} more characters not shown]"
        parts.append(f"{name}:\n{fence(shown, '')}")
    return "\n\n".join(parts)


def _text(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def _patch_title(plan: PatchPlan) -> str:
    verbs = {"add": "Create", "delete": "Delete", "update": "Edit", "move": "Move"}
    parts = []
    for f in plan.files:
        name = f"{f.path} → {f.move_to}" if f.move_to else f.path
        parts.append(f"{verbs.get(str(f.op), 'Edit')} {name}")
    return "; ".join(parts) or "Apply a patch"


def _risk_content(plan: PatchPlan) -> list[ContentToolCallContent]:
    if not plan.risk.high:
        return []
    reasons = "; ".join(plan.risk.reasons) or "high risk"
    return [_text(f"High-risk patch: {reasons}. Allowing it confirms the risk.")]


def _hunks(plan: PatchPlan) -> list[dict[str, Any]]:
    return [
        {
            "path": f.path,
            "index": h.index,
            "header": h.header,
            "added": len(h.new_lines),
            "removed": len(h.old_lines),
        }
        for f in plan.files
        for h in f.hunks
    ]


def _selection(plan: PatchPlan, meta: dict[str, Any] | None) -> Selection:
    """The client's choice, checked against the plan: unknown paths and indices are dropped."""
    chosen = ((meta or {}).get(META_KEY) or {}).get("hunks")
    if not isinstance(chosen, dict):
        return None
    selection: dict[str, set[int]] = {}
    # The client was shown each path made safe (`_option`); two paths shown alike are
    # neither taken: which one the choice meant cannot be told.
    shown = [safe_text(f.path) for f in plan.files]
    for f, name in zip(plan.files, shown, strict=True):
        wanted = chosen.get(name) if shown.count(name) == 1 else None
        if not isinstance(wanted, list):
            continue  # left out: none of this file
        valid = {h.index for h in f.hunks}
        picked = {i for i in wanted if isinstance(i, int) and i in valid}
        if picked or not f.hunks:  # a file without hunks (a rename, binary) is taken whole
            selection[f.path] = picked
    return selection
