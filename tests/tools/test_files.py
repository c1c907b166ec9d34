"""ls, glob, read and the path safety they share."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from hello_tui.core.tools import ToolContext, ToolResult
from hello_tui.tools.files import (
    READ_MAX_BYTES_WITHOUT_RANGE,
    GlobTool,
    LsTool,
    ReadTool,
    glob_to_regex,
)
from hello_tui.tools.paths import (
    PathError,
    VisibleTree,
    is_protected,
    rebase_ignore_line,
    resolve_repo_path,
)
from tests.tools.helpers import make_ctx, write


async def call(tool, ctx: ToolContext, **args) -> ToolResult:
    return await tool.run(tool.Args.model_validate(args), ctx)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root / "README.md", "# demo\n")
    write(root / "src" / "app.py", "print('hi')\n")
    write(root / "src" / "util" / "helpers.py", "def helper():\n    return 1\n")
    write(root / "src" / "build.log", "log\n")
    write(root / ".gitignore", "*.log\nnode_modules/\n")
    write(root / "node_modules" / "pkg" / "index.js", "x\n")
    write(root / ".git" / "config", "[core]\n")
    write(root / ".helloagents" / "notes" / "n.md", "note\n")
    write(root / ".github" / "ci.yml", "on: push\n")
    return root


# ---------------------------------------------------------------- paths


class TestResolveRepoPath:
    def test_relative_and_absolute_inside(self, repo: Path):
        assert resolve_repo_path(repo, "src/app.py").rel == "src/app.py"
        assert resolve_repo_path(repo, "./src/../src/app.py").rel == "src/app.py"
        assert resolve_repo_path(repo, str(repo / "README.md")).rel == "README.md"
        assert resolve_repo_path(repo, "").rel == "."
        assert resolve_repo_path(repo, None).path == repo

    @pytest.mark.parametrize(
        "raw, words",
        [
            ("../outside.txt", "outside the repository"),
            ("src/../../x", "outside the repository"),
            ("/etc/passwd", "outside the repository"),
            ("~/.ssh/id_rsa", "'~'"),
            ("src/a\x00b", "NUL"),
        ],
    )
    def test_refused(self, repo: Path, raw: str, words: str):
        with pytest.raises(PathError) as err:
            resolve_repo_path(repo, raw)
        assert words in str(err.value)

    def test_symlink_leading_out_is_refused(self, repo: Path, tmp_path: Path):
        secret = write(tmp_path / "secret.txt", "s3cret\n")
        os.symlink(secret, repo / "link.txt")
        os.symlink(tmp_path, repo / "linkdir")
        with pytest.raises(PathError, match="symlink"):
            resolve_repo_path(repo, "link.txt")
        with pytest.raises(PathError, match="symlink"):
            resolve_repo_path(repo, "linkdir/secret.txt")

    def test_symlink_inside_keeps_its_own_name(self, repo: Path):
        os.symlink(repo / "README.md", repo / "readme-link.md")
        assert resolve_repo_path(repo, "readme-link.md").rel == "readme-link.md"

    def test_protected(self):
        assert is_protected(".git/config", ".helloagents")
        assert is_protected(".helloagents/notes/x.md", ".helloagents")
        assert not is_protected("src/.git-notes", ".helloagents")
        assert not is_protected(".", ".helloagents")

    def test_rebase_ignore_lines(self):
        assert rebase_ignore_line("*.log", ".") == "*.log"
        assert rebase_ignore_line("*.log", "src") == "/src/**/*.log"
        assert rebase_ignore_line("/build", "src") == "/src/build"
        assert rebase_ignore_line("out/", "a/b") == "/a/b/**/out/"
        assert rebase_ignore_line("!keep.log", "src") == "!/src/**/keep.log"
        assert rebase_ignore_line("# comment", "src") is None
        assert rebase_ignore_line("   ", "src") is None


class TestVisibleTree:
    def test_nested_gitignore_and_negation(self, repo: Path):
        write(repo / "src" / ".gitignore", "generated/\n!keep.log\n")
        write(repo / "src" / "generated" / "g.py", "g\n")
        write(repo / "src" / "keep.log", "k\n")
        tree = VisibleTree(repo, ".helloagents", include_hidden=True)
        seen = {e.rel for e in tree.walk(".")}
        assert "src/keep.log" in seen  # re-included by the deeper file
        assert "src/build.log" not in seen
        assert "src/generated" not in seen and "src/generated/g.py" not in seen
        assert "node_modules" not in seen
        assert not any(r.startswith((".git/", ".helloagents")) or r == ".git" for r in seen)
        assert ".github/ci.yml" in seen

    def test_hidden_skipped_when_asked(self, repo: Path):
        tree = VisibleTree(repo, ".helloagents", include_hidden=False)
        seen = {e.rel for e in tree.walk(".")}
        assert ".github" not in seen and ".gitignore" not in seen
        assert "src/app.py" in seen


# ---------------------------------------------------------------- ls


class TestLs:
    async def test_tree_respects_gitignore_and_hides_state(self, repo: Path):
        result = await call(LsTool(), make_ctx(repo))
        assert result.status == "success"
        lines = result.text.splitlines()
        assert "src/" in lines and "  util/ (1 entry)" in lines and "  app.py" in lines
        assert "README.md" in lines and ".github/" in lines
        for hidden in ("node_modules", ".git/", ".helloagents", "build.log"):
            assert not any(hidden in line for line in lines), hidden
        paths = {e["path"] for e in result.data["entries"]}
        assert "src/util" in paths and "src/build.log" not in paths

    async def test_depth(self, repo: Path):
        result = await call(LsTool(), make_ctx(repo), depth=3)
        assert "    helpers.py" in result.text.splitlines()
        shallow = await call(LsTool(), make_ctx(repo), depth=1)
        assert "src/ (2 entries)" in shallow.text.splitlines()  # build.log is ignored

    async def test_subfolder_and_file_and_missing(self, repo: Path):
        sub = await call(LsTool(), make_ctx(repo), path="src")
        assert sub.text.splitlines()[0] == "src:" and "  helpers.py" in sub.text
        file_result = await call(LsTool(), make_ctx(repo), path="README.md")
        assert file_result.status == "success" and "is a file" in file_result.text
        missing = await call(LsTool(), make_ctx(repo), path="nope")
        assert missing.status == "error" and "does not exist" in missing.text
        outside = await call(LsTool(), make_ctx(repo), path="..")
        assert outside.status == "error" and "outside the repository" in outside.text

    async def test_ignored_folder_asked_for_by_name_is_shown(self, repo: Path):
        result = await call(LsTool(), make_ctx(repo), path="node_modules", depth=3)
        assert result.text.splitlines() == ["node_modules:", "pkg/", "  index.js"]
        found = await call(GlobTool(), make_ctx(repo), pattern="**/*.js", path="node_modules")
        assert found.data["matches"] == ["node_modules/pkg/index.js"]

    async def test_empty_folder(self, repo: Path):
        (repo / "empty").mkdir()
        result = await call(LsTool(), make_ctx(repo), path="empty")
        assert result.status == "success" and "(empty folder)" in result.text

    async def test_cap_with_count(self, tmp_path: Path):
        for i in range(450):
            write(tmp_path / f"f{i:03}.txt", "")
        result = await call(LsTool(), make_ctx(tmp_path))
        assert result.status == "partial"
        assert "… 50 more entries not shown" in result.text
        assert len(result.data["entries"]) == 400

    async def test_symlink_loop_does_not_hang(self, repo: Path):
        os.symlink(repo / "src", repo / "src" / "loop")
        os.symlink("self", repo / "self")
        result = await call(LsTool(), make_ctx(repo), depth=8)
        assert result.status == "success"
        assert "  loop -> " in result.text and "self -> self" in result.text

    async def test_spaces_and_chinese_names(self, repo: Path):
        write(repo / "docs" / "设计 文档.md", "x\n")
        result = await call(LsTool(), make_ctx(repo), path="docs")
        assert result.text.splitlines() == ["docs:", "设计 文档.md"]


# ---------------------------------------------------------------- glob


class TestGlob:
    @pytest.mark.parametrize(
        "pattern, path, ok, bad",
        [
            ("**/*.py", "a/b/c.py", True, False),
            ("**/*.py", "c.py", True, False),
            ("*.py", "a/c.py", False, True),
            ("src/*.{js,ts}", "src/x.ts", True, False),
            ("src/*.{js,ts}", "src/x.py", False, True),
            ("file?.txt", "file1.txt", True, False),
            ("[ab].md", "a.md", True, False),
            ("[!ab].md", "a.md", False, True),
            ("src/**", "src/a/b", True, False),
        ],
    )
    def test_translation(self, pattern, path, ok, bad):
        assert bool(glob_to_regex(pattern).match(path)) is ok
        assert ok is not bad

    async def test_recursive_sorted(self, repo: Path):
        result = await call(GlobTool(), make_ctx(repo), pattern="**/*.py")
        assert result.status == "success"
        assert result.data["matches"] == ["src/app.py", "src/util/helpers.py"]

    async def test_relative_to_path(self, repo: Path):
        result = await call(GlobTool(), make_ctx(repo), pattern="*.py", path="src")
        assert result.data["matches"] == ["src/app.py"]

    async def test_no_match_is_success_missing_path_is_error(self, repo: Path):
        none = await call(GlobTool(), make_ctx(repo), pattern="*.rs")
        assert none.status == "success" and none.data["matches"] == []
        assert "No files matched" in none.text and "'**/*.rs'" in none.text
        missing = await call(GlobTool(), make_ctx(repo), pattern="*.py", path="nowhere")
        assert missing.status == "error" and "does not exist" in missing.text

    async def test_gitignored_and_state_not_listed(self, repo: Path):
        result = await call(GlobTool(), make_ctx(repo), pattern="**")
        found = result.data["matches"]
        assert "src/build.log" not in found and "node_modules" not in found
        assert not any(p.startswith((".git/", ".helloagents")) for p in found)

    async def test_escaping_patterns_refused(self, repo: Path):
        for bad in ("../*", "/etc/*", "~/x"):
            result = await call(GlobTool(), make_ctx(repo), pattern=bad)
            assert result.status == "error", bad

    async def test_symlink_loop(self, repo: Path):
        os.symlink(repo, repo / "src" / "up")
        result = await call(GlobTool(), make_ctx(repo), pattern="**/*.py")
        assert result.data["matches"] == ["src/app.py", "src/util/helpers.py"]

    async def test_cap(self, tmp_path: Path):
        for i in range(520):
            write(tmp_path / f"m{i:03}.md", "")
        result = await call(GlobTool(), make_ctx(tmp_path), pattern="*.md")
        assert result.status == "partial" and "… 20 more not shown" in result.text
        assert result.data["total"] == 520


# ---------------------------------------------------------------- read


class TestRead:
    async def test_numbered_and_recorded(self, repo: Path):
        ctx = make_ctx(repo)
        result = await call(ReadTool(), ctx, path="src/util/helpers.py")
        assert result.status == "success"
        assert result.text == "     1\tdef helper():\n     2\t    return 1"
        record = ctx.reads["src/util/helpers.py"]
        raw = (repo / "src/util/helpers.py").read_bytes()
        assert record.sha256 == hashlib.sha256(raw).hexdigest()
        assert record.size == len(raw)
        assert record.mtime == os.stat(repo / "src/util/helpers.py").st_mtime

    async def test_default_limit_and_offset(self, repo: Path):
        write(repo / "long.txt", "".join(f"line {i}\n" for i in range(1, 451)))
        ctx = make_ctx(repo)
        first = await call(ReadTool(), ctx, path="long.txt")
        assert first.status == "partial"
        assert first.text.splitlines()[199] == "   200\tline 200"
        assert "[lines 1–200 of 450; use offset=201 to read more]" in first.text
        middle = await call(ReadTool(), ctx, path="long.txt", offset=201, limit=10)
        assert middle.text.splitlines()[0] == "   201\tline 201"
        assert "use offset=211" in middle.text
        tail = await call(ReadTool(), ctx, path="long.txt", offset=441)
        assert tail.status == "success" and "[lines 441–450 of 450]" in tail.text
        past = await call(ReadTool(), ctx, path="long.txt", offset=999)
        assert past.status == "error" and "past the end" in past.text

    async def test_long_line_cut(self, repo: Path):
        write(repo / "wide.txt", "x" * 100_000 + "\nshort\n")
        result = await call(ReadTool(), make_ctx(repo), path="wide.txt")
        first = result.text.splitlines()[0]
        assert "[line cut: 98000 more chars]" in first and len(first) < 2100
        assert "     2\tshort" in result.text

    async def test_bom_and_crlf(self, repo: Path):
        write(repo / "bom.py", b"\xef\xbb\xbfx = 1\r\ny = 2\r\n")
        result = await call(ReadTool(), make_ctx(repo), path="bom.py")
        assert result.text.startswith("     1\tx = 1\n     2\ty = 2")
        assert "byte order mark" in result.text and "\ufeff" not in result.text

    async def test_undecodable_bytes_noted(self, repo: Path):
        write(repo / "latin.txt", b"caf" + b"\xe9 ok\nnext line\n")
        result = await call(ReadTool(), make_ctx(repo), path="latin.txt")
        assert result.status == "success"
        assert "caf\ufffd ok" in result.text and "not valid UTF-8" in result.text

    async def test_binary_refused(self, repo: Path):
        write(repo / "img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
        ctx = make_ctx(repo)
        result = await call(ReadTool(), ctx, path="img.png")
        assert result.status == "error" and "binary" in result.text
        assert "img.png" not in ctx.reads
        noise = write(repo / "noise.bin", bytes(range(128, 256)) * 40)
        result = await call(ReadTool(), ctx, path=noise.name)
        assert result.status == "error" and "binary" in result.text

    async def test_huge_file_needs_range(self, repo: Path):
        line = "0123456789" * 10 + "\n"
        count = READ_MAX_BYTES_WITHOUT_RANGE // len(line) + 10
        (repo / "huge.txt").write_text(line * count)
        ctx = make_ctx(repo)
        refused = await call(ReadTool(), ctx, path="huge.txt")
        assert refused.status == "error" and "10 MB" in refused.text and "offset" in refused.text
        ranged = await call(ReadTool(), ctx, path="huge.txt", offset=5, limit=2)
        assert ranged.status == "partial"
        assert ranged.text.splitlines()[0].startswith("     5\t0123")
        assert f"of {count}; use offset=7" in ranged.text
        assert "huge.txt" in ctx.reads

    async def test_errors(self, repo: Path):
        ctx = make_ctx(repo)
        missing = await call(ReadTool(), ctx, path="nope.py")
        assert missing.status == "error" and "does not exist" in missing.text
        folder = await call(ReadTool(), ctx, path="src")
        assert folder.status == "error" and "folder" in folder.text
        outside = await call(ReadTool(), ctx, path="../../etc/passwd")
        assert outside.status == "error" and "outside" in outside.text
        assert ctx.reads == {}

    async def test_empty_file_and_chinese_path(self, repo: Path):
        write(repo / "空 文件.txt", "")
        write(repo / "中文.md", "你好，世界\n")
        ctx = make_ctx(repo)
        empty = await call(ReadTool(), ctx, path="空 文件.txt")
        assert empty.status == "success" and "empty" in empty.text
        hello = await call(ReadTool(), ctx, path="中文.md")
        assert hello.text == "     1\t你好，世界"
        assert set(ctx.reads) == {"空 文件.txt", "中文.md"}

    async def test_symlink_loop_is_an_error_not_a_hang(self, repo: Path):
        os.symlink("loop2", repo / "loop1")
        os.symlink("loop1", repo / "loop2")
        result = await call(ReadTool(), make_ctx(repo), path="loop1")
        assert result.status == "error"


# ------------------------------------------------------------- what the tools never show


async def test_git_internals_and_the_state_folder_are_never_shown(tmp_path):
    from hello_tui.tools.files import GlobTool, LsTool, ReadTool

    write(tmp_path / ".git" / "config", "[core]\n")
    write(tmp_path / ".helloagents" / "notes" / "n.md", "state\n")
    write(tmp_path / "a.txt", "a\n")
    ctx = make_ctx(tmp_path)
    for tool, args in (
        (ReadTool(), {"path": ".git/config"}),
        (ReadTool(), {"path": "./.git/../.git/config"}),
        (LsTool(), {"path": ".git"}),
        (LsTool(), {"path": ".helloagents/notes"}),
        (GlobTool(), {"pattern": "*", "path": ".git"}),
    ):
        result = await tool.run(tool.Args.model_validate(args), ctx)
        assert result.status == "error" and result.text.startswith("Refused"), (args, result.text)
        assert result.declined  # an answer to the model, not a broken tool
    listed = await GlobTool().run(GlobTool.Args.model_validate({"pattern": "**"}), ctx)
    assert listed.data["matches"] == ["a.txt"]


async def test_a_nested_state_folder_is_hidden_where_it_is(tmp_path):
    from hello_tui.config import load_settings
    from hello_tui.core.tools import ToolContext
    from hello_tui.tools.files import GlobTool

    write(tmp_path / "var" / "state" / "notes" / "n.md", "state\n")
    write(tmp_path / "var" / "keep.txt", "k\n")
    settings = load_settings(tmp_path, environ={"HELLOAGENTS_DIR": "var/state"})
    listed = await GlobTool().run(
        GlobTool.Args.model_validate({"pattern": "**"}), ToolContext(settings=settings)
    )
    assert listed.data["matches"] == ["var", "var/keep.txt"]


async def test_links_to_git_internals_or_the_state_folder_are_refused_too(tmp_path):
    """A committed `meta -> .git` stays inside the repo; where it leads decides."""
    from hello_tui.tools.files import GlobTool, LsTool, ReadTool

    write(tmp_path / ".git" / "config", "[remote] url = https://me:ghp_token@x\n")
    write(tmp_path / ".helloagents" / "notes" / "n.md", "state\n")
    write(tmp_path / "src" / "a.txt", "a\n")
    os.symlink(".git", tmp_path / "meta")
    os.symlink(".git/config", tmp_path / "cfg")
    os.symlink(".helloagents", tmp_path / "st")
    os.symlink("src", tmp_path / "code")
    ctx = make_ctx(tmp_path)
    for tool, args in (
        (ReadTool(), {"path": "meta/config"}),
        (ReadTool(), {"path": "cfg"}),
        (ReadTool(), {"path": "st/notes/n.md"}),
        (LsTool(), {"path": "meta"}),
        (LsTool(), {"path": "st"}),
        (GlobTool(), {"pattern": "**/*", "path": "meta"}),
    ):
        result = await tool.run(tool.Args.model_validate(args), ctx)
        assert result.status == "error" and result.text.startswith("Refused"), (args, result.text)
        assert "symlink" in result.text and "ghp_token" not in result.text and result.declined
    # A link to an ordinary folder or file is followed as before.
    listed = await LsTool().run(LsTool.Args.model_validate({"path": "code"}), ctx)
    assert listed.status == "success" and "a.txt" in listed.text
    read = await ReadTool().run(ReadTool.Args.model_validate({"path": "code/a.txt"}), ctx)
    assert read.status == "success" and "a" in read.text


def test_writes_through_a_link_into_git_are_protected(tmp_path):
    os.symlink(".git", tmp_path / "meta")
    (tmp_path / ".git").mkdir()
    assert is_protected(resolve_repo_path(tmp_path, "meta/hooks/pre-commit"), ".helloagents")
    assert not is_protected(resolve_repo_path(tmp_path, "src/meta.py"), ".helloagents")


class _Approver:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def review_patch(self, plan):
        raise AssertionError("no patch here")

    async def approve_command(self, command: str, reason: str) -> str:
        self.asked.append(command)
        return self.answer


async def test_a_link_to_a_dotenv_file_asks_like_the_file(tmp_path):
    from hello_tui.tools.files import ReadTool

    write(tmp_path / ".env", "API_KEY=sk-dotenv\n")
    write(tmp_path / "README.md", "plain\n")
    os.symlink(".env", tmp_path / "notes.txt")
    os.symlink("README.md", tmp_path / "readme-link.md")
    ctx = make_ctx(tmp_path)
    ctx.approver = _Approver("deny")
    denied = await ReadTool().run(ReadTool.Args.model_validate({"path": "notes.txt"}), ctx)
    assert denied.declined and "sk-dotenv" not in denied.text
    assert ctx.approver.asked == ["read notes.txt"]
    plain = await ReadTool().run(ReadTool.Args.model_validate({"path": "readme-link.md"}), ctx)
    assert plain.status == "success" and "plain" in plain.text
    assert ctx.approver.asked == ["read notes.txt"]  # a link to a normal file does not ask


async def test_reading_a_dotenv_file_asks_first(tmp_path):
    from hello_tui.tools.files import ReadTool

    write(tmp_path / ".env", "API_KEY=sk-dotenv\n")
    ctx = make_ctx(tmp_path)
    ctx.approver = _Approver("deny")
    denied = await ReadTool().run(ReadTool.Args.model_validate({"path": ".env"}), ctx)
    assert denied.status == "error" and "sk-dotenv" not in denied.text and denied.declined
    assert ctx.approver.asked == ["read .env"]
    ctx.approver = _Approver("once")
    allowed = await ReadTool().run(ReadTool.Args.model_validate({"path": ".env"}), ctx)
    assert "sk-dotenv" in allowed.text
