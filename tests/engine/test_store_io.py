"""Stores that never block the loop: the buffered transcript, the write-lock wait, async saves."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hello_tui.config import load_settings
from hello_tui.core.display import ChatMessage
from hello_tui.core.events import AssistantDelta, TurnFinished
from hello_tui.store.sessions import SessionStore
from hello_tui.store.transcript import TranscriptLog
from hello_tui.store.write_lock import lock_is_free, wait_until_free, write_when_free


def test_the_transcript_buffers_and_writes_once_per_flush(tmp_path):
    log = TranscriptLog(tmp_path / "logs" / "s.jsonl")
    for i in range(500):
        log.write(AssistantDelta(text=f"t{i}"))
    assert not log.path.exists() and log.pending == 500  # no disk access per delta
    log.flush()
    log.write(TurnFinished(answer="done", steps=1))
    asyncio.run(log.flush_async())
    lines = log.read()
    assert [line["text"] for line in lines[:3]] == ["t0", "t1", "t2"]
    assert len(lines) == 501 and lines[-1]["type"] == "TurnFinished" and log.pending == 0


def test_an_unwritable_transcript_switches_itself_off(tmp_path):
    (tmp_path / "logs").write_text("a file where the folder should be")
    log = TranscriptLog(tmp_path / "logs" / "s.jsonl")
    log.write(AssistantDelta(text="x"))
    log.flush()
    assert log.error is not None and "disabled" in log.error
    log.write(AssistantDelta(text="y"))
    assert log.pending == 0


async def test_flushes_keep_their_order(tmp_path):
    log = TranscriptLog(tmp_path / "s.jsonl")
    flushes = []
    for i in range(20):
        log.write(AssistantDelta(text=str(i)))
        flushes.append(asyncio.ensure_future(log.flush_async()))
    await asyncio.gather(*flushes)
    assert [line["text"] for line in log.read()] == [str(i) for i in range(20)]


def test_lock_is_free_sees_another_process(tmp_path, hold_write_lock):
    settings = load_settings(tmp_path, environ={})
    assert lock_is_free(settings.state.lock_file)
    holder = hold_write_lock(settings)
    assert not lock_is_free(settings.state.lock_file)
    holder.release()
    assert lock_is_free(settings.state.lock_file)


async def test_the_wait_polls_without_blocking_and_cancelling_ends_it(tmp_path, hold_write_lock):
    settings = load_settings(tmp_path, environ={})
    hold_write_lock(settings)
    told: list[str] = []
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    beat = asyncio.ensure_future(ticker())
    wait = asyncio.ensure_future(
        wait_until_free(settings.state.lock_file, lambda: told.append("waiting"), poll=0.02)
    )
    await asyncio.sleep(0.5)
    assert told == ["waiting"] and not wait.done()
    assert ticks > 10  # the loop kept running while it waited
    wait.cancel()
    with pytest.raises(asyncio.CancelledError):
        await wait
    beat.cancel()


async def test_a_write_that_has_begun_finishes_and_reports_before_the_cancel(tmp_path):
    settings = load_settings(tmp_path, environ={})
    started, proceed = threading.Event(), threading.Event()
    target = tmp_path / "written.txt"

    def work() -> str:
        started.set()
        proceed.wait(10)
        target.write_text("done")
        return "result"

    async def caller() -> tuple[str, bool]:
        result = await write_when_free(settings.state.lock_file, work)
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            return result, True
        return result, False

    task = asyncio.ensure_future(caller())
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.05)
    proceed.set()
    assert await task == ("result", True)  # the result, then the cancellation
    assert target.read_text() == "done"


async def test_sessions_save_off_the_loop(tmp_path):
    store = SessionStore(load_settings(tmp_path, environ={}).state)
    session = store.new()
    session.display.append(ChatMessage("user", "hello there"))
    await session.save_async()
    assert store.load(session.id).display == [ChatMessage("user", "hello there")]
    assert store.infos()[0].title == "hello there"
