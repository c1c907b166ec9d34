"""UI tests press a decision modal's keys as a person does.

A decision modal counts a typing key as an answer only once no other key has
followed it for a moment (`screens/arming.py`): keys in a rush are typing, for
the prompt. Tests that are about what an answer does, not about how keys
arrive, press one key at a time and give each its moment on the real clock.
The tests of the arming rule itself drive their own clock and deliver key
events directly (`tests/ui/arming_keys.py`), so this does not touch them.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from hello_tui.screens.decision import SYSTEM_CLOCK, DecisionModal
from tests.ui.engine_double import wait_until


@pytest.fixture(autouse=True)
def _modal_keys_pressed_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    original = Pilot.press

    async def press(self: Pilot, *keys: str) -> None:
        for key in keys:
            screen = self.app.screen
            await original(self, key)
            if isinstance(screen, DecisionModal) and screen.clock is SYSTEM_CLOCK:
                await wait_until(self, lambda screen=screen: not screen.holding, timeout=10)
                await self.pause()

    monkeypatch.setattr(Pilot, "press", press)
