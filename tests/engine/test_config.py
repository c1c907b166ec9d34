"""Settings resolution: flags > environment > <repo>/.env > defaults, providers, key safety."""

from __future__ import annotations

import dataclasses
import os

import pytest

from hello_tui.config import (
    DEFAULT_CONTEXT_BUDGET,
    PROVIDERS,
    ConfigError,
    Settings,
    is_local_url,
    load_settings,
    provider_for_url,
)


def write_env(repo, **values: str) -> None:
    (repo / ".env").write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")


def test_defaults_with_an_empty_environment(tmp_path):
    s = load_settings(tmp_path, environ={})
    assert s.repo == tmp_path.resolve()
    assert s.project == tmp_path.name
    assert s.provider == "openai"
    assert s.base_url == "https://api.openai.com/v1"
    assert s.model == "gpt-4o-mini"
    assert s.api_key is None and not s.model_configured
    assert (s.timeout, s.temperature, s.max_steps) == (60.0, 0.7, 20)
    assert s.protocol == "auto" and s.log_level == "WARNING" and s.debug is False
    assert s.context_budget == DEFAULT_CONTEXT_BUDGET and s.sources["context_budget"] == "default"
    assert s.price_input is None and s.price_output is None
    assert s.state.root == tmp_path.resolve() / ".helloagents"
    assert s.state.sessions == s.state.root / "sessions"
    assert s.state.logs == s.state.root / "logs"
    assert s.sources["api_key"] == "default" and s.sources["model"] == "default for openai"


def test_what_no_source_sets_is_the_models_default(tmp_path):
    s = load_settings(tmp_path, environ={})
    for field in dataclasses.fields(Settings):
        if field.default is not dataclasses.MISSING:
            assert getattr(s, field.name) == field.default, field.name


