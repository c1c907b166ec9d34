"""How the terminal tool judges a command: off the event loop, and saying nothing of outside."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext
from hello_tui.tools.shell.policy import classify
from hello_tui.tools.shell.runner import Begun
from hello_tui.tools.terminal import TerminalArgs, TerminalTool
from tests.support.processes import running


class Declines:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def review_patch(self, plan):
        raise AssertionError("the terminal proposes no patches")

    async def approve_command(self, command: str, reason: str) -> str:
        self.asked.append(command)
        return "deny"


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "payroll-2026-q3.xlsx").write_text("x")
    (outside / "nested").mkdir()
    (outside / "nested" / "id_rsa-backup").write_text("x")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("a\n")
    os.symlink(outside, repo / "shared")
    return {"repo": repo.resolve(), "outside": outside.resolve()}


def ctx_for(repo: Path) -> ToolContext:
    return ToolContext(settings=load_settings(repo, environ={}), approver=Declines())


@pytest.mark.parametrize(
    "command",
    [
        "cat shared/*",
        "cat */*.xlsx",
        "ls s*/*",
        "head */*/*",
        "wc -l ./*/p*",
        "wc -l {a.txt,shared/*}",
        "grep -r x shared",
        "cat shared/../../outside/*",
    ],
)
async def test_a_refusal_never_names_what_lies_outside(world, command):
    result = await TerminalTool().run(TerminalArgs(command=command), ctx_for(world["repo"]))
    assert result.data["verdict"] == "refuse"
    shown = result.text + repr(result.data)
    for leaked in ("payroll", "id_rsa", "nested", str(world["outside"])):
        assert leaked not in shown, shown


async def test_commands_are_judged_off_the_event_loop(world):
    """While the policy works, the loop keeps serving other tasks.

    The injected classifier waits for a flag that only a task on the loop
    sets: on the loop's own thread it would wait in vain (the guard's timeout
    ends the wait; it is no measure of speed).
    """
    flag = threading.Event()
    seen: dict[str, object] = {}

    def slow_classify(*args, **kwargs):
        seen["thread"] = threading.current_thread() is threading.main_thread()
        seen["loop_ran"] = flag.wait(timeout=60)
        return classify(*args, **kwargs)

    async def the_rest_of_the_app():
        while not flag.is_set():
            await asyncio.sleep(0)
            if "thread" in seen:
                flag.set()

    tool = TerminalTool()
    tool.classify = slow_classify  # type: ignore[method-assign]
    other = asyncio.create_task(the_rest_of_the_app())
    result = await tool.run(TerminalArgs(command="cat a.txt"), ctx_for(world["repo"]))
    other.cancel()
    assert seen == {"thread": False, "loop_ran": True}
    assert result.data["stdout"] == "a\n"


async def test_a_command_cancelled_while_it_is_judged_leaves_nothing_behind(world):
    started, release = threading.Event(), threading.Event()

    def held_classify(*args, **kwargs):
        started.set()
        release.wait(timeout=60)
        return classify(*args, **kwargs)

    tool = TerminalTool()
    tool.classify = held_classify  # type: ignore[method-assign]
    task = asyncio.create_task(
        tool.run(TerminalArgs(command="touch made-anyway"), ctx_for(world["repo"]))
    )
    while not started.is_set() and not task.done():
        await asyncio.sleep(0.01)
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (world["repo"] / "made-anyway").exists()
    # The next command still runs: the scope of the cancelled one was closed.
    result = await TerminalTool().run(TerminalArgs(command="cat a.txt"), ctx_for(world["repo"]))
    assert result.data["stdout"] == "a\n"


@pytest.mark.parametrize("sandbox", ["auto", "off"])
async def test_a_read_only_command_started_as_its_caller_left_is_stopped(
    world, sandbox, monkeypatch
):
    # A command the policy lets run starts in the thread that judged it; when the
    # caller was cancelled meanwhile, nothing follows it, so it must be stopped.
    marker = f"follow-{os.getpid()}-{sandbox}.txt"  # no one else's
    (world["repo"] / marker).write_text("")
    judging, release, abandoned = threading.Event(), threading.Event(), threading.Event()

    def held_classify(*args, **kwargs):
        judging.set()
        release.wait(timeout=60)
        return classify(*args, **kwargs)

    abandon = Begun.abandon

    def abandon_and_tell(self):
        try:
            abandon(self)
        finally:
            abandoned.set()

    monkeypatch.setattr(Begun, "abandon", abandon_and_tell, raising=True)
    tool = TerminalTool()
    tool.classify = held_classify  # type: ignore[method-assign]
    ctx = ToolContext(
        settings=load_settings(world["repo"], environ={"CODE_AGENT_SANDBOX": sandbox}),
        approver=Declines(),
    )
    task = asyncio.create_task(tool.run(TerminalArgs(command=f"tail -f {marker}"), ctx))
    while not judging.is_set() and not task.done():
        await asyncio.sleep(0.01)
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await asyncio.to_thread(abandoned.wait, 10)
    # The child forked ahead may exec the command a moment after it was handed over, and
    # the keeper stops it then: gone, and still gone a while later.
    assert await stays_stopped(marker)


async def stays_stopped(marker: str, settle: float = 0.5, timeout: float = 10.0) -> bool:
    """No process follows `marker` for `settle` seconds on end, within `timeout`."""
    loop = asyncio.get_running_loop()
    deadline, quiet_since = loop.time() + timeout, None
    while loop.time() < deadline:
        if running(marker):
            quiet_since = None
        elif quiet_since is None:
            quiet_since = loop.time()
        elif loop.time() - quiet_since >= settle:
            return True
        await asyncio.sleep(0.02)
    return False
