"""The three ways to change files — `apply_patch`, `edit`, `write` — and their one door.

Each tool only builds a PatchPlan with the patch engine; `review_and_commit`
is the single flow every change takes to disk: stale guard against what the
model read, the user's review (whole, per hunk, or edited), the engine's
transactional commit with backups, and a result that tells the model exactly
what was applied and what was declined. Patches found in a model's final
answer enter through `propose_patch_text`, the same flow.

Nothing here blocks the event loop: planning, the stale guard and the commit
run on worker threads, and when another process holds the repository's write
lock the commit waits for it asynchronously (`WriteLockWait` events; Esc
cancels the wait, never a commit that has begun).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from typing import Any

from pydantic import Field

from hello_tui import patch as patch_engine
from hello_tui.core.events import NoteWritten, PatchProposed, PatchResolved, WriteLockWait
from hello_tui.core.tools import ReadRecord, Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.patch.types import CommitResult, PatchError, PatchPlan, Selection
from hello_tui.store.write_lock import WAITING_TEXT, write_when_free
from hello_tui.tools.editor_texts import EditorView
from hello_tui.tools.env_files import reaches_env_file
from hello_tui.tools.files import file_digest
from hello_tui.tools.paths import PathError, RepoPath, is_protected, resolve_repo_path

USER_EDIT_DIFF_MAX_LINES = 60
_LINE_WITH_END = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_READ_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)


def _current_sha256(ctx: ToolContext, rel: str, view: EditorView | None) -> str | None:
    """The hash of what `read` would see now: the editor's buffer when it has the file."""
    path = ctx.repo / rel
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if view is not None and (shown := view.current(rel, path, data)) is not None:
        data = shown
    return hashlib.sha256(data).hexdigest()


def _stale_files(plan: PatchPlan, ctx: ToolContext, view: EditorView | None) -> list[str]:
    stale = []
    for fp in plan.files:
        record = ctx.reads.get(fp.path)
        if record is not None and _current_sha256(ctx, fp.path, view) != record.sha256:
            stale.append(fp.path)
    return stale


def _declined_hunks(plan: PatchPlan, selection: Selection) -> list[str]:
    """Which hunks the user left out, named so the model need not re-propose them blindly."""
    if selection is None:
        return []
    declined = []
    for fp in plan.files:
        accepted = selection.get(fp.path)
        if accepted is None and not fp.hunks:
            declined.append(f"{fp.path} ({fp.op}, whole file)")
            continue
        for hunk in fp.hunks:
            if accepted is None or hunk.index not in accepted:
                where = f"line {hunk.old_start + 1}"
                label = f" {hunk.header.strip()}" if hunk.header.strip() else ""
                declined.append(f"{fp.path} hunk #{hunk.index + 1} at {where}{label}")
    return declined


def _user_edit_diff(plan: PatchPlan, edits: dict[str, str]) -> str:
    """The user's edits as a git diff from the proposed text (a/) to the user's (b/)."""
    from hello_tui.patch.written_diff import text_diff

    proposed = {fp.move_to or fp.path: fp.new_text or "" for fp in plan.files}
    proposed.update({fp.path: fp.new_text or "" for fp in plan.files if fp.path in edits})
    lines: list[str] = []
    for path, text in edits.items():
        # Split at LF only: a CRLF line keeps its CR, as the writer wrote it.
        lines += text_diff(path, proposed.get(path, ""), text, context=1).split("\n")[:-1]
    if len(lines) > USER_EDIT_DIFF_MAX_LINES:
        cut = len(lines) - USER_EDIT_DIFF_MAX_LINES
        lines = lines[:USER_EDIT_DIFF_MAX_LINES] + [f"… {cut} more diff lines"]
    return "\n".join(lines)


def _written_digests(result: CommitResult, ctx: ToolContext) -> dict[str, ReadRecord | None]:
    """What the commit left in each file it wrote (None: gone or unreadable); blocking."""
    digests: dict[str, ReadRecord | None] = {rel: None for rel in result.deleted}
    digests.update({old: None for old, _new in result.moved})
    for rel in [*result.added, *result.updated, *(new for _old, new in result.moved)]:
        try:
            digests[rel] = file_digest(ctx.repo / rel)
        except OSError:
            digests[rel] = None
    return digests


