"""Work a command leaves for after its result: forking the next keeper, emptying HOME and TMP.

None of it belongs on a command's critical path: done at once, it would
compete for a CPU with the app's reading and reporting of that command. So
it goes to one background thread, which waits `GRACE` seconds (the result
is on its way by then) and does it. Every job is idempotent and takes the
lock of what it tends: whoever needs the thing first (the next command,
when it comes sooner) does the job itself, and the job then finds nothing
left to do.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable

GRACE = 0.005

log = logging.getLogger(__name__)

_jobs: deque[Callable[[], None]] = deque()
_wake = threading.Condition()
_working = threading.Lock()  # held while jobs run, so `settle` can wait for them
_thread: threading.Thread | None = None


def later(job: Callable[[], None]) -> None:
    """Run `job` in the background shortly, after the current command's result."""
    global _thread
    with _wake:
        _jobs.append(job)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="hello-tui-housekeeping", daemon=True)
            _thread.start()
        _wake.notify()


def settle() -> None:
    """Do every pending job now, and wait for those under way (tests, shutdown)."""
    with _working:
        _run_pending()


def _serve() -> None:
    while True:
        with _wake:
            while not _jobs:
                _wake.wait()
        time.sleep(GRACE)
        with _working:
            _run_pending()


def _run_pending() -> None:
    while True:
        with _wake:
            if not _jobs:
                return
            job = _jobs.popleft()
        try:
            job()
        except Exception:  # one job's failure must not stop the others
            log.debug("housekeeping job failed", exc_info=True)
