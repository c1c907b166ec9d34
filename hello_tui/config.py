"""Settings: flags > environment > the user's config file > <repo>/.env > defaults,
provider detection, state paths.

Provider keys are only ever sent to their own provider's host: a stray
OPENAI_API_KEY must never travel to whatever LLM_BASE_URL names.

The repository is not trusted with the user's keys: a base URL that comes
from `<repo>/.env` is used only with a key from that same file, never with
one from the flags or the environment (a notice says so), and `.env` cannot
switch the command sandbox off. The state folder must be a real folder inside
the repo, with no symbolic link in it: otherwise nothing starts.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from urllib.parse import urlparse

from hello_tui.shown_text import safe_text

PROTOCOLS: tuple[str, ...] = ("auto", "tools", "react")
SANDBOX_SETTINGS: tuple[str, ...] = ("auto", "require", "off")
# Permission modes (what they do: hello_tui.core.modes).
MODES: tuple[str, ...] = ("ask", "auto-edit", "read-only")
# When a turn ends or a decision waits while the terminal is not focused: nothing, the
# bell, a desktop notification (OSC 9 / OSC 777), or both. "on" is the older name of both.
NOTIFICATIONS: tuple[str, ...] = ("off", "bell", "desktop", "both")

# The same words as types. typing is not imported at run time (it costs every command):
# a module that imports one of these names gets it built then (`__getattr__` below).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    Protocol = Literal["auto", "tools", "react"]
    SandboxSetting = Literal["auto", "require", "off"]
    Mode = Literal["ask", "auto-edit", "read-only"]
    Notifications = Literal["off", "bell", "desktop", "both"]
_LITERALS = {
    "Protocol": PROTOCOLS,
    "SandboxSetting": SANDBOX_SETTINGS,
    "Mode": MODES,
    "Notifications": NOTIFICATIONS,
}


def __getattr__(name: str) -> object:
    if name in _LITERALS:
        from typing import Literal

        return Literal[_LITERALS[name]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The settings whose values are one of a few words, and those words.
_CHOICES: dict[str, tuple[str, ...]] = {
    "protocol": PROTOCOLS,
    "sandbox": SANDBOX_SETTINGS,
    "mode": MODES,
    "notifications": NOTIFICATIONS,
}
# How deep the start-up check walks the state folder looking for symbolic links.
STATE_CHECK_MAX_ENTRIES = 200_000


class ConfigError(Exception):
    """A setting is missing or wrong; the message names the setting to fix.

    The message may quote what a repository named (its state folder's link target, a
    folder's name): it is made safe to show once, here, for every front end."""

    def __init__(self, message: str) -> None:
        super().__init__(safe_text(message))


@dataclass(frozen=True)
class Provider:
    """A model provider: its endpoint, default model and the variables holding its key."""

    name: str
    base_url: str
    model: str
    key_vars: tuple[str, ...]
    needs_key: bool = True


PROVIDERS: tuple[Provider, ...] = (
    Provider("openai", "https://api.openai.com/v1", "gpt-4o-mini", ("OPENAI_API_KEY",)),
    Provider("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", ("DEEPSEEK_API_KEY",)),
    Provider(
        "qwen",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "qwen-plus",
        ("DASHSCOPE_API_KEY",),
    ),
    Provider(
        "kimi", "https://api.moonshot.cn/v1", "moonshot-v1-8k", ("MOONSHOT_API_KEY", "KIMI_API_KEY")
    ),
    Provider("zhipu", "https://open.bigmodel.cn/api/paas/v4", "glm-4-flash", ("ZHIPU_API_KEY",)),
    Provider(
        "modelscope",
        "https://api-inference.modelscope.cn/v1",
        "Qwen/Qwen2.5-Coder-32B-Instruct",
        ("MODELSCOPE_API_KEY",),
    ),
    Provider("ollama", "http://localhost:11434/v1", "qwen2.5-coder:7b", (), needs_key=False),
    Provider("vllm", "http://localhost:8000/v1", "default", (), needs_key=False),
)
PROVIDER_BY_NAME = {p.name: p for p in PROVIDERS}

# Host names (the name itself or any subdomain of it) that identify a provider.
# Matched against the URL's host only, so `https://evil.example/?api.openai.com`
# is nobody's provider and gets nobody's key.
_HOST_HINTS = {
    "api.openai.com": "openai",
    "deepseek.com": "deepseek",
    "dashscope.aliyuncs.com": "qwen",
    "dashscope-intl.aliyuncs.com": "qwen",
    "moonshot.cn": "kimi",
    "moonshot.ai": "kimi",
    "bigmodel.cn": "zhipu",
    "modelscope.cn": "modelscope",
}
_OLLAMA_PORT = 11434
# The context budget before the model's window is known, and when it cannot be: small
# enough for the windows servers run by default (llama.cpp, vLLM on small GPUs).
DEFAULT_CONTEXT_BUDGET = 8192
# Below this a request cannot hold the system rules and one step.
MIN_CONTEXT_BUDGET = 512

# Keys that commands run by the agent must never see.
SECRET_ENV_VARS = (
    "LLM_API_KEY",
    "OPENAI_API_KEY",
    "DEEPSEEK_API_KEY",
    "DASHSCOPE_API_KEY",
    "MOONSHOT_API_KEY",
    "KIMI_API_KEY",
    "ZHIPU_API_KEY",
    "MODELSCOPE_API_KEY",
)


def provider_for_url(base_url: str) -> Provider | None:
    parsed = urlparse(base_url if "://" in base_url else f"//{base_url}")
    host = (parsed.hostname or "").lower().rstrip(".")
    for hint, name in _HOST_HINTS.items():
        if host == hint or host.endswith("." + hint):
            return PROVIDER_BY_NAME[name]
    try:
        port = parsed.port
    except ValueError:
        port = None
    if port == _OLLAMA_PORT:  # ollama has no key that could leak
        return PROVIDER_BY_NAME["ollama"]
    return None


def is_local_url(base_url: str) -> bool:
    host = (urlparse(base_url).hostname or "").lower()
    return host in {"localhost", "127.0.0.1", "::1", "0.0.0.0"} or host.startswith("127.")


@dataclass(frozen=True)
class StatePaths:
    """Everything hello-tui keeps on disk for one repository."""

    root: Path

    def ensure(self) -> Path:
        """Create the folder if needed, with a `.gitignore` of `*` so `git status` stays clean."""
        self.root.mkdir(parents=True, exist_ok=True)
        ignore = self.root / ".gitignore"
        if not ignore.exists():
            try:
                ignore.write_text("# hello-tui's state: never committed\n*\n", encoding="utf-8")
            except OSError:
                pass  # a read-only state folder still works; git just sees it
        return self.root

    @property
    def notes(self) -> Path:
        return self.root / "notes"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @property
    def backups(self) -> Path:
        return self.root / "backups"

    @property
    def todos(self) -> Path:
        return self.root / "todos"

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def journal(self) -> Path:
        return self.root / "journal"

    @property
    def prompts(self) -> Path:
        return self.root / "prompts"

    @property
    def lock_file(self) -> Path:
        return self.root / "write.lock"


# No generated __repr__: it would show the API key, and compiling it for some thirty
# fields cost every command about 1 ms.
@dataclass(frozen=True, slots=True, repr=False)
class Settings:
    """The resolved configuration: immutable, every default given here once.

    What changes during a run belongs to whoever runs it: the model picked with
    `/model` is the model client's (the engine hands it a copy, see `with_changes`),
    the context budget learnt from the model's window the agent's requests', the
    permission mode the engine's.

    A frozen dataclass rather than a pydantic model: every command loads the
    settings first, and pydantic's import and schema build would cost each
    `hello-tui apply` more than its whole patch (the values are checked in
    `load_settings`, with messages naming the variable, and in `__post_init__`).
    """

    repo: Path
    project: str
    api_key: str | None
    base_url: str
    model: str
    provider: str
    timeout: float = 60.0
    temperature: float = 0.7
    log_level: str = "WARNING"
    max_steps: int = 20
    protocol: Protocol = "auto"
    debug: bool = False
    state_dir_name: str = ".helloagents"
    patch_max_files: int = 10
    patch_max_lines: int = 800
    strict_write_suffixes: bool = False
    terminal_timeout: float = 60.0
    # Tokens a request may fill before the model's window is known (learnt at the first
    # turn, see llm.model_window), and for good when it cannot be; CODE_AGENT_CONTEXT_BUDGET
    # overrides the window.
    context_budget: int = DEFAULT_CONTEXT_BUDGET
    # CODE_AGENT_COMPACT_AT: compact the history when a request would fill this share of the
    # budget (0 < x <= 1); None ("off") never compacts on its own.
    compact_at: float | None = 0.8
    price_input: float | None = None  # per million tokens
    price_output: float | None = None
    max_answer_bytes: int = 1 << 20  # one model answer, in UTF-8 bytes
    request_deadline: float = 600.0  # seconds for one whole model call, retries included
    # CODE_AGENT_SANDBOX: auto | require | off (never from the repo's .env).
    sandbox: SandboxSetting = "auto"
    # Permission mode: ask | auto-edit | read-only (--mode, CODE_AGENT_MODE, the user config;
    # never from the repo's .env, which must not switch reviews off).
    mode: Mode = "ask"
    # From the user's config file only: the app's theme ("" = Textual's default).
    theme: str = ""
    # CODE_AGENT_NOTIFICATIONS or the user config (never the repo's .env): off | bell |
    # desktop | both, sent only while the terminal is not focused.
    notifications: Notifications = "both"
    # Which source each setting came from, for `doctor`.
    # A read-only mapping, so that no copy of the settings can change another's.
    sources: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Things the user should be told at start (a key held back from a repo's URL...).
    notices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}={getattr(self, name)!r}: one of {', '.join(allowed)}")
        # Frozen containers, whatever the caller passed (copies share nothing that changes).
        object.__setattr__(self, "repo", Path(self.repo))
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))
        object.__setattr__(self, "notices", tuple(self.notices))

    def with_changes(self, **changes: Any) -> Settings:
        """A copy with `changes`, checked as a loaded one is (an unknown name is a TypeError)."""
        return dataclasses.replace(self, **changes)

    @property
    def state(self) -> StatePaths:
        return StatePaths(self.repo / self.state_dir_name)

    @property
    def masked_key(self) -> str:
        if not self.api_key:
            return "(none)"
        k = self.api_key
        return k[:3] + "…" + k[-4:] if len(k) > 10 else "***"

    @property
    def model_configured(self) -> bool:
        prov = PROVIDER_BY_NAME.get(self.provider)
        return (
            bool(self.api_key)
            or (prov is not None and not prov.needs_key)
            or is_local_url(self.base_url)
        )


