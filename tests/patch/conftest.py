"""Shared fixtures for the patch engine tests: a scratch repository and tree snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from hello_tui.config import Settings, load_settings


def snapshot(root: Path, state_dir: str = ".helloagents") -> dict[str, bytes | str]:
    """Every file (bytes) and folder under root, ignoring the state folder."""
    out: dict[str, bytes | str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if rel.parts[0] == state_dir:
            continue
        out[rel.as_posix()] = p.read_bytes() if p.is_file() and not p.is_symlink() else "<dir>"
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return root


@pytest.fixture
def settings(repo: Path) -> Settings:
    return load_settings(repo, environ={})


def write(repo: Path, rel: str, data: str | bytes) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path
