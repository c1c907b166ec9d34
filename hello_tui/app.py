"""The full-screen app: composes the main screen, owns its keys, routes messages to controllers.

`HelloApp` is deliberately thin: it builds the widgets, hands them to the controllers
(`hello_tui.screens.main`) and turns bindings and messages into one call each. It talks
to the engine through the facade only (`hello_tui.engine`), the event and approval types
(`hello_tui.core`) and the settings. Decisions come through the approver.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import TextArea
from textual.worker import Worker, WorkerState

from hello_tui.config import ConfigError, Settings
from hello_tui.core import logs
from hello_tui.core.approval import Approver
from hello_tui.notify import TerminalNotifier
from hello_tui.screens.decision import SYSTEM_CLOCK, ArmingClock, TypeAhead
from hello_tui.screens.main.attention import Attention
from hello_tui.screens.main.crash_report import CrashReport
from hello_tui.screens.main.engine_events import EngineEventView
from hello_tui.screens.main.host import MainViews
from hello_tui.screens.main.keys import MAIN_BINDINGS, CtrlC
from hello_tui.screens.main.library import LibraryController
from hello_tui.screens.main.messages import (
    AnswerChunk,
    EngineEvent,
    EngineReady,
    PreflightDone,
    PreflightReport,
    TurnState,
)
from hello_tui.screens.main.models import ModelController
from hello_tui.screens.main.prompt import PromptController
from hello_tui.screens.main.sessions import SessionController
from hello_tui.screens.main.startup import (
    EngineFactory,
    StartupController,
    StateTrackingApprover,
    default_approver,
    default_engine_factory,
)
from hello_tui.screens.main.stop_signals import StopSignals
from hello_tui.screens.main.turns import TurnController
from hello_tui.screens.main.writes import WriteController
from hello_tui.widgets.completion import CompletionList
from hello_tui.widgets.footer import SteadyFooter
from hello_tui.widgets.prompt_input import PromptInput
from hello_tui.widgets.sidebar import BackupTree, Sidebar

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine

log = logging.getLogger(__name__)

ApproverFactory = Callable[["HelloApp"], Approver]


class HelloApp(App[int]):
    TITLE = "hello-tui"
    # Absolute, so subclasses defined elsewhere (tests, benchmarks) find it too.
    CSS_PATH = Path(__file__).with_name("app.tcss")
    ENABLE_COMMAND_PALETTE = True
    # Where decision modals read the time (tests give a clock they step themselves).
    arming_clock: ArmingClock = SYSTEM_CLOCK
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = MAIN_BINDINGS
    prompt_ctl: PromptController  # made last: the turn and the prompt call each other

    def __init__(
        self,
        settings: Settings,
        *,
        engine_factory: EngineFactory | None = None,
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
        self.engine: Engine | None = None
        self.engine_error = ""
        self._clock = clock
        self._initial_prompt = initial_prompt
        self._welcome = welcome
        self._stop_signals = StopSignals(self.exit, on_terminal=lambda: not self.is_headless)
        self.error_console = self.crash_report = CrashReport()
        # Calls the user back (bell / desktop notification) only while the terminal is not
        # focused; decision modals already announced are not announced again.
        self.notifier = TerminalNotifier(
            settings.notifications,
            write=self._write_to_terminal,
            focused=lambda: self.app_focus,
            environ=os.environ,
            title=f"hello-tui ({settings.repo.name})",
        )
        self.views = views = MainViews.build(settings, clock)
        views.prompt.take_queued = lambda: self.prompt_ctl.edit_queued()
        # The widgets by name too (app.chat, app.prompt, …), as tests and tools read them.
        self.status, self.sidebar, self.chat = views.status, views.sidebar, views.chat
        self.prompt, self.completion, self.chips = views.prompt, views.completion, views.chips
        self.queued, self.trace, self.todos = views.queued, views.trace, views.todos
        approver_factory = approver_factory or default_approver
        self.library = LibraryController(self)
        self.turns = TurnController(
            self,
            EngineEventView(self, self.library.refresh),
            self.notifier,
            attachments=lambda text: self.prompt_ctl.attachments(text),
            on_idle=lambda interrupted: self.prompt_ctl.after_turn(interrupted),
        )
        self.sessions = SessionController(self, self.turns)
        self.writes = WriteController(self, self.turns, self.library.refresh)
        self.models = ModelController(self)
        self.startup = StartupController(
            self,
            self.turns,
            self.sessions,
            engine_factory or default_engine_factory(resume or None, continue_latest),
            lambda: StateTrackingApprover(self, approver_factory(self)),
            preflight=preflight,
            pick_session=resume == "",  # `--resume` with no id: a fresh session, then the picker
        )
        self.prompt_ctl = PromptController(self, self.turns, self.startup.open_setup)
        self.prompt_ctl.set_commands(
            {
                "help": lambda args: self.action_help(),
                "model": self.models.model_command,
                "mode": self.models.mode_command,
                "resume": lambda args: self.sessions.resume(args) if args else self.sessions.pick(),
                "new": lambda args: self.sessions.new(),
                "clear": lambda args: self.sessions.clear(),
                "copy": self.prompt_ctl.copy,
                "undo": lambda args: self.writes.undo(),
                "redo": lambda args: self.writes.redo(),
                "compact": lambda args: self.writes.compact(),
                "mcp": self.prompt_ctl.show_mcp_servers,
                "init": self.prompt_ctl.init,
                "setup": lambda args: self.startup.open_setup(),
            }
        )
        self.attention = Attention(self.notifier)
        self.ctrl_c = CtrlC(self, self.turns, self.action_cancel_turn, clock=clock)

    # ------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        views = self.views
        yield views.status
        with Horizontal(id="body"):
            yield views.sidebar
            with Vertical(id="center"):
                yield views.chat
                yield views.completion
                yield views.chips
                yield views.queued
                yield views.prompt
            with Vertical(id="right"):
                yield views.trace
                yield views.todos
        yield SteadyFooter()

    def on_mount(self) -> None:
        prompt = self.views.prompt
        prompt.focus()
        self.screen_change_signal.subscribe(self, self.attention.screen_changed)
        if self._welcome:
            self.views.chat.add("notice", self._welcome)
        self.startup.apply_theme()
        if self._initial_prompt:
            prompt.load_text(self._initial_prompt)
            prompt.move_cursor(prompt.document.end)
        if self.settings.model_configured:
            # Open the engine after the first frame: importing the client is the slow part.
            self.call_after_refresh(self.startup.begin)
        else:
            # An after-refresh callback waits on the current screen's refresh, and the setup
            # dialog may be closed before it ever refreshes: schedule it on the app instead.
            self.startup.open_setup()
            self.call_later(self.startup.begin)
        self._stop_signals.install()

    async def on_unmount(self) -> None:
        self._stop_signals.remove()
        if self.engine is not None:
            await self.engine.aclose()  # cancels a running turn and saves the session

    # ------------------------------------------------------------ state and bindings
    @property
    def turn_running(self) -> bool:
        """True from a turn's start until its last words are on screen."""
        return self.turns.running

    @property
    def preflight_report(self) -> PreflightReport | None:
        return self.startup.preflight_report

    def set_state(self, state: str) -> None:
        self.views.status.state = state
        self.refresh_bindings()

    def refresh_bindings(self) -> None:
        # A message (the engine ready, a turn's end) may come after the last screen closed.
        if self.screen_stack:
            super().refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_turn":
            return self.turns.interruptible or self.writes.waiting is not None
        if action == "cycle_mode":
            # Only on the main screen: modals (the review's shift+tab) keep the key.
            return len(self.screen_stack) == 1 and self.engine is not None
        if action in ("page_chat", "toggle_fold"):
            return len(self.screen_stack) == 1  # a modal's own keys stay its own
        if action == "drop_queued":
            return bool(self.views.queued.items)
        return True

    # ------------------------------------------------------------ messages
    @on(EngineReady)
    def _engine_ready(self, message: EngineReady) -> None:
        self.startup.ready(message)

    @on(PreflightDone)
    def _preflight_done(self, message: PreflightDone) -> None:
        self.startup.preflight_done(message.report)

    @on(TurnState)
    def _turn_state(self, message: TurnState) -> None:
        self.turns.turn_state(message.state)

    @on(AnswerChunk)
    def _answer_chunk(self, message: AnswerChunk) -> None:
        self.turns.answer_chunk(message.text)

    @on(EngineEvent)
    def _engine_event(self, message: EngineEvent) -> None:
        self.turns.engine_event(message.event)

    @on(TypeAhead)
    def _type_ahead(self, message: TypeAhead) -> None:
        # Keys a decision modal refused were typed for the prompt: they go there.
        self.views.prompt.take_type_ahead(message.key, message.character, message.pasted)

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        self.handle_input(message.text)

    @on(TextArea.Changed, "#prompt")
    def _prompt_changed(self, event: TextArea.Changed) -> None:
        self.prompt_ctl.update_completion()

    @on(CompletionList.Chosen)
    def _completion_chosen(self, message: CompletionList.Chosen) -> None:
        self.prompt_ctl.completion_chosen(message)

    @on(Sidebar.NoteChosen)
    def _note_chosen(self, message: Sidebar.NoteChosen) -> None:
        self.library.open_note(message.note_id)

    @on(Sidebar.BackupFileChosen)
    def _backup_chosen(self, message: Sidebar.BackupFileChosen) -> None:
        self.library.open_backup(message.pick)

    @on(BackupTree.RestoreRequested)
    def _restore_requested(self, message: BackupTree.RestoreRequested) -> None:
        self.writes.restore(message.pick)

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR and worker.group in ("startup", "preflight"):
            log.error("%s failed", worker.name, exc_info=worker.error)
            self.views.chat.add("error", f"{worker.name}: {worker.error}")
        self.turns.worker_changed(worker, event.state)

    def handle_input(self, raw: str) -> None:
        """A line as if typed into the prompt and sent."""
        self.prompt_ctl.submit(raw)

    # ------------------------------------------------------------ actions
    def action_cancel_turn(self) -> None:
        self.writes.cancel_wait()
        self.turns.cancel()

    def action_ctrl_c(self) -> None:
        self.ctrl_c.press()

    def action_drop_queued(self) -> None:
        self.prompt_ctl.drop_queued()

    def action_cycle_mode(self) -> None:
        self.models.cycle_mode()

    def action_page_chat(self, direction: int) -> None:
        """PgUp / PgDn on the main screen: the chat scrolls, the focus stays where it is."""
        if direction < 0:
            self.views.chat.scroll_page_up(animate=False)
        else:
            self.views.chat.scroll_page_down(animate=False)

    def action_toggle_fold(self) -> None:
        if not self.views.chat.toggle_newest_fold():
            self.notify("Nothing in the chat to fold or unfold.", severity="warning")

    def action_toggle_sidebar(self) -> None:
        sidebar = self.views.sidebar
        sidebar.display = not sidebar.display
        self.set_class(sidebar.display, "-sidebar-open")
        if sidebar.display:
            self.library.refresh()
            sidebar.query_one("#notes-list").focus()
        else:
            self.views.prompt.focus()

    def action_help(self) -> None:
        from hello_tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.help_text()))

    def help_text(self) -> str:
        """The help page, from the command table and the real bindings of every screen."""
        from hello_tui.screens.help import help_page

        return help_page(self.BINDINGS)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Keys and commands", self.action_help)
        yield SystemCommand("Toggle sidebar", "Notes and backups", self.action_toggle_sidebar)
        yield SystemCommand(
            "Undo last patch", "Restore the files of the last patch", self.writes.undo
        )
        yield SystemCommand("Clear chat", "Clear the chat and trace", self.sessions.clear)
        yield SystemCommand("Resume session", "List saved sessions", self.sessions.pick)
        yield SystemCommand(
            "Plan", "Ask for a plan: type :plan <goal> in the prompt", self.prompt_ctl.prefill_plan
        )
        if self.turn_running:
            yield SystemCommand("Cancel turn", "Stop the running turn", self.action_cancel_turn)

    def deliver_screenshot(
        self, filename: str | None = None, path: str | None = None, time_format: str | None = None
    ) -> str | None:
        """The palette's "Save screenshot" writes into the state folder (a ~/Downloads may
        not exist) and says where."""
        if path is None:
            folder = self.settings.state.ensure() / "screenshots"
            folder.mkdir(exist_ok=True)
            path = str(folder)
        key = super().deliver_screenshot(filename, path, time_format)
        self.notify(f"Screenshot saved in {path}", title="Screenshot")
        return key

    # ------------------------------------------------------------ the terminal and errors
    def _write_to_terminal(self, data: str) -> None:
        if self._driver is not None:
            self._driver.write(data)

    def _handle_exception(self, error: Exception) -> None:
        # A bug in a handler ends the app (Textual's rule). Textual has no public hook for it
        # (textual#2818): its traceback goes to the log, and `CrashReport` prints one line.
        log.critical("unhandled error in the app", exc_info=error)
        self.crash_report.crashed = True
        super()._handle_exception(error)


def run_tui(args: Any) -> int:
    """`hello-tui [--repo DIR] [model flags]`: open the app; exit 2 on a configuration error."""
    import sys

    from hello_tui.config import settings_from_args

    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"hello-tui: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings)
    app = HelloApp(
        settings,
        resume=getattr(args, "resume", None),
        continue_latest=bool(getattr(args, "continue_", False)),
    )
    return int(app.run() or 0)
