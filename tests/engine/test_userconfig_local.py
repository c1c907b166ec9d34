"""A local server or proxy in the user config: its URL, model and key (the custom key,
LLM_API_KEY), and a provider's key saved later taking the provider's own URL back."""

from __future__ import annotations

from hello_tui.config import PROVIDER_BY_NAME, load_settings
from hello_tui.userconfig import as_environment, load, save_key, save_local_server


def test_a_proxy_with_a_key_is_stored_as_base_url_model_and_the_custom_key(tmp_path):
    path = tmp_path / "config.toml"
    save_key(path, "deepseek", "sk-deep")
    save_local_server(path, "https://proxy.example/v1", model="gpt-4o", key="sk-proxy")
    data = load(path)
    assert data["base_url"] == "https://proxy.example/v1" and data["model"] == "gpt-4o"
    assert "provider" not in data
    assert data["keys"] == {"deepseek": "sk-deep", "custom": "sk-proxy"}
    env = as_environment(data, PROVIDER_BY_NAME)
    assert env["LLM_BASE_URL"] == "https://proxy.example/v1"
    assert env["LLM_API_KEY"] == "sk-proxy"


def test_the_settings_use_the_saved_local_server(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = tmp_path / "xdg" / "hello-tui" / "config.toml"
    save_local_server(path, "http://127.0.0.1:11434/v1", model="qwen2.5-coder:7b")
    repo = tmp_path / "repo"
    repo.mkdir()
    settings = load_settings(repo, environ={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert settings.base_url == "http://127.0.0.1:11434/v1"
    assert settings.model == "qwen2.5-coder:7b"
    assert settings.model_configured and not settings.api_key


def test_a_providers_key_saved_later_takes_its_own_url_back(tmp_path):
    path = tmp_path / "config.toml"
    save_local_server(path, "http://localhost:8080/v1", model="local-model", key="k")
    save_key(path, "openai", "sk-open")
    data = load(path)
    assert "base_url" not in data and data["provider"] == "openai"
    env = as_environment(data, PROVIDER_BY_NAME)
    assert env["LLM_BASE_URL"] == PROVIDER_BY_NAME["openai"].base_url


def test_no_key_removes_an_old_custom_key(tmp_path):
    path = tmp_path / "config.toml"
    save_local_server(path, "https://proxy.example/v1", key="old")
    save_local_server(path, "http://localhost:1234/v1")
    assert "custom" not in load(path).get("keys", {}) and "model" not in load(path)