def test_settings_are_frozen_and_a_copy_changes_nothing_else(tmp_path):
    s = load_settings(tmp_path, environ={"CODE_AGENT_CONTEXT_BUDGET": "4000"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.context_budget = 9000  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.sources["model"] = "flag"  # type: ignore[index]
    assert isinstance(s.notices, tuple)
    copy = s.with_changes(model="other-model", notices=["said once"])
    assert (copy.model, copy.notices, copy.context_budget) == ("other-model", ("said once",), 4000)
    assert s.model == "gpt-4o-mini" and s.notices == ()
    with pytest.raises(TypeError):
        copy.sources["model"] = "flag"  # type: ignore[index]
    with pytest.raises(ValueError, match="mode"):
        s.with_changes(mode="yolo")
    with pytest.raises(TypeError):
        s.with_changes(no_such_setting=1)


def test_the_settings_repr_never_shows_the_api_key(tmp_path):
    s = load_settings(tmp_path, environ={"LLM_API_KEY": "sk-secret-key-1234"})
    assert s.api_key == "sk-secret-key-1234"
    assert "secret" not in repr(s) and "secret" not in str(s)


def test_flags_beat_environment_beat_dotenv_beat_defaults(tmp_path):
    write_env(
        tmp_path,
        LLM_MODEL_ID="dotenv-model",
        LLM_BASE_URL="http://localhost:1/v1",
        LLM_API_KEY="dotenv-key",
    )
    only_dotenv = load_settings(tmp_path, environ={})
    assert (only_dotenv.model, only_dotenv.base_url, only_dotenv.api_key) == (
        "dotenv-model",
        "http://localhost:1/v1",
        "dotenv-key",
    )
    assert only_dotenv.sources["model"] == ".env LLM_MODEL_ID"

    env = {"LLM_MODEL_ID": "env-model", "LLM_BASE_URL": "http://localhost:2/v1"}
    with_env = load_settings(tmp_path, environ=env)
    assert (with_env.model, with_env.base_url) == ("env-model", "http://localhost:2/v1")
    assert with_env.api_key == "dotenv-key"  # .env still fills what the environment lacks
    assert with_env.sources["model"] == "env LLM_MODEL_ID"
    assert with_env.sources["api_key"] == ".env LLM_API_KEY"

    flagged = load_settings(
        tmp_path,
        environ=env,
        model="flag-model",
        base_url="http://localhost:3/v1",
        api_key="flag-key",
    )
    assert (flagged.model, flagged.base_url, flagged.api_key) == (
        "flag-model",
        "http://localhost:3/v1",
        "flag-key",
    )
    assert flagged.sources["model"] == flagged.sources["api_key"] == "flag"


def test_dotenv_never_touches_the_process_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("HELLO_TUI_TEST_ONLY", raising=False)
    monkeypatch.setenv("LLM_MODEL_ID", "from-process")
    write_env(tmp_path, HELLO_TUI_TEST_ONLY="x", LLM_MODEL_ID="from-dotenv")
    s = load_settings(tmp_path)  # environ=None reads os.environ
    assert s.model == "from-process"
    assert "HELLO_TUI_TEST_ONLY" not in os.environ


def test_empty_variables_count_as_unset(tmp_path):
    s = load_settings(tmp_path, environ={"LLM_MODEL_ID": "", "LLM_TIMEOUT": ""})
    assert s.model == "gpt-4o-mini" and s.timeout == 60.0


def test_llm_model_alias_and_llm_model_id_wins(tmp_path):
    assert load_settings(tmp_path, environ={"LLM_MODEL": "alias"}).model == "alias"
    both = load_settings(tmp_path, environ={"LLM_MODEL": "alias", "LLM_MODEL_ID": "main"})
    assert both.model == "main"


def test_state_dir_variables(tmp_path):
    assert load_settings(tmp_path, environ={"HELLOAGENTS_DIR": ".ha"}).state.root == (
        tmp_path.resolve() / ".ha"
    )
    assert load_settings(tmp_path, environ={"CODE_AGENT_STATE_DIR": ".cs"}).state.root == (
        tmp_path.resolve() / ".cs"
    )
    both = load_settings(
        tmp_path, environ={"HELLOAGENTS_DIR": ".ha", "CODE_AGENT_STATE_DIR": ".cs"}
    )
    assert both.state.root.name == ".ha"
    assert both.sources["state_dir"] == "env HELLOAGENTS_DIR"
    elsewhere = tmp_path / "state-elsewhere"
    assert load_settings(tmp_path, environ={"HELLOAGENTS_DIR": str(elsewhere)}).state.root == (
        elsewhere
    )


KEYED = [(p, var) for p in PROVIDERS for var in p.key_vars]


@pytest.mark.parametrize("provider,var", KEYED, ids=[f"{p.name}-{v}" for p, v in KEYED])
def test_each_provider_key_selects_its_provider(tmp_path, provider, var):
    s = load_settings(tmp_path, environ={var: "secret-value-123"})
    assert s.provider == provider.name
    assert s.base_url == provider.base_url.rstrip("/")
    assert s.model == provider.model
    assert s.api_key == "secret-value-123"
    assert s.sources["api_key"] == f"env {var}"
    assert s.model_configured


@pytest.mark.parametrize("provider,var", KEYED, ids=[f"{p.name}-{v}" for p, v in KEYED])
def test_provider_url_picks_only_its_own_key(tmp_path, provider, var):
    others = {v: f"other-{v}" for _, v in KEYED if v not in provider.key_vars}
    s = load_settings(tmp_path, environ={"LLM_BASE_URL": provider.base_url, var: "mine", **others})
    assert s.provider == provider.name
    assert s.api_key == "mine"


def test_explicit_llm_settings_win_over_provider_keys(tmp_path):
    env = {
        "LLM_API_KEY": "explicit",
        "DEEPSEEK_API_KEY": "ds",
        "LLM_BASE_URL": "https://api.deepseek.com/v1",
        "LLM_MODEL_ID": "deepseek-reasoner",
    }
    s = load_settings(tmp_path, environ=env)
    assert (s.api_key, s.model, s.provider) == ("explicit", "deepseek-reasoner", "deepseek")
    assert s.sources["api_key"] == "env LLM_API_KEY"


def test_llm_api_key_without_url_means_openai(tmp_path):
    s = load_settings(tmp_path, environ={"LLM_API_KEY": "k", "DEEPSEEK_API_KEY": "ds"})
    assert s.provider == "openai" and s.api_key == "k"


def test_stray_openai_key_never_goes_to_another_host(tmp_path):
    s = load_settings(
        tmp_path,
        environ={
            "LLM_BASE_URL": "https://api.deepseek.com/v1",
            "OPENAI_API_KEY": "sk-openai-secret",
        },
    )
    assert s.provider == "deepseek"
    assert s.api_key is None
    assert not s.model_configured
    custom = load_settings(
        tmp_path,
        environ={
            "LLM_BASE_URL": "https://llm.example.com/v1",
            "OPENAI_API_KEY": "sk-openai-secret",
        },
    )
    assert custom.provider == "custom" and custom.api_key is None


def test_openai_url_uses_the_openai_key(tmp_path):
    s = load_settings(
        tmp_path, environ={"LLM_BASE_URL": "https://api.openai.com/v1/", "OPENAI_API_KEY": "sk-o"}
    )
    assert s.api_key == "sk-o" and s.base_url == "https://api.openai.com/v1"


@pytest.mark.parametrize(
    "url,provider",
    [
        ("http://localhost:11434/v1", "ollama"),
        ("http://127.0.0.1:8000/v1", "local"),
        ("http://[::1]:8080/v1", "local"),
    ],
)
def test_local_servers_need_no_key(tmp_path, url, provider):
    s = load_settings(tmp_path, environ={"LLM_BASE_URL": url, "OPENAI_API_KEY": "sk-stray"})
    assert s.provider == provider
    assert s.api_key is None
    assert s.model_configured


def test_ollama_default_model(tmp_path):
    s = load_settings(tmp_path, environ={"LLM_BASE_URL": "http://localhost:11434/v1"})
    assert s.model == "qwen2.5-coder:7b"


def test_url_helpers():
    assert provider_for_url("https://api.deepseek.com/v1").name == "deepseek"
    assert provider_for_url("https://dashscope.aliyuncs.com/compatible-mode/v1").name == "qwen"
    assert provider_for_url("https://example.org/v1") is None
    assert is_local_url("http://127.0.0.2:9/v1") and is_local_url("http://localhost/v1")
    assert not is_local_url("https://api.openai.com/v1")


@pytest.mark.parametrize(
    "var,value",
    [
        ("LLM_TIMEOUT", "soon"),
        ("LLM_TIMEOUT", "0"),
        ("LLM_TIMEOUT", "-5"),
        ("TEMPERATURE", "hot"),
        ("TEMPERATURE", "9"),
        ("CODE_AGENT_MAX_STEPS", "many"),
        ("CODE_AGENT_MAX_STEPS", "2.5"),
        ("CODE_AGENT_MAX_STEPS", "0"),
        ("CODE_AGENT_CONTEXT_BUDGET", "big"),
        ("CODE_AGENT_CONTEXT_BUDGET", "100"),
        ("LLM_PRICE_INPUT", "cheap"),
        ("LLM_PRICE_OUTPUT", "1,5"),
        ("CODE_AGENT_PROTOCOL", "telepathy"),
    ],
)
def test_bad_values_name_the_variable(tmp_path, var, value):
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={var: value})
    assert var in str(info.value)


def test_bad_flags(tmp_path):
    with pytest.raises(ConfigError, match="--max-steps"):
        load_settings(tmp_path, environ={}, max_steps=0)
    with pytest.raises(ConfigError, match="--protocol"):
        load_settings(tmp_path, environ={}, protocol="psychic")
    with pytest.raises(ConfigError, match="--repo"):
        load_settings(tmp_path / "missing", environ={})


def test_bad_value_in_dotenv_is_reported_too(tmp_path):
    write_env(tmp_path, LLM_TIMEOUT="later")
    with pytest.raises(ConfigError, match="LLM_TIMEOUT"):
        load_settings(tmp_path, environ={})


def test_unreadable_dotenv_is_a_config_error(tmp_path):
    (tmp_path / ".env").write_bytes(b"LLM_MODEL_ID=\xff\xfe\n")
    with pytest.raises(ConfigError, match=".env"):
        load_settings(tmp_path, environ={})


def test_numbers_flags_and_sources(tmp_path):
    env = {
        "LLM_TIMEOUT": "12.5",
        "TEMPERATURE": "0",
        "CODE_AGENT_MAX_STEPS": "7",
        "LLM_PRICE_INPUT": "0.5",
        "LLM_PRICE_OUTPUT": "2",
        "LOG_LEVEL": "info",
        "CODE_AGENT_PROTOCOL": "react",
    }
    s = load_settings(tmp_path, environ=env)
    assert (s.timeout, s.temperature, s.max_steps) == (12.5, 0.0, 7)
    assert (s.price_input, s.price_output, s.log_level, s.protocol) == (0.5, 2.0, "INFO", "react")
    assert s.sources["timeout"] == "env LLM_TIMEOUT"
    assert s.sources["max_steps"] == "env CODE_AGENT_MAX_STEPS"
    flagged = load_settings(
        tmp_path, environ=env, max_steps=3, protocol="tools", debug=True, project="demo"
    )
    assert (flagged.max_steps, flagged.protocol, flagged.project) == (3, "tools", "demo")
    assert flagged.debug and flagged.log_level == "INFO"  # an explicit LOG_LEVEL still wins
    assert flagged.sources["protocol"] == flagged.sources["max_steps"] == "flag"
    assert load_settings(tmp_path, environ={}, debug=True).log_level == "DEBUG"


def test_masked_key_hides_the_secret(tmp_path):
    s = load_settings(tmp_path, environ={"LLM_API_KEY": "sk-abcdefghijklmnop1234"})
    assert "abcdefghijklmnop" not in s.masked_key and s.masked_key.endswith("1234")
    short = load_settings(tmp_path, environ={"LLM_API_KEY": "short"})
    assert short.masked_key == "***"
    assert load_settings(tmp_path, environ={}).masked_key == "(none)"


# ------------------------------------------------------------- trust boundaries


def test_a_repo_env_url_never_gets_the_users_key(tmp_path):
    write_env(tmp_path, LLM_BASE_URL="https://collector.example/v1")
    env = {"LLM_API_KEY": "user-secret", "OPENAI_API_KEY": "sk-user"}
    s = load_settings(tmp_path, environ=env)
    assert s.base_url == "https://collector.example/v1"
    assert s.api_key is None and s.sources["api_key"] == "default"
    assert any("is not sent to a server the repository chose" in n for n in s.notices)
    flagged = load_settings(tmp_path, environ={}, api_key="flag-secret")
    assert flagged.api_key is None and flagged.notices


def test_a_repo_env_url_may_use_a_key_from_the_same_file(tmp_path):
    write_env(tmp_path, LLM_BASE_URL="https://collector.example/v1", LLM_API_KEY="repo-key")
    s = load_settings(tmp_path, environ={"LLM_API_KEY": "user-secret"})
    assert s.api_key == "repo-key" and s.sources["api_key"] == ".env LLM_API_KEY"
    assert s.notices  # the user's own key was held back, and they are told


def test_a_repo_env_provider_url_takes_only_the_files_provider_key(tmp_path):
    write_env(tmp_path, LLM_BASE_URL="https://api.deepseek.com/v1")
    held = load_settings(tmp_path, environ={"DEEPSEEK_API_KEY": "user-ds"})
    assert held.api_key is None
    write_env(tmp_path, LLM_BASE_URL="https://api.deepseek.com/v1", DEEPSEEK_API_KEY="repo-ds")
    own = load_settings(tmp_path, environ={"DEEPSEEK_API_KEY": "user-ds"})
    assert own.api_key == "repo-ds" and own.sources["api_key"] == ".env DEEPSEEK_API_KEY"


def test_a_url_the_user_chose_may_use_a_key_from_env_or_dotenv(tmp_path):
    write_env(tmp_path, LLM_API_KEY="dotenv-key")
    s = load_settings(tmp_path, environ={"LLM_BASE_URL": "https://llm.example/v1"})
    assert s.api_key == "dotenv-key" and not s.notices


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/v1?next=api.openai.com",
        "https://api.openai.com.evil.example/v1",
        "https://evil.example/deepseek.com/v1",
        "https://notmoonshot.cn.example/v1",
    ],
)
def test_providers_are_known_by_host_name_only(tmp_path, url):
    assert provider_for_url(url) is None
    s = load_settings(tmp_path, environ={"LLM_BASE_URL": url, "OPENAI_API_KEY": "sk-o"})
    assert s.api_key is None


