"""The one diff writer against real git, byte for byte, and against unidiff, its oracle.

Each shape below is committed in a real repository, changed, and `git diff
--cached -M` (three lines of context, git's default algorithm) compared with
the writer's text for the same old and new bytes, the whole text; the
hypothesis corpus in test_git_fidelity.py and the larger files of
test_line_diff.py compare random trees the same way.

The property at the end is unidiff as oracle: for random old and new files
(CRLF, no final newline, empty, created, deleted, renamed, mode changes,
binary, planned hunks that restate context, any context size), unidiff reads
the writer's text with the writer's own files, hunks and counts, and its hunks
turn the old text into the new one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hello_tui.patch.similarity import similarity_percent
from hello_tui.patch.types import Hunk
from hello_tui.patch.written_diff import FileChange, Lines, diff_file, render

from .diff_oracle import assert_unidiff_agrees
from .git_runner import git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _put(repo: Path, files: dict[str, tuple[bytes, int]]) -> None:
    for name, (data, mode) in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)


def git_diff_of(repo: Path, changes: list[FileChange], *options: str) -> str:
    """git's own diff of the changes: old tree committed, new tree staged."""
    git(repo, "init", "-q")
    _put(repo, {c.old_path: (c.old, c.old_mode or 0o644) for c in changes if c.old is not None})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "old")
    for c in changes:
        if c.old is not None:
            (repo / c.old_path).unlink()
    _put(repo, {c.new_path: (c.new, c.new_mode or 0o644) for c in changes if c.new is not None})
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached", "-M", *options, "HEAD").stdout.decode(
        "utf-8", "surrogateescape"
    )


def ours(changes: list[FileChange], *, binary_literals: bool = False) -> str:
    ordered = sorted(changes, key=lambda c: c.new_path.encode("utf-8", "surrogateescape"))
    return render([diff_file(c, binary_literals=binary_literals) for c in ordered])


BODY = b"".join(b"line %d\n" % n for n in range(1, 31))
FUNCS = b"def first():\n" + BODY + b"class Second:\n" + BODY


def _edit(data: bytes, old: bytes, new: bytes) -> bytes:
    assert old in data
    return data.replace(old, new, 1)


SHAPES = {
    "add": [FileChange("new.py", "new.py", None, b"a\nb\n")],
    "add empty": [FileChange("empty.txt", "empty.txt", None, b"")],
    "delete": [FileChange("gone.txt", "gone.txt", b"bye\nnow\n", None)],
    "delete executable": [FileChange("x.sh", "x.sh", b"echo\n", None, 0o755, 0o755)],
    "modify with function context": [
        FileChange(
            "f.py",
            "f.py",
            FUNCS,
            _edit(_edit(FUNCS, b"line 12\n", b"LINE 12\n"), b"line 25\nline 26\n", b"x\n"),
        )
    ],
    "insertion numbered -18,0": [
        FileChange("p.txt", "p.txt", BODY, _edit(BODY, b"line 18\n", b"line 18\nnew a\nnew b\n"))
    ],
    "one-line file": [FileChange("one", "one", b"a\n", b"b\n")],
    "rename": [FileChange("old name.txt", "new name.txt", BODY, BODY)],
    "rename with an edit": [
        FileChange("src/a.py", "src/b.py", BODY, _edit(BODY, b"line 30\n", b"LINE 30\n"))
    ],
    "mode change": [FileChange("run.sh", "run.sh", b"echo hi\n", b"echo hi\n", 0o644, 0o755)],
    "mode and content": [FileChange("run.sh", "run.sh", b"echo hi\n", b"echo ho\n", 0o755, 0o644)],
    "no newline on the old side": [FileChange("n", "n", b"a\nb\nc", b"a\nb\nc\n")],
    "no newline on the new side": [FileChange("n", "n", b"a\nb\nc\n", b"a\nb\nc")],
    "no newline on both sides": [FileChange("n", "n", b"a\nb\nc", b"a\nB\nc")],
    "crlf": [FileChange("w.txt", "w.txt", b"one\r\ntwo\r\nthree\r\n", b"one\r\n2\r\nthree\r\n")],
    "crlf to lf and a lone cr": [
        FileChange("w.txt", "w.txt", b"a\r\nb\rc\r\nd\n", b"a\nb\rc\r\nd\n")
    ],
    "quoted paths": [
        FileChange("caf\u00e9.txt", "caf\u00e9.txt", b"x\n", b"y\n"),
        FileChange("tab\there.txt", "tab\there.txt", None, b"t\n"),
        FileChange('say "hi".md', 'say "hi".md', b"q\n", None),
    ],
    "binary": [FileChange("blob.bin", "blob.bin", bytes(range(256)), b"\0new" + bytes(100))],
    "binary added": [FileChange("logo.png", "logo.png", None, b"\x89PNG\0\0")],
    "several files in git's order": [
        FileChange("b.txt", "b.txt", b"1\n", b"2\n"),
        FileChange("a/z.txt", "a/z.txt", None, b"z\n"),
        FileChange("a.txt", "a.txt", b"x\n", None),
    ],
}


@needs_git
@pytest.mark.parametrize("shape", SHAPES)
def test_the_writer_writes_what_git_writes(tmp_path, shape):
    changes = SHAPES[shape]
    assert ours(changes) == git_diff_of(tmp_path, changes)
    assert_unidiff_agrees(changes, [diff_file(c) for c in changes])