def _load_dotenv(repo: Path) -> dict[str, str]:
    env_file = repo / ".env"
    if not env_file.is_file():
        return {}
    from dotenv import dotenv_values

    try:
        return {k: v for k, v in dotenv_values(env_file).items() if v is not None}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{env_file} could not be read ({exc}); fix or remove it") from None


def _load_user_config(
    process_env: Mapping[str, str],
) -> tuple[Path, dict, dict[str, str]]:
    """The user's config file: its path, its settings, and those as environment names."""
    from hello_tui import userconfig

    path = userconfig.config_path(process_env)
    try:
        data = userconfig.load(path)
    except userconfig.UserConfigError as exc:
        raise ConfigError(str(exc)) from None
    return path, data, userconfig.as_environment(data, PROVIDER_BY_NAME)


def _number(raw: str, name: str, kind: type) -> Any:
    try:
        return kind(raw)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise ConfigError(f"{name}={raw!r} is not {what}") from None


def _default(name: str) -> Any:
    """A setting's default, as the model declares it."""
    return next(f.default for f in dataclasses.fields(Settings) if f.name == name)


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class _Sources:
    """One load's sources, and what they gave: `given` holds only the values some source
    set (the model's defaults fill in the rest), `sources` where each came from."""

    process_env: Mapping[str, str]
    dotenv: Mapping[str, str]
    user_env: Mapping[str, str]
    sources: dict[str, str]
    given: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        # The user's config fills in what the environment does not say; .env what neither says.
        self.env = {**self.dotenv, **self.user_env, **self.process_env}

    def origin(self, name: str) -> str:
        if self.process_env.get(name):
            return f"env {name}"
        return ("user config" if self.user_env.get(name) else ".env") + f" {name}"

    def pick(self, flag_value: Any, *names: str) -> tuple[Any, str]:
        if flag_value not in (None, ""):
            return flag_value, "flag"
        env = self.env
        for n in names:
            if env.get(n):
                return env[n], self.origin(n)
        return None, "default"

    def number(self, setting: str, name: str, kind: type, source: str | None = None) -> Any:
        """The variable `name` as `kind` for `setting` when a source sets it, else None (the
        default applies); where it came from goes into `sources[source]`."""
        raw = self.env.get(name)
        if source is not None:
            self.sources[source] = self.origin(name) if raw else "default"
        if not raw:
            return None
        self.given[setting] = _number(raw, name, kind)
        return self.given[setting]


