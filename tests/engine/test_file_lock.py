"""core/file_lock: waits and times out like filelock, re-enters in one thread, and locks
against filelock itself in another process (both are flock on the same file)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from hello_tui.core.file_lock import FileLock, Timeout
from tests.conftest import WriteLockHolder


def test_a_held_lock_times_out_with_a_timeout_error(tmp_path):
    path = tmp_path / "x.lock"
    holder = FileLock(path)
    holder.acquire()
    other = FileLock(path, timeout=0.1)
    start = time.monotonic()
    with pytest.raises(Timeout) as caught:
        other.acquire()
    assert time.monotonic() - start >= 0.1
    assert isinstance(caught.value, TimeoutError) and caught.value.lock_file == str(path)
    with pytest.raises(Timeout):
        other.acquire(blocking=False)
    holder.release()
    other.acquire(blocking=False)
    assert other.is_locked
    other.release()
    assert not other.is_locked and path.exists()  # left in place for the next waiter


def test_the_same_lock_re_enters_in_its_thread_and_blocks_other_threads(tmp_path):
    lock = FileLock(tmp_path / "x.lock", timeout=0.1)
    with lock, lock:
        outcome: list[str] = []

        def other_thread() -> None:
            try:
                lock.acquire()
            except Timeout:
                outcome.append("waited")
            else:
                outcome.append("entered")
                lock.release()

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        assert outcome == ["waited"]
        assert lock.is_locked
    assert not lock.is_locked
    with FileLock(tmp_path / "x.lock", timeout=0):
        pass


def test_a_lock_file_unlinked_while_held_is_locked_afresh(tmp_path):
    path = tmp_path / "x.lock"
    first = FileLock(path)
    first.acquire()
    os.unlink(path)
    second = FileLock(path, timeout=0)
    second.acquire()  # a new file: the old inode no longer guards anything reachable
    second.release()
    first.release()


def test_it_excludes_a_filelock_held_in_another_process(tmp_path):
    path = tmp_path / "x.lock"
    holder = WriteLockHolder(path)
    try:
        with pytest.raises(Timeout):
            FileLock(path, timeout=0.2).acquire()
    finally:
        holder.release()
    with FileLock(path, timeout=5):
        pass


def test_a_filelock_in_another_process_waits_for_it(tmp_path):
    path = tmp_path / "x.lock"
    child = (
        "import sys, filelock\n"
        "try:\n"
        "    filelock.FileLock(sys.argv[1], timeout=0.2).acquire()\n"
        "except filelock.Timeout:\n"
        "    print('busy')\n"
        "else:\n"
        "    print('free')\n"
    )
    command = [sys.executable, "-c", child, str(path)]
    with FileLock(path):
        held = subprocess.run(command, capture_output=True, text=True, check=False)
    freed = subprocess.run(command, capture_output=True, text=True, check=False)
    assert (held.stdout.strip(), freed.stdout.strip()) == ("busy", "free"), held.stderr