def _refresh_reads(digests: dict[str, ReadRecord | None], ctx: ToolContext) -> None:
    """The model's own write must not trip the stale guard on its next edit."""
    for rel, record in digests.items():
        if record is None:
            ctx.reads.pop(rel, None)
        else:
            ctx.reads[rel] = record


async def _commit(
    plan: PatchPlan, selection: Selection, ctx: ToolContext, view: EditorView | None
) -> tuple[CommitResult, dict[str, ReadRecord | None]]:
    """The commit on a worker thread, once no other process holds the write lock.

    With the user's editor, the disk is written as always and the editor is told the new
    text before the commit point (see `editor_texts`).
    """

    def work() -> tuple[CommitResult, dict[str, ReadRecord | None]]:
        if view is None:
            result = patch_engine.commit_plan(
                plan, ctx.settings, selection=selection, user_task=ctx.user_task
            )
        else:
            result = patch_engine.commit_plan(
                view.for_disk(plan),
                ctx.settings,
                selection=selection,
                user_task=ctx.user_task,
                attachments=view.attachments(plan),
                before_commit=lambda chosen: view.send(ctx.repo, chosen),
            )
        return result, _written_digests(result, ctx)

    return await write_when_free(
        ctx.settings.state.lock_file,
        work,
        on_wait=lambda: ctx.emit(WriteLockWait(phase="waiting", text=WAITING_TEXT)),
        on_free=lambda: ctx.emit(WriteLockWait(phase="acquired")),
    )


def _file_summaries(plan: PatchPlan) -> list[dict[str, Any]]:
    return [
        {
            "path": fp.path,
            "op": fp.op,
            "added": fp.added_lines,
            "removed": fp.removed_lines,
            "move_to": fp.move_to,
            "whole_file": fp.whole_file_rewrite,
        }
        for fp in plan.files
    ]


async def review_and_commit(
    plan: PatchPlan, ctx: ToolContext, view: EditorView | None = None
) -> ToolResult:
    """Stale guard, review, commit, report: the one way any change reaches the disk.

    `view`: the user's editor the plan was made against (`EditorView.here(ctx.editor)`).
    """
    stale = await asyncio.to_thread(_stale_files, plan, ctx, view)
    if stale:
        return ToolResult.error(
            "\n".join(f"{path} changed since you read it; read it again." for path in stale),
            data={"stale": stale},
        )
    ctx.emit(
        PatchProposed(
            call_id=ctx.call_id,
            files=_file_summaries(plan),
            high_risk=plan.risk.high,
            risk_reasons=list(plan.risk.reasons),
        )
    )
    decision = await ctx.approver.review_patch(plan)
    refusal = None
    if not decision.accepted:
        why = f": {decision.reason}" if decision.reason else "."
        refusal = "The user rejected the patch" + why
    elif plan.risk.high and not decision.high_risk_confirmed:
        refusal = (
            "The patch was declined: it is high-risk and the user did not confirm it ("
            + ("; ".join(plan.risk.reasons) or "high risk")
            + ")."
        )
    if refusal:
        ctx.emit(PatchResolved(call_id=ctx.call_id, applied=False, summary=refusal))
        return ToolResult.refused_by_user(
            refusal + " Nothing was written.", data={"applied": False}
        )

    notes: list[str] = []
    if decision.user_edits:
        diff = _user_edit_diff(plan, decision.user_edits)
        try:
            plan = await asyncio.to_thread(
                patch_engine.replan_with_edits, plan, ctx.settings, decision.user_edits
            )
        except PatchError as exc:
            message = f"The user's edit of the patch could not be planned: {exc}"
            ctx.emit(PatchResolved(call_id=ctx.call_id, applied=False, summary=message))
            return ToolResult.error(message + " Nothing was written.", data={"applied": False})
        notes.append(
            "The user edited your proposal before applying it (a/ is your text, b/ the "
            "user's):\n" + diff
        )

    try:
        result, digests = await _commit(plan, decision.selection, ctx, view)
    except (PatchError, OSError) as exc:
        message = f"The patch could not be applied: {exc}"
        ctx.emit(PatchResolved(call_id=ctx.call_id, applied=False, summary=message))
        return ToolResult.error(message + " Nothing was written.", data={"applied": False})

    _refresh_reads(digests, ctx)
    changed = result.summary_lines()
    declined = _declined_hunks(plan, decision.selection)
    summary = ", ".join(changed) if changed else "nothing applied"
    ctx.emit(
        PatchResolved(
            call_id=ctx.call_id,
            applied=bool(changed),
            summary=summary,
            backup_dir=result.backup_dir,
            hunks_applied=result.hunks_applied,
            hunks_declined=result.hunks_declined,
        )
    )
    if result.note_id:
        ctx.emit(NoteWritten(note_id=result.note_id, title="Patch applied", note_type="action"))
    data = {
        "applied": changed,
        "declined": declined,
        "hunks_applied": result.hunks_applied,
        "hunks_declined": result.hunks_declined,
        "backup_dir": result.backup_dir,
        "note_id": result.note_id,
    }
    if not changed:
        return ToolResult.error(
            "The user declined every change in the patch; nothing was written.", data=data
        )
    lines = ["Patch applied:", *changed]
    lines.append(f"Hunks: {result.hunks_applied} applied, {result.hunks_declined} declined.")
    if declined:
        lines.append("Declined by the user (do not re-propose them unchanged):")
        lines += [f"- {item}" for item in declined]
    if result.backup_dir:
        lines.append(f"Backups: {result.backup_dir}")
    if plan.warnings:
        # How line-number hints or miscounted hunks were settled: the model should know.
        lines.append("How the patch was placed:")
        lines += [f"- {w}" for w in plan.warnings]
    lines += notes
    text = "\n".join(lines)
    if declined or result.hunks_declined:
        return ToolResult.partial(text, data=data)
    return ToolResult.ok(text, data=data)


