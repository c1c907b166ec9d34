"""Where MCP servers are configured and what one definition holds.

Two sources, read the way Claude Code reads them:

- `<repo>/.mcp.json`: `{"mcpServers": {"NAME": {...}}}`. A server is either
  `{"command": ..., "args": [...], "env": {...}}` (stdio; `"type": "stdio"`
  optional) or `{"type": "http", "url": ..., "headers": {...}}` (streamable
  HTTP; `"streamable-http"` and `"streamableHttp"` are the same). Any other
  type is refused with a notice. These servers are the repo's: they run code on
  the user's machine, so they start only once the user approved them.
- the user's config, `$XDG_CONFIG_HOME/hello-tui/config.toml` (default
  `~/.config/hello-tui/config.toml`), tables `[mcp_servers.NAME]` with the same
  keys. The user wrote these, so they need no approval to start.

Strings may use `${VAR}` and `${VAR:-default}`, expanded when the server
starts. Where the values come from depends on who wrote the definition
(`expansion_environment`, the one home of this rule):

- the user's config and an editor's servers: the user's whole environment
  (so `"Authorization": "Bearer ${API_TOKEN}"` works without the file
  holding the token);
- a repo's `.mcp.json`: only the allow-listed environment every server starts
  with anyway (`tools.shell.environment.server_environment`: PATH, HOME,
  USER, LANG, TZ, TERM, TMPDIR, LC_*), with any value holding the model key
  dropped. A repository is someone else's file: a `${LLM_API_KEY}`, a
  `${GITHUB_TOKEN}` or any other variable in its headers, env, args or URL
  would send the user's secret to a server the repository chose. A
  deny-list of secret-looking names always misses one (`DATABASE_URL` holds a
  password), so this is an allow-list. A withheld variable with a default
  takes the default; without one the server is not started and the notice
  says how to pass it (define the server in your own config).

A definition's fingerprint is taken before expansion: approving a server
approves what the file says, and a changed command, args, env, url or
headers needs approval again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hello_tui.regular_files import NotARegularFile, read_regular_file
from hello_tui.tools.shell.environment import server_environment

Transport = Literal["stdio", "http"]
# repo: the repo's .mcp.json (needs approval); user: the user's own config;
# client: handed over by an editor driving hello-tui (the editor's user configured it).
Source = Literal["repo", "user", "client"]

REPO_FILE = ".mcp.json"
DEFAULT_CALL_TIMEOUT = 120.0
TRANSPORT_SPELLINGS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(ValueError):
    """One server definition that cannot be used; the message names the server."""


@dataclass(frozen=True, eq=False)
class McpServerConfig:
    """One MCP server: how to reach it and where the definition came from.

    stdio servers use `command`, `args`, `env` (added to the allow-listed
    environment) and `cwd` (default: the repo); http servers use `url` and
    `headers`. `timeout` bounds each tool call, in seconds.
    """

    name: str
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    source: Source = "user"
    origin: str = ""  # the file it was read from, for messages
    timeout: float = DEFAULT_CALL_TIMEOUT

    @property
    def needs_approval(self) -> bool:
        return self.source == "repo"

    def fingerprint(self) -> str:
        """What approval is given to: every field that decides what runs or where it connects."""
        definition = {
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": dict(sorted(self.env.items())),
            "cwd": self.cwd,
            "url": self.url,
            "headers": dict(sorted(self.headers.items())),
        }
        blob = json.dumps(definition, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def summary(self) -> str:
        """One line saying what starting it does: the command line (quoted as a shell
        would need it, so each argument is seen), or the URL."""
        if self.transport == "http":
            return self.url
        return shlex.join([self.command, *self.args])


def server_from_mapping(
    name: str, raw: Any, *, source: Source, origin: str = ""
) -> McpServerConfig:
    """Read one definition (a `.mcp.json` entry or a config table); McpConfigError if unusable."""
    if not isinstance(raw, Mapping):
        raise McpConfigError(f"MCP server '{name}' in {origin}: the definition is not an object")
    kind = raw.get("type")
    if kind is None:
        kind = "http" if "url" in raw and "command" not in raw else "stdio"
    if not isinstance(kind, str) or kind.lower() not in TRANSPORT_SPELLINGS:
        known = ", ".join(sorted(TRANSPORT_SPELLINGS))
        raise McpConfigError(
            f"MCP server '{name}' in {origin}: unknown type {kind!r} (known: {known}); "
            "it is not started"
        )
    transport = TRANSPORT_SPELLINGS[kind.lower()]
    timeout = raw.get("timeout", DEFAULT_CALL_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise McpConfigError(f"MCP server '{name}' in {origin}: timeout must be a positive number")
    common: dict[str, Any] = {
        "name": name,
        "transport": transport,
        "source": source,
        "origin": origin,
        "timeout": float(timeout),
    }
    if transport == "http":
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            raise McpConfigError(f"MCP server '{name}' in {origin}: an http server needs a url")
        return McpServerConfig(
            url=url.strip(), headers=_strings(raw.get("headers"), name, "headers", origin), **common
        )
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise McpConfigError(f"MCP server '{name}' in {origin}: a stdio server needs a command")
    args = raw.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpConfigError(f"MCP server '{name}' in {origin}: args must be a list of strings")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise McpConfigError(f"MCP server '{name}' in {origin}: cwd must be a string")
    return McpServerConfig(
        command=command,
        args=tuple(args),
        env=_strings(raw.get("env"), name, "env", origin),
        cwd=cwd,
        **common,
    )


def _strings(raw: Any, name: str, key: str, origin: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise McpConfigError(f"MCP server '{name}' in {origin}: {key} must map names to strings")
    return dict(raw)


def read_servers(
    table: Any, *, source: Source, origin: str
) -> tuple[list[McpServerConfig], list[str]]:
    """Every usable server of one `{name: definition}` table, and a notice per refused one."""
    servers: list[McpServerConfig] = []
    notices: list[str] = []
    if table is None:
        return servers, notices
    if not isinstance(table, Mapping):
        return servers, [f"{origin}: the MCP server list is not an object; no server is read"]
    for name, raw in table.items():
        try:
            servers.append(server_from_mapping(str(name), raw, source=source, origin=origin))
        except McpConfigError as exc:
            notices.append(str(exc))
    return servers, notices


def repo_servers(repo: Path) -> tuple[list[McpServerConfig], list[str]]:
    """The servers of `<repo>/.mcp.json` (none when the file is absent)."""
    path = repo / REPO_FILE
    origin = REPO_FILE
    try:
        text = _read_repo_file(path).decode("utf-8")
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError) as exc:
        return [], [f"{origin} could not be read ({exc}); its MCP servers are not started"]
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        return [], [f"{origin} is not valid JSON ({exc}); its MCP servers are not started"]
    if not isinstance(document, dict):
        return [], [f"{origin} is not a JSON object; its MCP servers are not started"]
    return read_servers(document.get("mcpServers"), source="repo", origin=origin)


# A `.mcp.json` longer than this is not a list of servers.
REPO_FILE_MAX_BYTES = 1024 * 1024


def _read_repo_file(path: Path) -> bytes:
    """The bytes of the repo's `.mcp.json`: a regular file of bounded size, or OSError.

    The repository chooses what the name is: a link to /dev/zero would be read until
    memory runs out, a FIFO would never answer; neither stops a session from starting."""
    try:
        return read_regular_file(path, REPO_FILE_MAX_BYTES)
    except NotARegularFile:
        raise OSError(
            f"{REPO_FILE} is not a regular file of at most {REPO_FILE_MAX_BYTES // 1024} KB"
        ) from None


def user_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The user's config file: $XDG_CONFIG_HOME/hello-tui/config.toml (~/.config by default)."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or "~") / ".config")
    return Path(base).expanduser() / "hello-tui" / "config.toml"


def user_servers(path: Path | None = None) -> tuple[list[McpServerConfig], list[str]]:
    """The `[mcp_servers.NAME]` tables of the user's config (none when the file is absent).

    The one place the user config's MCP part is read: whoever loads the rest of
    that file hands its `mcp_servers` table to `read_servers` the same way.
    """
    path = path or user_config_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [], [f"{path.name} could not be read ({exc}); its MCP servers are not started"]
    return read_servers(data.get("mcp_servers"), source="user", origin=str(path))


def configured_servers(
    repo: Path, user_config: Path | None = None
) -> tuple[list[McpServerConfig], list[str]]:
    """User servers, then the repo's; a repo server may not take a user server's name."""
    users, notices = user_servers(user_config)
    repos, repo_notices = repo_servers(repo)
    notices += repo_notices
    taken = {s.name for s in users}
    servers = list(users)
    for server in repos:
        if server.name in taken:
            notices.append(
                f"MCP server '{server.name}' in {REPO_FILE} has the name of one in your config; "
                "yours is used"
            )
            continue
        servers.append(server)
    return servers, notices


def expansion_environment(
    config: McpServerConfig, environ: Mapping[str, str], secrets: tuple[str, ...] = ()
) -> Mapping[str, str]:
    """Where a definition's `${VAR}` are filled from (see the module docstring)."""
    if config.source != "repo":
        return environ
    return server_environment(environ, secrets=secrets)


