"""Folder listings for the policy's walks, kept while a folder is unchanged.

Judging `rg foo` or `grep -r foo .` reads every folder below the working one, looking
for env files (10,000 files: a few milliseconds, on every such command). A folder's
listing changes only with its modification time (POSIX updates it on every entry made,
removed or renamed), so a listing is reused while the device, inode and mtime of the
folder the path leads to are the same: one `stat` per folder instead of reading it.

A listing is kept only for a folder last changed more than `RACY_NS` ago. That is git's
"racy" rule: timestamps are coarse (a clock tick), and a folder changed again within the
same tick as the listing would keep its mtime and hide the change.
"""

from __future__ import annotations

import os
import threading
import time

RACY_NS = 2_000_000_000
MAX_FOLDERS = 50_000  # then the cache starts over: a bound, not a working set

_cache: dict[str, tuple[int, int, int, list[str], list[str]]] = {}
_lock = threading.Lock()


def listing(folder: str) -> tuple[list[str], list[str]]:
    """(every name in `folder`, the names of its subfolders that are not links)."""
    try:
        # The folder the path leads to, as scandir reads it: a walk may start at a link
        # (`grep -r x link`), whose own times never change with its target's entries.
        st = os.stat(folder)
    except OSError:
        return [], []
    stamp = (st.st_dev, st.st_ino, st.st_mtime_ns)
    kept = _cache.get(folder)
    if kept is not None and kept[:3] == stamp:
        return kept[3], kept[4]
    try:
        with os.scandir(folder) as found:
            entries = list(found)
    except OSError:
        return [], []
    names = [e.name for e in entries]
    folders = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
    if time.time_ns() - st.st_mtime_ns > RACY_NS:
        with _lock:
            if len(_cache) >= MAX_FOLDERS:
                _cache.clear()
            _cache[folder] = (*stamp, names, folders)
    return names, folders
