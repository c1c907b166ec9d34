"""Ollama's effective context: asked from its native API (played by the scripted server)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hello_tui.config import load_settings
from hello_tui.llm import ollama_context, ollama_context_warning
from hello_tui.llm.ollama import (
    OLLAMA_DEFAULT_CONTEXT,
    may_be_ollama,
    modelfile_num_ctx,
    ollama_root,
)
from tests.support.scripted_model import ScriptedModelServer, ScriptedOllama, ollama_model

MODEL = "qwen2.5-coder:7b"


def settings_for(tmp_path, server, model: str = MODEL, **env: str):
    return load_settings(tmp_path, base_url=server.base_url, model=model, environ=env)


def ollama(**kwargs) -> ScriptedOllama:
    return ScriptedOllama(**kwargs)


async def test_a_loaded_model_reports_the_context_it_runs_with(tmp_path, scripted_server):
    server = scripted_server(
        ollama=ollama(models={MODEL: ollama_model(32768)}, running={MODEL: 4096})
    )
    ctx = await ollama_context(settings_for(tmp_path, server))
    assert (ctx.context_length, ctx.source, ctx.model_max) == (4096, "loaded", 32768)
    warning = await ollama_context_warning(settings_for(tmp_path, server))
    assert warning is not None
    assert "4096 tokens" in warning and "context budget of 8000" in warning
    assert "OLLAMA_CONTEXT_LENGTH=8192" in warning and "num_ctx 8192" in warning
    assert "CODE_AGENT_CONTEXT_BUDGET" in warning
    assert {"/api/version", "/api/show", "/api/ps"} <= set(server.native_requests)


async def test_num_ctx_from_the_modelfile_counts_when_not_loaded(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(32768, num_ctx=16384)}))
    ctx = await ollama_context(settings_for(tmp_path, server))
    assert (ctx.context_length, ctx.source) == (16384, "num_ctx")
    assert await ollama_context_warning(settings_for(tmp_path, server)) is None


async def test_no_num_ctx_means_ollamas_default(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(131072)}))
    ctx = await ollama_context(settings_for(tmp_path, server))
    assert (ctx.context_length, ctx.source) == (OLLAMA_DEFAULT_CONTEXT, "default")
    assert await ollama_context_warning(settings_for(tmp_path, server)) is not None


async def test_num_ctx_beyond_what_the_model_holds_is_capped(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(2048, num_ctx=65536)}))
    ctx = await ollama_context(settings_for(tmp_path, server))
    assert ctx.context_length == 2048
    warning = await ollama_context_warning(settings_for(tmp_path, server))
    assert "holds at most 2048" in warning and "CODE_AGENT_CONTEXT_BUDGET=2048" in warning


async def test_a_smaller_budget_fits(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(32768)}))
    settings = settings_for(tmp_path, server, CODE_AGENT_CONTEXT_BUDGET="4000")
    assert await ollama_context_warning(settings) is None


async def test_a_model_without_a_tag_matches_latest(tmp_path, scripted_server):
    server = scripted_server(
        ollama=ollama(models={"llama3.2": ollama_model(131072)}, running={"llama3.2:latest": 2048})
    )
    ctx = await ollama_context(settings_for(tmp_path, server, model="llama3.2"))
    assert (ctx.context_length, ctx.source) == (2048, "loaded")


async def test_an_unknown_model_or_a_server_that_is_not_ollama_gives_nothing(
    tmp_path, scripted_server
):
    server = scripted_server(ollama=ollama(models={}))
    assert await ollama_context(settings_for(tmp_path, server)) is None
    plain = scripted_server()
    assert await ollama_context_warning(settings_for(tmp_path, plain)) is None
    assert plain.native_requests == ["/api/version"]


async def test_an_unreachable_api_is_no_warning_and_no_error(tmp_path):
    server = ScriptedModelServer().start()
    settings = settings_for(tmp_path, server)
    server.stop()
    assert await ollama_context_warning(settings, timeout=1.0) is None


def test_which_urls_are_asked(tmp_path):
    def may(url: str) -> bool:
        return may_be_ollama(load_settings(tmp_path, environ={"LLM_BASE_URL": url}))

    assert may("http://localhost:11434/v1")
    assert may("http://gpu-box:11434/v1")
    assert may("https://llm.example.com/ollama/v1")
    assert may("http://127.0.0.1:8080/v1")
    assert not may("https://api.openai.com/v1")
    assert not may("https://api.deepseek.com/v1")
    assert ollama_root("http://localhost:11434/v1/") == "http://localhost:11434"
    assert ollama_root("http://host/ollama/v1") == "http://host/ollama"


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ('stop "<|im_end|>"\nnum_ctx 8192\ntemperature 0.2', 8192),
        ("num_ctx                        32768", 32768),
        ("temperature 0.1", None),
        ("num_ctxx 5", None),
    ],
)
def test_num_ctx_is_read_from_the_parameters_text(parameters, expected):
    assert modelfile_num_ctx({"parameters": parameters}) == expected


def doctor(repo, server) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "hello_tui",
            "doctor",
            "--repo",
            str(repo),
            "--base-url",
            server.base_url,
            "--model",
            MODEL,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )


def test_doctor_warns_with_the_fix(tmp_path, scripted_server):
    server = scripted_server(
        ollama=ollama(models={MODEL: ollama_model(32768)}, running={MODEL: 2048})
    )
    proc = doctor(tmp_path, server)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ollama context: 2048 tokens for {MODEL} (as loaded now)" in proc.stdout
    assert "warning:" in proc.stdout and "OLLAMA_CONTEXT_LENGTH=8192" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_doctor_says_nothing_about_ollama_elsewhere(tmp_path, scripted_server):
    server = scripted_server()
    proc = doctor(tmp_path, server)
    assert proc.returncode == 0, proc.stdout
    assert "ollama context" not in proc.stdout
    assert "prices" in proc.stdout and "free" in proc.stdout
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith("  ")}
    assert "600s" in rows["deadline"] and "(default)" in rows["deadline"]
    assert "1048576 bytes" in rows["answer"]
