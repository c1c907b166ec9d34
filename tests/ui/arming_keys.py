"""Keys as a terminal delivers them, and a clock the test steps, for the decision modals.

`ManualClock` is an `ArmingClock` whose time moves only when the test says:
`advance()` lets time pass *watched* (the modals tick every step, each tick
handled before the next), `stall()` lets it pass unwatched, as when the UI
loop stood still. Key events get the stamps the driver would have given them
(the time of the read), so a burst is keys with one stamp, and keys queued
during a stall carry stamps from inside it.
"""

from __future__ import annotations

import asyncio
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from textual import _time, events, on
from textual.app import App, ComposeResult
from textual.message_pump import MessagePump

from hello_tui.screens.decision import ARMING_TICK, DecisionModal, TypeAhead
from hello_tui.widgets.prompt_input import PromptInput
from tests.ui.engine_double import GUARD_SCALE, wait_until


class _Ticker:
    def __init__(self, clock: ManualClock, owner: MessagePump, callback: Callable[[], Any]):
        self.clock = clock
        self.owner = owner
        self.callback = callback

    def stop(self) -> None:
        if self in self.clock.tickers:
            self.clock.tickers.remove(self)

    async def run(self) -> None:
        done = asyncio.get_running_loop().create_future()

        async def tick() -> None:
            try:
                result = self.callback()
                if asyncio.iscoroutine(result):
                    await result
            finally:
                done.set_result(None)

        if self.owner.call_later(tick):
            await asyncio.wait_for(done, timeout=30)


class ManualClock:
    """Time that moves only when the test moves it (it starts at Textual's now)."""

    def __init__(self) -> None:
        self._now = _time.get_time()
        self.tickers: list[_Ticker] = []

    def now(self) -> float:
        return self._now

    def every(self, owner: MessagePump, seconds: float, callback: Callable[[], Any]) -> _Ticker:
        ticker = _Ticker(self, owner, callback)
        self.tickers.append(ticker)
        return ticker

    async def tick(self) -> None:
        """Every waiting modal looks at the clock once, now."""
        for ticker in list(self.tickers):
            await ticker.run()

    async def advance(self, seconds: float) -> None:
        """Let `seconds` pass with the app running: a tick every ARMING_TICK."""
        left = seconds
        while left > 1e-9:
            step = min(ARMING_TICK, left)
            self._now += step
            left -= step
            await self.tick()

    def stall(self, seconds: float) -> None:
        """Let `seconds` pass with the app standing still: no tick sees them."""
        self._now += seconds


def key_name(character: str) -> str:
    """The key name Textual's driver gives a character (`,` is "comma", Enter "enter")."""
    if character == "\r":
        return "enter"
    if character == "\x7f":
        return "backspace"
    if character.isalnum():
        return character
    return unicodedata.name(character).lower().replace("-", "_").replace(" ", "_")


def keys(text: str, stamp: float) -> list[events.Key]:
    """`text` as the driver parses one read(): every key carries the read's stamp."""
    made = []
    for character in text:
        event = events.Key(key_name(character), None if character == "\r" else character)
        event.time = stamp
        made.append(event)
    return made


def paste(text: str, stamp: float) -> events.Paste:
    event = events.Paste(text)
    event.time = stamp
    return event


async def settled(pilot: Any, rounds: int = 3) -> None:
    """Every message the app and the screen's widgets had, and those they post in turn
    (to the prompt, to a binding), handled: `rounds` passes over the whole screen.

    No idle-detecting sleep as in `pilot.pause()`: nothing here waits on real time
    (the clock is manual), so waiting for the queues alone is exact, and 20x faster.
    """
    for _ in range(rounds):
        await pilot._wait_for_screen()
        await asyncio.sleep(0)


async def modal_shown(pilot: Any, kind: type[DecisionModal[Any]], timeout: float = 20) -> Any:
    """Wait until a `kind` modal is the screen, mounted and ticking on the manual clock."""
    app = pilot.app
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout * GUARD_SCALE

    def shown() -> bool:
        return isinstance(app.screen, kind) and app.screen.is_mounted

    # The engine works in real time until the modal shows: sleep and look, and pause the
    # pilot (every widget answers, a repaint) only once it is there, as `wait_until` does.
    while not shown():
        if loop.time() > deadline:
            raise AssertionError(f"no {kind.__name__} in time")
        await asyncio.sleep(0.02)
        if shown():
            await pilot.pause(0.02)
    await settled(pilot)
    return app.screen


async def deliver(pilot: Any, delivered: Iterable[events.Event]) -> None:
    """Hand events to the app as its driver does, and wait until they have been handled.

    Events that reach a decision modal are counted by it; the others go to the prompt.
    """
    app = pilot.app
    batch = list(delivered)
    screen = app.screen
    modal = screen if isinstance(screen, DecisionModal) else None
    seen = modal.gate.keys_seen if modal is not None else 0
    for event in batch:
        app.post_message(event)
    if modal is not None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 15 * GUARD_SCALE
        while modal.gate.keys_seen < seen + len(batch) and app.screen is modal:
            if loop.time() > deadline:
                raise AssertionError("the modal never saw the keys")
            await settled(pilot, rounds=1)
    await settled(pilot)


class PromptHost(App[None]):
    """A prompt, and a decision modal shown on demand: what the modal refuses as
    type-ahead lands in the prompt."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__()
        self.arming_clock = clock
        self.answers: list[Any] = []

    def compose(self) -> ComposeResult:
        yield PromptInput(id="prompt")

    def on_mount(self) -> None:
        self.prompt.focus()

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @on(TypeAhead)
    def _type_ahead(self, message: TypeAhead) -> None:
        self.prompt.take_type_ahead(message.key, message.character, message.pasted)

    async def show(self, pilot: Any, modal: DecisionModal[Any]) -> None:
        self.push_screen(modal, self.answers.append)
        await wait_until(pilot, lambda: self.screen is modal and modal.is_mounted)
        await settled(pilot)
