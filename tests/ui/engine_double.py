"""The real engine with scripted turns, for the UI mechanics and snapshot tests.

Everything but the model is real: the facade, the turn's task and its one
event queue, cancel, the display record, sessions, notes and backups. Only
the body of a turn is a script of exact events (including ones a model cannot
easily be made to produce, like a turn that never ends): an `asyncio.Event`
in a script makes the turn wait for it, an exception makes the turn fail as a
bug would. The whole-session tests use the real agent and the scripted model
server instead.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hello_tui.agent.loop import Agent
from hello_tui.agent.turn import Turn
from hello_tui.config import Settings
from hello_tui.core import events as ev
from hello_tui.core.approval import Approver, PolicyApprover
from hello_tui.core.display import entries_from_dicts
from hello_tui.engine.facade import Engine
from hello_tui.llm import LLMClient
from hello_tui.store.sessions import Session
from hello_tui.store.transcript import TranscriptLog
from hello_tui.tools.registry import ToolRegistry


@dataclass
class Script:
    """`turns` is a list of event lists, played one per turn."""

    turns: list[list[Any]] = field(default_factory=list)
    received: list[str] = field(default_factory=list)
    cancelled: bool = False


class ScriptedAgent(Agent):
    def __init__(self, *args: Any, owner: ScriptedEngine, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner

    async def _work(self, turn: Turn) -> None:
        script = self.owner.script
        script.received.append(turn.task)
        items = script.turns.pop(0) if script.turns else [ev.TurnFinished(answer="ok", steps=1)]
        try:
            for item in items:
                if isinstance(item, asyncio.Event):
                    await item.wait()
                elif isinstance(item, BaseException):
                    raise item
                elif isinstance(item, ev.TurnStarted):
                    continue  # the real turn has said it
                elif isinstance(item, (ev.TurnFinished, ev.TurnFailed)):
                    answer = item.answer if isinstance(item, ev.TurnFinished) else None
                    await self.end_turn(turn, item, answer)
                    return
                else:
                    self.emit(item)
                    # A real stream waits on the network between events.
                    await asyncio.sleep(0)
        except asyncio.CancelledError:
            script.cancelled = True
            raise
        await self.end_turn(turn, ev.TurnFinished(answer="", steps=0))


class ScriptedEngine(Engine):
    script: Script = Script()

    def _make_agent(self, session: Session, todos: list[dict[str, Any]]) -> Agent:
        return ScriptedAgent(
            self.llm,
            self.registry,
            self.approver,
            session,
            log=TranscriptLog(self.settings.state.logs / f"{session.id}.jsonl"),
            todos=todos,
            owner=self,
        )


def scripted_factory(script: Script, display: Iterable[dict[str, Any]] = ()) -> Any:
    """An engine factory for HelloApp: the scripted engine, its session showing `display`."""

    async def open_engine(settings: Settings, approver: Approver) -> Engine:
        engine = await ScriptedEngine.open(
            settings, approver, llm=LLMClient(settings), registry=ToolRegistry([])
        )
        engine.script = script
        engine.agent.session.display.extend(entries_from_dicts(display))
        return engine

    return open_engine


def fake_settings(tmp_path: Path, *, configured: bool = True, name: str = "demo-repo") -> Settings:
    repo = tmp_path / name
    repo.mkdir(exist_ok=True)
    return Settings(
        repo=repo,
        project=name,
        api_key="sk-test" if configured else None,
        base_url="http://127.0.0.1:9/v1" if configured else "https://api.openai.com/v1",
        model="scripted-model",
        provider="custom" if configured else "openai",
    )


def make_app(
    settings: Settings,
    script: Script | None = None,
    display: Iterable[dict[str, Any]] = (),
    **kwargs: Any,
) -> Any:
    from hello_tui.app import HelloApp

    return HelloApp(
        settings,
        engine_factory=scripted_factory(script or Script(), display),
        approver_factory=lambda app: PolicyApprover(yes=False),
        preflight=False,
        **{"clock": lambda: 0.0, **kwargs},
    )


# A wait's timeout is a guard against a hang, never a measurement: on a loaded machine
# (four test workers on two cores, other builds beside them) a UI step can take many
# times its quiet duration, so every guard is stretched by this factor.
GUARD_SCALE = 6.0


async def wait_until(pilot: Any, predicate: Any, timeout: float = 5.0) -> None:
    """Let the app run until `predicate()` holds (fails the test after `timeout` x GUARD_SCALE).

    It returns as it always did: right after a `pilot.pause`, with `predicate()` true (or at
    once if it already holds). Meanwhile it only sleeps and looks: a pause has every widget
    of the screen answer a callback and forces a repaint, and fifty of those a second while
    a worker or a modal's clock runs cost more CPU than the app under test."""
    if predicate():
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout * GUARD_SCALE
    while True:
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)
        if predicate():
            await pilot.pause(0.02)
            if predicate():
                return


async def steady(pilot: Any, looks: Any) -> None:
    """Let the app run until `looks()` stops changing: geometry a test reads (a scroll
    offset, a region) settles a repaint or two after what moved it (a prompt that grew
    shrinks the chat above it)."""
    seen = None
    for _ in range(200):
        if (now := looks()) == seen:
            return
        seen = now
        await pilot.pause(0.05)
    raise AssertionError("the screen kept changing")


async def armed(pilot: Any, timeout: float = 5.0) -> None:
    """Wait until the active decision modal takes keys (it ignores them while it arms)."""
    await wait_until(pilot, lambda: getattr(pilot.app.screen, "armed", True), timeout=timeout)
    await pilot.pause()  # the focus it moves to its safe choice lands


class DriverWrites:
    """What the app writes to its terminal driver from now on: the escape sequences
    (OSC 52, OSC 9/777, the bell) a real terminal would receive."""

    def __init__(self, app: Any) -> None:
        self.data: list[str] = []
        driver = app._driver
        assert driver is not None
        original = driver.write

        def write(data: str) -> None:
            self.data.append(data)
            original(data)

        driver.write = write

    def osc52(self) -> list[str]:
        """The texts put on the clipboard, decoded."""
        found = []
        for chunk in self.data:
            if chunk.startswith("\x1b]52;c;") and chunk.endswith("\a"):
                found.append(base64.b64decode(chunk[len("\x1b]52;c;") : -1]).decode())
        return found

    def calls(self) -> list[str]:
        """The writes that call the user back (a bell or an OSC 9 / 777 notification)."""
        return [d for d in self.data if d.startswith(("\a", "\x1b]9;", "\x1b]777;"))]


async def main_screen_ready(pilot: Any) -> None:
    """Before a main-screen snapshot: the engine is up and the prompt's cursor is still."""
    app = pilot.app
    await wait_until(pilot, lambda: app.engine is not None)
    app.prompt.cursor_blink = False
    await pilot.pause()


async def deliberately(pilot: Any, *keys: str) -> None:
    """Press keys at a decision modal one at a time, as a person does: each key, then a
    moment with no other, so that it counts (keys in a rush are typing, for the prompt)."""
    for key in keys:
        screen = pilot.app.screen
        await pilot.press(key)
        await wait_until(
            pilot, lambda screen=screen: not getattr(screen, "holding", False), timeout=10
        )
        await pilot.pause()
