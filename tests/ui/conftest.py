"""UI tests press a decision modal's keys as a person does.

A decision modal counts a typing key as an answer only once no other key has
followed it for a moment (`screens/arming.py`): keys in a rush are typing, for
the prompt. Tests that are about what an answer does, not about how keys
arrive, press one key at a time and give each its moment on the real clock.
The tests of the arming rule itself drive their own clock and deliver key
events directly (`tests/ui/arming_keys.py`), so this does not touch them.

Where arming is not what a test is about, modals arm and settle in a fraction of
the real time (QUICK_ARMING): the same rule, with less of the clock spent
waiting. Tests whose keys must meet the real times say so with
`@pytest.mark.real_arming` (the rule's own tests, type-ahead while a modal arms).
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from hello_tui.screens.decision import SYSTEM_CLOCK, DecisionModal
from tests.ui.engine_double import wait_until

# real: 0.4 s, 0.3 s and 0.05 s
QUICK_ARMING = {"arming_seconds": 0.12, "settle_seconds": 0.1, "burst_seconds": 0.01}


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


@pytest.fixture(autouse=True)
def _quick_arming(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("real_arming") is None:
        for name, seconds in QUICK_ARMING.items():
            monkeypatch.setattr(DecisionModal, name, seconds)
