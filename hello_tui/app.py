"""The full-screen app: wires the agent's events to the chat, trace, todo board, status bar and sidebar.

A turn runs in a Textual worker that iterates `Agent.run_turn` and only posts
messages; the `on_*` handlers own the widgets. Answer deltas are batched in
the worker so a fast stream means a few dozen UI updates a second, not one
per token. Decisions (patch review, command approval) come through the
approver, whose screens are pushed with `push_screen_wait` from inside the
worker. The agent is built after the first frame so start-up stays fast.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from hello_tui.config import ConfigError, Settings
from hello_tui.core import events as ev
from hello_tui.core.approval import Approver, CommandVerdict, PatchDecision
from hello_tui.widgets.chat_log import ChatEntry, ChatView
from hello_tui.widgets.prompt_input import PromptInput
from hello_tui.widgets.sidebar import BackupPick, BackupTree, Sidebar
from hello_tui.widgets.status_bar import StatusBar
from hello_tui.widgets.todo_board import TodoBoard
from hello_tui.widgets.trace import TracePanel

# Answer deltas are flushed to the UI at most this often (seconds).
DELTA_FLUSH_INTERVAL = 0.05
# The worker yields to the event loop at least this often so keys stay responsive.
YIELD_INTERVAL = 0.01
CTRL_C_WINDOW = 2.0


class AgentLike(Protocol):
    """What the app needs from the engine's Agent."""

    session: Any
    protocol: Any

    def run_turn(self, text: str) -> AsyncIterator[ev.Event]: ...


AgentFactory = Callable[[Settings, Approver], AgentLike]
ApproverFactory = Callable[["HelloApp"], Approver]


# ---------------------------------------------------------------- messages


class EngineEvent(Message):
    """One engine event, posted by the turn worker."""

    def __init__(self, event: ev.Event) -> None:
        super().__init__()
        self.event = event


class AnswerChunk(Message):
    """Several AssistantDelta texts joined by the worker."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class TurnState(Message):
    def __init__(self, state: str) -> None:
        super().__init__()
        self.state = state


class EngineReady(Message):
    def __init__(self, agent: AgentLike | None, error: str = "") -> None:
        super().__init__()
        self.agent = agent
        self.error = error


@dataclass
class PreflightReport:
    ok: bool
    message: str
    hint: str


class PreflightDone(Message):
    def __init__(self, report: PreflightReport) -> None:
        super().__init__()
        self.report = report


# ---------------------------------------------------------------- approvals


class StateTrackingApprover:
    """Wraps the UI approver so the status bar says "waiting for you" while a modal is open."""

    def __init__(self, app: HelloApp, inner: Approver) -> None:
        self.app = app
        self.inner = inner

    async def review_patch(self, plan: Any) -> PatchDecision:
        self.app.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.review_patch(plan)
        finally:
            self.app.post_message(TurnState("running a tool"))

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        self.app.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_command(command, reason)
        finally:
            self.app.post_message(TurnState("running a tool"))


def default_approver(app: HelloApp) -> Approver:
    from hello_tui.screens.approver import TuiApprover

    return TuiApprover(app)


def default_agent_factory(resume: str | None, continue_latest: bool) -> AgentFactory:
    def build(settings: Settings, approver: Approver) -> AgentLike:
        from hello_tui.agent.factory import build_agent

        return build_agent(settings, approver, resume=resume, continue_latest=continue_latest)

    return build


def display_entries(display: Iterable[dict[str, Any]]) -> list[ChatEntry]:
    """A session's display list (as saved by the engine) as chat entries."""
    entries = []
    for item in display:
        if not isinstance(item, dict):
            continue
        role = str(item.get("role", "notice"))
        text = item.get("text", item.get("content", ""))
        if not isinstance(text, str) or not text.strip():
            continue
        if role not in ("user", "assistant", "notice", "error", "result"):
            role = "notice"
        entries.append(ChatEntry(role, text))  # type: ignore[arg-type]
    return entries


