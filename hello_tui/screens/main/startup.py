"""Opening the engine after the first frame, the model's start-up check, and `/setup`'s key.

The engine is opened after the first frame so start-up stays fast: the heavy
imports run in a thread, the engine opens on the loop, and what it holds (the
session's chat, board and notices) is posted back as `EngineReady`. A key
saved in the setup dialog goes to the user config, and the engine restarts
with it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from hello_tui.config import Settings
from hello_tui.core.approval import (
    Approver,
    CommandVerdict,
    PatchDecision,
    ServerStartRequest,
    ServerVerdict,
    ToolCallRequest,
    ToolVerdict,
)
from hello_tui.core.display import hint_suffix
from hello_tui.screens.main.host import Host
from hello_tui.screens.main.messages import (
    EngineReady,
    EngineStart,
    PreflightDone,
    PreflightReport,
    TurnState,
)
from hello_tui.screens.main.sessions import SessionController
from hello_tui.screens.main.turns import TurnController

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine

log = logging.getLogger(__name__)

EngineFactory = Callable[[Settings, Approver], Awaitable["Engine"]]
STARTUP_GROUP = "startup"
PREFLIGHT_GROUP = "preflight"


class StateTrackingApprover:
    """Wraps the UI approver so the status bar says "waiting for you" while a modal is open."""

    def __init__(self, host: Host, inner: Approver) -> None:
        self.host = host
        self.inner = inner

    async def review_patch(self, plan: Any) -> PatchDecision:
        self.host.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.review_patch(plan)
        finally:
            self.host.post_message(TurnState("running a tool"))

    async def approve_command(self, command: str, reason: str) -> CommandVerdict:
        self.host.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_command(command, reason)
        finally:
            self.host.post_message(TurnState("running a tool"))

    async def approve_tool_call(self, request: ToolCallRequest) -> ToolVerdict:
        self.host.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_tool_call(request)
        finally:
            self.host.post_message(TurnState("running a tool"))

    async def approve_server(self, request: ServerStartRequest) -> ServerVerdict:
        self.host.post_message(TurnState("waiting for you"))
        try:
            return await self.inner.approve_server(request)
        finally:
            self.host.post_message(TurnState("thinking"))


def default_approver(app: App[Any]) -> Approver:
    """The user answers through modal screens."""
    from hello_tui.screens.approver import TuiApprover

    return TuiApprover(app)


def default_engine_factory(resume: str | None, continue_latest: bool) -> EngineFactory:
    async def open_engine(settings: Settings, approver: Approver) -> Engine:
        from hello_tui.engine.facade import Engine

        return await Engine.open(settings, approver, resume=resume, continue_latest=continue_latest)

    return open_engine


class StartupController:
    def __init__(
        self,
        host: Host,
        turns: TurnController,
        sessions: SessionController,
        engine_factory: EngineFactory,
        approver: Callable[[], Approver],
        *,
        preflight: bool,
        pick_session: bool,
    ) -> None:
        self.host = host
        self.views = host.views
        self.turns = turns
        self.sessions = sessions
        self._engine_factory = engine_factory
        self._approver = approver
        self._run_preflight = preflight
        self._pick_session = pick_session  # `--resume` with no id: the picker once it opens
        self.preflight_report: PreflightReport | None = None

    # ------------------------------------------------------------ the engine
    def apply_theme(self) -> None:
        """The user config's `theme = …`; one that does not exist is named, with those that do."""
        from hello_tui.userconfig import config_path

        name, themes = self.host.settings.theme, self.host.available_themes
        if name in themes:
            self.host.theme = name
        elif name:
            self.views.chat.add(
                "notice",
                f"No theme `{name}` (set in `{config_path()}`); the default is used. "
                f"Themes: {', '.join(sorted(themes))}.",
            )

    def begin(self) -> None:
        """Import the engine off the event loop, then open it on the loop."""
        self.host.run_worker(
            self._import_engine,
            name="import the engine",
            group=STARTUP_GROUP,
            thread=True,
            exit_on_error=False,
        )

    def _import_engine(self) -> None:
        # Heavy imports happen here, off the event loop; the engine opens on the loop.
        import openai  # noqa: F401

        import hello_tui.engine.facade  # noqa: F401

        self.host.call_from_thread(self.open_engine)

    def open_engine(self) -> None:
        self.host.run_worker(
            self._open(), name="open the engine", group=STARTUP_GROUP, exit_on_error=False
        )

    async def _open(self) -> None:
        try:
            engine = await self._engine_factory(self.host.settings, self._approver())
            start = EngineStart(
                engine, engine.display(), await engine.todos(), engine.take_notices()
            )
        except Exception as exc:  # shown on screen and logged; the app stays usable
            log.exception("the engine could not start")
            self.host.post_message(EngineReady(None, f"{type(exc).__name__}: {exc}"))
            return
        self.host.post_message(EngineReady(start))

    def ready(self, message: EngineReady) -> None:
        if message.start is None:
            self.host.engine_error = message.error
            self.views.chat.add("error", f"The agent could not start: {message.error}")
            self.host.set_state("idle")
            return
        self.host.engine = message.start.engine
        self.sessions.show(message.start)
        self.host.set_state("idle")
        if self._run_preflight and self.host.settings.model_configured:
            self.host.run_worker(
                self._preflight(), name="preflight", group=PREFLIGHT_GROUP, exit_on_error=False
            )
        if not self.turns.send_pending() and self._pick_session:
            self._pick_session = False
            self.sessions.pick()

    # ------------------------------------------------------------ the start-up check
    async def _preflight(self) -> None:
        engine = self.host.engine
        assert engine is not None
        result = await engine.preflight()
        self.host.post_message(
            PreflightDone(PreflightReport(result.ok, result.message, result.hint))
        )

    def preflight_done(self, report: PreflightReport) -> None:
        self.preflight_report = report
        if not report.ok:
            hint = hint_suffix(report.message, report.hint)
            self.views.chat.add(
                "error", f"The model did not answer the start-up check: {report.message}{hint}"
            )

    # ------------------------------------------------------------ /setup
    def open_setup(self, problem: str = "") -> None:
        """The setup dialog; a key saved there goes to the user config, and the agent restarts
        with it."""
        from hello_tui.screens.setup_help import SetupHelpScreen
        from hello_tui.userconfig import config_path

        if isinstance(self.host.screen, SetupHelpScreen):
            return
        self.host.push_screen(SetupHelpScreen(problem, str(config_path())), self._setup_done)

    def _setup_done(self, choice: Any) -> None:
        from hello_tui.screens.setup_help import NO_MODEL_HINT

        if choice is not None:
            self.host.run_worker(
                self._save_key(choice),
                name="save key",
                group="setup",
                exclusive=True,
                exit_on_error=False,
            )
        elif not self.host.settings.model_configured:
            self.views.chat.add("notice", NO_MODEL_HINT)

    async def _save_key(self, choice: Any) -> None:
        from hello_tui.screens.setup_help import save_choice
        from hello_tui.userconfig import UserConfigError, config_path

        try:
            settings, saved = await asyncio.to_thread(
                save_choice, self.host.settings, choice, config_path()
            )
        except (OSError, UserConfigError) as exc:
            self.views.chat.add("error", f"The setting could not be saved: {exc}")
            return
        self.host.settings = settings
        self.views.chat.add("notice", saved)
        old, self.host.engine = self.host.engine, None
        if old is not None:
            await old.aclose()
        self.host.engine_error = ""
        self.views.status.model = self.host.settings.model
        self.views.status.configured = self.host.settings.model_configured
        self.host.set_state("starting")
        self.open_engine()
