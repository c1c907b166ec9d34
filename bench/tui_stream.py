"""The app under load, headless (`App.run_test`), against the local scripted model server.

1. Streaming: a 20,000-token answer sent in small chunks as fast as the server
   can. Peer: a plain `openai` client reading the same stream. Printed: the
   ratio app / peer (target <= 1.5x) and the latency of key presses made while
   the answer streams (p95, target <= 50 ms).
2. Resume: a 300-turn session file opened the way `--resume` opens it. Printed:
   time until the history is on screen (target < 2 s) and the process RSS
   (target < 400 MB); peer: the same app started on an empty session.
3. Start-up: process start to first frame of the app (target < 1.5 s); peer: a
   bare Textual app with one Static, started the same way.

Medians of several runs. Run with `python bench/tui_stream.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hello_tui.core.approval import PolicyApprover
from hello_tui.core.display import ChatMessage
from hello_tui.demo.model import ScriptedModelServer, settings_for_server, text
from hello_tui.store.sessions import SessionStore
from hello_tui.tools.registry import ToolRegistry

TOKENS = 20_000
CHUNK_CHARS = 4  # about one token per chunk
TURNS = 300


def _answer() -> str:
    words = []
    for i in range(TOKENS // 2):
        words.append(f"w{i % 97}")
        if i % 60 == 59:
            words.append("\n\n")
    return " ".join(words)


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------- 1. streaming


async def _peer_stream(server: ScriptedModelServer) -> float:
    import openai

    client = openai.AsyncOpenAI(base_url=server.base_url, api_key=server.api_key or "x")
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model="scripted-model",
        messages=[{"role": "user", "content": "write"}],
        stream=True,
    )
    received = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received.append(chunk.choices[0].delta.content)
    elapsed = time.perf_counter() - started
    await client.close()
    return elapsed


async def _text_only_engine(settings, approver):
    from hello_tui.engine.facade import Engine

    return await Engine.open(settings, PolicyApprover(yes=True), registry=ToolRegistry([]))


async def _app_stream(server: ScriptedModelServer, repo: Path) -> tuple[float, list[float]]:
    from textual import events

    from hello_tui.app import HelloApp

    settings = settings_for_server(server, repo)
    app = HelloApp(settings, engine_factory=_text_only_engine, preflight=False)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        while app.engine is None:
            await pilot.pause(0.01)
        handled: list[float] = []
        original = app.prompt._replace_via_keyboard

        def record(*args, **kwargs):
            handled.append(time.perf_counter())
            return original(*args, **kwargs)

        app.prompt._replace_via_keyboard = record  # type: ignore[method-assign]
        app.handle_input("write a long answer")
        started = time.perf_counter()
        while not app.chat.streaming and app.turn_running:
            await asyncio.sleep(0.001)
        while app.turn_running:
            before = len(handled)
            sent = time.perf_counter()
            app.post_message(events.Key("x", "x"))
            while len(handled) == before and app.turn_running:
                await asyncio.sleep(0.001)
            if len(handled) > before:
                latencies.append(handled[-1] - sent)
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - started
        # Sanity: the whole answer reached the chat.
        shown = "\n".join(app.chat.history.plain_lines())
        assert "w96" in shown, "the streamed answer is missing from the chat"
    return elapsed, latencies


def bench_stream(runs: int) -> None:
    answer = _answer()
    app_times, peer_times, latencies = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            with ScriptedModelServer([text(answer, chunk_size=CHUNK_CHARS)] * 1) as server:
                peer_times.append(asyncio.run(_peer_stream(server)))
            with ScriptedModelServer([text(answer, chunk_size=CHUNK_CHARS)]) as server:
                elapsed, lat = asyncio.run(_app_stream(server, Path(tmp)))
                app_times.append(elapsed)
                latencies.extend(lat)
    app_t, peer_t = statistics.median(app_times), statistics.median(peer_times)
    latencies.sort()
    p95 = latencies[int(len(latencies) * 0.95) - 1] if latencies else float("nan")
    print(
        f"stream {TOKENS} tokens: app {app_t:.2f}s, plain client {peer_t:.2f}s, "
        f"ratio {app_t / peer_t:.2f}x (target <= 1.5x)"
    )
    print(
        f"  key presses during the stream: {len(latencies)}, p95 latency "
        f"{p95 * 1000:.0f} ms, max {max(latencies, default=0) * 1000:.0f} ms (target p95 <= 50 ms)"
    )


# ---------------------------------------------------------------- 2. resume


def _write_session(repo: Path, turns: int) -> str:
    from hello_tui.config import load_settings

    settings = load_settings(repo, environ={})
    store = SessionStore(settings.state)
    session = store.new()
    paragraph = (
        "Here is a paragraph of a realistic answer with `code`, **bold** text and "
        "a list of points that goes on for a while. "
    ) * 6
    for t in range(1, turns + 1):
        session.display.append(ChatMessage("user", f"Question {t}: please change x{t}.", t))
        session.display.append(
            ChatMessage(
                "assistant",
                f"{paragraph}\n\n- point one\n- point two\n\n```python\nx{t} = {t}\n```",
                t,
            )
        )
        session.history.append({"role": "user", "content": f"Question {t}"})
        session.history.append({"role": "assistant", "content": paragraph})
    session.turns = turns
    session.save()
    return session.id


RESUME_CHILD = r"""
import asyncio, sys, time, json
started = time.perf_counter()
from hello_tui.app import HelloApp
from hello_tui.demo.model import ScriptedModelServer, settings_for_server