async def propose_patch_text(text: str, ctx: ToolContext) -> ToolResult:
    """A patch written by the model (tool call or final answer) -> plan -> review -> commit."""
    view = EditorView.here(ctx.editor)
    current = view.current if view is not None else None
    try:
        plan = await asyncio.to_thread(
            patch_engine.plan_patch_text, text, ctx.settings, current=current
        )
    except PatchError as exc:
        unread = await asyncio.to_thread(_unread_env_files, text, ctx)
        if unread:
            # Why a patch does not apply quotes the file's own lines (the closest region,
            # the line found instead): an env file's keys, which only a read may show.
            names = ", ".join(unread)
            return ToolResult.error(
                f"The patch could not be applied to {names}. Why is not shown: the reason "
                "quotes the file's lines, and it is an env file, which usually holds API keys "
                "and passwords. Read it first (the user is asked), then copy its lines exactly.",
                data={"env_files": unread},
            )
        return ToolResult.error(f"The patch could not be applied: {exc}")
    return await review_and_commit(plan, ctx, view)


def _unread_env_files(text: str, ctx: ToolContext) -> list[str]:
    """The env files (`reaches_env_file`) a patch changes or removes that the model was
    not let read: not read this session, nor allowed to be."""
    from hello_tui.patch.planner import parse_patch_text

    try:
        ops = parse_patch_text(text)
    except PatchError:
        return []  # a patch that does not parse quotes no file
    found: list[str] = []
    for op in ops:
        if op.kind == "add":
            continue
        try:
            target = resolve_repo_path(ctx.repo, op.path)
        except PathError:
            continue
        if target.rel in found or target.rel in ctx.reads:
            continue
        if any(f"{tool} {target.rel}" in ctx.allowed_commands for tool in ("read", "grep")):
            continue
        if target.path.is_file() and reaches_env_file(target.path, ctx.repo):
            found.append(target.rel)
    return found


# ---------------------------------------------------------------- shared checks


def _writable_target(ctx: ToolContext, raw: str) -> RepoPath | ToolResult:
    """Resolve a path the model wants to change, or say why it may not."""
    try:
        target = resolve_repo_path(ctx.repo, raw)
    except PathError as exc:
        return ToolResult.error(str(exc))
    if target.rel == ".":
        return ToolResult.error("Give a file path, not the repository root.")
    if is_protected(target, ctx.settings.state_dir_name):
        return ToolResult.error(
            f"'{target.rel}' is inside .git/ or the agent's state folder; it cannot be written."
        )
    if target.path.is_dir():
        return ToolResult.error(f"'{target.rel}' is a folder, not a file.")
    return target


