"""`@` completion's file index: git's ignore rules, no secrets, ranking, attachments cut."""

from __future__ import annotations

import os

import pytest

from hello_tui.tools.file_index import FileIndex, read_attachment


def _index(repo) -> FileIndex:
    index = FileIndex(repo, ".helloagents")
    index.build()
    return index


def _write(repo, rel: str, text: str = "x\n") -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_ignore_rules_at_every_level_and_negation(tmp_path):
    for rel in ("a.py", "logs/x.log", "keep.log", "pkg/gen/out.py", "pkg/src/m.py", "pkg/n.tmp"):
        _write(tmp_path, rel)
    _write(tmp_path, ".gitignore", "*.log\n!keep.log\n")
    _write(tmp_path, "pkg/.gitignore", "gen/\n*.tmp\n")
    _write(tmp_path, ".git/config")
    _write(tmp_path, ".helloagents/sessions/s.json")
    _write(tmp_path, "app/.env.local", "KEY=secret\n")
    index = _index(tmp_path)
    paths = set(index.search("", limit=100))
    assert paths == {".gitignore", "a.py", "keep.log", "pkg/.gitignore", "pkg/src/m.py"}
    assert index.ready and index.count == 5


def test_ranking_name_prefix_then_substring_then_fuzzy(tmp_path):
    for rel in ("docs/readme_parser.md", "src/parser.py", "src/sparse_array.py", "p_a_r_s_e_r.txt"):
        _write(tmp_path, rel)
    index = _index(tmp_path)
    assert index.search("parser", limit=10) == [
        "src/parser.py",  # the name starts with it
        "docs/readme_parser.md",  # the path contains it
        "p_a_r_s_e_r.txt",  # its letters in order (shallow files first)
        "src/sparse_array.py",
    ]
    assert index.search("PARSE", limit=1) == ["src/parser.py"]  # case-insensitive
    assert index.search("zzz") == []
    assert index.search("s(", limit=5) == []  # regex characters are literal


def test_attachment_is_cut_to_its_budget_and_refuses_secrets_and_binaries(tmp_path):
    _write(tmp_path, "big.txt", "y" * 500)
    (tmp_path / "blob.bin").write_bytes(b"\0\1\2" * 10)
    _write(tmp_path, ".env", "KEY=secret\n")
    text, cut = read_attachment(tmp_path, "big.txt", budget=100)
    assert text == "y" * 100 and cut
    assert read_attachment(tmp_path, "big.txt", budget=1000) == ("y" * 500, False)
    os.symlink(".env", tmp_path / "notes.txt")
    (tmp_path / ".git").mkdir()
    _write(tmp_path, ".git/config", "[remote] url = https://me:token@x\n")
    os.symlink(".git", tmp_path / "meta")
    _write(tmp_path, "real.txt", "fine\n")
    os.symlink("real.txt", tmp_path / "link.txt")
    assert read_attachment(tmp_path, "link.txt") == ("fine\n", False)
    for rel in ("notes.txt", "meta/config", ".git/config"):
        with pytest.raises(ValueError):
            read_attachment(tmp_path, rel)
    for rel in (".env", "blob.bin", "../outside.txt", "missing.txt"):
        with pytest.raises(ValueError):
            read_attachment(tmp_path, rel)
