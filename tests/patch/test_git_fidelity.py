"""git is the reference: for random trees a and b, git's own diff of a -> b applies to a as b.

Files mix LF and CRLF lines, lone CRs inside lines, a last line with or without
its newline, lines that look like patch syntax (`--- a/x`, `@@ -1 +1 @@`, `-- `,
a Markdown fence), names git must quote, executable bits, creation and
deletion. Each diff is made by a real git (`git diff --cached`, also -U0 and
-U1), applied by the engine, and the tree compared byte for byte and bit for
bit with b (git apply itself gets some -U0 diffs of files without a final
newline wrong, so b, not git apply's output, is the reference here). A second
property garbles the diffs the way models do: the engine must then give b, or
what `git apply` gives, or refuse with the tree unchanged. The last property
puts the same trees through hello-tui's own diff writer, with git (byte for
byte) and unidiff as the judges.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from hello_tui.config import load_settings
from hello_tui.patch import PatchError, commit_plan, plan_patch_text
from hello_tui.patch.written_diff import FileChange, diff_file, render

from .diff_oracle import assert_unidiff_agrees

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

GIT_RUNS = hyp_settings(
    max_examples=int(os.environ.get("GIT_FIDELITY_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

LINE = st.sampled_from(
    [
        "",
        "x",
        "y",
        " x",
        "x ",
        "\tx",
        "a\rb",
        "caf\u00e9",
        "}",
        "```",
        "-- ",
        "--- a/x",
        "+++ b/x",
        "@@ -1 +1 @@",
        "\\ No newline at end of file",
        "diff --git a/x b/x",
        "Binary files a/x and b/x differ",
    ]
)
NAMES = ["f.txt", "dir/g.py", "caf\u00e9.txt", "sp ace.md", 'q"t.txt', "t\tb.txt"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


@st.composite
def file_text(draw) -> bytes:
    lines = draw(st.lists(LINE, max_size=12))
    out = []
    for line in lines:
        out.append(line + draw(st.sampled_from(["\n", "\n", "\r\n"])))
    if out and draw(st.booleans()):
        out[-1] = out[-1].rstrip("\n").removesuffix("\r")  # no final newline
        if draw(st.booleans()):
            out[-1] += "\r"  # a CR with no LF after it: text, as git sees it
    return "".join(out).encode("utf-8")


@st.composite
def edited(draw, a: bytes) -> bytes:
    """b as an edit of a, so hunks have context (a fresh text would be one big change)."""
    lines = a.decode("utf-8").splitlines(keepends=True) if a else []
    out: list[str] = []
    for line in lines:
        action = draw(st.sampled_from(["keep", "keep", "keep", "drop", "change", "eol"]))
        if action == "keep":
            out.append(line)
        elif action == "change":
            out.append(draw(LINE) + "\n")
        elif action == "eol":
            body = line.rstrip("\r\n")
            out.append(body + ("\n" if line.endswith("\r\n") else "\r\n"))
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(LINE) + draw(st.sampled_from(["\n", "\r\n"])))
    text = "".join(out)
    if text and draw(st.integers(0, 3)) == 0:
        text = text.rstrip("\n").removesuffix("\r")
    return text.encode("utf-8")


@st.composite
def tree_pair(draw):
    """({name: (bytes, mode)} before, the same after); absent files are not in the dict."""
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2, unique=True))
    a: dict[str, tuple[bytes, int]] = {}
    b: dict[str, tuple[bytes, int]] = {}
    for name in names:
        kind = draw(st.sampled_from(["edit", "edit", "edit", "create", "delete"]))
        mode_a = draw(st.sampled_from([0o644, 0o755]))
        mode_b = draw(st.sampled_from([0o644, 0o644, 0o755]))
        if kind == "create":
            b[name] = (draw(file_text()), mode_b)
            continue
        data = draw(file_text())
        a[name] = (data, mode_a)
        if kind == "edit":
            b[name] = (draw(edited(data)), mode_b)
    if a == b:
        name = names[0]
        data, mode = b.get(name, (b"", 0o644))
        b[name] = (data + b"tail\n", mode)
    return a, b


def _git(cwd: Path, *args: str, input_bytes: bytes | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, input=input_bytes, capture_output=True, check=False
    )


def _write_tree(root: Path, files: dict[str, tuple[bytes, int]]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for name, (data, mode) in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode)


def _read_tree(root: Path) -> dict[str, tuple[bytes, bool]]:
    out = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".git", ".helloagents") or not path.is_file():
            continue
        out[rel.as_posix()] = (path.read_bytes(), bool(path.stat().st_mode & 0o100))
    return out


def _expected(files: dict[str, tuple[bytes, int]]) -> dict[str, tuple[bytes, bool]]:
    return {name: (data, bool(mode & 0o100)) for name, (data, mode) in files.items()}


def git_diff(root: Path, a, b, options: list[str]) -> bytes:
    repo = root / "gitrepo"
    _write_tree(repo, a)
    _git(repo, "init", "-q")
    _git(repo, "config", "core.autocrlf", "false")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "a")
    for name in a:
        (repo / name).unlink()
    _write_tree(repo, b)
    _git(repo, "add", "-A")
    proc = _git(repo, "diff", "--cached", *options)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def engine_apply(root: Path, a, patch: bytes) -> tuple[dict, str | None]:
    work = root / "engine"
    _write_tree(work, a)
    settings = load_settings(work, environ={})
    try:
        plan = plan_patch_text(patch.decode("utf-8", "surrogateescape"), settings, limits=False)
        commit_plan(plan, settings)
    except PatchError as exc:
        return _read_tree(work), str(exc)
    return _read_tree(work), None


def git_apply(root: Path, a, patch: bytes, options: list[str]) -> dict | None:
    work = root / "gitapply"
    _write_tree(work, a)
    (root / "p.diff").write_bytes(patch)
    extra = ["--unidiff-zero"] if "-U0" in options else []
    proc = _git(work, "apply", *extra, str(root / "p.diff"))
    return _read_tree(work) if proc.returncode == 0 else None


OPTIONS = st.sampled_from([[], ["-U0"], ["-U1"], ["--binary"]])


@GIT_RUNS
@given(tree_pair(), OPTIONS)
def test_git_diff_of_a_to_b_applies_as_b(pair, options):
    a, b = pair
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        patch = git_diff(root, a, b, options)
        want = _expected(b)
        got, error = engine_apply(root, a, patch)
        assert error is None, f"{error}\n{patch!r}"
        assert got == want, patch


def _garble(draw, patch: str) -> str:
    lines = patch.split("\n")
    kind = draw(
        st.sampled_from(["counts", "numbers", "blank_context", "no_git_header", "fence", "prose"])
    )
    if kind == "counts":
        idx = [i for i, x in enumerate(lines) if x.startswith("@@ -")]
        if idx:
            i = draw(st.sampled_from(idx))
            lines[i] = "@@ -" + "1,99 +1,97 @@" + lines[i].split(" @@", 1)[-1]
    elif kind == "numbers":
        shift = draw(st.integers(-3, 7))

        def moved(line: str) -> str:
            head, _, rest = line.partition(" @@")
            old, new = head[4:].split(" +")
            o = old.split(",")
            o[0] = str(max(int(o[0]) + shift, 1))
            return "@@ -" + ",".join(o) + " +" + new + " @@" + rest

        lines = [moved(x) if x.startswith("@@ -") else x for x in lines]
    elif kind == "blank_context":
        lines = ["" if x == " " else x for x in lines]
    elif kind == "no_git_header":
        lines = [x for x in lines if not x.startswith(("diff --git ", "index "))]
    elif kind == "fence":
        lines = ["Here is the change:", "```diff", *lines, "```", "Done."]
    elif kind == "prose":
        lines = ["I fixed it as follows.", "", *lines, "", "Let me know."]
    return "\n".join(lines)


@GIT_RUNS
@given(tree_pair(), st.sampled_from([[], ["-U1"]]), st.data())
def test_garbled_git_diffs_apply_as_git_or_as_b_or_change_nothing(pair, options, data):
    a, b = pair
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        clean = git_diff(root, a, b, options).decode("utf-8", "surrogateescape")
        garbled = _garble(data.draw, clean).encode("utf-8", "surrogateescape")
        got, error = engine_apply(root, a, garbled)
        if error is not None:
            assert got == _expected(a), f"refused but changed the tree: {error}"
            return
        acceptable = [_expected(b)]
        by_git = git_apply(root, a, garbled, options)
        if by_git is not None:
            acceptable.append(by_git)
        assert got in acceptable, garbled


# ---- the same diffs as users paste them: CRLF copies, MIME mails, colours, shuffled hunks


def _lf_only(files: dict[str, tuple[bytes, int]]) -> dict[str, tuple[bytes, int]]:
    return {name: (data.replace(b"\r", b""), mode) for name, (data, mode) in files.items()}


def git_mail(root: Path, a, b, style: str) -> bytes:
    """`git format-patch --attach` / `--inline` of the commit a -> b (a MIME multipart mail)."""
    git_diff(root, a, b, [])  # leaves a committed and b staged in root/gitrepo
    repo = root / "gitrepo"
    _git(repo, "commit", "-q", "--allow-empty", "-m", "b")
    proc = _git(repo, "format-patch", style, "--binary", "-1", "--stdout")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _shuffle_hunks(diff: bytes, draw) -> bytes:
    """Each file's hunks in an order drawn by hypothesis (git's diff otherwise as it is)."""
    out: list[bytes] = []
    for section in diff.split(b"\ndiff --git "):
        head, *hunks = section.split(b"\n@@ ")
        if len(hunks) > 1:
            hunks = draw(st.permutations(hunks))
            hunks = [h if h.endswith(b"\n") else h + b"\n" for h in hunks]
            hunks[-1] = hunks[-1].removesuffix(b"\n")
        out.append(b"\n@@ ".join([head, *hunks]))
    return b"\ndiff --git ".join(out)


PASTES = st.sampled_from(["crlf copy", "attach", "inline", "colour", "colour moved", "shuffled"])


@GIT_RUNS
@given(tree_pair(), PASTES, st.data())
def test_pasted_forms_of_git_diffs_apply_as_b(pair, paste, data):
    a, b = pair
    if paste == "crlf copy":
        # A CRLF copy of a diff for LF files: the files keep their LF endings. (The lines
        # added to a new or empty file say only what the copy says: those are left out.)
        a = {n: v for n, v in _lf_only(a).items() if v[0]}
        b = {n: v for n, v in _lf_only(b).items() if n in a}
        if a == b:
            return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if paste in ("attach", "inline"):
            patch = git_mail(root, a, b, f"--{paste}")
            assert b"Content-Type: multipart/mixed" in patch
        elif paste.startswith("colour"):
            extra = ["--color-moved"] if paste == "colour moved" else []
            patch = git_diff(root, a, b, ["--color=always", *extra])
        else:
            patch = git_diff(root, a, b, [])
            if paste == "crlf copy":
                patch = patch.replace(b"\n", b"\r\n")
            else:
                patch = _shuffle_hunks(patch, data.draw)
        got, error = engine_apply(root, a, patch)
        assert error is None, f"{error}\n{patch!r}"
        want = _expected(b)
        if paste == "shuffled" and got != want:
            # Where the lines repeat, git's nearest-to-the-stated-line rule decides.
            assert got == git_apply(root, a, patch, []), patch
            return
        assert got == want, patch


# ---- the same trees through hello-tui's own diff writer: git's headers, unidiff's reading


def _changes(a, b) -> list[FileChange]:
    """Each file of a or b as one change, in git's order (no renames: git is told --no-renames)."""
    out = []
    for name in sorted(set(a) | set(b), key=lambda n: n.encode("utf-8")):
        old, old_mode = a.get(name, (None, None))
        new, new_mode = b.get(name, (None, None))
        change = FileChange(name, name, old, new, old_mode or new_mode, new_mode or old_mode)
        if not change.unchanged:
            out.append(change)
    return out