def load_settings(
    repo: str | os.PathLike | None = None,
    *,
    project: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    max_steps: int | None = None,
    protocol: str | None = None,
    debug: bool = False,
    mode: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve settings. `environ` defaults to os.environ (tests pass their own)."""
    repo_path = Path(repo or ".").expanduser().resolve()
    if not repo_path.is_dir():
        raise ConfigError(f"--repo {repo_path} is not a directory")
    process_env = dict(os.environ if environ is None else environ)
    dotenv = _load_dotenv(repo_path)
    user_file, user_data, user_env = _load_user_config(process_env)
    src = _Sources(
        process_env, dotenv, user_env, {"user_config": str(user_file) if user_data else ""}
    )
    key, url, mdl, provider_name = _endpoint(src, repo_path, api_key, base_url, model)
    _agent_rules(src, protocol, max_steps)
    state_name, src.sources["state_dir"] = src.pick(None, "HELLOAGENTS_DIR", "CODE_AGENT_STATE_DIR")
    # The default folder is checked like a chosen one: a link there carries state out too.
    src.given["state_dir_name"] = check_state_dir(
        repo_path, state_name or _default("state_dir_name")
    )
    _user_only(src, repo_path, mode, user_data)
    _model_calls(src, debug)
    _limits(src)
    return Settings(
        repo=repo_path,
        project=project or repo_path.name,
        api_key=key,
        base_url=url.rstrip("/"),
        model=mdl,
        provider=provider_name,
        sources=src.sources,
        notices=tuple(src.notices),
        **src.given,
    )


def _endpoint(
    src: _Sources, repo_path: Path, api_key: str | None, base_url: str | None, model: str | None
) -> tuple[str | None, str, str, str]:
    """The key, base URL, model and provider name; a key never goes to another's host."""
    sources, dotenv, env = src.sources, src.dotenv, src.env
    key, sources["api_key"] = src.pick(api_key, "LLM_API_KEY")
    url, sources["base_url"] = src.pick(base_url, "LLM_BASE_URL")
    mdl, sources["model"] = src.pick(model, "LLM_MODEL_ID", "LLM_MODEL")
    # The repo chose the URL: only a key from the repo's own .env may go there.
    repo_chose_url = sources["base_url"].startswith(".env")
    key_env = dotenv if repo_chose_url else env
    if repo_chose_url and key and not sources["api_key"].startswith(".env"):
        src.notices.append(
            f"{repo_path / '.env'} sets LLM_BASE_URL={url}; your own API key "
            f"({sources['api_key']}) is not sent to a server the repository chose. "
            "Set LLM_BASE_URL yourself, or put the key for that server in the same .env."
        )
        key, sources["api_key"] = None, "default"
        dotenv_key = dotenv.get("LLM_API_KEY")
        if dotenv_key:
            key, sources["api_key"] = dotenv_key, ".env LLM_API_KEY"

    prov: Provider | None = None
    if url:
        prov = provider_for_url(url)
        # A provider key may only go to that provider's own host.
        if not key and prov is not None:
            for var in prov.key_vars:
                if key_env.get(var):
                    key = key_env[var]
                    sources["api_key"] = f".env {var}" if repo_chose_url else src.origin(var)
                    break
    else:
        if key:
            prov = PROVIDER_BY_NAME["openai"]
        else:
            for p in PROVIDERS:
                found = next((v for v in p.key_vars if env.get(v)), None)
                if found:
                    prov, key, sources["api_key"] = p, env[found], src.origin(found)
                    break
        if prov is None:
            prov = PROVIDER_BY_NAME["openai"]
        url = prov.base_url
        sources["base_url"] = f"default for {prov.name}"
    if not mdl:
        mdl = prov.model if prov else "default"
        sources["model"] = f"default for {prov.name}" if prov else "default"
    provider_name = prov.name if prov else ("local" if is_local_url(url) else "custom")
    return key, url, mdl, provider_name


def _agent_rules(src: _Sources, protocol: str | None, max_steps: int | None) -> None:
    """The dialect and the steps a turn may take."""
    proto, src.sources["protocol"] = src.pick(protocol, "CODE_AGENT_PROTOCOL")
    if proto:
        if proto not in PROTOCOLS:
            raise ConfigError(
                f"--protocol / CODE_AGENT_PROTOCOL must be auto, tools or react, not {proto!r}"
            )
        src.given["protocol"] = proto
    if max_steps is not None:
        src.given["max_steps"], src.sources["max_steps"] = max_steps, "flag"
    else:
        src.number("max_steps", "CODE_AGENT_MAX_STEPS", int, "max_steps")
    if src.given.get("max_steps", 1) < 1:
        raise ConfigError("--max-steps / CODE_AGENT_MAX_STEPS must be at least 1")


def _user_only(
    src: _Sources, repo_path: Path, mode: str | None, user_data: Mapping[str, object]
) -> None:
    """What only the user decides, never the repo's .env: the sandbox, the permission mode,
    notifications and the theme."""
    raw_sandbox = src.process_env.get("CODE_AGENT_SANDBOX")
    src.sources["sandbox"] = "env CODE_AGENT_SANDBOX" if raw_sandbox else "default"
    if raw_sandbox:
        sandbox_setting = raw_sandbox.strip().lower()
        if sandbox_setting not in SANDBOX_SETTINGS:
            raise ConfigError(
                f"CODE_AGENT_SANDBOX must be auto, require or off, not {sandbox_setting!r}"
            )
        src.given["sandbox"] = sandbox_setting
    if src.dotenv.get("CODE_AGENT_SANDBOX") and not raw_sandbox:
        src.notices.append(
            f"{repo_path / '.env'} sets CODE_AGENT_SANDBOX; the repository cannot change "
            "the command sandbox, so it is ignored (set it in your environment)."
        )
    mode_name, src.sources["mode"] = _pick_mode(mode, src.process_env, src.user_env)
    if mode_name is not None:
        src.given["mode"] = mode_name
    if src.dotenv.get("CODE_AGENT_MODE") and src.sources["mode"] == "default":
        src.notices.append(
            f"{repo_path / '.env'} sets CODE_AGENT_MODE; the repository cannot change how "
            "patches and commands are approved, so it is ignored (use --mode or your config)."
        )
    notifications, src.sources["notifications"] = _pick_notifications(src.process_env, user_data)
    if notifications is not None:
        src.given["notifications"] = notifications
    if "theme" in user_data:
        src.given["theme"] = str(user_data["theme"])


def _model_calls(src: _Sources, debug: bool) -> None:
    """How the model is called, and how much is logged."""
    timeout = src.number("timeout", "LLM_TIMEOUT", float, "timeout")
    if timeout is not None and not timeout > 0:
        raise ConfigError(f"LLM_TIMEOUT must be a positive number of seconds, not {timeout:g}")
    temperature = src.number("temperature", "TEMPERATURE", float, "temperature")
    if temperature is not None and not 0 <= temperature <= 2:
        raise ConfigError(f"TEMPERATURE must be between 0 and 2, not {temperature:g}")
    level = src.env.get("LOG_LEVEL") or ("DEBUG" if debug else None)
    if level:
        src.given["log_level"] = level.upper()
    if debug:
        src.given["debug"] = True


def _limits(src: _Sources) -> None:
    """The bounds on patches, commands, requests and answers."""
    src.number("patch_max_files", "CODE_AGENT_PATCH_MAX_FILES", int)
    src.number("patch_max_lines", "CODE_AGENT_PATCH_MAX_LINES", int)
    strict = src.env.get("CODE_AGENT_STRICT_WRITE")
    if strict:
        src.given["strict_write_suffixes"] = strict.lower() in ("1", "true", "yes", "on")
    src.number("terminal_timeout", "CODE_AGENT_TERMINAL_TIMEOUT", float)
    # CODE_AGENT_CONTEXT_BUDGET overrides the model's window; `sources["context_budget"]`
    # says whether it did (a default is replaced by the window once it is known).
    budget = src.number("context_budget", "CODE_AGENT_CONTEXT_BUDGET", int, "context_budget")
    if budget is not None and budget < MIN_CONTEXT_BUDGET:
        raise ConfigError(
            f"CODE_AGENT_CONTEXT_BUDGET must be at least {MIN_CONTEXT_BUDGET} tokens, not {budget}"
        )
    compact_at = src.env.get("CODE_AGENT_COMPACT_AT")
    if compact_at and compact_at.strip():
        src.given["compact_at"] = _compact_at(compact_at)
    src.number("price_input", "LLM_PRICE_INPUT", float)
    src.number("price_output", "LLM_PRICE_OUTPUT", float)
    for name, var, kind in (
        ("max_answer_bytes", "LLM_MAX_ANSWER_BYTES", int),
        ("request_deadline", "LLM_REQUEST_DEADLINE", float),
    ):
        value = src.number(name, var, kind, name)
        if value is not None and not value > 0:
            raise ConfigError(f"{var} must be a positive number, not {value:g}")


def parse_mode(raw: str) -> Mode:
    """A mode name as typed (`plan` is read-only); raises ValueError naming the choices."""
    name = raw.strip().lower()
    if name == "plan":
        name = "read-only"
    if name not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)} (or plan), not {raw!r}")
    return name  # type: ignore[return-value]


