"""A hand-fed event source standing in for the Agent in UI mechanics tests.

The whole-session tests use the real agent and the scripted model server;
these drive the widgets with exact event sequences (including ones the model
cannot easily be made to produce, like a turn that never ends).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hello_tui.config import Settings
from hello_tui.core import events as ev


@dataclass
class FakeSession:
    id: str = "session-1"
    display: list[dict[str, Any]] = field(default_factory=list)
    todos: list[dict[str, Any]] = field(default_factory=list)


class FakeAgent:
    """`turns` is a list of event lists; an `asyncio.Event` inside a list makes the turn wait on it."""

    protocol = "tools"

    def __init__(self, turns: list[list[Any]] | None = None, display: list[dict] | None = None):
        self.turns = list(turns or [])
        self.session = FakeSession(display=list(display or []))
        self.received: list[str] = []
        self.cancelled = False

    async def run_turn(self, text: str) -> AsyncIterator[ev.Event]:
        self.received.append(text)
        script = self.turns.pop(0) if self.turns else [ev.TurnFinished(answer="ok", steps=1)]
        try:
            for item in script:
                if isinstance(item, asyncio.Event):
                    await item.wait()
                    continue
                yield item
                # A real stream waits on the network between events.
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            self.cancelled = True
            raise


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


def make_app(settings: Settings, agent: FakeAgent, **kwargs: Any):
    from hello_tui.app import HelloApp

    return HelloApp(
        settings,
        agent_factory=lambda s, a: agent,
        approver_factory=lambda app: None,  # type: ignore[arg-type,return-value]
        preflight=False,
        clock=lambda: 0.0,
        **kwargs,
    )


async def wait_until(pilot: Any, predicate: Any, timeout: float = 5.0) -> None:
    """Let the app run until `predicate()` holds (fails the test after `timeout`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.02)
