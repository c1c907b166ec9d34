"""The undo stack, kept inside the transaction records themselves.

Two stacks: *applied* (patches and restores that are in effect, newest on top)
and *undone* (what `redo` can bring back). Every committed transaction pushes
one node, and its manifest records the node and both stack tops after it:
- `patch`: the patch this node stands for (its own name for a patch or restore);
- `below`: the node under it on its stack;
- `applied_top`, `undone_top`: the stacks after this transaction.
A patch pushes itself on *applied* and empties *undone*; an undo reverts the
top of *applied* and pushes itself on *undone*; a redo reverts the top of
*undone* and pushes itself on *applied*. Because the stack changes with the
same commit point as the files, a crash can never leave them disagreeing.

The current state is the one in the newest committed record. A pointer into
a damaged record is `lost`: undo and redo stop there with one line naming the
folder, and never skip to an older record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.patch import records
from hello_tui.patch.records import Damaged
from hello_tui.patch.types import PatchError

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Pointer:
    """A node of a stack: the folder name of its record (`lost`: the record is damaged)."""

    name: str
    lost: bool = False  # the real pointer was kept in the damaged record `name`

    def to_json(self) -> dict[str, str]:
        return {"lost": self.name} if self.lost else {"name": self.name}

    @classmethod
    def from_json(cls, raw: Any) -> Pointer | None:
        if raw is None:
            return None
        if isinstance(raw, dict) and isinstance(raw.get("name"), str):
            return cls(raw["name"])
        if isinstance(raw, dict) and isinstance(raw.get("lost"), str):
            return cls(raw["lost"], lost=True)
        raise ValueError("bad stack pointer")


def _dump(p: Pointer | None) -> dict[str, str] | None:
    return None if p is None else p.to_json()


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class StackState:
    """The tops of both stacks."""

    applied_top: Pointer | None = None
    undone_top: Pointer | None = None


class UnreadableRecord(PatchError):
    """Undo or redo needs a record that is damaged or missing; nothing was changed."""


def _unreadable(settings: Settings, name: str, why: str, action: str) -> UnreadableRecord:
    label = records.state_label(settings, settings.state.backups / name)
    return UnreadableRecord(
        f"cannot {action}: the record {label} {why}; nothing was changed. "
        "`hello-tui recover` shows what was found"
    )


def current_state(settings: Settings) -> StackState:
    """The stacks after the newest committed transaction."""
    for folder in reversed(records.record_folders(settings)):
        if not records.is_committed(folder):
            continue
        try:
            manifest = records.read_manifest(folder)
            return StackState(
                Pointer.from_json(manifest.get("applied_top")),
                Pointer.from_json(manifest.get("undone_top")),
            )
        except (FileNotFoundError, Damaged, ValueError):
            lost = Pointer(folder.name, lost=True)
            return StackState(lost, lost)
    return StackState()


def load_node(settings: Settings, pointer: Pointer, action: str) -> dict[str, Any]:
    """The verified, committed record a pointer names; UnreadableRecord otherwise."""
    folder = settings.state.backups / pointer.name
    if pointer.lost:
        raise _unreadable(settings, pointer.name, f"is damaged{_why(folder)}", action)
    if not records.is_committed(folder):
        raise _unreadable(settings, pointer.name, "is missing", action)
    try:
        manifest = records.read_manifest(folder)
        Pointer.from_json(manifest.get("below"))
    except FileNotFoundError:
        raise _unreadable(settings, pointer.name, "has no manifest", action) from None
    except Damaged as exc:
        raise _unreadable(settings, pointer.name, f"is damaged ({exc.why})", action) from None
    except ValueError:
        raise _unreadable(settings, pointer.name, "is damaged (bad stack link)", action) from None
    return manifest


def _why(folder: Path) -> str:
    try:
        records.read_manifest(folder)
    except Damaged as exc:
        return f" ({exc.why})"
    except FileNotFoundError:
        return " (its manifest is missing)"
    return ""


def below_of(manifest: dict[str, Any]) -> Pointer | None:
    return Pointer.from_json(manifest.get("below"))


def patch_fields(state: StackState, name: str) -> dict[str, Any]:
    """A patch or restore: pushed on applied; nothing left to redo."""
    return {
        "patch": name,
        "below": _dump(state.applied_top),
        "applied_top": _dump(Pointer(name)),
        "undone_top": None,
    }


def undo_fields(state: StackState, top: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        "patch": top.get("patch", top["name"]),
        "reverts": top["name"],
        "below": _dump(state.undone_top),
        "applied_top": _dump(below_of(top)),
        "undone_top": _dump(Pointer(name)),
    }


def redo_fields(state: StackState, top: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        "patch": top.get("patch", top["name"]),
        "reverts": top["name"],
        "below": _dump(state.applied_top),
        "applied_top": _dump(Pointer(name)),
        "undone_top": _dump(below_of(top)),
    }


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class ChainWalk:
    """The patches of one stack, top first, as far as its records could be read."""

    patches: list[str]  # the `patch` of every node, top first
    complete: bool  # False when a damaged or missing record cut the walk short
    stopped_at: str | None = None


def walk(settings: Settings, top: Pointer | None, limit: int = 100_000) -> ChainWalk:
    patches: list[str] = []
    pointer = top
    seen: set[str] = set()
    while pointer is not None and len(patches) < limit:
        if pointer.lost or pointer.name in seen:
            return ChainWalk(patches, False, pointer.name)
        seen.add(pointer.name)
        folder: Path = settings.state.backups / pointer.name
        try:
            manifest = records.read_manifest(folder)
            pointer = below_of(manifest)
        except (FileNotFoundError, Damaged, ValueError):
            return ChainWalk(patches, False, folder.name)
        patches.append(str(manifest.get("patch", manifest["name"])))
    return ChainWalk(patches, True)