# ---------------------------------------------------------------- the app


class HelloApp(App[int]):
    TITLE = "hello-tui"
    # Absolute, so subclasses defined elsewhere (tests, benchmarks) find it too.
    CSS_PATH = Path(__file__).with_name("app.tcss")
    ENABLE_COMMAND_PALETTE = True
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = [
        Binding(
            "escape", "cancel_turn", "Cancel turn", id="app.cancel", tooltip="Stop the running turn"
        ),
        Binding(
            "ctrl+b",
            "toggle_sidebar",
            "Sidebar",
            id="app.sidebar",
            tooltip="Notes and backups",
            priority=True,
        ),
        Binding("f1", "help", "Help", id="app.help", tooltip="Keys and commands"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", tooltip="Leave hello-tui", priority=True),
        Binding("ctrl+c", "ctrl_c", "Quit", show=False, id="app.ctrl_c", priority=True),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        agent_factory: AgentFactory | None = None,
        approver_factory: ApproverFactory | None = None,
        resume: str | None = None,
        continue_latest: bool = False,
        preflight: bool = True,
        clock: Callable[[], float] = time.monotonic,
        initial_prompt: str = "",
        welcome: str = "",
    ) -> None:
        super().__init__()
        self.settings = settings
        self._agent_factory = agent_factory or default_agent_factory(resume, continue_latest)
        self._uses_default_factory = agent_factory is None
        self._approver_factory = approver_factory or default_approver
        self._run_preflight = preflight
        self._clock = clock
        self.agent: AgentLike | None = None
        self.turn_worker: Worker | None = None
        self.turn_running = False  # until the turn's last words are on screen
        self._turn_closed = True  # the turn's closing event has been handled
        self._last_ctrl_c = -CTRL_C_WINDOW * 2
        self._pending_prompt: tuple[str, str | None] | None = None  # sent before the agent was up
        self.preflight_report: PreflightReport | None = None
        self.engine_error = ""
        self._initial_prompt = initial_prompt
        self._welcome = welcome

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        # Kept as attributes: handlers also run while a modal is the active screen,
        # where `query_one` would search the modal instead of the main screen.
        self.status = StatusBar(id="status")
        self.status.repo = self.settings.repo.name
        self.status.model = self.settings.model
        self.status.protocol = self.settings.protocol
        self.status.max_steps = self.settings.max_steps
        self.status.state = "starting"
        self.sidebar = Sidebar(id="sidebar")
        self.sidebar.display = False
        self.chat = ChatView(id="chat")
        self.prompt = PromptInput(
            id="prompt", placeholder="Ask for a change… (Enter sends, /help for commands)"
        )
        self.trace = TracePanel(id="trace", clock=self._clock)
        self.todos = TodoBoard(id="todos")
        yield self.status
        with Horizontal(id="body"):
            yield self.sidebar
            with Vertical(id="center"):
                yield self.chat
                yield self.prompt
            with Vertical(id="right"):
                yield self.trace
                yield self.todos
        yield Footer()

    def on_mount(self) -> None:
        self.prompt.focus()
        if self._welcome:
            self.chat.add("notice", self._welcome)
        if self._initial_prompt:
            self.prompt.load_text(self._initial_prompt)
            self.prompt.move_cursor(self.prompt.document.end)
        if not self.settings.model_configured:
            from hello_tui.screens.setup_help import SetupHelpScreen

            self.push_screen(SetupHelpScreen())
        # Build the engine after the first frame: importing the client is the slow part.
        self.call_after_refresh(self._start_engine)

    def _start_engine(self) -> None:
        self._import_engine()

    @work(thread=True, group="startup", exit_on_error=False)
    def _import_engine(self) -> None:
        # Heavy imports happen here, off the event loop; construction follows on the loop.
        import openai  # noqa: F401

        self.call_from_thread(self._build_agent)

    def _build_agent(self) -> None:
        try:
            approver = StateTrackingApprover(self, self._approver_factory(self))
            agent = self._agent_factory(self.settings, approver)
        except Exception as exc:  # noqa: BLE001 - shown on screen, the app stays usable
            self.post_message(EngineReady(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(EngineReady(agent))

    @on(EngineReady)
    async def _engine_ready(self, message: EngineReady) -> None:
        if message.agent is None:
            self.engine_error = message.error
            self.chat.add("error", f"The agent could not start: {message.error}")
            self._set_state("idle")
            return
        self.agent = message.agent
        protocol = getattr(self.agent, "protocol", None)
        if protocol:
            self.status.protocol = str(protocol)
        session = getattr(self.agent, "session", None)
        if session is not None:
            entries = display_entries(getattr(session, "display", []) or [])
            if entries:
                self.chat.load(entries)
            todos = getattr(session, "todos", None)
            if todos:
                self.todos.set_items(todos)
            usage = getattr(session, "usage", None)
            if usage is not None:
                self.status.tokens = int(getattr(usage, "prompt_tokens", 0)) + int(
                    getattr(usage, "completion_tokens", 0)
                )
                self.status.cost = getattr(usage, "cost", None)
        self._set_state("idle")
        if self._run_preflight and self.settings.model_configured:
            self._preflight()
        if self._pending_prompt is not None:
            (text, goal), self._pending_prompt = self._pending_prompt, None
            self._launch(text, goal)

    @work(group="preflight", exit_on_error=False)
    async def _preflight(self) -> None:
        from hello_tui.llm import LLMClient

        client = LLMClient(self.settings)
        try:
            result = await client.preflight()
        finally:
            await client.aclose()
        self.post_message(PreflightDone(PreflightReport(result.ok, result.message, result.hint)))

    @on(PreflightDone)
    def _preflight_done(self, message: PreflightDone) -> None:
        self.preflight_report = message.report
        if not message.report.ok:
            hint = _hint_suffix(message.report.message, message.report.hint)
            self.chat.add(
                "error",
                f"The model did not answer the start-up check: {message.report.message}{hint}",
            )

    # ------------------------------------------------------------ state and bindings
    def _set_state(self, state: str) -> None:
        self.status.state = state
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.turn_running and not self._turn_closed
        return True

    @on(TurnState)
    def _turn_state(self, message: TurnState) -> None:
        if not self._turn_closed:
            self._set_state(message.state)

    # ------------------------------------------------------------ prompt and commands
    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        self.handle_input(message.text)

    def handle_input(self, raw: str) -> None:
        text = raw.strip()
        if not text:
            return
        lowered = text.lower()
        if lowered in (":q", ":quit"):
            self.exit(0)
            return
        if lowered == "/help":
            self.action_help()
            return
        if lowered == "/clear":
            self.action_clear()
            return
        if lowered == "/undo":
            self.action_undo()
            return
        if lowered == "/resume" or lowered.startswith("/resume "):
            session_id = text.strip()[len("/resume") :].strip()
            if session_id:
                self.resume_session(session_id)
            else:
                self.action_resume_list()
            return
        if lowered.startswith(":plan"):
            goal = text[len(":plan") :].strip()
            if not goal:
                self.chat.add("notice", "Usage: `:plan <goal>`")
                return
            self._start_turn(text, plan_goal=goal)
            return
        if text.startswith("/") and " " not in text:
            self.chat.add("notice", f"Unknown command {text}. Type /help for the list.")
            return
        self._start_turn(text)

    def _start_turn(self, text: str, plan_goal: str | None = None) -> None:
        if self.turn_running:
            self.chat.add("notice", "A turn is running; wait for it or press Esc to cancel it.")
            return
        self.chat.add("user", text)
        if self.agent is None:
            if self.engine_error:
                self.chat.add("error", f"No agent: {self.engine_error}")
                return
            self._pending_prompt = (text, plan_goal)
            self.chat.add("notice", "Starting the agent…")
            return
        self._launch(text, plan_goal)

    def _launch(self, text: str, plan_goal: str | None) -> None:
        self.turn_running = True
        self._turn_closed = False
        self._set_state("thinking")
        if plan_goal is not None:
            self.turn_worker = self._run_plan(plan_goal)
        else:
            self.turn_worker = self._run_turn(text)

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_turn(self, text: str) -> None:
        agent = self.agent
        assert agent is not None
        loop = asyncio.get_running_loop()
        pending: list[str] = []
        timer: asyncio.TimerHandle | None = None
        last_yield = time.monotonic()
        finished = False

        def flush() -> None:
            nonlocal timer
            if timer is not None:
                timer.cancel()
                timer = None
            if pending:
                self.post_message(AnswerChunk("".join(pending)))
                pending.clear()

        try:
            async for event in agent.run_turn(text):
                if isinstance(event, ev.AssistantDelta):
                    pending.append(event.text)
                    # Deltas go out together a moment later, however the stream pauses.
                    if timer is None:
                        timer = loop.call_later(DELTA_FLUSH_INTERVAL, flush)
                else:
                    flush()
                    if isinstance(event, (ev.TurnFinished, ev.TurnFailed, ev.TurnCancelled)):
                        finished = True
                    self.post_message(EngineEvent(event))
                now = time.monotonic()
                if now - last_yield >= YIELD_INTERVAL:
                    last_yield = now
                    await asyncio.sleep(0)
        except asyncio.CancelledError:
            flush()
            if not finished:
                self.post_message(EngineEvent(ev.TurnCancelled()))
            raise
        except Exception as exc:  # noqa: BLE001 - an engine bug is shown, never a traceback
            flush()
            self.post_message(EngineEvent(ev.TurnFailed(error=f"{type(exc).__name__}: {exc}")))
            return
        flush()
        if not finished:
            self.post_message(EngineEvent(ev.TurnFinished(answer="", steps=0, reason="ended")))

    @work(exclusive=True, group="turn", exit_on_error=False)
    async def _run_plan(self, goal: str) -> None:
        """`:plan <goal>`: one planning call (no tools, nothing written), shown as the answer."""
        from hello_tui.tools.planner import make_plan

        complete = getattr(getattr(self.agent, "ctx", None), "complete", None)
        try:
            result = await make_plan(goal, None, self.settings, complete)
        except asyncio.CancelledError:
            self.post_message(EngineEvent(ev.TurnCancelled()))
            raise
        if result.status == "error":
            self.post_message(EngineEvent(ev.TurnFailed(error=result.text)))
        else:
            self.post_message(
                EngineEvent(ev.TurnFinished(answer=result.text, steps=0, reason="plan"))
            )

    def action_cancel_turn(self) -> None:
        if self.turn_worker is not None and not self._turn_closed:
            self.turn_worker.cancel()

    # ------------------------------------------------------------ engine events
    @on(AnswerChunk)
    def _answer_chunk(self, message: AnswerChunk) -> None:
        self.chat.stream_write(message.text)

    @on(EngineEvent)
    async def _engine_event(self, message: EngineEvent) -> None:
        event = message.event
        handler = getattr(self, f"_on_{event.kind}", None)
        if handler is not None:
            result = handler(event)
            if asyncio.iscoroutine(result):
                await result

    def _on_TurnStarted(self, event: ev.TurnStarted) -> None:
        self.status.step = 0
        self._set_state("thinking")

    def _on_StepStarted(self, event: ev.StepStarted) -> None:
        self.status.step = event.step
        self.status.max_steps = event.max_steps
        self.trace.step_started(event.step)
        self._set_state("thinking")

    def _on_ThoughtDelta(self, event: ev.ThoughtDelta) -> None:
        self.trace.thought(event.step, event.text)

    def _on_ToolCallStarted(self, event: ev.ToolCallStarted) -> None:
        # Text streamed before a tool call is the model thinking aloud: keep it in the chat.
        self.chat.stream_finish()
        self.trace.tool_started(event.step, event.call_id, event.tool, event.arguments)
        self._set_state("running a tool")

    def _on_ToolOutputDelta(self, event: ev.ToolOutputDelta) -> None:
        self.trace.tool_output(event.call_id, event.text)

    def _on_ToolCallFinished(self, event: ev.ToolCallFinished) -> None:
        self.trace.tool_finished(event.call_id, event.status, event.text, event.duration)
        self._set_state("thinking")

    def _on_PatchProposed(self, event: ev.PatchProposed) -> None:
        self._set_state("waiting for you")

    def _on_PatchResolved(self, event: ev.PatchResolved) -> None:
        lines = [
            event.summary.strip() or ("Patch applied." if event.applied else "Patch not applied.")
        ]
        if event.applied:
            lines.append(f"{event.hunks_applied} hunk(s) applied, {event.hunks_declined} declined.")
        if event.backup_dir:
            lines.append(f"Backup: `{event.backup_dir}`")
        self.chat.add("result", "\n\n".join(lines))
        self.refresh_sidebar()

    def _on_CommandApprovalNeeded(self, event: ev.CommandApprovalNeeded) -> None:
        self._set_state("waiting for you")

    def _on_CommandApprovalResolved(self, event: ev.CommandApprovalResolved) -> None:
        verdicts = {"once": "allowed once", "session": "allowed for this session", "deny": "denied"}
        self.chat.add("notice", f"`{event.command}`: {verdicts.get(event.verdict, event.verdict)}")

    def _on_TodoChanged(self, event: ev.TodoChanged) -> None:
        self.todos.set_items(event.items)

    def _on_NoteWritten(self, event: ev.NoteWritten) -> None:
        self.refresh_sidebar()

    def _on_Usage(self, event: ev.Usage) -> None:
        self.status.tokens = event.session_prompt_tokens + event.session_completion_tokens
        if event.cost is not None:
            self.status.cost = (self.status.cost or 0.0) + event.cost

    def _on_Notice(self, event: ev.Notice) -> None:
        role = "error" if event.level == "error" else "notice"
        self.chat.add(role, event.text)

    def _on_TurnFinished(self, event: ev.TurnFinished) -> None:
        if self._turn_closed:
            return
        streamed = self.chat.stream_finish()
        if not streamed.strip() and event.answer.strip():
            self.chat.add("assistant", event.answer)
        if event.reason == "max_steps":
            self.chat.add("notice", f"Stopped after {event.steps} steps (the step limit).")
        self._end_turn("answered")

    def _on_TurnFailed(self, event: ev.TurnFailed) -> None:
        if self._turn_closed:
            return
        self.chat.stream_finish()
        self.chat.add("error", event.error + _hint_suffix(event.error, event.hint))
        self._end_turn("error")

    def _on_TurnCancelled(self, event: ev.TurnCancelled) -> None:
        if self._turn_closed:
            return
        self.chat.stream_finish()
        self.chat.add("notice", "Turn cancelled.")
        self._end_turn("cancelled")

    def _end_turn(self, trace_status: str) -> None:
        self._turn_closed = True
        self.trace.turn_ended(trace_status)
        self._set_state("idle")
        # The turn is over for the user once its last words are on screen.
        self.chat.call_when_shown(self._turn_shown)

    def _turn_shown(self) -> None:
        self.turn_running = False
        self.refresh_bindings()
        self.prompt.focus()

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR and worker.group in ("startup", "preflight"):
            self.chat.add("error", f"{worker.name}: {worker.error}")
        if (
            worker is self.turn_worker
            and event.state
            in (
                WorkerState.CANCELLED,
                WorkerState.ERROR,
            )
            and not self._turn_closed
        ):
            # The worker ended without its closing event reaching us.
            self.post_message(EngineEvent(ev.TurnCancelled()))

    # ------------------------------------------------------------ actions
    def action_ctrl_c(self) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c <= CTRL_C_WINDOW:
            self.exit(0)
            return
        self._last_ctrl_c = now
        self.notify("Press ctrl+c again to quit.", timeout=CTRL_C_WINDOW)

    def action_help(self) -> None:
        from hello_tui.screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_clear(self) -> None:
        self.chat.clear()
        self.trace.clear()
        self.chat.add("notice", "Chat cleared (the session on disk keeps its history).")

    def action_toggle_sidebar(self) -> None:
        sidebar = self.sidebar
        sidebar.display = not sidebar.display
        self.set_class(sidebar.display, "-sidebar-open")
        if sidebar.display:
            self.refresh_sidebar()
            sidebar.query_one("#notes-list").focus()
        else:
            self.prompt.focus()

    def refresh_sidebar(self) -> None:
        if not self.sidebar.display:
            return
        self.sidebar.set_notes(self.load_notes())
        self.sidebar.set_backups(self.load_backups())

    def load_notes(self) -> list[Any]:
        from hello_tui.store.notes import NoteStore

        try:
            return NoteStore(self.settings.state.notes).list()
        except Exception as exc:  # noqa: BLE001 - a broken notes folder must not break the app
            self.notify(f"Could not read notes: {exc}", severity="error")
            return []

    def load_backups(self) -> list[Any]:
        from hello_tui.patch import list_backups

        try:
            return list_backups(self.settings)
        except Exception as exc:  # noqa: BLE001
            self.notify(f"Could not read backups: {exc}", severity="error")
            return []

    @on(Sidebar.NoteChosen)
    def _open_note(self, message: Sidebar.NoteChosen) -> None:
        from hello_tui.screens.note_viewer import NoteViewerScreen
        from hello_tui.store.notes import NoteError, NoteStore

        try:
            note = NoteStore(self.settings.state.notes).read(message.note_id)
        except NoteError as exc:
            self.notify(str(exc), severity="error")
            return
        meta = f"{note.note_type} · {note.updated_at} · {', '.join(note.tags)}"
        self.push_screen(NoteViewerScreen(note.title, note.content, meta))

    @on(Sidebar.BackupFileChosen)
    def _open_backup(self, message: Sidebar.BackupFileChosen) -> None:
        from hello_tui.screens.backup_diff import BackupDiffScreen

        pick = message.pick
        assert pick.relpath is not None
        old = backup_text(self.settings, pick.backup, pick.relpath)
        if old is None:
            self.notify(f"{pick.backup} holds no copy of {pick.relpath}.", severity="error")
            return
        current = self.settings.repo / pick.relpath
        new = _read_text(current) if current.exists() else ""
        title = f"{pick.relpath}: backup {pick.backup} (left) vs now (right)"
        self.push_screen(BackupDiffScreen(title, old, new, path=pick.relpath))

    @on(BackupTree.RestoreRequested)
    def _restore_requested(self, message: BackupTree.RestoreRequested) -> None:
        self._confirm_restore(message.pick)

    @work(group="restore", exit_on_error=False)
    async def _confirm_restore(self, pick: BackupPick) -> None:
        from hello_tui.patch import restore_from_backup
        from hello_tui.screens.confirm import ConfirmScreen

        if self.turn_running:
            self.notify("Wait for the turn to finish before restoring.", severity="warning")
            return
        what = f"{pick.relpath}" if pick.relpath else "every file of this backup"
        question = ConfirmScreen(
            "Restore from backup?",
            f"Overwrite {what} with the copy saved in {pick.backup}.\n"
            "The current version is backed up first, so /undo brings it back.",
            yes_label="Restore (y)",
            no_label="Cancel (n)",
        )
        if not await self.push_screen_wait(question):
            return
        try:
            result = restore_from_backup(self.settings, pick.backup, pick.relpath)
        except Exception as exc:  # noqa: BLE001 - a failed restore is reported, not raised
            self.chat.add("error", f"Restore failed: {exc}")
            return
        files = ", ".join(result.summary_lines()) or "nothing changed"
        undo = (
            f" (previous version saved in `{result.backup_dir}`; /undo reverts)"
            if result.backup_dir
            else ""
        )
        self.chat.add("result", f"Restored from {pick.backup}: {files}{undo}")
        self.refresh_sidebar()

    def action_undo(self) -> None:
        from hello_tui.patch import undo_last

        if self.turn_running:
            self.chat.add("notice", "Wait for the turn to finish before /undo.")
            return
        try:
            result = undo_last(self.settings)
        except Exception as exc:  # noqa: BLE001 - "nothing to undo" and friends are messages
            self.chat.add("error", f"Undo failed: {exc}")
            return
        files = ", ".join(result.summary_lines()) or "nothing changed"
        self.chat.add("result", f"Undone: {files}")
        self.refresh_sidebar()

    def action_resume_list(self) -> None:
        from hello_tui.store.sessions import SessionStore

        paths = SessionStore(self.settings.state).list()[-10:]
        if not paths:
            self.chat.add("notice", "No saved sessions yet.")
            return
        lines = ["Saved sessions (newest last); switch with `/resume ID`:", ""]
        lines += [f"- `{p.stem}`" for p in paths]
        self.chat.add("notice", "\n".join(lines))

    def resume_session(self, session_id: str) -> None:
        """Switch this window to a saved session: its chat, todos and model history."""
        if self.turn_running:
            self.chat.add("notice", "Finish or cancel (Esc) the running turn first.")
            return
        if not self._uses_default_factory:
            self.chat.add("notice", "This window cannot switch sessions.")
            return
        path = self.settings.state.sessions / f"{session_id}.json"
        if "/" in session_id or not path.is_file():
            self.chat.add("error", f"No saved session `{session_id}`; `/resume` lists them.")
            return
        self._agent_factory = default_agent_factory(session_id, False)
        self.chat.clear()
        self.trace.clear()
        self.todos.set_items([])
        self._build_agent()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Keys and commands", self.action_help)
        yield SystemCommand("Toggle sidebar", "Notes and backups", self.action_toggle_sidebar)
        yield SystemCommand(
            "Undo last patch", "Restore the files of the last patch", self.action_undo
        )
        yield SystemCommand("Clear chat", "Clear the chat and trace", self.action_clear)
        yield SystemCommand("Resume session", "List saved sessions", self.action_resume_list)
        yield SystemCommand(
            "Plan", "Ask for a plan: type :plan <goal> in the prompt", self._prefill_plan
        )
        if self.turn_running:
            yield SystemCommand("Cancel turn", "Stop the running turn", self.action_cancel_turn)

    def _prefill_plan(self) -> None:
        self.prompt.load_text(":plan ")
        self.prompt.move_cursor(self.prompt.document.end)
        self.prompt.focus()


def backup_text(settings: Settings, backup: str, relpath: str) -> str | None:
    """The content a backup holds for `relpath` (None when it holds none)."""
    from hello_tui.patch import read_backup

    data = read_backup(settings, backup, relpath)
    return None if data is None else data.decode("utf-8", errors="replace")


def _read_text(path: Any) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def run_tui(args: Any) -> int:
    """`hello-tui [--repo DIR] [model flags]`: open the app; exit 2 on a configuration error."""
    import sys

    from hello_tui.config import settings_from_args

    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"hello-tui: {exc}", file=sys.stderr)
        return 2
    app = HelloApp(
        settings,
        resume=getattr(args, "resume", None),
        continue_latest=bool(getattr(args, "continue_", False)),
    )
    result = app.run()
    return int(result or 0)


def _hint_suffix(message: str, hint: str) -> str:
    """The hint on a line of its own, unless the message already says it."""
    return f"\nHint: {hint}" if hint and hint not in message else ""
