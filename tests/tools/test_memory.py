"""MemoryStore and the `memory` tool: FTS5 trigram search (Chinese too), LIKE fallback, ids."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hello_tui.config import load_settings
from hello_tui.core.tools import ToolContext
from hello_tui.store.memory import MemoryStore, MemoryStoreError, trigram_supported
from hello_tui.tools.memory import MemoryTool
from hello_tui.tools.registry import ToolRegistry


@pytest.fixture(params=["fts", "like"])
def store(request, tmp_path: Path) -> MemoryStore:
    return MemoryStore(tmp_path / "memory", fts=request.param == "fts")


@pytest.fixture
def ctx(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    return ToolContext(settings=load_settings(repo, environ={}))


async def call(ctx, **kwargs):
    return await ToolRegistry([MemoryTool()]).run("memory", kwargs, ctx)


def test_this_sqlite_has_trigram():
    # The machine's SQLite is 3.34+; if this fails, the fts branch below silently became LIKE.
    assert sqlite3.sqlite_version_info >= (3, 34, 0)
    assert trigram_supported()
    assert MemoryStore(Path("unused"), fts=True).uses_fts


def test_fts_table_exists_only_in_fts_mode(store: MemoryStore):
    store.add("something")
    with sqlite3.connect(store.db_path) as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "memories" in names
    assert ("memories_fts" in names) == store.uses_fts


def test_add_and_list_newest_first(store: MemoryStore):
    a = store.add("the tests use pytest-asyncio", 0.9)
    b = store.add("the repo uses ruff")
    assert (a.id, b.id) == (1, 2)
    assert [m.content for m in store.list()] == [
        "the repo uses ruff",
        "the tests use pytest-asyncio",
    ]
    assert store.list()[1].importance == 0.9
    assert store.db_path == store.memory_dir / "memory.db"


def test_search_english_and_ranking_by_importance(store: MemoryStore):
    low = store.add("deploy with make release", 0.1)
    high = store.add("deploy needs the VPN first", 1.0)
    store.add("unrelated fact about logging", 0.5)
    found = store.search("deploy")
    assert [m.id for m in found] == [high.id, low.id]
    assert all(m.score is not None and m.score > 0 for m in found)
    assert store.search("nothing-like-this") == []


def test_search_chinese(store: MemoryStore):
    target = store.add("用户喜欢使用中文回答问题", 0.5)
    store.add("项目使用 pytest 进行测试", 0.5)
    assert [m.id for m in store.search("中文回答")] == [target.id]
    # Two characters: below the trigram size, answered by LIKE in both modes.
    assert [m.id for m in store.search("中文")] == [target.id]


def test_short_and_special_queries_are_literal(store: MemoryStore):
    pct = store.add("coverage is 100% now")
    store.add("coverage is 1000 lines")
    quote = store.add('the flag is "--yes" AND NOT "--no"')
    assert [m.id for m in store.search("0%")] == [pct.id]
    assert store.search('"--yes" AND')[0].id == quote.id
    assert store.search("NEAR(") == []
    assert store.search("a_b") == []  # underscore is not a LIKE wildcard here


def test_forget(store: MemoryStore):
    a = store.add("one")
    b = store.add("two words here")
    assert store.forget(a.id).content == "one"
    assert [m.id for m in store.list()] == [b.id]
    with pytest.raises(MemoryStoreError, match="No memory with id 1"):
        store.forget(a.id)
    assert store.search("one") == []
    assert [m.id for m in store.search("words")] == [b.id]


def test_nothing_is_written_without_add(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    assert store.search("anything") == []
    assert store.list() == []
    with pytest.raises(MemoryStoreError, match="empty"):
        store.forget(1)
    assert not (tmp_path / "memory").exists()


def test_bad_input(store: MemoryStore):
    with pytest.raises(MemoryStoreError, match="non-empty"):
        store.add("   ")
    with pytest.raises(MemoryStoreError, match="between 0 and 1"):
        store.add("x", 1.5)
    with pytest.raises(MemoryStoreError, match="summary"):
        store.add("x" * 20_001)


def test_rows_written_without_fts_are_indexed_when_fts_arrives(tmp_path: Path):
    plain = MemoryStore(tmp_path / "m", fts=False)
    plain.add("written by an old sqlite without trigram")
    upgraded = MemoryStore(tmp_path / "m", fts=True)
    assert upgraded.search("old sqlite")[0].content.startswith("written")


async def test_tool_cycle(ctx):
    added = await call(ctx, action="add", content="CI runs on two cores", importance=0.8)
    assert added.status == "success" and added.data["id"] == 1
    assert (ctx.settings.state.memory / "memory.db").is_file()
    found = await call(ctx, action="search", query="two cores")
    assert found.status == "success" and "[1]" in found.text and "0.80" in found.text
    listed = await call(ctx, action="list")
    assert [d["content"] for d in listed.data] == ["CI runs on two cores"]
    forgot = await call(ctx, action="forget", memory_id=1)
    assert forgot.status == "success"
    assert (await call(ctx, action="list")).text == "Memory is empty."


async def test_tool_errors(ctx):
    assert (await call(ctx, action="add")).status == "error"
    assert "needs a non-empty query" in (await call(ctx, action="search", query="")).text
    assert "needs memory_id" in (await call(ctx, action="forget")).text
    too_big = await call(ctx, action="add", content="x", importance=3)
    assert too_big.status == "error" and "importance" in too_big.text
    missing = await call(ctx, action="forget", memory_id=42)
    assert missing.status == "error" and "42" in missing.text
    none = await call(ctx, action="search", query="zzz")
    assert none.status == "success" and none.data == []
    assert not (ctx.settings.state.memory).exists()


def test_old_sqlite_without_trigram_falls_back_to_like(tmp_path: Path, monkeypatch):
    import hello_tui.store.memory as memory_module

    monkeypatch.setattr(memory_module.sqlite3, "sqlite_version_info", (3, 31, 1))
    memory_module.trigram_supported.cache_clear()
    try:
        assert not memory_module.trigram_supported()
        store = MemoryStore(tmp_path / "memory")
        assert not store.uses_fts
        kept = store.add("配置文件解析需要处理空文件")
        assert [m.id for m in store.search("文件解析")] == [kept.id]
        with sqlite3.connect(store.db_path) as conn:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert "memories_fts" not in names
    finally:
        memory_module.trigram_supported.cache_clear()
