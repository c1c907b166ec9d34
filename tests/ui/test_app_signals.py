"""SIGTERM and SIGHUP end the app like ctrl+q: the running turn is cancelled and saved."""

from __future__ import annotations

import json
import os
import signal

import pytest

from hello_tui.app import HelloApp
from tests.support.scripted_model import settings_for_server, stall, text
from tests.ui.engine_double import wait_until

TASK = "summarise the repository"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_during_a_stalled_request_saves_and_exits(tmp_path, scripted_server, sig):
    server = scripted_server([stall(3, 60, text("The repository holds a demo and more"))])
    app = HelloApp(settings_for_server(server, tmp_path), preflight=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(pilot, lambda: app.engine is not None, timeout=15)
        app.handle_input(TASK)
        await wait_until(pilot, lambda: len(server.chat_requests) == 1, timeout=15)
        session_id = app.engine.session_id
        os.kill(os.getpid(), sig)
        await wait_until(pilot, lambda: app.return_value is not None, timeout=15)
    assert app.return_value == 128 + int(sig)
    path = tmp_path / ".helloagents" / "sessions" / f"{session_id}.json"
    data = json.loads(path.read_text())
    assert data["history"][0] == {"role": "user", "content": TASK}
    # The handlers are gone with the app: the process's own handling is back.
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.default_int_handler)
    # A headless app shares its process (this test's): no deadline may end that process.
    assert app._stop_signals.deadline is None