def test_provider_subdomains_still_count():
    assert provider_for_url("https://eu.api.deepseek.com/v1").name == "deepseek"
    assert provider_for_url("http://gpu-box:11434/v1").name == "ollama"


def test_sandbox_setting(tmp_path):
    assert load_settings(tmp_path, environ={}).sandbox == "auto"
    for value in ("auto", "require", "off", "OFF"):
        s = load_settings(tmp_path, environ={"CODE_AGENT_SANDBOX": value})
        assert s.sandbox == value.lower() and s.sources["sandbox"] == "env CODE_AGENT_SANDBOX"
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={"CODE_AGENT_SANDBOX": "maybe"})
    assert "CODE_AGENT_SANDBOX" in str(info.value)


def test_a_repo_env_cannot_switch_the_sandbox_off(tmp_path):
    write_env(tmp_path, CODE_AGENT_SANDBOX="off")
    s = load_settings(tmp_path, environ={})
    assert s.sandbox == "auto"
    assert any("cannot change the command sandbox" in n for n in s.notices)


def test_a_symlinked_state_folder_refuses_to_start(tmp_path):
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    repo.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, repo / ".helloagents")
    with pytest.raises(ConfigError) as info:
        load_settings(repo, environ={})
    message = str(info.value)
    assert "symbolic link" in message and "\n" not in message


