"""The sidebar: notes (newest first, type labels, a filter) and backups (folders with their files).

A "Patch applied" note's label ends with the lines its diff added and removed.

It only shows what the app gives it and reports what the user picks; opening a
note, diffing a backup and restoring are the app's job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Label, OptionList, Tree
from textual.widgets.option_list import Option

if TYPE_CHECKING:  # the engine's types load with the engine, after the first frame
    from hello_tui.engine.types import DiffSummary


TYPE_COLOURS = {
    "action": "#e0af68",
    "blocker": "#f7768e",
    "conclusion": "#9ece6a",
    "task_state": "#7aa2f7",
    "reference": "#bb9af7",
    "general": "#7f849c",
}


@dataclass(frozen=True)
class BackupPick:
    backup: str
    relpath: str | None  # None = the whole folder


def _note_sort_key(note: Any) -> str:
    return str(getattr(note, "updated_at", "") or getattr(note, "created_at", "") or "")


def _patch_counts(summary: DiffSummary | None) -> list[tuple[str, str]]:
    """` +3 −1` after a patch note's title: the lines its diff added and removed."""
    if summary is None:
        return []
    return [(f" +{summary.added}", "#9ece6a"), (f" −{summary.removed}", "#f7768e")]


class NotesList(OptionList):
    BINDINGS = [
        Binding("enter", "select", "Open note", id="notes.open", tooltip="Read the note"),
    ]


class BackupTree(Tree[BackupPick]):
    BINDINGS = [
        Binding("R", "restore", "Restore", id="backups.restore", tooltip="Restore file or folder"),
    ]

    class RestoreRequested(Message):
        def __init__(self, pick: BackupPick) -> None:
            super().__init__()
            self.pick = pick

    def action_restore(self) -> None:
        node = self.cursor_node
        if node is not None and node.data is not None:
            self.post_message(self.RestoreRequested(node.data))


class Sidebar(Vertical):
    DEFAULT_CSS = """
    Sidebar { width: 34; dock: left; border-right: vkey $panel-lighten-2; padding: 0 0; }
    Sidebar .section { text-style: bold; color: $accent; padding: 0 1; }
    Sidebar #notes-filter { height: 1; border: none; padding: 0 1; margin: 0 0; }
    Sidebar #notes-list { height: 1fr; border: none; }
    Sidebar #backups-tree { height: 1fr; }
    """

    class NoteChosen(Message):
        def __init__(self, note_id: str) -> None:
            super().__init__()
            self.note_id = note_id

    class BackupFileChosen(Message):
        def __init__(self, pick: BackupPick) -> None:
            super().__init__()
            self.pick = pick

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.notes: list[Any] = []
        self.patches: dict[str, DiffSummary] = {}
        self.backups: list[Any] = []

    def compose(self):
        yield Label("Notes", classes="section")
        yield Input(placeholder="filter notes…", id="notes-filter")
        yield NotesList(id="notes-list")
        yield Label("Backups  (R restores)", classes="section")
        tree: BackupTree = BackupTree("backups", id="backups-tree")
        tree.show_root = False
        yield tree

    # notes -------------------------------------------------------------
    def set_notes(
        self, notes: Sequence[Any], patches: Mapping[str, DiffSummary] | None = None
    ) -> None:
        """`patches`: what each "Patch applied" note's diff changed, by note id."""
        self.notes = sorted(notes, key=_note_sort_key, reverse=True)
        self.patches = dict(patches or {})
        self._show_notes()

    def _show_notes(self) -> None:
        query = self.query_one("#notes-filter", Input).value.strip().lower()
        options = []
        for note in self.notes:
            note_type = str(getattr(note, "note_type", "general"))
            title = str(getattr(note, "title", note))
            haystack = f"{title} {note_type} {' '.join(getattr(note, 'tags', []) or [])}".lower()
            if query and query not in haystack:
                continue
            label = Text.assemble(
                (f"{note_type[:10]:<10} ", TYPE_COLOURS.get(note_type, "#7f849c")),
                (title, ""),
                *_patch_counts(self.patches.get(str(note.id))),
                no_wrap=True,
                overflow="ellipsis",
            )
            options.append(Option(label, id=str(note.id)))
        listing = self.query_one("#notes-list", NotesList)
        listing.clear_options()
        if options:
            listing.add_options(options)
            listing.highlighted = 0
        else:
            listing.add_option(Option(Text("no notes", style="italic #7f849c"), disabled=True))

    @on(Input.Changed, "#notes-filter")
    def _filter_changed(self) -> None:
        self._show_notes()

    @on(Input.Submitted, "#notes-filter")
    def _filter_submitted(self) -> None:
        self.query_one("#notes-list", NotesList).focus()

    @on(OptionList.OptionSelected, "#notes-list")
    def _note_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(self.NoteChosen(event.option.id))

    def visible_note_titles(self) -> list[str]:
        listing = self.query_one("#notes-list", NotesList)
        return [
            str(listing.get_option_at_index(i).prompt)
            for i in range(listing.option_count)
            if listing.get_option_at_index(i).id
        ]

    # backups -----------------------------------------------------------
    def set_backups(self, backups: Sequence[Any]) -> None:
        self.backups = sorted(backups, key=lambda b: str(b.name), reverse=True)
        tree = self.query_one("#backups-tree", BackupTree)
        tree.clear()
        if not self.backups:
            tree.root.add_leaf(Text("no backups", style="italic #7f849c"))
            return
        for info in self.backups:
            folder = tree.root.add(
                f"{info.name} ({len(info.files)})", data=BackupPick(info.name, None), expand=True
            )
            for rel in info.files:
                folder.add_leaf(str(rel), data=BackupPick(info.name, str(rel)))

    @on(Tree.NodeSelected, "#backups-tree")
    def _backup_selected(self, event: Tree.NodeSelected) -> None:
        event.stop()
        pick = event.node.data
        if isinstance(pick, BackupPick) and pick.relpath is not None:
            self.post_message(self.BackupFileChosen(pick))
