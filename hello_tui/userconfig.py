"""The user's own settings file: `$XDG_CONFIG_HOME/hello-tui/config.toml` (else ~/.config/…).

It holds what a user sets once for every repository: API keys per provider, the
default provider and model, the permission mode, the theme and notifications.

    provider = "deepseek"        # openai, deepseek, qwen, kimi, zhipu, modelscope
    model = "deepseek-chat"
    base_url = "http://localhost:11434/v1"   # instead of a provider's own
    mode = "ask"                 # ask, auto-edit, read-only
    theme = "textual-dark"
    notifications = "both"       # off, bell, desktop, both

    [keys]
    deepseek = "sk-…"
    openai = "sk-…"
    custom = "…"                 # the key for `base_url` (a proxy, a server): LLM_API_KEY

`config.load_settings` reads it as one layer of the precedence (flags >
environment > this file > the repo's `.env` > defaults) through `as_environment`,
which names each value after the environment variable it stands for. The file is
written with mode 0600 (its folder 0700), atomically; writing keeps the other
settings but not comments.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Any

FILE_NAME = "config.toml"
TOP_LEVEL = ("provider", "model", "base_url", "mode", "theme", "notifications")


class UserConfigError(Exception):
    """The file exists but cannot be read as TOML of the expected shape."""


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """XDG rules: $XDG_CONFIG_HOME (when absolute), else $HOME/.config."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or os.environ.get("XDG_CONFIG_HOME") or ""
    if not base or not os.path.isabs(base):
        home = env.get("HOME") or os.environ.get("HOME") or str(Path.home())
        base = os.path.join(home, ".config")
    return Path(base) / "hello-tui" / FILE_NAME


def load(path: Path) -> dict[str, Any]:
    """The file's settings ({} when there is no file); raises UserConfigError."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise UserConfigError(f"{path} could not be read ({exc})") from None
    import tomllib  # only when there is a file: most users have none, and it costs 5 ms

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserConfigError(f"{path} is not valid TOML ({exc}); fix or remove it") from None
    for name in TOP_LEVEL:
        if name in data and not isinstance(data[name], str):
            raise UserConfigError(f"{path}: `{name}` must be a string")
    keys = data.get("keys", {})
    if not isinstance(keys, dict) or not all(isinstance(v, str) for v in keys.values()):
        raise UserConfigError(f"{path}: [keys] must map provider names to strings")
    return data


def as_environment(data: Mapping[str, Any], providers: Mapping[str, Any]) -> dict[str, str]:
    """The file's settings under the environment variables they stand for.

    `providers` maps provider names to `config.Provider`s (their base URL, default
    model and key variables).
    """
    env: dict[str, str] = {}
    keys = data.get("keys", {})
    for name, key in keys.items():
        provider = providers.get(name)
        if provider is not None and key:
            env[provider.key_vars[0]] = key
        elif name in ("custom", "default") and key:
            env["LLM_API_KEY"] = key
    provider = providers.get(str(data.get("provider", "")))
    if data.get("base_url"):
        env["LLM_BASE_URL"] = str(data["base_url"])
    elif provider is not None:
        env["LLM_BASE_URL"] = provider.base_url
    if data.get("model"):
        env["LLM_MODEL_ID"] = str(data["model"])
    if data.get("mode"):
        env["CODE_AGENT_MODE"] = str(data["mode"])
    return env


def save(path: Path, data: Mapping[str, Any]) -> None:
    """Write the settings atomically, readable by the user only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dumps(data))
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def save_key(path: Path, provider: str, key: str, *, make_default: bool = True) -> None:
    """Store `key` for `provider` (and make it the default provider), keeping the rest.

    A default provider takes its own URL: a `base_url` saved before (a local server's)
    would win over it, so it goes."""
    data = load(path)
    keys = dict(data.get("keys", {}))
    keys[provider] = key
    data["keys"] = keys
    if make_default:
        data["provider"] = provider
        data.pop("base_url", None)
    save(path, data)


def save_local_server(path: Path, base_url: str, *, model: str = "", key: str = "") -> None:
    """Use the server at `base_url` (a local server or a proxy), keeping the rest.

    The provider choice is dropped (the URL decides now); `model` replaces the model
    (none given: the old one goes too, it was another server's); `key` is stored as
    the custom key (it stands for LLM_API_KEY), and no key removes an old one.
    """
    data = load(path)
    data.pop("provider", None)
    data["base_url"] = base_url
    if model:
        data["model"] = model
    else:
        data.pop("model", None)
    keys = dict(data.get("keys", {}))
    if key:
        keys["custom"] = key
    else:
        keys.pop("custom", None)
    data["keys"] = keys
    save(path, data)


def dumps(data: Mapping[str, Any]) -> str:
    """TOML for this file's shape: top-level strings, then the [keys] table."""
    lines = ["# hello-tui user settings (written by hello-tui; comments are not kept)"]
    for name, value in data.items():
        if name != "keys" and isinstance(value, str):
            lines.append(f"{_key(name)} = {_string(value)}")
    keys = data.get("keys", {})
    if keys:
        lines += ["", "[keys]"]
        lines += [f"{_key(name)} = {_string(value)}" for name, value in keys.items()]
    return "\n".join(lines) + "\n"


def _key(name: str) -> str:
    bare = name.replace("-", "").replace("_", "").isalnum()
    return name if bare else _string(name)


def _string(value: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes), non-ASCII kept as is.
    return json.dumps(value, ensure_ascii=False)
