"""grep: rg and the Python fallback must give the same answers, on good and bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext, ToolResult
from hello_tui.tools.grep import GrepTool, find_rg
from tests.tools.helpers import make_ctx, write

pytestmark = pytest.mark.skipif(find_rg() is None, reason="rg binary not installed")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(root / ".gitignore", "*.log\nbuild/\n")
    write(root / "src" / "app.py", "import os\n\ndef main():\n    print('hello')\n    return 0\n")
    write(root / "src" / "util.py", "def helper():\n    return 'Hello world'\n")
    write(root / "src" / ".gitignore", "/generated.py\n")
    write(root / "src" / "generated.py", "hello generated\n")
    write(root / "src" / "deep" / "generated.py", "hello deep\n")
    write(root / "docs" / "guide.md", "Say hi.\n-v is a flag\n")
    write(root / "docs" / "中文 笔记.md", "你好 hello 世界\n")
    write(root / "server.log", "hello log\n")
    write(root / "build" / "out.py", "hello build\n")
    write(root / ".hidden" / "secret.py", "hello hidden\n")
    write(root / ".helloagents" / "notes" / "n.md", "hello state\n")
    write(root / ".git" / "HEAD", "hello git\n")
    write(root / "bin.dat", b"hello\x00binary\n")
    write(root / "crlf.txt", b"hello crlf\r\nsecond\r\n")
    write(root / "bom.txt", b"\xef\xbb\xbfhello bom\n")
    return root


def tool_for(backend: str) -> GrepTool:
    tool = GrepTool(force_python=(backend == "python"))
    assert (tool.rg is None) is (backend == "python")
    return tool


async def grep(backend: str, repo: Path, **args) -> ToolResult:
    tool = tool_for(backend)
    return await tool.run(tool.Args.model_validate(args), make_ctx(repo))


BACKENDS = pytest.mark.parametrize("backend", ["rg", "python"])


@BACKENDS
async def test_grouped_by_file_with_line_numbers(repo: Path, backend: str):
    result = await grep(backend, repo, pattern="hello")
    assert result.status == "success"
    paths = [f["path"] for f in result.data["files"]]
    assert paths == sorted(paths)
    assert set(paths) == {
        "bom.txt",
        "crlf.txt",
        "docs/中文 笔记.md",
        "src/app.py",
        "src/deep/generated.py",
    }
    assert "src/app.py\n     4: " in result.text
    assert "     1: hello crlf" in result.text and "\r" not in result.text
    assert "     1: hello bom" in result.text and "\ufeff" not in result.text


@BACKENDS
async def test_skips_hidden_ignored_state_binary(repo: Path, backend: str):
    result = await grep(backend, repo, pattern="hello")
    text = result.text
    for absent in (
        "server.log",
        "build/",
        ".hidden",
        ".helloagents",
        ".git",
        "bin.dat",
        "src/generated.py",
    ):
        assert absent not in text, absent


@BACKENDS
async def test_subfolder_honours_gitignore_above(repo: Path, backend: str):
    write(repo / "src" / "trace.log", "hello trace\n")
    result = await grep(backend, repo, pattern="hello", path="src")
    assert [f["path"] for f in result.data["files"]] == ["src/app.py", "src/deep/generated.py"]


@BACKENDS
async def test_ignored_folder_searched_when_named(repo: Path, backend: str):
    result = await grep(backend, repo, pattern="hello", path="build")
    assert [f["path"] for f in result.data["files"]] == ["build/out.py"]


@BACKENDS
async def test_ignore_case_fixed_strings_and_dash_pattern(repo: Path, backend: str):
    result = await grep(backend, repo, pattern="HELLO WORLD", ignore_case=True)
    assert [f["path"] for f in result.data["files"]] == ["src/util.py"]
    literal = await grep(backend, repo, pattern="print('hello')", fixed_strings=True)
    assert literal.data["total_matches"] == 1
    dash = await grep(backend, repo, pattern="-v")
    assert dash.status == "success" and "     2: -v is a flag" in dash.text


@BACKENDS
async def test_glob_filter(repo: Path, backend: str):
    only_md = await grep(backend, repo, pattern="hello", glob="*.md")
    assert [f["path"] for f in only_md.data["files"]] == ["docs/中文 笔记.md"]
    not_src = await grep(backend, repo, pattern="hello", glob="!src/**")
    assert not any(f["path"].startswith("src/") for f in not_src.data["files"])
    assert not_src.data["files"]
    # A glob narrows the search; it never brings back ignored or hidden files.
    py = await grep(backend, repo, pattern="hello", glob="*.py")
    assert [f["path"] for f in py.data["files"]] == ["src/app.py", "src/deep/generated.py"]
    logs = await grep(backend, repo, pattern="hello", glob="*.log")
    assert logs.status == "success" and logs.data["files"] == []


@BACKENDS
async def test_context_lines(repo: Path, backend: str):
    result = await grep(backend, repo, pattern="print", context=1, path="src/app.py")
    assert result.text.splitlines()[1:] == [
        "src/app.py",
        "     3- def main():",
        "     4:     print('hello')",
        "     5-     return 0",
    ]


@BACKENDS
async def test_no_match_invalid_regex_missing_path(repo: Path, backend: str):
    none = await grep(backend, repo, pattern="zebra")
    assert none.status == "success" and none.data["files"] == [] and "No matches" in none.text
    bad = await grep(backend, repo, pattern="foo(")
    assert bad.status == "error" and "regex parse error" in bad.text
    missing = await grep(backend, repo, pattern="x", path="nope")
    assert missing.status == "error" and "does not exist" in missing.text
    outside = await grep(backend, repo, pattern="x", path="../")
    assert outside.status == "error" and "outside" in outside.text
    binary = await grep(backend, repo, pattern="hello", path="bin.dat")
    assert binary.status == "error" and "binary" in binary.text


@BACKENDS
async def test_cap_counts_what_was_left_out(tmp_path: Path, backend: str):
    for i in range(5):
        write(tmp_path / f"f{i}.txt", "".join(f"needle {j}\n" for j in range(30)))
    result = await grep(backend, tmp_path, pattern="needle", max_results=40)
    assert result.status == "partial"
    assert result.data["total_matches"] == 150 and result.data["omitted"] == 110
    assert "… 110 more matching lines not shown" in result.text
    shown = sum(1 for f in result.data["files"] for m in f["matches"] if m["match"])
    assert shown == 40
    assert [f["path"] for f in result.data["files"]] == ["f0.txt", "f1.txt"]


@BACKENDS
async def test_long_lines_cut_and_symlink_loop(repo: Path, backend: str):
    write(repo / "wide.txt", "hello " + "x" * 100_000 + "\n")
    os.symlink(repo / "src", repo / "src" / "loop")
    result = await grep(backend, repo, pattern="hello", path="wide.txt")
    line = result.text.splitlines()[2]
    assert len(line) < 400 and "more chars]" in line
    looped = await grep(backend, repo, pattern="helper")
    assert [f["path"] for f in looped.data["files"]] == ["src/util.py"]


async def test_both_backends_identical(repo: Path):
    write(repo / "src" / "many.py", "".join(f"value_{i} = {i}\n" for i in range(60)))
    queries = [
        {"pattern": "hello"},
        {"pattern": r"value_\d+", "max_results": 25, "context": 2},
        {"pattern": "HELLO", "ignore_case": True, "glob": "*.py"},
        {"pattern": "hello", "path": "docs"},
        {"pattern": "^def ", "context": 1},
        {"pattern": "crlf$"},
        {"pattern": "nothing-here"},
        {"pattern": "你好"},
    ]
    for query in queries:
        fast = await grep("rg", repo, **query)
        slow = await grep("python", repo, **query)
        assert fast.status == slow.status, query
        assert fast.text == slow.text, query
        assert fast.data == slow.data, query


async def test_env_var_forces_fallback(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HELLO_TUI_GREP", "python")
    assert GrepTool().rg is None
    monkeypatch.delenv("HELLO_TUI_GREP")
    assert GrepTool().rg is not None


async def test_non_dotted_state_dir_is_hidden(repo: Path, monkeypatch: pytest.MonkeyPatch):
    write(repo / "agentstate" / "x.md", "hello state\n")
    settings = load_settings(repo, environ={"HELLOAGENTS_DIR": "agentstate"})
    for backend in ("rg", "python"):
        tool = tool_for(backend)
        args = tool.Args.model_validate({"pattern": "state"})
        result = await tool.run(args, ToolContext(settings))
        assert result.data["files"] == [], backend


async def test_through_the_registry(repo: Path):
    from hello_tui.tools.registry import ToolRegistry

    registry = ToolRegistry([GrepTool()])
    result = await registry.run("grep", "-v is", make_ctx(repo))
    assert result.status == "success" and "docs/guide.md" in result.text
    bad = await registry.run("grep", {"pattern": "x", "context": -1}, make_ctx(repo))
    assert bad.status == "error" and "context" in bad.text


# ------------------------------------------------------------- trust and bounds


@BACKENDS
async def test_a_link_to_a_dotenv_file_asks_like_the_file(repo, backend):
    write(repo / ".env", "TOKEN=sk-in-dotenv\n")
    os.symlink(".env", repo / "notes.txt")
    os.symlink("src/util.py", repo / "util-link.py")
    denied = await grep(backend, repo, pattern="TOKEN", path="notes.txt")
    assert denied.declined and "sk-in-dotenv" not in denied.text
    linked = await grep(backend, repo, pattern="Hello world", path="util-link.py")
    assert linked.status == "success" and linked.data["total_matches"] == 1


@BACKENDS
async def test_a_folder_search_skips_env_files_and_says_how_to_search_one(repo, backend):
    write(repo / "config.env", "TOKEN=sk-config\n")
    write(repo / "src" / "prod.env", "TOKEN=sk-prod\n")
    write(repo / "build" / "ignored.env", "TOKEN=sk-ignored\n")  # build/ is gitignored
    tool = tool_for(backend)
    ctx = make_ctx(repo)
    ctx.approver = _NoQuestions()
    for pattern in ("TOKEN", "sk-config", "no such text"):
        result = await tool.run(tool.Args.model_validate({"pattern": pattern}), ctx)
        assert result.status == "success" and "TOKEN=sk" not in result.text, pattern
        # The same list whatever the pattern: it never tells what the files hold.
        assert result.data["env_files_skipped"] == ["config.env", "src/prod.env"], pattern
        assert "2 env files not searched (config.env, src/prod.env)" in result.text
        assert "give it as the path" in result.text
    sub = await tool.run(tool.Args.model_validate({"pattern": "TOKEN", "path": "src"}), ctx)
    assert sub.data["env_files_skipped"] == ["src/prod.env"]
    narrowed = await tool.run(tool.Args.model_validate({"pattern": "TOKEN", "glob": "*.py"}), ctx)
    assert "env_files_skipped" not in narrowed.data and "env file" not in narrowed.text
    plain = await grep(backend, repo, pattern="hello", path="docs")  # a folder without any
    assert plain.data["total_matches"] == 1 and "env_files_skipped" not in plain.data
    assert "env file" not in plain.text


@BACKENDS
async def test_the_skipped_list_follows_changes_to_the_tree(repo, backend):
    first = await grep(backend, repo, pattern="hello")
    assert "env_files_skipped" not in first.data
    write(repo / "docs" / "deploy.env", "TOKEN=sk-deploy\n")
    added = await grep(backend, repo, pattern="hello")
    assert added.data["env_files_skipped"] == ["docs/deploy.env"]
    write(repo / "docs" / ".gitignore", "*.env\n")
    ignored = await grep(backend, repo, pattern="hello")
    assert "env_files_skipped" not in ignored.data


class _NoQuestions:
    async def approve_command(self, command: str, reason: str) -> str:
        raise AssertionError(f"a folder search asked: {command}")


@BACKENDS
async def test_git_internals_and_state_never_show_even_through_path_or_glob(repo, backend):
    inside_git = await grep(backend, repo, pattern="hello", path=".git")
    assert inside_git.status == "error" and inside_git.text.startswith("Refused")
    assert inside_git.declined
    state = await grep(backend, repo, pattern="hello", path=".helloagents/notes")
    assert state.status == "error" and "state folder" in state.text
    for glob in ("**", ".git/**", "**/HEAD", ".*/**"):
        result = await grep(backend, repo, pattern="hello", glob=glob)
        paths = [f["path"] for f in result.data["files"]]
        assert not any(p.startswith((".git/", ".helloagents/")) for p in paths), (glob, paths)


@BACKENDS
async def test_a_link_to_git_or_state_is_refused_by_where_it_leads(repo, backend):
    os.symlink(".git", repo / "meta")
    os.symlink(".helloagents", repo / "st")
    for path in ("meta", "meta/HEAD", "st", "st/notes/n.md"):
        result = await grep(backend, repo, pattern="hello", path=path)
        assert result.status == "error" and result.text.startswith("Refused"), (path, result.text)
        assert "hello git" not in result.text and "hello state" not in result.text
    everywhere = await grep(backend, repo, pattern="hello (git|state)")
    assert everywhere.data["files"] == []  # a walk never follows the links


@BACKENDS
async def test_a_dotenv_file_is_searched_only_after_asking(repo, backend):
    write(repo / ".env", "TOKEN=sk-in-dotenv\n")
    tool = tool_for(backend)
    ctx = make_ctx(repo)  # headless: the approver declines
    result = await tool.run(tool.Args.model_validate({"pattern": "TOKEN", "path": ".env"}), ctx)
    assert result.status == "error" and "sk-in-dotenv" not in result.text and result.declined
    everywhere = await grep(backend, repo, pattern="sk-in-dotenv")
    assert everywhere.data["files"] == []  # hidden files are skipped, .env among them


async def test_the_fallback_gives_up_on_catastrophic_backtracking(repo, monkeypatch):
    import hello_tui.tools.grep as grep_module

    monkeypatch.setattr(grep_module, "SEARCH_TIMEOUT", 1.0)
    write(repo / "aaa.txt", "a" * 5000 + "b\n")
    result = await grep("python", repo, pattern="(a+)+$", path="aaa.txt")
    assert result.status == "error" and "gave up after 1 s" in result.text


async def test_rg_is_stopped_by_its_timeout_and_by_cancellation(repo, monkeypatch):
    import asyncio

    import hello_tui.tools.grep as grep_module

    os.mkfifo(repo / "pipe")  # rg blocks reading a FIFO nobody writes to
    monkeypatch.setattr(grep_module, "SEARCH_TIMEOUT", 1.0)
    timed = await grep("rg", repo, pattern="x", path="pipe")
    assert timed.status == "error" and "gave up after 1 s" in timed.text
    monkeypatch.setattr(grep_module, "SEARCH_TIMEOUT", 600.0)
    task = asyncio.ensure_future(grep("rg", repo, pattern="x", path="pipe"))
    for _ in range(200):
        if _rg_on(repo / "pipe"):
            break
        await asyncio.sleep(0.05)
    assert _rg_on(repo / "pipe")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(200):
        if not _rg_on(repo / "pipe"):
            break
        await asyncio.sleep(0.05)
    assert not _rg_on(repo / "pipe")


def _rg_on(path: Path) -> bool:
    """Is an rg process reading `path` (started in its folder)? Read from /proc."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cwd = (entry / "cwd").resolve()
        except (OSError, IndexError):
            continue
        is_rg = bool(cmdline) and cmdline[0].endswith(b"rg") and path.name.encode() in cmdline
        if is_rg and state != "Z" and cwd == path.parent.resolve():
            return True
    return False