def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024

async def main(repo, resume):
    server = ScriptedModelServer([]).start()
    settings = settings_for_server(server, repo)
    app = HelloApp(settings, resume=resume or None, preflight=False)
    async with app.run_test(size=(120, 40)) as pilot:
        while app.engine is None or not app.chat.idle:
            await pilot.pause(0.005)
        await pilot.pause()
        ready = time.perf_counter() - started
        lines = len(app.chat.history.plain_lines())
        print(json.dumps({"ready": ready, "rss": rss(), "entries": len(app.chat.history.entries),
                          "lines": lines}))
    server.stop()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _child(code: str, *args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_resume(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        sid = _write_session(repo, TURNS)
        resumed = [_child(RESUME_CHILD, str(repo), sid) for _ in range(runs)]
        empty = [_child(RESUME_CHILD, str(repo), "") for _ in range(runs)]
    r_ready = statistics.median(r["ready"] for r in resumed)
    e_ready = statistics.median(r["ready"] for r in empty)
    r_rss = statistics.median(r["rss"] for r in resumed)
    e_rss = statistics.median(r["rss"] for r in empty)
    print(
        f"resume {TURNS} turns ({resumed[0]['entries']} chat entries): ready in {r_ready:.2f}s "
        f"(target < 2 s), RSS {r_rss:.0f} MB (target < 400 MB)"
    )
    print(
        f"  vs an empty session: ready {e_ready:.2f}s (ratio {r_ready / e_ready:.2f}x), "
        f"RSS {e_rss:.0f} MB (ratio {r_rss / e_rss:.2f}x)"
    )


# ---------------------------------------------------------------- 3. start-up


FIRST_FRAME_APP = r"""
import sys, time, tempfile
from pathlib import Path
from hello_tui.app import HelloApp
from hello_tui.config import Settings

class Timed(HelloApp):
    def on_mount(self):
        super().on_mount()
        self.call_after_refresh(self._first_frame)
    def _first_frame(self):
        print("FIRST_FRAME", flush=True)
        self.exit()

repo = Path(tempfile.mkdtemp())
s = Settings(repo=repo, project="r", api_key="x", base_url="http://127.0.0.1:9/v1",
             model="m", provider="custom")
Timed(s, preflight=False).run(headless=True, size=(120, 40))
"""

FIRST_FRAME_PEER = r"""
from textual.app import App
from textual.widgets import Static

class Bare(App):
    def compose(self):
        yield Static("hello")
    def on_mount(self):
        self.call_after_refresh(self._first_frame)
    def _first_frame(self):
        print("FIRST_FRAME", flush=True)
        self.exit()

Bare().run(headless=True, size=(120, 40))
"""


def _first_frame(code: str) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if "FIRST_FRAME" in line:
            elapsed = time.perf_counter() - started
            break
    else:
        raise SystemExit("the app never drew its first frame")
    proc.wait(timeout=30)
    return elapsed


def bench_startup(runs: int) -> None:
    app = statistics.median(_first_frame(FIRST_FRAME_APP) for _ in range(runs))
    peer = statistics.median(_first_frame(FIRST_FRAME_PEER) for _ in range(runs))
    print(
        f"start to first frame: app {app:.2f}s (target < 1.5 s), bare Textual app {peer:.2f}s, "
        f"ratio {app / peer:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=("stream", "resume", "startup"))
    args = parser.parse_args()
    os.environ.pop("LLM_API_KEY", None)
    if args.only in (None, "startup"):
        bench_startup(args.runs)
    if args.only in (None, "resume"):
        bench_resume(args.runs)
    if args.only in (None, "stream"):
        bench_stream(args.runs)


if __name__ == "__main__":
    main()
