"""`hello-tui doctor` run as a user runs it: a subprocess against the scripted server."""

from __future__ import annotations

import os
import subprocess

from tests.support.scripted_model import ScriptedModelServer
from tests.support.warm_python import warm_python


def doctor(repo, *flags: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*warm_python(), "-m", "hello_tui", "doctor", "--repo", str(repo), *flags],
        check=False,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=60,
    )


def assert_no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stdout + proc.stderr


def test_good_configuration_passes(tmp_path, scripted_server):
    server = scripted_server([], api_key="sk-right-key-000", models=["coder"])
    proc = doctor(
        tmp_path, "--base-url", server.base_url, "--api-key", "sk-right-key-000", "--model", "coder"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert server.base_url in out and "coder" in out
    assert "preflight: OK" in out
    assert "sk-right-key-000" not in out  # the key is masked
    assert "(flag)" in out
    assert str(tmp_path.resolve() / ".helloagents") in out
    assert server.requests[-1]["max_tokens"] == 1
    assert server.chat_requests == []


def test_sources_from_environment_and_dotenv(tmp_path, scripted_server):
    server = scripted_server([])
    (tmp_path / ".env").write_text(f"LLM_BASE_URL={server.base_url}\n", encoding="utf-8")
    proc = doctor(tmp_path, env={"LLM_MODEL_ID": "env-model", "CODE_AGENT_MAX_STEPS": "9"})
    assert proc.returncode == 0, proc.stdout
    assert ".env LLM_BASE_URL" in proc.stdout
    assert "env LLM_MODEL_ID" in proc.stdout
    assert "env CODE_AGENT_MAX_STEPS" in proc.stdout
    assert server.requests[-1]["model"] == "env-model"


def test_wrong_key_exits_2_naming_the_key_setting(tmp_path, scripted_server):
    server = scripted_server([], api_key="sk-right")
    proc = doctor(tmp_path, "--base-url", server.base_url, "--api-key", "sk-wrong-secret-9999")
    assert proc.returncode == 2
    assert "preflight: FAILED" in proc.stdout
    assert "LLM_API_KEY" in proc.stdout and "--api-key" in proc.stdout
    assert "sk-wrong-secret-9999" not in proc.stdout
    assert_no_traceback(proc)


def test_unknown_model_exits_2_naming_the_model_setting(tmp_path, scripted_server):
    server = scripted_server([], models=["real"])
    proc = doctor(tmp_path, "--base-url", server.base_url, "--model", "imaginary")
    assert proc.returncode == 2
    assert "imaginary" in proc.stdout and "LLM_MODEL_ID" in proc.stdout
    assert_no_traceback(proc)


def test_unreachable_url_exits_2_naming_the_url_setting(tmp_path):
    server = ScriptedModelServer([]).start()
    url = server.base_url
    server.stop()
    proc = doctor(tmp_path, "--base-url", url)
    assert proc.returncode == 2
    assert "LLM_BASE_URL" in proc.stdout and "--base-url" in proc.stdout
    assert_no_traceback(proc)


def test_missing_provider_key_is_reported_without_a_request(tmp_path):
    proc = doctor(
        tmp_path,
        env={
            "LLM_BASE_URL": "https://api.deepseek.com/v1",
            "OPENAI_API_KEY": "sk-openai-should-not-travel",
        },
    )
    assert proc.returncode == 2
    assert "deepseek" in proc.stdout
    assert "DEEPSEEK_API_KEY" in proc.stdout and "LLM_API_KEY" in proc.stdout
    assert "(none)" in proc.stdout
    assert_no_traceback(proc)


def test_bad_configuration_is_a_message_not_a_traceback(tmp_path):
    proc = doctor(tmp_path, env={"LLM_TIMEOUT": "soon"})
    assert proc.returncode == 2
    assert "configuration error" in proc.stdout and "LLM_TIMEOUT" in proc.stdout
    assert_no_traceback(proc)
    missing = doctor(tmp_path / "nope")
    assert missing.returncode == 2 and "--repo" in missing.stdout
    assert_no_traceback(missing)


def test_run_doctor_in_process(tmp_path, scripted_server):
    import argparse
    import io

    from hello_tui.commands.doctor import run_doctor

    server = scripted_server([], preflight=None)
    out = io.StringIO()
    args = argparse.Namespace(
        repo=str(tmp_path),
        model="m",
        base_url=server.base_url,
        api_key=None,
        project="demo-project",
        max_steps=4,
        protocol="react",
        debug=False,
    )
    assert run_doctor(args, out=out) == 0
    text = out.getvalue()
    assert "demo-project" in text and "react" in text and "preflight: OK" in text
