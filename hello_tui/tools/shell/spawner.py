"""Sandboxed spawner threads: read-only commands start from a thread that is already confined.

Landlock, no_new_privs, capabilities and seccomp filters belong to a thread,
not to the whole process, and a child inherits them from the thread that
started it. So each kind of read-only confinement gets one long-lived
thread of its own that confines itself once (the same steps a child would
run, `child_setup.py`) and then starts commands with plain `subprocess.Popen`,
which can use vfork: no copy of the app's memory, no Python code between fork
and exec, and no ruleset to rebuild for every command. The rest of the
process keeps all its rights.

Approved commands keep the fork-and-confine path: their mount namespace
needs a process of its own (a user namespace cannot be made by a threaded
process), and they are rarer and longer.
"""

from __future__ import annotations

import subprocess
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

MAX_SPAWNERS = 8


class SpawnerThread:
    """One confined thread; `popen` starts a command from it."""

    def __init__(self, confine: Callable[[], None], name: str) -> None:
        self._executor = ThreadPoolExecutor(
            max_workers=1, initializer=confine, thread_name_prefix=f"hello-tui-{name}"
        )
        # Confine now, so a failure shows at once and the ruleset can be closed after.
        self._executor.submit(threading.get_ident).result()

    def popen(self, argv: list[str], **options: Any) -> Future[subprocess.Popen[bytes]]:
        """Start `argv` from the confined thread; the future holds the Popen."""
        start: Callable[..., subprocess.Popen[bytes]] = subprocess.Popen
        return self._executor.submit(start, argv, **options)

    def close(self) -> None:
        self._executor.shutdown(wait=False)


_SPAWNERS: OrderedDict[Hashable, SpawnerThread] = OrderedDict()
_LOCK = threading.Lock()


def spawner_for(key: Hashable, make: Callable[[], SpawnerThread]) -> SpawnerThread:
    """The cached spawner for `key`, made on first use; the least recently used goes first."""
    with _LOCK:
        found = _SPAWNERS.get(key)
        if found is not None:
            _SPAWNERS.move_to_end(key)
            return found
    made = make()
    with _LOCK:
        raced = _SPAWNERS.get(key)
        if raced is not None:  # another caller made one meanwhile: keep theirs
            made.close()
            return raced
        _SPAWNERS[key] = made
        while len(_SPAWNERS) > MAX_SPAWNERS:
            _, old = _SPAWNERS.popitem(last=False)
            old.close()
    return made
