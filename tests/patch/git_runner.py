"""Running a real git in a scratch repository, the same way for every test that asks git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# No user or system configuration: git's defaults are the reference.
GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """git in `repo`, with seven-digit object ids and no line-ending conversion."""
    return subprocess.run(
        ["git", "-c", "core.abbrev=7", "-c", "core.autocrlf=false", *args],
        cwd=repo,
        env=GIT_ENV,
        capture_output=True,
        check=check,
    )