def parse_notifications(raw: str) -> str:
    """A notifications setting as typed ("on" means both); raises ValueError naming the choices."""
    name = raw.strip().lower()
    if name == "on":
        name = "both"
    if name not in NOTIFICATIONS:
        raise ValueError(f"notifications must be one of {', '.join(NOTIFICATIONS)}, not {raw!r}")
    return name


def _pick_notifications(
    process_env: Mapping[str, str], user_data: Mapping[str, object]
) -> tuple[str | None, str]:
    """The setting and where it came from: the environment, else the user's config, else
    none (the default; a repository has no say in how its user is called back)."""
    raw, source = process_env.get("CODE_AGENT_NOTIFICATIONS"), "env CODE_AGENT_NOTIFICATIONS"
    if not raw:
        raw, source = str(user_data.get("notifications") or ""), "user config notifications"
    if not raw:
        return None, "default"
    try:
        return parse_notifications(raw), source
    except ValueError as exc:
        where = "CODE_AGENT_NOTIFICATIONS" if source.startswith("env") else "your user config"
        raise ConfigError(f"{where}: {exc}") from None


def _pick_mode(
    flag: str | None, process_env: Mapping[str, str], user_env: Mapping[str, str]
) -> tuple[Mode | None, str]:
    """The permission mode and where it came from: the flag, the environment, the user's
    config, else none (the default; never the repo's .env)."""
    raw, source = flag, "flag"
    if not raw:
        raw, source = process_env.get("CODE_AGENT_MODE"), "env CODE_AGENT_MODE"
    if not raw:
        raw, source = user_env.get("CODE_AGENT_MODE"), "user config mode"
    if not raw:
        return None, "default"
    try:
        return parse_mode(raw), source
    except ValueError:
        raise ConfigError(
            f"--mode / CODE_AGENT_MODE must be ask, auto-edit or read-only (plan), not {raw!r}"
        ) from None


