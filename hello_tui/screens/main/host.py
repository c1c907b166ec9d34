"""What the controllers may use of the app: `Host`, and the main screen's widgets (`MainViews`).

The controllers never import the app (it imports them); they are handed an
object with this shape. Keeping it a short Protocol keeps each controller's
reach visible: the engine and settings, the widgets, the status line, and the
handful of Textual services (workers, screens, toasts) they need.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen, ScreenResultCallbackType
from textual.theme import Theme
from textual.worker import Worker

from hello_tui.config import Settings
from hello_tui.widgets.chat_log import ChatView
from hello_tui.widgets.completion import AttachmentChips, CompletionList
from hello_tui.widgets.prompt_input import PromptInput
from hello_tui.widgets.queued_prompts import QueuedPrompts
from hello_tui.widgets.sidebar import Sidebar
from hello_tui.widgets.status_bar import StatusBar
from hello_tui.widgets.todo_board import TodoBoard
from hello_tui.widgets.trace import TracePanel

if TYPE_CHECKING:
    from hello_tui.engine.facade import Engine

R = TypeVar("R")


@dataclass(frozen=True)
class MainViews:
    """The main screen's widgets. Held, not queried: handlers also run while a modal is the
    active screen, where `query_one` would search the modal instead."""

    status: StatusBar
    sidebar: Sidebar
    chat: ChatView
    prompt: PromptInput
    completion: CompletionList
    chips: AttachmentChips
    queued: QueuedPrompts
    trace: TracePanel
    todos: TodoBoard

    @classmethod
    def build(cls, settings: Settings, clock: Callable[[], float]) -> MainViews:
        status = StatusBar(id="status")
        status.repo = settings.repo.name
        status.model = settings.model
        status.configured = settings.model_configured
        status.protocol = settings.protocol
        status.max_steps = settings.max_steps
        status.mode = settings.mode
        status.state = "starting"
        sidebar = Sidebar(id="sidebar")
        sidebar.display = False
        prompt = PromptInput(
            id="prompt", placeholder="Ask for a change… (Enter sends, /help for commands)"
        )
        completion = CompletionList(id="completion")
        prompt.completion = completion
        return cls(
            status=status,
            sidebar=sidebar,
            chat=ChatView(id="chat"),
            prompt=prompt,
            completion=completion,
            chips=AttachmentChips(id="chips"),
            queued=QueuedPrompts(id="queued"),
            trace=TracePanel(id="trace", clock=clock),
            todos=TodoBoard(id="todos"),
        )


class Host(Protocol):
    """The app as its controllers see it."""

    settings: Settings
    engine: Engine | None
    engine_error: str  # why the engine could not start ("" when it did, or has not yet)
    theme: str  # the Textual theme's name

    @property
    def views(self) -> MainViews: ...

    @property
    def screen(self) -> Screen[object]: ...

    @property
    def available_themes(self) -> dict[str, Theme]: ...

    def set_state(self, state: str) -> None:
        """The status bar's turn state; the keys that apply are refreshed with it."""

    def refresh_bindings(self) -> None: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def run_worker(
        self,
        work: Callable[[], Any] | Awaitable[R],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[R]: ...

    def push_screen(
        self,
        screen: Screen[R] | str,
        callback: ScreenResultCallbackType[R] | None = None,
        wait_for_dismiss: bool = False,
        *,
        mode: str | None = None,
    ) -> Any: ...

    async def push_screen_wait(self, screen: Screen[R], *, mode: str | None = None) -> R: ...

    def post_message(self, message: Message) -> bool: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...

    def copy_to_clipboard(self, text: str) -> None: ...

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None: ...
