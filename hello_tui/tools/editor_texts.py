"""Files as the user's editor has them: the one home of the rules for reading and writing them.

With an editor that offers its buffers (`ToolContext.editor`, an ACP client):
- a file is read from the editor only when it is a regular UTF-8 text file on
  disk: binary files, other encodings and files the editor cannot give (an
  error answer) are read from the disk. The editor's text becomes the file's
  bytes as UTF-8, with the byte order mark the disk's copy starts with;
- `read`, the stale guard and the planner all see those bytes, so a patch is
  planned against the buffer the user sees, unsaved changes included;
- an accepted patch is written as always: the disk atomically, with backups, the
  journal and a note (the record undo works from). Before the commit point, the
  new text of every added or updated text file is also sent to the editor; when
  one of those writes fails, the files already sent get their earlier text back,
  the disk is rolled back and the patch fails with nothing changed. Deletes,
  renames, binary files and modes go to the disk only (the protocol has no way
  to say them). Where the editor's text differed from the disk's, that text is
  kept in the backup folder (`editor.json`) so undo can give it back;
- undo, redo and restore tell the editor the text they put back.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.core.editor_files import BlockingEditor, EditorFiles, EditorRefused
from hello_tui.patch.types import CommitResult, FilePlan, PatchError, PatchPlan

log = logging.getLogger(__name__)

BOM = b"\xef\xbb\xbf"
# In a patch's backup folder: the editor's text of the files whose buffer differed from
# the disk when the patch was planned (repo path -> text).
EDITOR_TEXTS = "editor.json"


def editor_bytes(disk: bytes, text: str) -> bytes | None:
    """The editor's `text` as the file's bytes; None when the disk's copy must be used."""
    if b"\x00" in disk:
        return None
    try:
        disk.decode("utf-8")
        data = text.encode("utf-8")
    except UnicodeError:  # another encoding on disk, or lone surrogates from the client
        return None
    if disk.startswith(BOM) and not data.startswith(BOM):
        data = BOM + data
    return data


def text_for_editor(data: bytes) -> str | None:
    """What the editor is sent for a file's bytes; None when they are not UTF-8 text."""
    if b"\x00" in data:
        return None
    try:
        return data.removeprefix(BOM).decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class EditorView:
    """The editor as the planning and commit threads see it, and what it told them."""

    editor: BlockingEditor
    # Files whose editor text differed from the disk: their disk sha256 (the transaction's
    # stale guard is the disk's) and the editor's text (kept for undo).
    disk_hashes: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    @classmethod
    def here(cls, editor: EditorFiles | None) -> EditorView | None:
        """Made on the loop that owns `editor`; None without an editor."""
        if editor is None or not (editor.reads or editor.writes):
            return None
        return cls(BlockingEditor.here(editor))

    def current(self, rel: str, target: Path, disk: bytes) -> bytes | None:
        """The planner's `CurrentBytes` (blocking): the editor's bytes, or None for the disk's."""
        if not self.editor.reads or editor_bytes(disk, "") is None:
            return None
        text = self.editor.read_text(target)
        data = None if text is None else editor_bytes(disk, text)
        if data is not None and data != disk:
            self.disk_hashes[rel] = hashlib.sha256(disk).hexdigest()
            self.texts[rel] = text or ""
        return data

    def for_disk(self, plan: PatchPlan) -> PatchPlan:
        """`plan` with the disk's hashes where it was planned on the editor's differing text."""
        files = [
            _with_hash(fp, self.disk_hashes[fp.path]) if fp.path in self.disk_hashes else fp
            for fp in plan.files
        ]
        return PatchPlan(
            files=files,
            risk=plan.risk,
            source_text=plan.source_text,
            declined_hunks=plan.declined_hunks,
            warnings=plan.warnings,
        )

    def attachments(self, plan: PatchPlan) -> dict[str, bytes] | None:
        kept = {fp.path: self.texts[fp.path] for fp in plan.files if fp.path in self.texts}
        if not kept:
            return None
        return {EDITOR_TEXTS: json.dumps(kept, ensure_ascii=False).encode("utf-8")}

    def send(self, repo: Path, chosen: PatchPlan) -> None:
        """The commit's `before_commit` (blocking): every written text file to the editor.

        All or nothing: after a refusal, the files already sent get their earlier text
        back and PatchError makes the transaction put the disk back too.
        """
        if not self.editor.writes:
            return
        sent: list[tuple[Path, str]] = []
        for fp in chosen.files:
            text = _new_text(fp)
            if text is None:
                continue
            path = repo / fp.path
            try:
                self.editor.write_text(path, text)
            except EditorRefused as exc:
                self._take_back(sent)
                raise PatchError(
                    f"The editor refused the new text of {fp.path} ({exc}); nothing was "
                    "written, on disk or in the editor."
                ) from None
            sent.append((path, self._earlier_text(fp)))

    def _earlier_text(self, fp: FilePlan) -> str:
        if fp.path in self.texts:
            return self.texts[fp.path]
        return text_for_editor(fp.old_bytes or b"") or ""

    def _take_back(self, sent: list[tuple[Path, str]]) -> None:
        for path, text in reversed(sent):
            try:
                self.editor.write_text(path, text)
            except EditorRefused as exc:  # the disk is still put back; the editor may differ
                log.warning("the editor refused the earlier text of %s back: %s", path, exc)


def _with_hash(fp: FilePlan, old_hash: str) -> FilePlan:
    return replace(fp, old_hash=old_hash)


def _new_text(fp: FilePlan) -> str | None:
    """The text the editor gets for a planned file; None: the disk only."""
    if fp.op not in ("add", "update") or fp.new_bytes is None:
        return None
    return text_for_editor(fp.new_bytes)


async def tell_editor(
    editor: EditorFiles | None, settings: Settings, result: CommitResult, undone: str | None
) -> list[str]:
    """After undo, redo or restore: the editor gets the text put back; returns what it refused.

    `undone`, the backup folder of the patch an undo reverted: where its editor texts are.
    """
    if editor is None or not editor.writes:
        return []
    texts = await asyncio.to_thread(_texts_put_back, settings, result, undone)
    refused: list[str] = []
    for rel, text in texts.items():
        try:
            await editor.write_text(settings.repo / rel, text)
        except EditorRefused as exc:
            refused.append(f"{rel} ({exc})")
    return refused


def _texts_put_back(settings: Settings, result: CommitResult, undone: str | None) -> dict[str, str]:
    """Repo path -> the text the editor gets (blocking): what the patch found, else the disk's."""
    kept: dict[str, str] = {}
    if undone:
        try:
            kept = json.loads((settings.state.backups / undone / EDITOR_TEXTS).read_text("utf-8"))
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            log.warning("the editor texts of %s are unreadable: %s", undone, exc)
    texts: dict[str, str] = {}
    for rel in [*result.added, *result.updated, *(new for _old, new in result.moved)]:
        text = kept.get(rel)
        if text is None:
            try:
                text = text_for_editor((settings.repo / rel).read_bytes())
            except OSError:
                text = None
        if text is not None:
            texts[rel] = text
    return texts