def _current_bytes(target: RepoPath, view: EditorView | None) -> bytes | ToolResult:
    """The file as the user sees it: the editor's buffer when it has it (blocking)."""
    try:
        raw = target.path.read_bytes()
    except OSError as exc:
        return ToolResult.error(f"Cannot read '{target.rel}': {exc.strerror or exc}.")
    if view is not None and (shown := view.current(target.rel, target.path, raw)) is not None:
        return shown
    return raw


def _existing_text(ctx: ToolContext, rel: str, raw: bytes) -> str | ToolResult:
    if b"\x00" in raw:
        return ToolResult.error(f"'{rel}' is a binary file; it cannot be edited as text.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return ToolResult.error(
            f"'{rel}' is not valid UTF-8 text; edits to it are refused so no bytes are mangled."
        )
    return text.removeprefix("\ufeff")


def _file_eol(text: str) -> str:
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf == text.count("\n") else "\n"


def _with_eol(text: str, eol: str) -> str:
    if eol == "\n" or "\r" in text:
        return text
    return text.replace("\n", eol)


# ---------------------------------------------------------------- apply_patch


class ApplyPatchArgs(ToolArgs):
    patch: str = Field(
        description="'*** Begin Patch' … '*** End Patch' (Add/Update/Delete File) or a unified diff."
    )


class ApplyPatchTool(Tool):
    name = "apply_patch"
    description = (
        "Change one or more files with a patch; the user reviews it before anything is written."
    )
    Args = ApplyPatchArgs
    read_only = False

    async def run(self, args: ApplyPatchArgs, ctx: ToolContext) -> ToolResult:
        if not args.patch.strip():
            return ToolResult.error("Empty patch.")
        return await propose_patch_text(args.patch, ctx)


# ---------------------------------------------------------------- edit


class EditArgs(ToolArgs):
    path: str
    old_text: str
    new_text: str
    replace_all: bool = False


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    start = 0
    while True:
        at = text.find(needle, start)
        if at < 0:
            return found
        found.append(at)
        start = at + len(needle)


def _whitespace_tolerant_windows(text: str, old_text: str) -> list[tuple[int, int]]:
    """Spans of whole lines equal to old_text's lines once trailing whitespace is ignored."""
    wanted = [line.rstrip() for line in old_text.split("\n")]
    if wanted and wanted[-1] == "" and len(wanted) > 1:
        wanted.pop()
    if not any(wanted):
        return []
    lines = [(m.start(), m.end(), m.group()) for m in _LINE_WITH_END.finditer(text)]
    windows: list[tuple[int, int]] = []
    i = 0
    while i + len(wanted) <= len(lines):
        if all(lines[i + k][2].rstrip() == wanted[k] for k in range(len(wanted))):
            windows.append((lines[i][0], lines[i + len(wanted) - 1][1]))
            i += len(wanted)
        else:
            i += 1
    return windows


def apply_edit(
    text: str, old_text: str, new_text: str, replace_all: bool, rel: str
) -> tuple[str, str]:
    """The edited text and a note; raises ValueError with a model-readable message."""
    eol = _file_eol(text)
    old, new = _with_eol(old_text, eol), _with_eol(new_text, eol)
    spots = _occurrences(text, old)
    if len(spots) == 1 or (spots and replace_all):
        return text.replace(old, new), ""
    if len(spots) > 1:
        lines = ", ".join(str(_line_of(text, at)) for at in spots[:20])
        raise ValueError(
            f"old_text occurs {len(spots)} times in '{rel}' (at lines {lines}); include more "
            "surrounding lines so it matches exactly once, or set replace_all=true."
        )
    windows = _whitespace_tolerant_windows(text, old_text)
    if len(windows) > 1 and not replace_all:
        lines = ", ".join(str(_line_of(text, start)) for start, _ in windows[:20])
        raise ValueError(
            f"old_text matches {len(windows)} places in '{rel}' when trailing whitespace is "
            f"ignored (at lines {lines}); include more surrounding lines."
        )
    if not windows:
        hint = ""
        if _READ_PREFIX.search(old_text):
            hint = " Do not include the line numbers that read shows."
        raise ValueError(
            f"old_text was not found in '{rel}' (not even ignoring trailing whitespace). "
            f"Read the file again and copy the exact text.{hint}"
        )
    out, last = [], 0
    for start, end in windows:
        replacement = new
        if (
            replacement
            and text[start:end].endswith(("\n", "\r"))
            and not replacement.endswith(("\n", "\r"))
        ):
            replacement += eol
        out += [text[last:start], replacement]
        last = end
    out.append(text[last:])
    return "".join(out), "old_text matched only after ignoring trailing whitespace."


