"""Findings of replaying real commits through the engine, each cut down to the git output
that showed it. A patch is made by a real git from two trees; the engine must give the
tree `git apply` gives (or the after tree), or refuse and change nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.patch import PatchError, commit_plan, plan_patch_text

from .git_runner import git

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

Tree = dict[str, bytes]


def _write(root: Path, files: Tree) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _read(root: Path) -> Tree:
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".helloagents") or not path.is_file():
            continue
        out[rel.as_posix()] = path.read_bytes()
    return out


def git_patch(tmp: Path, before: Tree, after: Tree, *options: str) -> bytes:
    """`git diff OPTIONS` between two commits of a scratch repository."""
    repo = tmp / "made"
    repo.mkdir()
    git(repo, "init", "-q")
    _write(repo, before)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "before")
    for name in before:
        (repo / name).unlink()
    _write(repo, after)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "after")
    return git(repo, "diff", *options, "HEAD^", "HEAD").stdout


def engine_apply(tmp: Path, before: Tree, patch: bytes) -> tuple[Tree, str | None]:
    work = tmp / "engine"
    work.mkdir()
    _write(work, before)
    settings = load_settings(work, environ={})
    try:
        plan = plan_patch_text(patch.decode("utf-8", "surrogateescape"), settings, limits=False)
        commit_plan(plan, settings)
    except PatchError as exc:
        return _read(work), str(exc)
    return _read(work), None


# bat's highlighted syntax samples are terminal output: their lines hold SGR codes. In
# `git diff --color=always` those codes cannot be told from git's own, and removing every
# code wrote the sample without its colours (blob 915b6072 named, b38cc9cd written).
HIGHLIGHTED = (
    b"\x1b[38;2;117;113;94m# a comment\x1b[0m\n"
    b"\x1b[3;38;2;102;217;239mfunction\x1b[0m\x1b[38;2;248;248;242m f\x1b[0m\n"
)


def test_a_coloured_diff_that_adds_a_file_with_colour_codes_is_refused(tmp_path: Path) -> None:
    before = {"README": b"samples\n"}
    after = {"README": b"samples\n", "highlighted/test.ps1": HIGHLIGHTED}
    patch = git_patch(tmp_path, before, after, "--color=always")
    assert b"\x1b[38;2;117;113;94m" in patch
    tree, error = engine_apply(tmp_path, before, patch)
    assert tree == before
    assert error is not None and "colour" in error


def test_a_coloured_diff_that_adds_colour_codes_to_a_file_is_refused(tmp_path: Path) -> None:
    before = {"out.txt": b"plain\n"}
    after = {"out.txt": b"plain\n" + HIGHLIGHTED}
    patch = git_patch(tmp_path, before, after, "--color=always")
    tree, error = engine_apply(tmp_path, before, patch)
    assert tree == before
    assert error is not None and "colour" in error


def test_a_coloured_diff_of_plain_text_still_applies(tmp_path: Path) -> None:
    before = {"a.txt": b"one\ntwo\nthree\n"}
    after = {"a.txt": b"one\n2  \nthree\n", "b.txt": b"new\r\n"}
    patch = git_patch(tmp_path, before, after, "--color=always")
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def crlf_copy(patch: bytes) -> bytes:
    """The patch as a paste or a mail client passes it on: every line ending CRLF."""
    return patch.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


# bat's highlighted Swift sample mixed endings (CRs inside lines and at their ends); a
# commit rewrote it with LF endings. In a CRLF copy of that diff the '+' lines' endings
# are lost: they took the file's first ending (CRLF), blob 84453b7c for the e31eb16a named.
MIXED = b"class Person {\r\n// a property\r\x1b[0m\nvar age = 25\r\n}\n"
UNMIXED = b"class Person {\n// a property\x1b[0m\nvar age = 26\n}\n"


def test_a_crlf_copy_of_a_diff_to_a_mixed_file_gets_the_endings_its_index_line_names(
    tmp_path: Path,
) -> None:
    before = {"test.swift": MIXED}
    after = {"test.swift": UNMIXED}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_crlf_copy_whose_new_lines_had_both_endings_is_refused(tmp_path: Path) -> None:
    before = {"test.swift": MIXED}
    after = {"test.swift": b"class Person {\n// a property\r\nvar age = 26\n}\n"}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert tree == before
    assert error is not None and "line endings" in error


def test_a_crlf_copy_of_a_new_file_with_mixed_endings_is_refused(tmp_path: Path) -> None:
    before = {"README": b"samples\n"}
    after = {"README": b"samples\n", "test.swift": MIXED}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert tree == before
    assert error is not None and "line endings" in error


def test_a_crlf_copy_of_a_new_lf_file_still_applies_as_the_file(tmp_path: Path) -> None:
    before = {"README": b"samples\n"}
    after = {"README": b"samples\n", "new.txt": UNMIXED}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_crlf_copy_of_a_new_file_that_ends_in_a_bare_cr_keeps_the_cr(tmp_path: Path) -> None:
    """express's examples/downloads/files/utf-8 한中日.txt is the text and a CR, no newline.
    In a CRLF copy its line reads `+한中日\\r\\n` over a `\\ No newline` marker in CRLF, which
    says the copy's CRs came with it, and the file was written without its own CR."""
    name = "files/utf-8 한中日.txt"
    before = {"README": b"downloads\n"}
    after = {"README": b"downloads\n", name: "한中日\r".encode()}
    patch = crlf_copy(git_patch(tmp_path, before, after))
    assert b"\\ No newline at end of file\r\n" in patch
    tree, error = engine_apply(tmp_path, before, patch)
    assert error is None
    assert tree == after


def test_a_coloured_diff_of_a_new_mixed_file_is_refused_for_its_colours(tmp_path: Path) -> None:
    """Removing the codes after a CR inside a line made every line of the Swift sample end
    in CRLF, and the refusal blamed a CRLF copy the diff never went through."""
    before = {"README": b"samples\n"}
    after = {"README": b"samples\n", "test.swift": b"a\r\x1b[38;2;1;2;3m\x1b[0m\nb\r\n"}
    patch = git_patch(tmp_path, before, after, "--color=always")
    tree, error = engine_apply(tmp_path, before, patch)
    assert tree == before
    assert error is not None and "coloured diff" in error
