"""The Codex apply_patch conformance scenarios, run through our engine when the suite is present.

Deliberate differences (see the suite's README): 010 and 011 (overwriting an
existing file) and 015 (partial success) must fail with the tree unchanged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import PatchError, commit_plan, plan_patch_text

from .conftest import snapshot

SUITE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "codex-apply-patch"
STRICTER = {"010", "011", "015"}


def scenarios() -> list[Path]:
    if not SUITE.is_dir():
        return []
    return sorted(p for p in SUITE.iterdir() if p.is_dir() and (p / "patch.txt").is_file())


@pytest.mark.skipif(not SUITE.is_dir(), reason="conformance suite not present beside the checkout")
@pytest.mark.parametrize("scenario", scenarios(), ids=lambda p: p.name)
def test_scenario(scenario: Path, tmp_path: Path):
    work = tmp_path / "tree"
    if (scenario / "input").is_dir():
        shutil.copytree(scenario / "input", work)
    else:
        work.mkdir()
    before = snapshot(work)
    settings = load_settings(work, environ={})
    error = None
    try:
        commit_plan(
            plan_patch_text((scenario / "patch.txt").read_text(encoding="utf-8"), settings),
            settings,
        )
    except PatchError as exc:
        error = str(exc)
    if scenario.name[:3] in STRICTER:
        assert error, "hello-tui must refuse this scenario"
        assert snapshot(work) == before
        return
    expected = snapshot(scenario / "expected") if (scenario / "expected").is_dir() else {}
    assert (error is not None) == (scenario / "expect_error").exists(), error
    assert snapshot(work) == expected


def test_suite_is_complete_when_present():
    if not SUITE.is_dir():
        pytest.skip("conformance suite not present beside the checkout")
    assert len(scenarios()) >= 25