def expand(value: str, environ: Mapping[str, str], withheld: Collection[str] = ()) -> str:
    """`${VAR}` and `${VAR:-default}` from `environ`; McpConfigError names a missing one.

    `withheld` are variables the user has but this definition may not read."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found:
            return found
        if default is not None:
            return default
        if name in environ:
            return ""
        if name in withheld:
            raise McpConfigError(
                f"it asks for ${{{name}}}, and a repository's server is never given your "
                "environment's values (only PATH, HOME, USER, LANG, TZ, TERM, TMPDIR, LC_*); "
                "to pass it, define the server in your own config"
            )
        raise McpConfigError(f"the environment variable {name} is not set")

    return _VARIABLE.sub(substitute, value)


def expanded(
    config: McpServerConfig, environ: Mapping[str, str], secrets: tuple[str, ...] = ()
) -> McpServerConfig:
    """The definition with its variables filled in, ready to start."""
    source = expansion_environment(config, environ, secrets)
    withheld = set(environ) - set(source)

    def fill(value: str) -> str:
        return expand(value, source, withheld)

    try:
        return McpServerConfig(
            name=config.name,
            transport=config.transport,
            command=fill(config.command),
            args=tuple(fill(a) for a in config.args),
            env={k: fill(v) for k, v in config.env.items()},
            cwd=None if config.cwd is None else fill(config.cwd),
            url=fill(config.url),
            headers={k: fill(v) for k, v in config.headers.items()},
            source=config.source,
            origin=config.origin,
            timeout=config.timeout,
        )
    except McpConfigError as exc:
        raise McpConfigError(f"MCP server '{config.name}': {exc}") from None
