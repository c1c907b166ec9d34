"""apply_patch, edit and write: one review flow, one door to the disk."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.approval import PatchDecision, PolicyApprover
from hello_tui.core.events import Event, NoteWritten, PatchProposed, PatchResolved
from hello_tui.core.tools import ToolContext, ToolResult
from hello_tui.patch import plan_patch_text
from hello_tui.patch.types import FilePlan, Hunk, PatchPlan, Risk
from hello_tui.tools.files import ReadTool
from hello_tui.tools.writes import (
    ApplyPatchTool,
    EditTool,
    WriteTool,
    apply_edit,
    propose_patch_text,
    review_and_commit,
)


class ScriptedApprover:
    """Answers reviews with prepared decisions and remembers every plan it was shown."""

    def __init__(self, *decisions: PatchDecision) -> None:
        self.decisions = list(decisions)
        self.plans: list[PatchPlan] = []

    async def review_patch(self, plan: PatchPlan) -> PatchDecision:
        self.plans.append(plan)
        return self.decisions.pop(0)

    async def approve_command(self, command: str, reason: str) -> str:
        return "deny"


ACCEPT = PatchDecision(accepted=True, high_risk_confirmed=True)


def make_ctx(repo: Path, *decisions: PatchDecision) -> tuple[ToolContext, list[Event]]:
    events: list[Event] = []
    ctx = ToolContext(
        settings=load_settings(repo, environ={}),
        approver=ScriptedApprover(*decisions),
        emit=events.append,
        call_id="call-1",
        user_task="tidy the code",
    )
    return ctx, events


async def call(tool, ctx: ToolContext, **args) -> ToolResult:
    return await tool.run(tool.Args.model_validate(args), ctx)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "def main():\n    print('hello')\n    return 0\n", encoding="utf-8"
    )
    (root / "notes.md").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".helloagents" not in p.parts
    }


# ---------------------------------------------------------------- apply_edit (pure)


class TestApplyEdit:
    def test_exact_once(self):
        assert apply_edit("a\nb\nc\n", "b\n", "B\n", False, "f") == ("a\nB\nc\n", "")

    def test_ambiguous_names_lines(self):
        with pytest.raises(ValueError, match=r"occurs 2 times .*at lines 1, 3"):
            apply_edit("x = 1\ny\nx = 1\n", "x = 1", "x = 2", False, "f")

    def test_replace_all(self):
        assert apply_edit("x\ny\nx\n", "x", "z", True, "f")[0] == "z\ny\nz\n"

    def test_trailing_whitespace_retry(self):
        text, note = apply_edit("a  \nb\t\nc\n", "a\nb\n", "A\nB\n", False, "f")
        assert text == "A\nB\nc\n" and "trailing whitespace" in note
        # new_text without a final newline still leaves the next line on its own line
        assert apply_edit("a x  \nb\n", "a x \n", "A", False, "f")[0] == "A\nb\n"

    def test_retry_ambiguous(self):
        with pytest.raises(ValueError, match=r"matches 2 places .*lines 1, 3"):
            apply_edit("a \nb\na\t\nb\n", "a\nb", "A", False, "f")

    def test_no_match_says_read_again(self):
        with pytest.raises(ValueError, match="Read the file again"):
            apply_edit("a\nb\n", "zzz", "y", False, "f")
        with pytest.raises(ValueError, match="line numbers"):
            apply_edit("a\nb\n", "     1\ta\n", "y", False, "f")

    def test_crlf_file_keeps_crlf(self):
        text, _ = apply_edit("a\r\nb\r\nc\r\n", "a\nb\n", "A\nB\nX\n", False, "f")
        assert text == "A\r\nB\r\nX\r\nc\r\n"


# ---------------------------------------------------------------- guards before review


class TestGuards:
    async def test_edit_needs_a_read_first(self, repo: Path):
        ctx, events = make_ctx(repo)
        result = await call(EditTool(), ctx, path="src/app.py", old_text="hello", new_text="bye")
        assert result.status == "error" and "read it before editing" in result.text
        assert events == []

    async def test_edit_errors_leave_the_tree(self, repo: Path):
        ctx, events = make_ctx(repo)
        await call(ReadTool(), ctx, path="src/app.py")
        before = snapshot(repo)
        for old, words in [("nope", "not found"), ("", "empty"), ("    hello()", "not found")]:
            result = await call(EditTool(), ctx, path="src/app.py", old_text=old, new_text="x")
            assert result.status == "error" and words in result.text, old
        same = await call(EditTool(), ctx, path="src/app.py", old_text="main", new_text="main")
        assert same.status == "error" and "same" in same.text
        missing = await call(EditTool(), ctx, path="src/none.py", old_text="a", new_text="b")
        assert missing.status == "error" and "does not exist" in missing.text
        assert snapshot(repo) == before and events == []

    async def test_protected_and_outside_paths(self, repo: Path):
        ctx, _ = make_ctx(repo)
        for path in (".git/config", ".helloagents/notes/x.md", "../escape.txt", "/etc/x", "~/x"):
            result = await call(WriteTool(), ctx, path=path, content="x")
            assert result.status == "error", path
        assert not (repo.parent / "escape.txt").exists()
        assert not (repo / ".git").exists()

    async def test_a_link_into_git_is_protected_by_where_it_leads(self, repo: Path):
        (repo / ".git" / "hooks").mkdir(parents=True)
        os.symlink(".git", repo / "meta")
        ctx, events = make_ctx(repo, ACCEPT)
        result = await call(WriteTool(), ctx, path="meta/hooks/pre-commit", content="#!/bin/sh\n")
        assert result.status == "error" and "cannot be written" in result.text
        assert not (repo / ".git" / "hooks" / "pre-commit").exists() and events == []

    async def test_binary_and_non_utf8_targets_refused(self, repo: Path):
        (repo / "blob.bin").write_bytes(b"ab\x00cd")
        (repo / "gbk.txt").write_bytes("中文".encode("gbk"))
        ctx, _ = make_ctx(repo)
        ctx.reads["blob.bin"] = ctx.reads["gbk.txt"] = None  # type: ignore[assignment]
        binary = await call(EditTool(), ctx, path="blob.bin", old_text="ab", new_text="x")
        assert binary.status == "error" and "binary" in binary.text
        legacy = await call(WriteTool(), ctx, path="gbk.txt", content="new")
        assert legacy.status == "error" and "UTF-8" in legacy.text
        assert (repo / "gbk.txt").read_bytes() == "中文".encode("gbk")

    async def test_stale_guard_blocks_before_the_user_sees_it(self, repo: Path):
        ctx, events = make_ctx(repo, ACCEPT)
        await call(ReadTool(), ctx, path="notes.md")
        (repo / "notes.md").write_text("someone else changed it\n", encoding="utf-8")
        plan = PatchPlan(
            files=[FilePlan(path="notes.md", op="update", new_text="x\n")], risk=Risk(False)
        )
        result = await review_and_commit(plan, ctx)
        assert result.status == "error"
        assert result.text == "notes.md changed since you read it; read it again."
        assert events == [] and ctx.approver.plans == []

    async def test_rejected_and_unconfirmed_high_risk(self, repo: Path):
        plan = PatchPlan(
            files=[
                FilePlan(
                    path="notes.md",
                    op="update",
                    new_text="x\n",
                    hunks=[Hunk(0, 0, ["one"], ["x"])],
                )
            ],
            risk=Risk(True, ["rewrites a whole file"]),
        )
        before = snapshot(repo)
        ctx, events = make_ctx(repo, PatchDecision(accepted=False, reason="wrong file"))
        rejected = await review_and_commit(plan, ctx)
        assert rejected.status == "error"
        assert rejected.text.startswith("The user rejected the patch: wrong file")
        proposed = events[0]
        assert isinstance(proposed, PatchProposed) and proposed.high_risk
        assert proposed.files == [
            {
                "path": "notes.md",
                "op": "update",
                "added": 1,
                "removed": 1,
                "move_to": None,
                "whole_file": False,
            }
        ]
        assert isinstance(events[1], PatchResolved) and not events[1].applied

        ctx, events = make_ctx(repo, PatchDecision(accepted=True))
        unconfirmed = await review_and_commit(plan, ctx)
        assert unconfirmed.status == "error" and "rewrites a whole file" in unconfirmed.text
        assert snapshot(repo) == before


# ---------------------------------------------------------------- through the patch engine


class TestEditAndWrite:
    async def test_edit_accepted_writes_and_refreshes_read_record(self, repo: Path):
        ctx, events = make_ctx(repo, ACCEPT, ACCEPT)
        await call(ReadTool(), ctx, path="src/app.py")
        result = await call(
            EditTool(), ctx, path="src/app.py", old_text="print('hello')", new_text="print('bye')"
        )
        assert result.status == "success", result.text
        assert "M src/app.py" in result.text and "Hunks: 1 applied, 0 declined." in result.text
        assert (repo / "src/app.py").read_text() == "def main():\n    print('bye')\n    return 0\n"
        new_hash = hashlib.sha256((repo / "src/app.py").read_bytes()).hexdigest()
        assert ctx.reads["src/app.py"].sha256 == new_hash
        kinds = [type(e) for e in events]
        assert kinds[:2] == [PatchProposed, PatchResolved]
        resolved = events[1]
        assert resolved.applied and resolved.hunks_applied == 1
        assert resolved.backup_dir and (repo / resolved.backup_dir).is_dir()
        assert f"Backups: {resolved.backup_dir}" in result.text
        note = next(e for e in events if isinstance(e, NoteWritten))
        assert note.note_id == result.data["note_id"] and note.title == "Patch applied"
        # a second edit right after is not blocked by the first one's own write
        again = await call(
            EditTool(), ctx, path="src/app.py", old_text="return 0", new_text="return 1"
        )
        assert again.status == "success", again.text
        assert "return 1" in (repo / "src/app.py").read_text()

    async def test_edit_whitespace_retry_through_engine(self, repo: Path):
        (repo / "ws.py").write_bytes(b"x = 1   \r\ny = 2\r\n")
        ctx, _ = make_ctx(repo, ACCEPT)
        await call(ReadTool(), ctx, path="ws.py")
        result = await call(EditTool(), ctx, path="ws.py", old_text="x = 1\n", new_text="x = 10\n")
        assert result.status == "success", result.text
        assert "trailing whitespace" in result.text
        assert (repo / "ws.py").read_bytes() == b"x = 10\r\ny = 2\r\n"

    async def test_edit_declined_writes_nothing(self, repo: Path):
        before = snapshot(repo)
        ctx, _ = make_ctx(repo)
        ctx.approver = PolicyApprover(yes=False)
        await call(ReadTool(), ctx, path="notes.md")
        result = await call(EditTool(), ctx, path="notes.md", old_text="two", new_text="2")
        assert result.status == "error" and "rejected" in result.text
        assert snapshot(repo) == before

    async def test_write_new_file_and_whole_rewrite(self, repo: Path):
        ctx, events = make_ctx(repo, ACCEPT, ACCEPT)
        created = await call(WriteTool(), ctx, path="docs/新 文件.md", content="# 你好\n")
        assert created.status == "success", created.text
        assert "A docs/新 文件.md" in created.text
        assert (repo / "docs/新 文件.md").read_text(encoding="utf-8") == "# 你好\n"
        rewrite = await call(WriteTool(), ctx, path="notes.md", content="fresh\n")
        assert rewrite.status == "success", rewrite.text
        plan = ctx.approver.plans[1]
        assert plan.files[0].whole_file_rewrite and plan.risk.high
        proposed = [e for e in events if isinstance(e, PatchProposed)][1]
        assert proposed.files[0]["whole_file"] and proposed.high_risk
        assert (repo / "notes.md").read_text() == "fresh\n"

    async def test_rewrite_needs_high_risk_confirmation(self, repo: Path):
        ctx, _ = make_ctx(repo, PatchDecision(accepted=True, high_risk_confirmed=False))
        result = await call(WriteTool(), ctx, path="notes.md", content="fresh\n")
        assert result.status == "error" and "high-risk" in result.text
        assert (repo / "notes.md").read_text() == "one\ntwo\nthree\n"

    async def test_write_same_content_is_a_no_op(self, repo: Path):
        ctx, events = make_ctx(repo)
        result = await call(WriteTool(), ctx, path="notes.md", content="one\ntwo\nthree\n")
        assert result.status == "success" and "nothing written" in result.text
        assert events == []


class TestApplyPatch:
    PATCH = (
        "*** Begin Patch\n"
        "*** Update File: notes.md\n"
        "@@\n"
        " one\n"
        "-two\n"
        "+TWO\n"
        " three\n"
        "*** Add File: added.txt\n"
        "+brand new\n"
        "*** End Patch\n"
    )

    async def test_applied(self, repo: Path):
        ctx, _ = make_ctx(repo, ACCEPT)
        result = await call(ApplyPatchTool(), ctx, patch=self.PATCH)
        assert result.status == "success", result.text
        assert "M notes.md" in result.text and "A added.txt" in result.text
        assert (repo / "notes.md").read_text() == "one\nTWO\nthree\n"
        assert (repo / "added.txt").read_text() == "brand new\n"

    async def test_partial_selection_reports_declined(self, repo: Path):
        ctx, events = make_ctx(repo, PatchDecision(accepted=True, selection={"added.txt": {0}}))
        result = await call(ApplyPatchTool(), ctx, patch=self.PATCH)
        assert result.status == "partial", result.text
        assert "A added.txt" in result.text and "M notes.md" not in result.text
        assert "- notes.md hunk #1 at line 2" in result.text
        assert (repo / "notes.md").read_text() == "one\ntwo\nthree\n"
        resolved = next(e for e in events if isinstance(e, PatchResolved))
        assert resolved.hunks_declined == 1

    async def test_everything_declined_by_selection(self, repo: Path):
        ctx, _ = make_ctx(repo, PatchDecision(accepted=True, selection={}))
        before = snapshot(repo)
        result = await call(ApplyPatchTool(), ctx, patch=self.PATCH)
        assert result.status == "error"
        assert snapshot(repo) == before

    async def test_unplannable_patch_never_reaches_the_user(self, repo: Path):
        ctx, events = make_ctx(repo, ACCEPT)
        bad = self.PATCH.replace(" one\n-two", " zero\n-two")
        result = await call(ApplyPatchTool(), ctx, patch=bad)
        assert result.status == "error" and "could not be applied" in result.text
        assert events == [] and ctx.approver.plans == []

    async def test_user_edits_are_reported(self, repo: Path):
        edited = PatchDecision(
            accepted=True, high_risk_confirmed=True, user_edits={"notes.md": "one\nTwo!\nthree\n"}
        )
        ctx, _ = make_ctx(repo, edited)
        result = await call(ApplyPatchTool(), ctx, patch=self.PATCH)
        assert result.status in ("success", "partial"), result.text
        assert "The user edited your proposal" in result.text
        assert "-TWO" in result.text and "+Two!" in result.text
        assert (repo / "notes.md").read_text() == "one\nTwo!\nthree\n"

    async def test_final_answer_patch_enters_the_same_door(self, repo: Path):
        ctx, events = make_ctx(repo, ACCEPT)
        answer = "Here is the fix:\n```\n" + self.PATCH + "```\n"
        result = await propose_patch_text(answer, ctx)
        assert result.status == "success", result.text
        assert isinstance(events[0], PatchProposed)
        assert (repo / "added.txt").exists()


class TestReadRecordsFollowWrites:
    async def test_move_and_delete_update_records(self, repo: Path):
        ctx, _ = make_ctx(repo, ACCEPT)
        await call(ReadTool(), ctx, path="src/app.py")
        await call(ReadTool(), ctx, path="notes.md")
        patch = (
            "*** Begin Patch\n"
            "*** Update File: src/app.py\n"
            "*** Move to: src/main.py\n"
            "@@\n"
            "-    return 0\n"
            "+    return 2\n"
            "*** Delete File: notes.md\n"
            "*** End Patch\n"
        )
        result = await call(ApplyPatchTool(), ctx, patch=patch)
        assert result.status == "success", result.text
        assert "R src/app.py -> src/main.py" in result.text and "D notes.md" in result.text
        assert set(ctx.reads) == {"src/main.py"}
        moved = (repo / "src/main.py").read_bytes()
        assert ctx.reads["src/main.py"].sha256 == hashlib.sha256(moved).hexdigest()
        assert not (repo / "src/app.py").exists() and not (repo / "notes.md").exists()

    async def test_failed_commit_reports_and_keeps_tree(self, repo: Path):
        ctx, events = make_ctx(repo, ACCEPT)
        await call(ReadTool(), ctx, path="notes.md")
        plan_text = "*** Begin Patch\n*** Delete File: notes.md\n*** End Patch\n"
        plan = plan_patch_text(plan_text, ctx.settings)
        # The file changes after planning and after the stale guard's snapshot: the
        # engine's own hash check must refuse, and the model must hear why.
        ctx.reads.pop("notes.md")
        (repo / "notes.md").write_text("changed underneath\n", encoding="utf-8")
        result = await review_and_commit(plan, ctx)
        assert result.status == "error" and "could not be applied" in result.text
        assert (repo / "notes.md").read_text() == "changed underneath\n"
        resolved = [e for e in events if isinstance(e, PatchResolved)]
        assert len(resolved) == 1 and not resolved[0].applied


async def test_the_model_is_told_how_a_hunk_was_placed(repo: Path):
    """Line numbers are hints: when the nearest occurrence decided, the result says so."""
    (repo / "d.txt").write_text("x\ny\nk\n" * 4)
    ctx, _ = make_ctx(repo, ACCEPT)
    diff = "--- a/d.txt\n+++ b/d.txt\n@@ -6,2 +6,2 @@\n x\n-y\n+Y\n"
    result = await call(ApplyPatchTool(), ctx, patch=diff)
    assert result.status == "success", result.text
    assert "How the patch was placed:" in result.text
    assert "nearest to its stated line 6" in result.text
    assert (repo / "d.txt").read_text() == "x\ny\nk\n" * 2 + "x\nY\nk\n" + "x\ny\nk\n"
