"""The engine's re-plan entry: what the review's editor starts from (`accepted_text`) and the
one re-planner the review and the apply_patch tool share (`replan_with_edits`)."""

from __future__ import annotations

import hello_tui.engine.types as engine_types
from hello_tui.config import load_settings
from hello_tui.demo import copy_demo_repo
from hello_tui.demo.script import DEMO_PATCH
from hello_tui.engine.facade import accepted_text, replan_with_edits
from hello_tui.patch import plan_patch_text, select

FIX = "    return total(values) / count\n"
GUARD = "    if not values:\n        return 0.0\n"


def demo_plan(tmp_path):
    repo = copy_demo_repo(tmp_path)
    settings = load_settings(repo, environ={})
    return plan_patch_text(DEMO_PATCH, settings), settings


def test_accepted_text_is_what_accepting_would_write(tmp_path):
    plan, _ = demo_plan(tmp_path)
    file = plan.files[0]
    assert accepted_text(file, {0, 1}) == file.new_text
    only_fix = accepted_text(file, {0})
    assert FIX in only_fix and GUARD not in only_fix
    assert only_fix == select(plan, {file.path: {0}}).files[0].new_text
    assert accepted_text(file, set()) == file.old_text


def test_replanned_hunks_keep_the_headers_of_the_hunks_they_overlap(tmp_path):
    plan, settings = demo_plan(tmp_path)
    file = plan.files[0]
    mine = file.new_text.replace(FIX, "    return total(values) / max(count, 1)\n")
    mine += "\n\nEXTRA = 1\n"  # a change of the user's own, far from every proposed hunk
    edited = replan_with_edits(plan, settings, {file.path: mine})
    assert [h.header for h in edited.files[0].hunks] == [
        "def mean(values: list[float]) -> float:",
        "def spread(values: list[float]) -> float:",
        "",
    ]


def test_the_engine_types_hold_data_only():
    assert not hasattr(engine_types, "replan_with_edits")
    assert "replan_with_edits" not in engine_types.__all__