class EditTool(Tool):
    name = "edit"
    description = (
        "Replace text that occurs once in a file (or everywhere, with replace_all); "
        "the user reviews it."
    )
    Args = EditArgs
    read_only = False

    async def run(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        view = EditorView.here(ctx.editor)
        prepared = await asyncio.to_thread(self._plan, args, ctx, view)
        if isinstance(prepared, ToolResult):
            return prepared
        plan, note = prepared
        result = await review_and_commit(plan, ctx, view)
        if note and result.status != "error":
            result = result.model_copy(update={"text": result.text + "\n" + note})
        return result

    def _plan(
        self, args: EditArgs, ctx: ToolContext, view: EditorView | None
    ) -> tuple[PatchPlan, str] | ToolResult:
        """Checks, the edit and its plan (blocking: reads the file)."""
        target = _writable_target(ctx, args.path)
        if isinstance(target, ToolResult):
            return target
        rel = target.rel
        if not target.path.is_file():
            return ToolResult.error(f"'{rel}' does not exist; use write to create a new file.")
        if rel not in ctx.reads:
            return ToolResult.error(f"You have not read '{rel}'; read it before editing.")
        if not args.old_text:
            return ToolResult.error("old_text is empty; use write to create or replace a file.")
        if args.old_text == args.new_text:
            return ToolResult.error("old_text and new_text are the same; nothing to change.")
        raw = _current_bytes(target, view)
        if isinstance(raw, ToolResult):
            return raw
        text = _existing_text(ctx, rel, raw)
        if isinstance(text, ToolResult):
            return text
        try:
            new_text, note = apply_edit(text, args.old_text, args.new_text, args.replace_all, rel)
        except ValueError as exc:
            return ToolResult.error(str(exc))
        current = view.current if view is not None else None
        try:
            plan = patch_engine.plan_file_change(ctx.settings, rel, new_text, current=current)
            return plan, note
        except PatchError as exc:
            return ToolResult.error(f"The edit could not be planned: {exc}")


# ---------------------------------------------------------------- write


class WriteArgs(ToolArgs):
    path: str
    content: str


class WriteTool(Tool):
    name = "write"
    description = (
        "Create a file, or rewrite one whole (prefer edit or apply_patch for existing files)."
    )
    Args = WriteArgs
    read_only = False

    async def run(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        view = EditorView.here(ctx.editor)
        prepared = await asyncio.to_thread(self._plan, args, ctx, view)
        if isinstance(prepared, ToolResult):
            return prepared
        return await review_and_commit(prepared, ctx, view)

    def _plan(
        self, args: WriteArgs, ctx: ToolContext, view: EditorView | None
    ) -> PatchPlan | ToolResult:
        """Checks and the plan (blocking: reads the file it replaces)."""
        target = _writable_target(ctx, args.path)
        if isinstance(target, ToolResult):
            return target
        rel = target.rel
        whole_file = target.path.exists()
        content = args.content
        if whole_file:
            raw = _current_bytes(target, view)
            if isinstance(raw, ToolResult):
                return raw
            existing = _existing_text(ctx, rel, raw)
            if isinstance(existing, ToolResult):
                return existing
            content = _with_eol(content, _file_eol(existing))
            if content == existing:
                return ToolResult.ok(f"'{rel}' already has exactly this content; nothing written.")
        current = view.current if view is not None else None
        try:
            return patch_engine.plan_file_change(
                ctx.settings, rel, content, whole_file=whole_file, current=current
            )
        except PatchError as exc:
            return ToolResult.error(f"The write could not be planned: {exc}")
