"""`context_fetch`: the four sources, literal queries, budget, de-duplication, cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.store.memory import MemoryStore
from hello_tui.store.notes import NoteStore
from hello_tui.tools.context_fetch import ContextFetchTool
from hello_tui.tools.grep import find_rg
from hello_tui.tools.registry import ToolRegistry
from tests.tools.helpers import make_ctx, write

BACKENDS = ["rg", "python"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    lines = [f"line {i}" for i in range(1, 21)]
    lines[9] = "def parse_config(path):  # the target"
    write(root / "src" / "config.py", "\n".join(lines) + "\n")
    write(root / "src" / "other.py", "import os\nprint('nothing to see')\n")
    write(root / ".gitignore", "build/\n")
    write(root / "build" / "gen.py", "parse_config generated copy\n")
    write(root / ".helloagents" / "notes" / "stray.md", "parse_config in state\n")
    return root


def make_tool(backend: str) -> ContextFetchTool:
    if backend == "rg" and find_rg() is None:
        pytest.fail("rg is a declared dependency (ripgrep==14.1.0) and must be installed")
    return ContextFetchTool(force_python=backend == "python")


async def fetch(tool: ContextFetchTool, repo: Path, **kwargs):
    return await ToolRegistry([tool]).run("context_fetch", kwargs, make_ctx(repo))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_files_source_gives_five_lines_of_context(repo: Path, backend: str):
    result = await fetch(make_tool(backend), repo, query="parse_config", sources=["files"])
    assert result.status == "success"
    items = result.data["sources"]["files"]["items"]
    assert [(i["path"], i["start"], i["end"], i["matches"]) for i in items] == [
        ("src/config.py", 5, 15, 1)
    ]
    assert "    10: def parse_config(path):  # the target" in result.text
    assert "     5- line 5" in result.text and "    15- line 15" in result.text
    # gitignored build/ and the state folder are not searched
    assert "build/gen.py" not in result.text and "stray" not in result.text


async def test_both_backends_agree(repo: Path):
    write(repo / "src" / "more.py", "x\nparse_config()\ny\nparse_config()\n")
    write(repo / "docs" / "readme with space.md", "About Parse_Config\n")
    answers = []
    for backend in BACKENDS:
        result = await fetch(make_tool(backend), repo, query="parse_config", sources=["files"])
        answers.append(result.data["sources"]["files"]["items"])
    assert answers[0] == answers[1]
    assert {i["path"] for i in answers[0]} == {
        "src/config.py",
        "src/more.py",
        "docs/readme with space.md",
    }


@pytest.mark.parametrize("backend", BACKENDS)
async def test_query_is_literal_and_never_reaches_a_shell(repo: Path, backend: str):
    write(repo / "src" / "flags.py", "args = ['-rf', '$(touch pwned)', 'a.b*c']\n")
    tool = make_tool(backend)
    for query in ("$(touch pwned)", "-rf", "a.b*c", "`touch pwned`; rm -rf x"):
        result = await fetch(tool, repo, query=query, sources=["files"])
        assert result.status == "success", result.text
    hits = await fetch(tool, repo, query="a.b*c", sources=["files"])
    assert hits.data["sources"]["files"]["items"][0]["path"] == "src/flags.py"
    dash = await fetch(tool, repo, query="-rf", sources=["files"])
    assert dash.data["sources"]["files"]["items"][0]["path"] == "src/flags.py"
    assert not (repo / "pwned").exists() and not any(repo.rglob("pwned"))


@pytest.mark.parametrize("backend", BACKENDS)
async def test_regex_on_request_and_invalid_regex_is_could_not_search(repo: Path, backend: str):
    tool = make_tool(backend)
    ok = await fetch(tool, repo, query=r"parse_\w+\(", sources=["files"], regex=True)
    assert ok.data["sources"]["files"]["items"][0]["path"] == "src/config.py"
    literal = await fetch(tool, repo, query=r"parse_\w+\(", sources=["files"])
    assert "## files: no match" in literal.text
    bad = await fetch(tool, repo, query="parse_(", sources=["files"], regex=True)
    assert bad.status == "error" and "could not search" in bad.text
    mixed = await fetch(tool, repo, query="parse_(", sources=["files", "notes"], regex=True)
    assert mixed.status == "partial"
    assert "## notes: no match" in mixed.text


async def test_no_match_differs_from_could_not_search(repo: Path):
    result = await fetch(make_tool("rg"), repo, query="zzzz-not-here")
    assert result.status == "success"
    for name in ("files", "notes", "memory", "tests"):
        assert f"## {name}: no match" in result.text
        assert result.data["sources"][name]["status"] == "ok"


async def test_paths_are_checked(repo: Path):
    tool = make_tool("rg")
    outside = await fetch(tool, repo, query="x", paths=["../"])
    assert outside.status == "error" and "outside the repository" in outside.text
    missing = await fetch(tool, repo, query="x", paths=["nope"])
    assert missing.status == "error" and "does not exist" in missing.text
    only_other = await fetch(tool, repo, query="import", sources=["files"], paths=["src/other.py"])
    assert [i["path"] for i in only_other.data["sources"]["files"]["items"]] == ["src/other.py"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cache_hit_and_invalidation_when_files_change(repo: Path, backend: str):
    tool = make_tool(backend)
    first = await fetch(tool, repo, query="parse_config", sources=["files"])
    second = await fetch(tool, repo, query="parse_config", sources=["files"])
    assert first.data["cached"] is False and second.data["cached"] is True
    assert second.text == first.text and tool.cache_hits == 1

    target = repo / "src" / "config.py"
    target.write_text("parse_config moved to the top\n", encoding="utf-8")
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    third = await fetch(tool, repo, query="parse_config", sources=["files"])
    assert third.data["cached"] is False
    assert "moved to the top" in third.text

    write(repo / "src" / "new.py", "parse_config again\n")
    fourth = await fetch(tool, repo, query="parse_config", sources=["files"])
    assert fourth.data["cached"] is False
    assert "src/new.py" in fourth.text


async def test_cache_invalidated_by_a_new_note_and_memory(repo: Path):
    tool = make_tool("rg")
    before = await fetch(tool, repo, query="flaky", sources=["notes", "memory"])
    assert "## notes: no match" in before.text
    settings = load_settings(repo, environ={})
    NoteStore(settings.state.notes).create("CI is flaky", "retry twice", "blocker")
    MemoryStore(settings.state.memory).add("the flaky test is test_io")
    after = await fetch(tool, repo, query="flaky", sources=["notes", "memory"])
    assert after.data["cached"] is False
    assert "CI is flaky" in after.text and "the flaky test is test_io" in after.text


async def test_budget_limits_each_source_and_counts_what_was_left_out(repo: Path):
    for n in range(30):
        body = "\n".join(f"filler {n} {k}" for k in range(6))
        write(repo / "many" / f"f{n:02}.py", f"{body}\nneedle here {n}\n{body}\n")
    tool = ContextFetchTool(token_counter=lambda text: len(text) // 4 + 1)
    result = await fetch(tool, repo, query="needle", sources=["files"], budget_tokens=300)
    files = result.data["sources"]["files"]
    assert files["tokens"] <= 300
    assert len(files["items"]) >= 1 and files["omitted"] > 0
    assert len(files["items"]) + files["omitted"] == 30
    assert f"{files['omitted']} more left out for the budget" in result.text
    default = await fetch(tool, repo, query="needle", sources=["files"])
    assert default.data["sources"]["files"]["tokens"] <= 800
    assert len(default.data["sources"]["files"]["items"]) > len(files["items"])


async def test_ranking_prefers_more_matches_and_duplicates_are_dropped(repo: Path):
    write(repo / "a" / "one.py", "token\n")
    write(repo / "b" / "three.py", "token\ntoken\ntoken\n")
    write(repo / "c" / "copy.py", "token\ntoken\ntoken\n")
    result = await fetch(make_tool("rg"), repo, query="token", sources=["files"])
    files = result.data["sources"]["files"]
    assert [i["path"] for i in files["items"]] == ["b/three.py", "a/one.py"]
    assert files["duplicates"] == 1 and "1 duplicate(s) dropped" in result.text


async def test_notes_and_memory_sources_without_writing_anything(repo: Path):
    settings = load_settings(repo, environ={})
    note = NoteStore(settings.state.notes).create(
        "Config parsing", "parse_config fails on empty files", "conclusion"
    )
    result = await fetch(make_tool("rg"), repo, query="parse_config", sources=["notes", "memory"])
    assert result.status == "success"
    assert f"[{note.id}] (conclusion) Config parsing" in result.text
    assert "## memory: no match" in result.text
    assert not settings.state.memory.exists()  # searching memory never creates it


async def test_chinese_query_across_sources(repo: Path):
    write(repo / "文档" / "说明.md", "第一行\n配置文件解析失败的原因\n")
    settings = load_settings(repo, environ={})
    MemoryStore(settings.state.memory).add("配置文件解析需要处理空文件")
    for backend in BACKENDS:
        result = await fetch(
            make_tool(backend), repo, query="配置文件解析", sources=["files", "memory"]
        )
        assert result.data["sources"]["files"]["items"][0]["path"] == "文档/说明.md"
        assert "处理空文件" in result.text


async def test_tests_source_reads_pytest_cache_and_junit(repo: Path):
    write(
        repo / ".pytest_cache" / "v" / "cache" / "lastfailed",
        json.dumps({"tests/test_config.py::test_parse_config_empty": True}),
    )
    write(
        repo / "build" / "reports" / "junit-unit.xml",
        """<?xml version="1.0"?>
