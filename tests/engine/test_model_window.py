"""The model's context window: asked from the endpoint (played by the scripted server, as
llama.cpp, vLLM, LM Studio, OpenRouter and Ollama answer), else the table, else the default."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hello_tui.config import DEFAULT_CONTEXT_BUDGET, load_settings
from hello_tui.llm.model_window import (
    budget_for,
    budget_warning,
    cached_window,
    model_window,
    probe_window,
    table_window,
)
from hello_tui.llm.ollama import (
    OLLAMA_DEFAULT_CONTEXT,
    looks_like_ollama_url,
    modelfile_num_ctx,
    native_root,
)
from tests.support.scripted_model import ScriptedModelServer, ScriptedOllama, ollama_model

MODEL = "qwen2.5-coder:7b"


def settings_for(tmp_path, server, model: str = MODEL, **env: str):
    return load_settings(tmp_path, base_url=server.base_url, model=model, environ=env)


def ollama(**kwargs) -> ScriptedOllama:
    return ScriptedOllama(**kwargs)


# ---------------------------------------------------------------- what each server says


def test_llama_cpp_says_its_window_in_props(tmp_path, scripted_server):
    server = scripted_server(
        model_fields={"owned_by": "llamacpp", "meta": {"n_ctx_train": 8192}},
        native={"GET /props": {"default_generation_settings": {"n_ctx": 2048}}},
    )
    window = probe_window(settings_for(tmp_path, server, model="anything"))
    assert (window.tokens, window.source) == (2048, "llama.cpp: /props n_ctx")
    assert window.from_endpoint
    assert server.native_requests == ["/props"]  # no Ollama request on the way


class LlamaCppPython:
    """llama-cpp-python's server as its source behaves: models owned by "me", a token
    count endpoint, and a 400 naming the window for a prompt that does not fit, said
    before anything is evaluated (a prompt that fits is evaluated: `evaluated` counts it)."""

    def __init__(self, n_ctx: int, chars_per_token: int = 2) -> None:
        self.n_ctx, self.chars_per_token = n_ctx, chars_per_token
        self.evaluated: list[int] = []

    def tokens(self, text: str) -> int:
        return -(-len(text) // self.chars_per_token)

    def count(self, body):
        return 200, {"count": self.tokens(str(body.get("input", "")))}

    def complete(self, body):
        n = self.tokens(str(body.get("prompt", "")))
        if n >= self.n_ctx:
            message = (
                f"This model's maximum context length is {self.n_ctx} tokens, however you "
                f"requested {n + 1} tokens ({n} in your prompt; 1 for the completion). "
                "Please reduce your prompt; or completion length."
            )
            return 400, {"error": {"message": message, "type": "invalid_request_error"}}
        self.evaluated.append(n)
        return 200, {"choices": [{"text": "x", "index": 0, "finish_reason": "length"}]}

    def native(self):
        return {"POST /extras/tokenize/count": self.count, "POST /v1/completions": self.complete}


@pytest.mark.parametrize("chars_per_token", [2, 8])
def test_llama_cpp_python_names_its_window_for_a_prompt_past_any_window(
    tmp_path, scripted_server, chars_per_token
):
    peer = LlamaCppPython(n_ctx=2048, chars_per_token=chars_per_token)
    server = scripted_server(model_fields={"owned_by": "me"}, native=peer.native())
    window = probe_window(settings_for(tmp_path, server, model="smollm2"))
    assert (window.tokens, window.from_endpoint) == (2048, True)
    assert window.source == "llama-cpp-python: its error for an oversized prompt"
    assert peer.evaluated == []  # counted first: nothing that fits was ever sent to the model
    assert server.native_requests[-1] == "/v1/completions"


def test_a_server_owned_by_me_without_a_token_count_is_sent_no_prompt(tmp_path, scripted_server):
    server = scripted_server(model_fields={"owned_by": "me"})
    window = probe_window(settings_for(tmp_path, server, model="mystery-model"))
    assert window.tokens == DEFAULT_CONTEXT_BUDGET and not window.from_endpoint
    assert server.native_requests == ["/extras/tokenize/count"]


def test_vllm_says_max_model_len_in_the_listing(tmp_path, scripted_server):
    server = scripted_server(models=["Qwen/Qwen2.5-7B"], model_fields={"max_model_len": 32768})
    window = probe_window(settings_for(tmp_path, server, model="Qwen/Qwen2.5-7B"))
    assert (window.tokens, window.source) == (32768, "vLLM: /v1/models max_model_len")
    assert server.native_requests == []


def test_an_aggregator_says_context_length_in_the_listing(tmp_path, scripted_server):
    server = scripted_server(models=["openai/gpt-4o"], model_fields={"context_length": 64000})
    window = probe_window(settings_for(tmp_path, server, model="openai/gpt-4o"))
    assert window.tokens == 64000  # the endpoint's word beats the table's 128000
    assert "context_length" in window.source


def test_lm_studio_says_the_loaded_context(tmp_path, scripted_server):
    server = scripted_server(
        models=["qwen2.5-7b-instruct"],
        model_fields={"owned_by": "organization_owner"},
        native={
            "GET /api/v0/models/qwen2.5-7b-instruct": {
                "id": "qwen2.5-7b-instruct",
                "loaded_context_length": 4096,
                "max_context_length": 32768,
            }
        },
    )
    window = probe_window(settings_for(tmp_path, server, model="qwen2.5-7b-instruct"))
    assert (window.tokens, window.source) == (
        4096,
        "LM Studio: /api/v0/models loaded_context_length",
    )


def test_a_loaded_ollama_model_reports_the_context_it_runs_with(tmp_path, scripted_server):
    server = scripted_server(
        ollama=ollama(models={MODEL: ollama_model(32768)}, running={MODEL: 4096})
    )
    window = probe_window(settings_for(tmp_path, server))
    assert window.tokens == 4096 and window.source.startswith("Ollama: /api/ps")
    # Known from its listing (owned by "library"): only Ollama's own requests, no version probe.
    assert set(server.native_requests) == {"/api/show", "/api/ps"}


def test_num_ctx_from_the_modelfile_counts_when_not_loaded(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(32768, num_ctx=16384)}))
    window = probe_window(settings_for(tmp_path, server))
    assert (window.tokens, window.source) == (16384, "Ollama: num_ctx in its Modelfile")


def test_no_num_ctx_means_ollamas_default_and_how_to_raise_it(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(131072)}))
    window = probe_window(settings_for(tmp_path, server))
    assert window.tokens == OLLAMA_DEFAULT_CONTEXT
    assert "OLLAMA_CONTEXT_LENGTH" in window.source


def test_num_ctx_beyond_what_the_model_holds_is_capped(tmp_path, scripted_server):
    server = scripted_server(ollama=ollama(models={MODEL: ollama_model(2048, num_ctx=65536)}))
    assert probe_window(settings_for(tmp_path, server)).tokens == 2048


def test_a_model_without_a_tag_matches_latest(tmp_path, scripted_server):
    server = scripted_server(
        ollama=ollama(models={"llama3.2": ollama_model(131072)}, running={"llama3.2:latest": 2048})
    )
    assert probe_window(settings_for(tmp_path, server, model="llama3.2")).tokens == 2048


# ---------------------------------------------------------------- when the endpoint does not say


def test_a_plain_server_gets_no_foreign_requests(tmp_path, scripted_server):
    server = scripted_server()
    window = probe_window(settings_for(tmp_path, server, model="mystery-model"))
    assert (window.tokens, window.from_endpoint) == (DEFAULT_CONTEXT_BUDGET, False)
    assert window.source.startswith("default")
    assert server.native_requests == []  # not Ollama's /api/version, not /props
    assert server.listings == 1


def test_known_cloud_models_come_from_the_table(tmp_path, scripted_server):
    server = scripted_server()
    window = probe_window(settings_for(tmp_path, server, model="gpt-4o-mini"))
    assert (window.tokens, window.source) == (128_000, "built-in table (gpt-4o*)")
    assert table_window("openai/gpt-4.1-mini").tokens == 1_047_576  # a proxy's vendor prefix
    assert table_window("anthropic/claude-sonnet-4.5").tokens == 200_000
    assert table_window("o4-mini").tokens == 200_000
    assert table_window("gpt-5-codex").tokens == 400_000
    assert table_window("deepseek-chat").tokens == 128_000
    assert table_window("kimi-k2-0905-preview").tokens == 131_072
    assert table_window("glm-4.6").tokens == 200_000
    assert table_window("moonshot-v1-8k").tokens == 8_192
    assert table_window("my-own-finetune") is None


def test_an_unreachable_endpoint_is_the_table_or_the_default(tmp_path):
    server = ScriptedModelServer().start()
    settings = settings_for(tmp_path, server, model="unknown")
    server.stop()
    window = probe_window(settings, timeout=1.0)
    assert window.tokens == DEFAULT_CONTEXT_BUDGET and not window.from_endpoint


async def test_each_endpoint_and_model_is_probed_once(tmp_path, scripted_server):
    server = scripted_server(model_fields={"max_model_len": 16384})
    settings = settings_for(tmp_path, server, model="scripted-model")
    first = await model_window(settings)
    second = cached_window(settings)
    assert first == second and first.tokens == 16384
    assert server.listings == 1


def test_which_urls_say_ollama(tmp_path):
    def says(url: str) -> bool:
        return looks_like_ollama_url(load_settings(tmp_path, environ={"LLM_BASE_URL": url}))

    assert says("http://localhost:11434/v1")
    assert says("http://gpu-box:11434/v1")
    assert says("https://llm.example.com/ollama/v1")
    assert not says("http://127.0.0.1:8080/v1")  # a local server: its listing decides
    assert not says("https://api.openai.com/v1")
    assert native_root("http://localhost:11434/v1/") == "http://localhost:11434"
    assert native_root("http://host/ollama/v1") == "http://host/ollama"


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


# ---------------------------------------------------------------- the budget


def test_the_budget_is_the_window_unless_overridden(tmp_path, scripted_server):
    server = scripted_server(model_fields={"max_model_len": 4096})
    settings = settings_for(tmp_path, server, model="scripted-model")
    budget = budget_for(settings, probe_window(settings))
    assert (budget.tokens, budget_warning(budget)) == (4096, None)
    over = settings_for(tmp_path, server, model="scripted-model", CODE_AGENT_CONTEXT_BUDGET="6000")
    budget = budget_for(over, probe_window(over))
    assert budget.tokens == 6000 and budget.source.startswith("CODE_AGENT_CONTEXT_BUDGET")
    warning = budget_warning(budget)
    assert warning is not None and "window of 4096" in warning and "vLLM" in warning
    under = settings_for(tmp_path, server, model="scripted-model", CODE_AGENT_CONTEXT_BUDGET="3000")
    assert budget_warning(budget_for(under, probe_window(under))) is None


def doctor(repo, server, model: str = MODEL, **env: str) -> subprocess.CompletedProcess:
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
            model,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ) | env,
        check=False,
    )


def test_doctor_says_the_budget_and_where_it_comes_from(tmp_path, scripted_server):
    server = scripted_server(
        model_fields={"owned_by": "llamacpp"},
        native={"GET /props": {"default_generation_settings": {"n_ctx": 2048}}},
    )
    proc = doctor(tmp_path, server)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "context budget: 2048 tokens (llama.cpp: /props n_ctx)" in proc.stdout
    assert "MCP tool schemas: up to 512 tokens" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_doctor_warns_when_the_override_is_past_the_window(tmp_path, scripted_server):
    server = scripted_server(
        ollama=ollama(models={MODEL: ollama_model(32768)}, running={MODEL: 2048})
    )
    proc = doctor(tmp_path, server, CODE_AGENT_CONTEXT_BUDGET="8000")
    assert proc.returncode == 0, proc.stdout
    assert "context budget: 8000 tokens (CODE_AGENT_CONTEXT_BUDGET" in proc.stdout
    assert "model window: 2048 tokens (Ollama: /api/ps" in proc.stdout
    assert "warning:" in proc.stdout and "Lower CODE_AGENT_CONTEXT_BUDGET to 2048" in proc.stdout


def test_doctor_on_a_plain_server(tmp_path, scripted_server):
    server = scripted_server()
    proc = doctor(tmp_path, server, model="gpt-4o")
    assert proc.returncode == 0, proc.stdout
    assert "context budget: 128000 tokens (built-in table (gpt-4o*))" in proc.stdout
    assert server.native_requests == []
    assert "prices" in proc.stdout
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.startswith("  ")}
    assert "600s" in rows["deadline"] and "(default)" in rows["deadline"]
    assert "1048576 bytes" in rows["answer"]
