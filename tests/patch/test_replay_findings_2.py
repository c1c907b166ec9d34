"""More findings of replaying real commits (pygments, rich, tqdm, flask, sphinx) through
the engine in the forms a patch reaches it in, each cut down to the git output that
showed it. The engine must give the tree of the commit (or of `git apply`), or refuse
and change nothing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import commit_plan, plan_patch_text, redo_last, undo_last

from .test_replay_findings import _write, crlf_copy, engine_apply, git_patch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

# pygments' tests/examplefiles/markdown/example.md.output was all CRLF until a commit
# wrote it again with LF endings. In a CRLF copy of that diff the '-' lines carry the
# file's CRLF, so the '+' lines' CRLF was taken as the author's, and the file was
# written unchanged in its endings: blob 41d6d5ae for the c366308f named.
CRLF_OUTPUT = b"'@john-doe'   Name.Entity\r\n' '           Text\r\n'issue'       Text\r\n"
LF_OUTPUT = CRLF_OUTPUT.replace(b"\r\n", b"\n")


def test_a_crlf_copy_of_a_diff_turning_a_crlf_file_to_lf_writes_lf(tmp_path: Path) -> None:
    before = {"example.md.output": CRLF_OUTPUT}
    after = {"example.md.output": LF_OUTPUT}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_crlf_copy_of_a_rename_turning_crlf_to_lf_writes_lf(tmp_path: Path) -> None:
    """abnf_example5.abnf renamed to abnf_example2.abnf and converted to LF in one commit."""
    lines = b"".join(b"rule%d = %%d13.10\r\n\r\n" % n for n in range(12))
    before = {"abnf_example5.abnf": lines}
    after = {"abnf_example2.abnf": lines.replace(b"\r\n", b"\n").replace(b"rule3", b"rule-3")}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    assert b"rename from abnf_example5.abnf\r\n" in patch
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_crlf_copy_of_a_change_to_a_crlf_file_keeps_crlf(tmp_path: Path) -> None:
    before = {"example.md.output": CRLF_OUTPUT}
    after = {"example.md.output": CRLF_OUTPUT.replace(b"issue", b"topic")}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_crlf_copy_whose_index_line_no_ending_reaches_is_refused(tmp_path: Path) -> None:
    """The result mixes the endings: which '+' lines had a CR is lost in the copy."""
    before = {"example.md.output": CRLF_OUTPUT}
    after = {"example.md.output": b"'@jane'   Name.Entity\n'  '  Text\r\n'issue'       Text\r\n"}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert tree == before
    assert error is not None and "line endings" in error


def strip_trailing_whitespace(patch: bytes) -> bytes:
    """The patch as an editor that trims trailing blanks saves it (a CR stays)."""
    return re.sub(rb"[ \t]+(\r?)$", rb"\1", patch, flags=re.MULTILINE)


def test_a_new_crlf_file_under_lf_headers_is_written_as_given(tmp_path: Path) -> None:
    """pygments' hanoi.pro is CRLF with trailing blanks. Trimmed, its diff's index line no
    longer names the file; every line being CRLF was taken for a CRLF copy and refused,
    though the `@@` line (LF) shows the patch was not converted. git writes it as given."""
    before = {"README": b"samples\n"}
    after = {"README": b"samples\n", "hanoi.pro": b"class hanoi \r\n   predicates \r\nend\r\n"}
    patch = strip_trailing_whitespace(git_patch(tmp_path, before, after))
    assert b"+class hanoi\r\n" in patch and b"@@ -0,0 +1,3 @@\n" in patch
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == {**after, "hanoi.pro": b"class hanoi\r\n   predicates\r\nend\r\n"}


def test_a_no_prefix_rename_into_another_folder_keeps_its_names(tmp_path: Path) -> None:
    """tqdm moved tqdm/tests/*.py to tests/. In `git diff --no-prefix` the section reads
    `diff --git tqdm/tests/py37_asyncio.py tests/py37_asyncio.py`: two first parts that
    differ were taken for a prefix and stripped, and the names no longer matched the
    `rename from/to` lines, which git never prefixes."""
    body = b"".join(b"line %d\n" % n for n in range(20))
    before = {"setup.cfg": b"[tool]\n", "tqdm/tests/py37_asyncio.py": body}
    after = {
        "setup.cfg": b"[tool]\nx = 1\n",
        "tests/py37_asyncio.py": body.replace(b"line 3\n", b"line three\n"),
    }
    patch = git_patch(tmp_path, before, after, "--no-prefix")
    assert b"diff --git tqdm/tests/py37_asyncio.py tests/py37_asyncio.py\n" in patch
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_prefixed_rename_into_another_folder_still_applies(tmp_path: Path) -> None:
    body = b"".join(b"line %d\n" % n for n in range(20))
    before = {"tqdm/tests/x.py": body}
    after = {"tests/x.py": body.replace(b"line 3\n", b"line three\n")}
    for n, options in enumerate([(), ("--src-prefix=old/", "--dst-prefix=new/")]):
        (tmp_path / str(n)).mkdir()
        patch = git_patch(tmp_path / str(n), before, after, *options)
        tree, error = engine_apply(tmp_path / str(n), before, patch)
        assert error is None
        assert tree == after


def test_a_move_that_empties_a_folder_removes_it_as_git_apply_does(tmp_path: Path) -> None:
    """After tqdm's move of tqdm/tests/*.py to tests/, `git apply` leaves no tqdm/ and
    the engine left tqdm/tests/ empty. An undo brings the folder back with its file, a
    redo removes it again."""
    body = b"".join(b"line %d\n" % n for n in range(20))
    before = {"setup.cfg": b"[tool]\n", "tqdm/tests/x.py": body, "tqdm/tests/y.py": b"y\n"}
    after = {"setup.cfg": b"[tool]\n", "tests/x.py": body}
    patch = git_patch(tmp_path, before, after)
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after
    work = tmp_path / "engine"
    assert not (work / "tqdm").exists()
    settings = load_settings(work, environ={})
    undo_last(settings)
    assert (work / "tqdm/tests/y.py").read_bytes() == b"y\n"
    redo_last(settings)
    assert not (work / "tqdm").exists()


def test_a_deletion_keeps_a_folder_that_still_holds_something(tmp_path: Path) -> None:
    before = {"pkg/a.py": b"a\n", "pkg/sub/b.py": b"b\n"}
    after = {"pkg/a.py": b"a\n"}
    patch = git_patch(tmp_path, before, after)
    work = tmp_path / "work"
    _write(work, before)
    (work / "pkg" / "sub" / "untracked").mkdir()
    settings = load_settings(work, environ={})
    commit_plan(plan_patch_text(patch.decode(), settings, limits=False), settings)
    assert not (work / "pkg/sub/b.py").exists()
    assert (work / "pkg" / "sub" / "untracked").is_dir()  # not the patch's to remove


def test_a_copy_of_a_file_the_patch_also_changes_is_made_from_its_old_text(
    tmp_path: Path,
) -> None:
    """sphinx changed CHANGES.rst and copied its old text, changed, to doc/changes/9.0.rst.
    `git diff -C` gives the copy's hunks against the old text; they were applied to the
    changed file and refused."""
    old = b"".join(b"entry %d\n" % n for n in range(30))
    before = {"CHANGES.rst": old}
    after = {
        "CHANGES.rst": b"Release 10\n==========\n\nsee doc/changes/\n",
        "doc/changes/9.0.rst": old.replace(b"entry 5\n", b"entry five\n"),
    }
    patch = git_patch(tmp_path, before, after, "-C", "-C")
    assert b"copy from CHANGES.rst\n" in patch
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after
