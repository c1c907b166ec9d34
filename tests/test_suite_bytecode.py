"""The suite's processes keep compiled bytecode even where the environment says not to write
it (tests/conftest.py): hundreds of them import hello_tui, each would compile it again."""

from __future__ import annotations

import os
import subprocess
import sys


def test_workers_and_their_children_write_bytecode():
    assert not sys.dont_write_bytecode
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
    child = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert child.stdout.strip() == "False"