def _sections(diff: str) -> list[str]:
    """One file's section each: a `diff --git` line starts one (a hunk's lines never do)."""
    return [part for part in re.split(r"^(?=diff --git )", diff, flags=re.MULTILINE) if part]


def _comparable(section: str) -> str:
    """A file's section up to any binary literal: git deflates its data its own way."""
    return section.split("GIT binary patch\n", 1)[0]


@GIT_RUNS
@given(tree_pair(), st.sampled_from([False, True]))
def test_the_diff_writer_agrees_with_git_and_unidiff(pair, literals):
    """The writer's diff of a -> b is git's, byte for byte: files in git's order, git's
    header lines (names, quoting, modes, index, ---/+++, `Binary files`) and git's hunks,
    the lines its diff chose where lines repeat included (binary literals aside: zlib's
    output is git's business). unidiff reads it with the writer's own hunks and counts,
    and both the engine and `git apply` turn a into b with it."""
    a, b = pair
    changes = _changes(a, b)
    diffs = [diff_file(c, binary_literals=literals) for c in changes]
    text = render(diffs)
    assert_unidiff_agrees(changes, diffs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        options = ["--no-renames"] + (["--binary"] if literals else [])
        theirs = git_diff(root, a, b, options).decode("utf-8", "surrogateescape")
        assert [_comparable(s) for s in _sections(text)] == [
            _comparable(s) for s in _sections(theirs)
        ]
        patch = text.encode("utf-8", "surrogateescape")
        got, error = engine_apply(root, a, patch)
        assert error is None, f"{error}\n{text!r}"
        assert got == _expected(b), text
        assert git_apply(root, a, patch, []) == _expected(b), text
