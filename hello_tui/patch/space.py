"""Free-space check before a transaction's first write.

Each filesystem a transaction writes to must have room for the new bytes, the
backups that cannot be hard links, the records, and a margin; otherwise the
transaction is refused before anything is written. The check is an estimate
(a write can still fail), which is why the transaction can also roll back
without new space.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from hello_tui.patch.types import PatchError

MARGIN_BYTES = 1 << 20
BLOCK = 4096  # every file rounds up to at least one block


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def device_of(path: Path) -> tuple[int, Path]:
    """The st_dev of the nearest existing folder at or above `path`, and that folder."""
    probe = path
    while True:
        try:
            return os.stat(probe).st_dev, probe
        except FileNotFoundError:
            if probe.parent == probe:
                raise
            probe = probe.parent


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class SpaceNeeds:
    """Bytes to be written, per filesystem, checked against the free space."""

    by_device: dict[int, int] = field(default_factory=dict)
    where: dict[int, Path] = field(default_factory=dict)

    def add(self, path: Path, size: int) -> None:
        dev, existing = device_of(path)
        rounded = (size + BLOCK - 1) // BLOCK * BLOCK + BLOCK
        self.by_device[dev] = self.by_device.get(dev, 0) + rounded
        self.where.setdefault(dev, existing)

    def check(self, label: str) -> None:
        for dev, need in self.by_device.items():
            folder = self.where[dev]
            need += MARGIN_BYTES
            try:
                have = free_bytes(folder)
            except OSError:
                continue  # statvfs unsupported here: the write itself will tell
            if have < need:
                raise PatchError(
                    f"not enough free space to write {label}: about {_mb(need)} needed "
                    f"(new files, backups and a margin), {_mb(have)} free on the device "
                    f"holding {folder}; nothing was changed"
                )


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"