def check_state_dir(repo: Path, name: str) -> str:
    """The state folder as a path relative to the repo, or ConfigError with one clear line.

    It must lie inside the repo (not the repo itself, not `.git`), and neither
    it nor anything in it may be a symbolic link: a link would carry notes,
    sessions and backups out of the repo, or let the agent write through them.
    """
    raw = Path(name).expanduser()
    full = raw if raw.is_absolute() else repo / raw
    lexical = Path(os.path.normpath(full))
    if lexical == repo or not lexical.is_relative_to(repo):
        raise ConfigError(
            f"the state folder {full} (HELLOAGENTS_DIR) must be a folder inside the repo {repo}"
        )
    relative = lexical.relative_to(repo)
    if relative.parts[0] == ".git":
        raise ConfigError(f"the state folder {full} (HELLOAGENTS_DIR) may not be inside .git/")
    current = repo
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            raise ConfigError(
                f"the state folder's path {current} is a symbolic link "
                f"(to {os.readlink(current)}); it must be a real folder inside the repo"
            )
    if lexical.exists() and not lexical.is_dir():
        raise ConfigError(f"the state folder {lexical} is not a folder")
    seen = 0
    for folder, dirs, files in os.walk(lexical):
        for entry in (*dirs, *files):
            seen += 1
            path = Path(folder) / entry
            if path.is_symlink():
                raise ConfigError(
                    f"{path} in the state folder is a symbolic link (to {os.readlink(path)}); "
                    "remove it: the state folder may hold real files and folders only"
                )
        if seen > STATE_CHECK_MAX_ENTRIES:
            break
    return relative.as_posix()


def _compact_at(raw: str) -> float | None:
    """`CODE_AGENT_COMPACT_AT`: "off", a fraction ("0.8") or a percentage ("80%", "80")."""
    text = raw.strip().lower()
    if text in ("off", "no", "false", "never", "0"):
        return None
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        value = -1.0
    if text.endswith("%") or value > 1:
        value /= 100
    if not 0 < value <= 1:
        raise ConfigError(
            f"CODE_AGENT_COMPACT_AT must be off, a fraction such as 0.8, or a percentage "
            f"such as 80%, not {raw!r}"
        )
    return value


def settings_from_args(args) -> Settings:
    """Settings from an argparse namespace of the CLI (flags a subcommand lacks count as unset)."""
    return load_settings(
        getattr(args, "repo", None),
        project=getattr(args, "project", None),
        model=getattr(args, "model", None),
        base_url=getattr(args, "base_url", None),
        api_key=getattr(args, "api_key", None),
        max_steps=getattr(args, "max_steps", None),
        protocol=getattr(args, "protocol", None),
        debug=bool(getattr(args, "debug", False)),
        mode=getattr(args, "mode", None),
    )
