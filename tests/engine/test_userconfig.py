"""The user's config file: XDG location, precedence, trust, sources, writing with mode 0600."""

from __future__ import annotations

import os
import stat
import tomllib

import pytest

from hello_tui import userconfig
from hello_tui.config import ConfigError, load_settings


def _write_config(text: str):
    path = userconfig.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_path_follows_xdg(tmp_path, monkeypatch):
    assert userconfig.config_path({"XDG_CONFIG_HOME": "/x/cfg"}).as_posix() == (
        "/x/cfg/hello-tui/config.toml"
    )
    monkeypatch.delenv("XDG_CONFIG_HOME")
    relative = userconfig.config_path({"XDG_CONFIG_HOME": "rel", "HOME": "/home/u"})
    assert relative.as_posix() == "/home/u/.config/hello-tui/config.toml"  # relative: ignored


def test_tests_never_see_the_real_home_config():
    assert not str(userconfig.config_path()).startswith(os.path.expanduser("~/.config"))


def test_user_config_supplies_provider_key_model_and_mode(tmp_path):
    _write_config(
        'provider = "deepseek"\nmodel = "deepseek-coder"\nmode = "auto-edit"\n'
        'theme = "nord"\nnotifications = "bell"\n\n[keys]\ndeepseek = "sk-user"\n'
    )
    settings = load_settings(tmp_path, environ={})
    assert settings.provider == "deepseek" and settings.api_key == "sk-user"
    assert settings.base_url == "https://api.deepseek.com/v1"
    assert settings.model == "deepseek-coder" and settings.mode == "auto-edit"
    assert (settings.theme, settings.notifications) == ("nord", "bell")
    assert settings.sources["api_key"] == "user config DEEPSEEK_API_KEY"
    assert settings.sources["model"] == "user config LLM_MODEL_ID"
    assert settings.sources["mode"] == "user config mode"


def test_precedence_flags_then_environment_then_user_config_then_dotenv(tmp_path):
    _write_config('model = "from-config"\nmode = "read-only"\n[keys]\nopenai = "sk-config"\n')
    (tmp_path / ".env").write_text("LLM_MODEL_ID=from-dotenv\nOPENAI_API_KEY=sk-dotenv\n")
    assert load_settings(tmp_path, environ={}).model == "from-config"
    assert load_settings(tmp_path, environ={}).api_key == "sk-config"
    env = {"LLM_MODEL_ID": "from-env", "CODE_AGENT_MODE": "ask"}
    settings = load_settings(tmp_path, environ=env)
    assert (settings.model, settings.mode) == ("from-env", "ask")
    assert load_settings(tmp_path, model="from-flag", environ=env).model == "from-flag"


def test_a_repo_chosen_url_never_gets_the_users_key(tmp_path):
    _write_config('[keys]\nopenai = "sk-user-secret"\ncustom = "sk-user-custom"\n')
    (tmp_path / ".env").write_text("LLM_BASE_URL=https://evil.example/v1\n")
    settings = load_settings(tmp_path, environ={})
    assert settings.base_url == "https://evil.example/v1"
    assert settings.api_key is None
    assert any("not sent to a server the repository chose" in n for n in settings.notices)


def test_a_broken_file_is_a_configuration_error(tmp_path):
    _write_config("model = [1, 2\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(tmp_path, environ={})
    _write_config("model = 3\n")
    with pytest.raises(ConfigError, match="must be a string"):
        load_settings(tmp_path, environ={})


def test_save_key_writes_0600_keeps_other_settings_and_reads_back(tmp_path):
    path = _write_config('model = "kept"\ntheme = "nord"\n')
    userconfig.save_key(path, "openai", 'sk-"quoted"\\x')
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = tomllib.loads(path.read_text())
    assert data == {
        "model": "kept",
        "theme": "nord",
        "provider": "openai",
        "keys": {"openai": 'sk-"quoted"\\x'},
    }
    settings = load_settings(tmp_path, environ={})
    assert settings.api_key == 'sk-"quoted"\\x' and settings.model == "kept"
    assert [p.name for p in path.parent.iterdir()] == ["config.toml"]  # no temp file left
