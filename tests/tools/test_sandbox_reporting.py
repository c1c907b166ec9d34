"""What the user is told about the sandbox and the environment commands get."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hello_tui.tools.shell import sandbox
from hello_tui.tools.shell.environment import command_environment


def doctor(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hello_tui", "doctor", "--repo", str(repo)],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_doctor_has_a_sandbox_line(tmp_path):
    proc = doctor(tmp_path, {"CODE_AGENT_SANDBOX": "auto"})
    line = next(line for line in proc.stdout.splitlines() if line.strip().startswith("sandbox"))
    if sandbox.support().available:
        assert f"landlock v{sandbox.support().landlock_abi}" in line
    else:
        assert "none" in line and "policy alone" in line
    off = doctor(tmp_path, {"CODE_AGENT_SANDBOX": "off"})
    assert "dangerous" in off.stdout and "Traceback" not in off.stdout + off.stderr


def test_doctor_repeats_the_trust_notices(tmp_path):
    (tmp_path / ".env").write_text("LLM_BASE_URL=https://collector.example/v1\n")
    proc = doctor(tmp_path, {"LLM_API_KEY": "user-key-123456"})
    assert "note:" in proc.stdout and "not sent to a server the repository chose" in proc.stdout
    assert "user-key-123456" not in proc.stdout


def test_the_environment_is_an_allow_list(tmp_path):
    source = {
        "PATH": "/usr/bin:/bin",
        "LANG": "en_US.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "Europe/Berlin",
        "USER": "dev",
        "HOME": "/home/dev",
        "ANTHROPIC_API_KEY": "sk-ant",
        "SSH_AUTH_SOCK": "/tmp/agent.sock",
        "AWS_SECRET_ACCESS_KEY": "aws",
        "http_proxy": "http://user:pass@proxy:3128",
        "DISPLAY": ":0",
        "GIT_DIR": "/elsewhere",
        "VIRTUAL_ENV": "/opt/venv",
    }
    env = command_environment(source, tmp_path / "repo", tmp_path, secrets=("sk-ant",))
    for name in ("ANTHROPIC_API_KEY", "SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "http_proxy"):
        assert name not in env
    assert "DISPLAY" not in env and "GIT_DIR" not in env
    assert "VIRTUAL_ENV" not in env  # its folder is not readable in the sandbox
    assert env["PATH"] == "/usr/bin:/bin" and env["LC_ALL"] == "C.UTF-8"
    assert env["TZ"] == "Europe/Berlin" and env["USER"] == "dev"
    assert env["HOME"] == str(tmp_path / "home") and env["TMPDIR"] == str(tmp_path / "tmp")
    assert env["GIT_CEILING_DIRECTORIES"] == str(tmp_path)
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    keys = {env[f"GIT_CONFIG_KEY_{i}"]: env[f"GIT_CONFIG_VALUE_{i}"] for i in range(2)}
    assert keys == {"core.fsmonitor": "false", "core.hooksPath": "/dev/null"}
    with_venv = command_environment(
        source, tmp_path / "repo", tmp_path, readable=(Path("/opt/venv"),)
    )
    assert with_venv["VIRTUAL_ENV"] == "/opt/venv"


def test_a_value_holding_the_model_key_is_dropped(tmp_path):
    env = command_environment(
        {"PATH": "/bin", "LANG": "x-sk-secret-x"}, tmp_path, tmp_path, secrets=("sk-secret",)
    )
    assert "LANG" not in env
