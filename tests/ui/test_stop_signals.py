"""A stop signal ends the app even when its way out hangs (a terminal that is gone)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading

from hello_tui.screens.main.stop_signals import StopSignals


async def test_a_hung_way_out_still_ends_with_the_signals_status():
    asked: list[int] = []
    ended = threading.Event()
    codes: list[int] = []

    def hard_exit(code: int) -> None:
        codes.append(code)
        ended.set()

    # exit_app never ends, as Textual's way out on a terminal that is gone
    stops = StopSignals(asked.append, on_terminal=lambda: True, grace=0.05, hard_exit=hard_exit)
    stops.install()
    try:
        os.kill(os.getpid(), signal.SIGHUP)
        for _ in range(200):
            if asked:
                break
            await asyncio.sleep(0.01)
        assert asked == [128 + signal.SIGHUP]  # the app's own way out was asked first
        assert await asyncio.to_thread(ended.wait, 10)
        assert codes == [128 + signal.SIGHUP]
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal starts no second deadline
        for _ in range(200):
            if len(asked) == 2:
                break
            await asyncio.sleep(0.01)
        assert asked[-1] == 128 + signal.SIGTERM and codes == [128 + signal.SIGHUP]
    finally:
        stops.remove()


async def test_a_way_out_that_ends_in_time_never_meets_the_deadline():
    codes: list[int] = []
    stops = StopSignals(
        lambda code: None, on_terminal=lambda: True, grace=30, hard_exit=codes.append
    )
    stops.install()
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(200):
            if stops.deadline is not None:
                break
            await asyncio.sleep(0.01)
        assert stops.deadline is not None and stops.deadline.daemon
        stops.deadline.cancel()  # as if the process had ended: the timer never fires
        stops.deadline.join(5)
        assert codes == []
    finally:
        stops.remove()
