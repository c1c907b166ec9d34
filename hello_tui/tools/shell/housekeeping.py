"""Work a command leaves for after its result: forking the next keeper, emptying HOME and TMP.

None of it belongs on a command's critical path: done at once, it would
compete for a CPU with the app's reading and reporting of that command. So
it goes to one background thread, which runs it `GRACE` seconds later (the
result is on its way by then). Even waking that thread at once would hand
the scheduler a chance to take the CPU from the app, so on Linux the
thread sleeps on a timerfd that `later` only arms: the kernel wakes it when
the time is up. Elsewhere a condition wakes it.

Every job is idempotent and takes the lock of what it tends: whoever needs
the thing first (the next command, when it comes sooner) does the job
itself, and the job then finds nothing left to do.
"""

from __future__ import annotations

import ctypes
import logging
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable

GRACE = 0.005

log = logging.getLogger(__name__)

_CLOCK_MONOTONIC = 1
_TFD_CLOEXEC = 0o2000000


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


class _TimerFd:
    """A one-shot kernel timer a thread can sleep on (timerfd, through libc)."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self._settime = libc.timerfd_settime
        fd = libc.timerfd_create(_CLOCK_MONOTONIC, _TFD_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "timerfd_create")
        self.fd = fd
        seconds = int(GRACE)
        self._spec = _Itimerspec(_Timespec(0, 0), _Timespec(seconds, int((GRACE - seconds) * 1e9)))

    def arm(self) -> None:
        if self._settime(self.fd, 0, ctypes.byref(self._spec), None) < 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime")

    def wait(self) -> None:
        select.select([self.fd], [], [])
        try:
            os.read(self.fd, 8)
        except BlockingIOError:
            pass


_jobs: deque[Callable[[], None]] = deque()
_lock = threading.Condition()
_working = threading.Lock()  # held while jobs run, so `settle` can wait for them
_thread: threading.Thread | None = None
_timer: _TimerFd | None = None
_armed = False


def later(job: Callable[[], None]) -> None:
    """Run `job` in the background shortly, after the current command's result."""
    global _armed
    with _lock:
        _jobs.append(job)
        _start()
        if _timer is None:
            _lock.notify()
        elif not _armed:
            _timer.arm()
            _armed = True


def settle() -> None:
    """Do every pending job now, and wait for those under way (tests, shutdown)."""
    with _working:
        _run_pending()


def _start() -> None:
    """The thread, on first use (under `_lock`)."""
    global _thread, _timer
    if _thread is not None and _thread.is_alive():
        return
    if _timer is None:
        try:
            _timer = _TimerFd()
        except (OSError, AttributeError):  # no timerfd here: a condition wakes the thread
            _timer = None
    _thread = threading.Thread(target=_serve, name="hello-tui-housekeeping", daemon=True)
    _thread.start()


def _serve() -> None:
    global _armed
    while True:
        if _timer is not None:
            _timer.wait()
            with _lock:
                _armed = False
        else:
            with _lock:
                while not _jobs:
                    _lock.wait()
            time.sleep(GRACE)
        with _working:
            _run_pending()


def _run_pending() -> None:
    while True:
        with _lock:
            if not _jobs:
                return
            job = _jobs.popleft()
        try:
            job()
        except Exception:  # one job's failure must not stop the others
            log.debug("housekeeping job failed", exc_info=True)