@needs_git
def test_binary_literals_apply_with_git_both_ways(tmp_path):
    old, new = bytes(range(256)) * 3, b"\0new" + bytes(range(200))
    change = FileChange("blob.bin", "blob.bin", old, new)
    theirs = git_diff_of(tmp_path, [change], "--binary")
    text = ours([change], binary_literals=True)
    # The headers are git's; the deflated data is ours (git picks its own zlib level or
    # a delta), so the literals are checked by what git apply makes of them.
    assert text.split("GIT binary patch")[0] == theirs.split("GIT binary patch")[0]
    (tmp_path / "p.diff").write_text(text)
    git(tmp_path, "apply", "--cached", "-R", "--check", str(tmp_path / "p.diff"))
    (tmp_path / "blob.bin").write_bytes(old)
    git(tmp_path, "apply", str(tmp_path / "p.diff"))
    assert (tmp_path / "blob.bin").read_bytes() == new


@needs_git
@pytest.mark.parametrize("seed", range(6))
def test_the_similarity_index_is_gits(tmp_path, seed):
    import random

    rng = random.Random(seed)
    words = [b"alpha", b"beta", b"", b"x" * 70, b"tab\r", b"y" * 130]
    old = b"".join(rng.choice(words) + rng.choice([b"\n", b"\r\n"]) for _ in range(12))
    old += b"no newline" if seed % 2 else b""
    lines = old.splitlines(keepends=True)
    lines[rng.randrange(len(lines))] = b"changed\n"
    new = b"".join(lines)
    change = FileChange("o.txt", "n.txt", old, new)
    percent = similarity_percent(old, new)
    assert percent >= 50  # one line of twelve changed: git calls it a rename
    assert ours([change]) == git_diff_of(tmp_path, [change])


# ---------------------------------------------------------------- unidiff as oracle

LINES = st.sampled_from(
    [
        "",
        "x",
        "y",
        " x",
        "def f():",
        "    return 1",
        "_private = 2",
        "a\rb",
        "caf\u00e9",
        "--- a/x",
        "+++ b/x",
        "@@ -1 +1 @@",
        "\\ No newline at end of file",
        "diff --git a/x b/x",
        "Binary files a/x and b/x differ",
    ]
)


@st.composite
def texts(draw) -> bytes:
    lines = draw(st.lists(LINES, max_size=25))
    out = [line + draw(st.sampled_from(["\n", "\n", "\r\n"])) for line in lines]
    if out and draw(st.booleans()):
        out[-1] = out[-1].rstrip("\n").removesuffix("\r")
    return "".join(out).encode("utf-8")


@st.composite
def edits_of(draw, old: bytes) -> bytes:
    lines = old.decode("utf-8").splitlines(keepends=True)
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        cut = draw(st.integers(0, 3))
        lines[at : at + cut] = [draw(LINES) + "\n" for _ in range(draw(st.integers(0, 3)))]
    new = "".join(lines)
    if new and draw(st.integers(0, 4)) == 0:
        new = new.rstrip("\n")
    return new.encode("utf-8")


def _planned_hunks(old: bytes, new: bytes, pad: int) -> list[Hunk]:
    """Hunks as a patch may state them: each change with `pad` unchanged lines restated."""
    import difflib

    a, b = Lines.of(old).keys(), Lines.of(new).keys()
    hunks: list[Hunk] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        lo = min(pad, i1 - (hunks[-1].old_start + len(hunks[-1].old_lines)) if hunks else i1)
        lo = max(lo, 0)
        hunks.append(Hunk(len(hunks), i1 - lo, a[i1 - lo : i2], b[j1 - lo : j2]))
    return hunks


NAMES = st.sampled_from(["f.txt", "dir/g.py", "caf\u00e9.txt", "sp ace.md", 'q"t.txt', "t\tb"])


@st.composite
def changes(draw) -> FileChange:
    kind = draw(st.sampled_from(["edit", "edit", "add", "delete", "rename", "binary"]))
    path = draw(NAMES)
    old_mode = draw(st.sampled_from([0o644, 0o755]))
    new_mode = draw(st.sampled_from([old_mode, old_mode, 0o644, 0o755]))
    old = draw(texts())
    new = draw(edits_of(old))
    if kind == "add":
        return FileChange(path, path, None, new, None, new_mode)
    if kind == "delete":
        return FileChange(path, path, old, None, old_mode, old_mode)
    if kind == "binary":
        old = old + b"\0" if draw(st.booleans()) else old
        new = b"\0" + new
    new_path = draw(NAMES) if kind == "rename" else path
    hunks = _planned_hunks(old, new, draw(st.integers(0, 2))) if draw(st.booleans()) else []
    return FileChange(path, new_path, old, new, old_mode, new_mode, hunks)


ORACLE_RUNS = hyp_settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@ORACLE_RUNS
@given(st.lists(changes(), min_size=1, max_size=3), st.sampled_from([0, 1, 3]), st.booleans())
def test_unidiff_reads_every_diff_the_writer_writes(drawn, context, literals):
    files = [c for c in drawn if not c.unchanged]
    diffs = [diff_file(c, context=context, binary_literals=literals) for c in files]
    assert_unidiff_agrees(files, diffs)