<testsuite name="unit" tests="2" failures="1">
  <testcase classname="tests.test_io" name="test_read_ok"/>
  <testcase classname="tests.test_io" name="test_read_bom">
    <failure message="AssertionError: BOM kept">assert text == 'x'</failure>
  </testcase>
</testsuite>""",
    )
    result = await fetch(make_tool("rg"), repo, query="parse_config", sources=["tests"])
    assert result.status == "success"
    items = result.data["sources"]["tests"]["items"]
    titles = [i["title"] for i in items]
    assert "tests/test_config.py::test_parse_config_empty" in titles
    junit = next(i for i in items if i.get("origin") == "junit")
    assert junit["test"] == "tests.test_io::test_read_bom"
    assert "AssertionError: BOM kept" in junit["text"] and "assert text == 'x'" in junit["text"]
    assert "test_read_ok" not in result.text
    # the failure whose id mentions the query ranks first
    assert titles[0] == "tests/test_config.py::test_parse_config_empty"


async def test_unreadable_test_reports_are_could_not_search(repo: Path):
    write(repo / "TEST-broken.xml", "<testsuite><testcase")
    result = await fetch(make_tool("rg"), repo, query="x", sources=["tests"])
    assert result.status == "error"
    assert "## tests: could not search" in result.text and "TEST-broken.xml" in result.text


async def test_long_lines_and_binary_files(repo: Path):
    write(repo / "long.txt", "x" * 100_000 + " needle\n")
    (repo / "blob.bin").write_bytes(b"\x00\x01needle\x00")
    for backend in BACKENDS:
        result = await fetch(make_tool(backend), repo, query="needle", sources=["files"])
        items = result.data["sources"]["files"]["items"]
        assert [i["path"] for i in items] == ["long.txt"]
        assert "more chars]" in result.text and len(result.text) < 5000


# ------------------------------------------------------------- trust and bounds


async def test_test_reports_behind_a_symbolic_link_are_never_read(repo: Path, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.xml").write_text(
        '<testsuite><testcase name="t"><failure message="outside-secret"/></testcase></testsuite>'
    )
    os.symlink(outside / "secret.xml", repo / "junit-report.xml")
    os.symlink(outside, repo / "reports")
    (outside / "TEST-x.xml").write_text((outside / "secret.xml").read_text())
    write(outside / "cache" / "v" / "cache" / "lastfailed", json.dumps({"outside-secret": True}))
    os.symlink(outside / "cache", repo / ".pytest_cache")
    result = await fetch(make_tool("rg"), repo, query="secret", sources=["tests"])
    assert "outside-secret" not in result.text
    assert result.data["sources"]["tests"]["items"] == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_git_internals_state_and_dotenv_are_not_searched(repo: Path, backend: str):
    write(repo / ".git" / "config", "[core] parse_config\n")
    write(repo / ".env", "TOKEN=parse_config\n")
    tool = make_tool(backend)
    for paths in ([".git"], [".helloagents"], [".git/config"]):
        refused = await fetch(tool, repo, query="parse_config", paths=paths)
        assert refused.status == "error" and refused.text.startswith("Refused"), paths
    asked = await fetch(tool, repo, query="parse_config", paths=[".env"])
    assert asked.status == "error" and "declined" in asked.text  # headless: no
    found = await fetch(tool, repo, query="parse_config", sources=["files"])
    assert ".env" not in found.text and ".git" not in found.text


@pytest.mark.parametrize("backend", BACKENDS)
async def test_links_to_git_internals_or_state_are_refused(repo: Path, backend: str):
    write(repo / ".git" / "config", "[core] parse_config\n")
    os.symlink(".git", repo / "meta")
    os.symlink(".helloagents", repo / "st")
    tool = make_tool(backend)
    for paths in (["meta"], ["meta/config"], ["st/notes"]):
        refused = await fetch(tool, repo, query="parse_config", paths=paths, sources=["files"])
        assert refused.status == "error" and refused.text.startswith("Refused"), paths
        assert "[core]" not in refused.text and "in state" not in refused.text


class _Approver:
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def approve_command(self, command: str, reason: str) -> str:
        self.asked.append(command)
        return self.answer


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_link_to_dotenv_asks_and_a_folder_search_skips_env_files(repo, backend):
    write(repo / ".env", "TOKEN=parse_config sk-dotenv\n")
    write(repo / "config.env", "TOKEN=parse_config sk-config\n")
    os.symlink(".env", repo / "notes.txt")
    tool = make_tool(backend)
    ctx = make_ctx(repo)
    ctx.approver = _Approver("deny")
    registry = ToolRegistry([tool])
    asked = await registry.run(
        "context_fetch", {"query": "parse_config", "paths": ["notes.txt"]}, ctx
    )
    assert asked.declined and "sk-dotenv" not in asked.text
    assert ctx.approver.asked == ["context_fetch notes.txt"]
    found = await registry.run(
        "context_fetch", {"query": "parse_config", "sources": ["files"]}, ctx
    )
    assert found.status == "success" and "sk-" not in found.text
    assert "src/config.py" in found.text  # ordinary files are still searched
    assert "1 env file not searched (config.env)" in found.text and "give it in paths" in found.text
    assert found.data["sources"]["files"]["env_files_skipped"] == ["config.env"]
    assert ctx.approver.asked == ["context_fetch notes.txt"]  # the walk asked nobody
    ctx.approver = _Approver("once")
    named = await registry.run(
        "context_fetch",
        {"query": "parse_config", "paths": ["config.env"], "sources": ["files"]},
        ctx,
    )
    assert "sk-config" in named.text and "not searched" not in named.text


async def test_the_fallback_gives_up_on_catastrophic_backtracking(repo: Path, monkeypatch):
    import hello_tui.tools.context_sources as sources

    monkeypatch.setattr(sources, "RG_TIMEOUT", 1.0)
    write(repo / "aaa.txt", "a" * 5000 + "b\n")
    result = await fetch(make_tool("python"), repo, query="(a+)+$", regex=True, sources=["files"])
    assert result.status == "error" and "gave up after 1 s" in result.text
