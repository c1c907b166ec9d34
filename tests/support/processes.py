"""What is running on this machine, for tests that must see a command's processes end."""

from __future__ import annotations

import os
from pathlib import Path


def running(marker: str) -> bool:
    """Is a live process running with `marker` on its command line? (A sandboxed command's
    pids belong to its spawner's PID namespace, so its children are found by what they run.)"""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue  # /proc/self, /proc/sys and the like are not processes
        try:
            cmdline = Path("/proc", entry, "cmdline").read_bytes()
            state = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in ("Z", "X"):
            return True
    return False
