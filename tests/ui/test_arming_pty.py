"""The real app in a real terminal: typing in bursts never answers its approvals.

`python -m hello_tui` runs under a pty against the scripted model server, and
the test writes to the terminal as a loaded tmux or a slow ssh link does:
eight letters in one write (so the app reads them in one chunk), then 0.6 s
of nothing, again and again, across the moment the command approval or the
patch review appears and long after it has armed. Nothing may answer it: the
scripted model hears of no verdict until a lone key is pressed after a moment
of quiet, and then every letter typed is in the prompt (Enter sends it, and
the model receives it word for word).

The pauses only shape the delivery; nothing here asserts on time.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from tests.support.scripted_model import call, text, tool_calls

pytestmark = pytest.mark.real_arming  # the arming rule's own times

ROOT = Path(__file__).resolve().parents[2]
PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
# Every answer key of both modals opens some burst: y, a, w, n, r and space.
SENTENCE = (
    "yes, and also rerun all tests with network on, "
    "a new readme note, write it well; reply when done"
)
BURST = 8
GAP = 0.6
ANSI = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]"
)


class Terminal:
    """The app in a pty of 120x40; what it draws is kept as plain text (escapes removed)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the app
            os.execvpe(argv[0], argv, env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self._out = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.fd], [], [], 0.2)
                if ready:
                    data = os.read(self.fd, 65536)
                    if not data:
                        return
                    with self._lock:
                        self._out.extend(data)
            except OSError:
                return

    def shown(self) -> str:
        with self._lock:
            raw = self._out.decode("utf-8", "replace")
        return ANSI.sub("", raw)

    def mark(self) -> int:
        return len(self.shown())

    def wait_for(self, needle: str, since: int = 0, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.shown()[since:]:
            assert time.monotonic() < deadline, f"{needle!r} never appeared"
            time.sleep(0.05)

    def write(self, data: str) -> None:
        os.write(self.fd, data.encode())

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.fd)


def _wait(predicate, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("modal", "title", "answer"),
    [("command", "wants to run a command", "n"), ("review", "Review patch", "a")],
)
def test_bursts_in_a_real_terminal_never_answer_the_modal(
    tmp_path, scripted_server, modal, title, answer
):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    if modal == "command":
        first = tool_calls([call("terminal", {"command": "touch made-by-agent"})])
    else:
        first = tool_calls([call("apply_patch", {"patch": PATCH})])
    server = scripted_server([first, text("Done with that."), text("Noted your message.")])
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "HOME": str(tmp_path / "home"),
    }
    argv = [sys.executable, "-m", "hello_tui", "--repo", str(repo)]
    argv += [
        "--base-url",
        server.base_url,
        "--api-key",
        server.api_key or "sk-scripted",
        "--model",
        "scripted-model",
    ]
    terminal = Terminal(argv, env)
    try:
        terminal.wait_for("shift+tab Mode")  # the footer offers it once the engine is open
        start = terminal.mark()
        terminal.write("change a.txt\r")
        bursts = [SENTENCE[i : i + BURST] for i in range(0, len(SENTENCE), BURST)]
        after_it_showed = 0
        for burst in bursts:
            terminal.write(burst)
            time.sleep(GAP)
            if title in terminal.shown()[start:]:
                after_it_showed += 1
        assert after_it_showed >= 4, "the modal came too late to be typed over"
        # Nothing answered: the model is still waiting for the verdict.
        assert len(server.chat_requests) == 1
        assert not (repo / "made-by-agent").exists()
        assert (repo / "a.txt").read_text() == "one\n"
        # A lone key after a moment of quiet answers.
        time.sleep(1.0)
        terminal.write(answer)
        _wait(lambda: len(server.chat_requests) == 2)
        [result] = [m for m in server.chat_requests[1]["messages"] if m["role"] == "tool"]
        if modal == "command":
            assert not (repo / "made-by-agent").exists()
            assert "declined" in result["content"].lower() or "denied" in result["content"].lower()
        else:
            assert (repo / "a.txt").read_text() == "ONE\n"
        terminal.wait_for("Done with that.", since=start)
        time.sleep(0.5)
        terminal.write("\r")  # send what the prompt holds
        _wait(lambda: len(server.chat_requests) == 3)
        sent = [m for m in server.chat_requests[2]["messages"] if m["role"] == "user"][-1]
        assert sent["content"] == SENTENCE
    finally:
        terminal.close()
