"""Planning (the dry run): every file's new bytes computed in memory and every check run.

Nothing here writes. A plan records each target's current hash for the stale
guard, keeps permission bits, and carries its risk. `plan_patch_text` takes
whatever the model wrote; `plan_file_change` takes one file's new content
(the `edit` and `write` tools).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.patch.codex_parser import parse_codex
from hello_tui.patch.extract import extract_patches, is_unified
from hello_tui.patch.lines import TextFile, decode_text, encode_text, sha256, split_lines, text_of
from hello_tui.patch.matcher import hunks_from_placements, place_chunks
from hello_tui.patch.model import FileOperation
from hello_tui.patch.paths import resolve_repo_path
from hello_tui.patch.rebuild import apply_hunks, diff_hunks
from hello_tui.patch.risk import assess_risk, check_limits, check_strict_suffixes
from hello_tui.patch.types import FilePlan, Hunk, PatchError, PatchPlan


def parse_patch_text(text: str) -> list[FileOperation]:
    """Every file operation of every patch found in `text`."""
    patches = extract_patches(text)
    if not patches:
        stripped = text.strip()
        if not stripped:
            raise PatchError("No files were modified: the patch is empty.")
        patches = [text]  # no recognisable start: let the parser say what is wrong
    ops: list[FileOperation] = []
    for patch in patches:
        if is_unified(patch):
            from hello_tui.patch.unified_parser import parse_unified

            ops.extend(parse_unified(patch))
        else:
            ops.extend(parse_codex(patch))
    return ops


def _resolve(settings: Settings, raw: str) -> tuple[str, Path]:
    return resolve_repo_path(settings.repo, raw, settings.state_dir_name)


def _read_existing(rel: str, target: Path, action: str) -> tuple[bytes, int]:
    if not os.path.lexists(target):
        raise PatchError(f"Cannot {action} {rel}: the file does not exist.")
    st = os.stat(target)
    if stat.S_ISDIR(st.st_mode):
        raise PatchError(f"Cannot {action} {rel}: it is a directory, not a file.")
    if not stat.S_ISREG(st.st_mode):
        raise PatchError(f"Cannot {action} {rel}: it is not a regular file.")
    return target.read_bytes(), stat.S_IMODE(st.st_mode)


def _require_absent(rel: str, target: Path, what: str) -> None:
    if os.path.lexists(target):
        raise PatchError(
            f"Cannot {what} {rel}: target already exists. Update it with '*** Update File: {rel}' "
            "or choose another path."
        )


def make_add_plan(rel: str, content: str) -> FilePlan:
    tf = TextFile(*split_lines(content))
    hunk = Hunk(0, 0, [], list(tf.lines), no_eol=bool(tf.eols) and tf.eols[-1] == "")
    data = content.encode("utf-8")
    return FilePlan(path=rel, op="add", new_text=content, new_bytes=data, hunks=[hunk])


def _delete_plan(rel: str, data: bytes, mode: int) -> FilePlan:
    tf = decode_text(data, rel)
    hunk = Hunk(0, 0, list(tf.lines), [])
    return FilePlan(
        path=rel,
        op="delete",
        old_text=text_of(tf),
        old_bytes=data,
        old_hash=sha256(data),
        hunks=[hunk],
        mode=mode,
    )


def finish_update(fp: FilePlan, old: TextFile, hunks: list[Hunk]) -> FilePlan:
    """Fill a FilePlan's new content from its old file and the given hunks."""
    new = apply_hunks(old, hunks)
    fp.hunks = hunks
    fp.new_text = text_of(new)
    fp.new_bytes = encode_text(new, fp.new_text)
    return fp


def _update_plan(settings: Settings, op: FileOperation, rel: str, target: Path) -> FilePlan:
    data, mode = _read_existing(rel, target, "update")
    old = decode_text(data, rel)
    fp = FilePlan(
        path=rel,
        op="update",
        old_text=text_of(old),
        old_bytes=data,
        old_hash=sha256(data),
        mode=mode,
    )
    if op.move_to is not None:
        dest_rel, dest = _resolve(settings, op.move_to)
        if dest_rel == rel:
            raise PatchError(f"Cannot move {rel} onto itself.")
        _require_absent(dest_rel, dest, "move to")
        fp.op = "move"
        fp.move_to = dest_rel
    if op.whole_file:
        fp.whole_file_rewrite = True
        hunks = diff_hunks(old, op.content or "")
    else:
        placements = place_chunks(rel, old.lines, op.chunks)
        hunks = hunks_from_placements(old.lines, placements)
    return finish_update(fp, old, hunks)


def _check_duplicates(
    ops: list[FileOperation], settings: Settings
) -> list[tuple[FileOperation, str, Path]]:
    seen: dict[str, int] = {}
    resolved = []
    for op in ops:
        rel, target = _resolve(settings, op.path)
        names = [rel]
        if op.move_to is not None:
            names.append(_resolve(settings, op.move_to)[0])
        for name in names:
            if name in seen:
                raise PatchError(
                    f"{name} appears in more than one section of the patch (lines {seen[name]} and "
                    f"{op.source_line}); put all its changes in one section."
                )
            seen[name] = op.source_line
        resolved.append((op, rel, target))
    return resolved


def plan_operations(
    ops: list[FileOperation], settings: Settings, source_text: str = ""
) -> PatchPlan:
    if not ops:
        raise PatchError("No files were modified: the patch contains no file operations.")
    files: list[FilePlan] = []
    for op, rel, target in _check_duplicates(ops, settings):
        if op.kind == "add":
            _require_absent(rel, target, "add")
            files.append(make_add_plan(rel, op.content or ""))
        elif op.kind == "delete":
            data, mode = _read_existing(rel, target, "delete")
            files.append(_delete_plan(rel, data, mode))
        else:
            files.append(_update_plan(settings, op, rel, target))
    return finalize_plan(files, settings, source_text)


def finalize_plan(
    files: list[FilePlan], settings: Settings, source_text: str, declined: int = 0
) -> PatchPlan:
    check_strict_suffixes(files, settings)
    check_limits(files, settings)
    return PatchPlan(
        files=files, risk=assess_risk(files), source_text=source_text, declined_hunks=declined
    )


def plan_patch_text(text: str, settings: Settings) -> PatchPlan:
    """Extract, parse and plan every patch in `text`; PatchError says what to fix."""
    return plan_operations(parse_patch_text(text), settings, source_text=text)


def plan_file_change(
    settings: Settings, path: str, new_text: str | None, *, whole_file: bool = False
) -> PatchPlan:
    """A plan for one file's new content (None deletes it), with difflib hunks for review."""
    rel, target = _resolve(settings, path)
    if new_text is None:
        data, mode = _read_existing(rel, target, "delete")
        files = [_delete_plan(rel, data, mode)]
    elif not os.path.lexists(target):
        files = [make_add_plan(rel, new_text.removeprefix("\ufeff"))]
    else:
        data, mode = _read_existing(rel, target, "update")
        old = decode_text(data, rel)
        fp = FilePlan(
            path=rel,
            op="update",
            old_text=text_of(old),
            old_bytes=data,
            old_hash=sha256(data),
            mode=mode,
            whole_file_rewrite=whole_file,
        )
        files = [finish_update(fp, old, diff_hunks(old, new_text))]
    from hello_tui.patch.render import render_plan_diff

    plan = finalize_plan(files, settings, "")
    plan.source_text = render_plan_diff(plan)
    return plan