def test_a_symlink_inside_the_state_folder_refuses_to_start(tmp_path):
    (tmp_path / ".helloagents" / "notes").mkdir(parents=True)
    os.symlink("/etc", tmp_path / ".helloagents" / "notes" / "n.md")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    assert "n.md" in str(info.value) and "symbolic link" in str(info.value)


@pytest.mark.parametrize("value", ["/tmp/hello-state", "../state", ".", ".git/state"])
def test_the_state_folder_must_be_inside_the_repo(tmp_path, value):
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={"HELLOAGENTS_DIR": value})
    assert "state folder" in str(info.value)


def test_a_nested_state_folder_inside_the_repo_is_fine(tmp_path):
    s = load_settings(tmp_path, environ={"HELLOAGENTS_DIR": "var/agent-state"})
    assert s.state.root == tmp_path.resolve() / "var" / "agent-state"


def test_the_setting_words_and_their_types_agree():
    """The words are tuples at run time; their Literal types are built when imported."""
    from typing import get_args

    from hello_tui import config

    assert get_args(config.Mode) == config.MODES
    assert get_args(config.Protocol) == config.PROTOCOLS
    assert get_args(config.SandboxSetting) == config.SANDBOX_SETTINGS
    assert get_args(config.Notifications) == config.NOTIFICATIONS
    with pytest.raises(AttributeError):
        _ = config.NoSuchName
