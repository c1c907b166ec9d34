"""Partial acceptance and user edits: narrowing a plan to what the user accepted.

`select` keeps only the accepted files and hunks and recomputes each file's
new bytes from its old bytes and those hunks alone. `replan_with_edits`
replaces the proposed content of some files with text the user wrote; each
new hunk keeps the header (the function context) of the proposed hunk it
overlaps. It is the one re-planner: the review (through the engine facade) and
the apply_patch tool both call it, so a selection made on the re-planned hunks
means the same hunks in both.
"""

from __future__ import annotations

import copy

from hello_tui.config import Settings
from hello_tui.patch.lines import decode_text
from hello_tui.patch.planner import finalize_plan, finish_update, make_add_plan
from hello_tui.patch.rebuild import diff_hunks
from hello_tui.patch.risk import assess_risk
from hello_tui.patch.types import FilePlan, Hunk, PatchError, PatchPlan, Selection


def select(plan: PatchPlan, selection: Selection) -> PatchPlan:
    if selection is None:
        return plan
    files: list[FilePlan] = []
    declined = plan.declined_hunks
    for fp in plan.files:
        accepted = selection.get(fp.path)
        if accepted is None and fp.move_to is not None:
            accepted = selection.get(fp.move_to)
        if accepted is None:
            declined += len(fp.hunks)
            continue
        if not fp.hunks:
            files.append(fp)  # binary, mode-only, rename or empty file: taken whole
            continue
        keep = [h for h in fp.hunks if h.index in accepted]
        declined += len(fp.hunks) - len(keep)
        if fp.op in ("add", "delete"):
            if keep:
                files.append(fp)
            continue
        if not keep and fp.op != "move" and not fp.mode_changed:
            continue  # an update with every hunk declined changes nothing
        if len(keep) == len(fp.hunks):
            files.append(fp)  # all accepted: the planned bytes, exactly
            continue
        new_fp = copy.copy(fp)
        old = decode_text(fp.old_bytes or b"", fp.path, git_lines=fp.git_lines)
        files.append(finish_update(new_fp, old, keep))
    # Limits were met by the whole plan; a subset is only re-assessed for risk.
    return PatchPlan(
        files=files,
        risk=assess_risk(files),
        source_text=plan.source_text,
        declined_hunks=declined,
        warnings=list(plan.warnings),
    )


def replan_with_edits(plan: PatchPlan, settings: Settings, edits: dict[str, str]) -> PatchPlan:
    """Recompute the plans of files whose proposed new text the user rewrote."""
    files: list[FilePlan] = []
    remaining = dict(edits)
    for fp in plan.files:
        key = fp.move_to if fp.move_to in remaining else fp.path
        if key not in remaining:
            files.append(fp)
            continue
        text = remaining.pop(key)
        if fp.op == "delete":
            raise PatchError(f"{fp.path} is being deleted; its content cannot be edited.")
        if fp.op == "add":
            files.append(make_add_plan(fp.path, text.removeprefix("\ufeff"), fp.mode))
            continue
        if fp.old_text is None:
            raise PatchError(f"{fp.path} is a binary file; its content cannot be edited.")
        old = decode_text(fp.old_bytes or b"", fp.path)
        new_fp = copy.copy(fp)
        new_fp.git_lines = False
        new_fp.whole_file_rewrite = fp.whole_file_rewrite
        hunks = with_proposed_headers(diff_hunks(old, text), fp.hunks)
        files.append(finish_update(new_fp, old, hunks))
    if remaining:
        raise PatchError(
            "Edited files that are not part of the patch: " + ", ".join(sorted(remaining))
        )
    return finalize_plan(
        files, settings, plan.source_text, plan.declined_hunks, warnings=plan.warnings
    )


def with_proposed_headers(hunks: list[Hunk], proposed: list[Hunk]) -> list[Hunk]:
    """`hunks` (recomputed from the user's text) with the header of the first proposed hunk
    each one overlaps or touches in the old file: the function context the model named
    stays on the change the user kept or reworded. A hunk of the user's own elsewhere
    gets none."""
    for hunk in hunks:
        start, end = hunk.old_start, hunk.old_start + len(hunk.old_lines)
        for old in proposed:
            old_end = old.old_start + len(old.old_lines)
            if old.header and start <= old_end and old.old_start <= end:
                hunk.header = old.header
                break
    return hunks
