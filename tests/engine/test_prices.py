"""Cost without configuration: the built-in price table, local models at zero, overrides first."""

from __future__ import annotations

import pytest

from hello_tui.config import PROVIDERS, load_settings
from hello_tui.llm import TokenUsage, cost, price_for
from hello_tui.llm.prices import PRICE_TABLE, table_price

MILLION = TokenUsage(1_000_000, 1_000_000)


def settings(tmp_path, **env: str):
    return load_settings(tmp_path, environ={"LLM_API_KEY": "k", **env})


def test_every_remote_provider_default_model_has_a_price():
    for provider in PROVIDERS:
        found = table_price(provider.model)
        if provider.needs_key and provider.name != "modelscope":
            assert found is not None, provider.name


def test_the_default_openai_model_is_priced_without_configuration(tmp_path):
    s = settings(tmp_path)
    assert s.model == "gpt-4o-mini"
    assert cost(MILLION, s) == pytest.approx(0.15 + 0.60)
    assert price_for(s).source == "built-in table: gpt-4o-mini"


@pytest.mark.parametrize(
    ("url", "model", "expected"),
    [
        ("https://api.deepseek.com/v1", "deepseek-chat", 0.56 + 1.68),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus", 0.40 + 1.20),
        ("https://api.moonshot.cn/v1", "moonshot-v1-8k", 0.20 + 2.00),
        ("https://open.bigmodel.cn/api/paas/v4", "glm-4-flash", 0.0),
        ("https://api.openai.com/v1", "gpt-4o-2024-08-06", 2.50 + 10.00),
        ("https://openrouter.ai/api/v1", "openai/gpt-4.1-mini", 0.40 + 1.60),
        ("https://api.moonshot.ai/v1", "kimi-k2-0905-preview", 0.60 + 2.50),
    ],
)
def test_provider_models_snapshots_and_router_prefixes(tmp_path, url, model, expected):
    s = settings(tmp_path, LLM_BASE_URL=url, LLM_MODEL_ID=model)
    assert cost(MILLION, s) == pytest.approx(expected)


def test_longer_names_are_not_mistaken_for_a_known_prefix(tmp_path):
    assert table_price("gpt-5-pro") is None  # not gpt-5's price
    assert table_price("gpt-4o-mini-tts") is None
    assert table_price("gpt-5-mini")[0] == "gpt-5-mini"
    assert table_price("GPT-4o")[0] == "gpt-4o"


def test_unknown_remote_models_have_no_price(tmp_path):
    s = settings(tmp_path, LLM_BASE_URL="https://llm.example.com/v1", LLM_MODEL_ID="house-model")
    assert price_for(s) is None and cost(MILLION, s) is None


@pytest.mark.parametrize(
    "url", ["http://localhost:11434/v1", "http://127.0.0.1:8000/v1", "http://gpu-box:11434/v1"]
)
def test_local_models_cost_nothing(tmp_path, url):
    s = load_settings(tmp_path, environ={"LLM_BASE_URL": url, "LLM_MODEL_ID": "gpt-4o"})
    assert cost(MILLION, s) == 0.0


def test_the_override_wins_over_the_table_and_over_local(tmp_path):
    s = settings(tmp_path, LLM_PRICE_INPUT="3", LLM_PRICE_OUTPUT="4")
    assert cost(MILLION, s) == pytest.approx(7.0)
    assert price_for(s).source == "LLM_PRICE_INPUT / LLM_PRICE_OUTPUT"
    local = load_settings(
        tmp_path,
        environ={"LLM_BASE_URL": "http://localhost:11434/v1", "LLM_PRICE_OUTPUT": "1"},
    )
    assert cost(MILLION, local) == pytest.approx(1.0)


def test_the_table_is_per_million_and_sane():
    for model, (price_in, price_out) in PRICE_TABLE.items():
        assert model == model.lower()
        assert 0 <= price_in <= 20 and 0 <= price_out <= 80, model
