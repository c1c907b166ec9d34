"""The OS sandbox every command runs in, and what the user is told about it.

Linux: Landlock limits what the command may read, write and execute;
seccomp (without network) stops every new socket; in approved mode a private
mount namespace makes `.git/` and the state folder read-only, because
Landlock can grant "write beneath the repo" but not "except .git/".

- read-only commands read the repo and what programs need (system folders,
  the folders on PATH, the Python install running us, a few /etc files);
  they write nowhere but /dev/null and a private folder (HOME and TMPDIR);
  no network, no signals or abstract unix sockets to outside processes,
  and (the seccomp filter, `seccomp.py`) no System V IPC, no flock, no
  memory the rlimits do not count, and no changing another process's
  limits or scheduling.
- approved commands may also write and execute inside the repo (except
  `.git/` and the state folder) and in their private folder; network only
  when the approval said so.

Commands never run in a thread or process that holds the app's memory:
they start from a separate spawner process (`spawner.py`), confined exactly
as widely as its commands (read-only commands share one, approved ones of
the same grants another), each in a nested Landlock domain of its own under
a keeper that ends every process it leaves; the app itself is non-dumpable
(`core/undumpable.py`). All get the seccomp filter (no tracing syscalls)
and the rlimits of `limits.py`. Only without a sandbox (off, or no
Landlock) does the app fork commands itself.

`CODE_AGENT_SANDBOX`: auto (default: use it when the kernel has it), require
(refuse to run commands without it), off (no sandbox: dangerous).
`sandbox_status()` is the short line for the status bar, `describe()` the
one for `doctor` and the start-up notice.
"""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hello_tui.tools.shell import seccomp
from hello_tui.tools.shell.landlock import (
    FS_EXECUTE,
    FS_IOCTL_DEV,
    FS_READ_FILE,
    FS_TRUNCATE,
    FS_WRITE_FILE,
    READ,
    READ_EXECUTE,
    WRITE,
    LandlockError,
    Ruleset,
    abi_version,
)
from hello_tui.tools.shell.limits import DEFAULT_LIMITS, CommandLimits
from hello_tui.tools.shell.spawner import (
    SpawnerProcess,
    live_spawner,
    probe_mounts,
    probe_pid_namespace,
    spawner_for,
)

if TYPE_CHECKING:  # the settings model imports pydantic, which `--version` must not
    from hello_tui.config import Settings

Mode = Literal["read-only", "approved"]
SandboxSetting = Literal["auto", "require", "off"]

# Programs, their libraries and data: read and execute.
SYSTEM_PROGRAM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What the loader, locale, terminfo, time zone and user lookups read in /etc,
# and nothing else there (no /etc/hostname, no /etc/shadow).
SYSTEM_READ_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/terminfo",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/os-release",
    "/etc/python3",
    f"/etc/python{sys.version_info.major}.{sys.version_info.minor}",
    "/sys/devices/system/cpu",  # how many CPUs (rg, make -j, Python)
    "/sys/fs/cgroup",  # CPU quotas
)
# Name resolution and certificates, for commands allowed on the network.
NETWORK_READ_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/pki",
    "/etc/crypto-policies",
)
READABLE_DEVICES = ("/dev/zero", "/dev/random", "/dev/urandom")
DEVICE_RW = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE | FS_IOCTL_DEV


class SandboxUnavailable(Exception):
    """CODE_AGENT_SANDBOX=require and this system has no sandbox; the message says why."""


class SandboxSetupError(Exception):
    """The sandbox could not be set up (a rule refused, the spawner failed); nothing ran."""


@dataclass(frozen=True)
class Support:
    """What this machine offers, probed once."""

    landlock_abi: int
    seccomp: bool
    mount_namespace: bool
    # The spawner gets user, mount and PID namespaces and a /proc of its own.
    pid_namespace: bool = False
    # (mount_namespace: the spawner of approved commands can make their read-only mounts.)
    # The spawner's PID namespace holds its processes to a number (pid_max, Linux 6.14).
    process_limit: bool = False

    @property
    def counts_processes(self) -> bool:
        """Is a process limit in force? pid_max binds everyone; RLIMIT_NPROC counts per
        user and user namespace (only the spawner's namespace makes it per spawner), and
        never holds root."""
        return self.pid_namespace and (self.process_limit or os.geteuid() != 0)

    @property
    def available(self) -> bool:
        return self.landlock_abi > 0


@lru_cache(maxsize=1)
def support() -> Support:
    abi = abi_version()
    pid_namespace, process_limit = probe_pid_namespace() if abi > 0 else (False, False)
    return Support(
        landlock_abi=abi,
        seccomp=abi > 0 and seccomp.supported(),
        mount_namespace=abi > 0 and _probe_mount_namespace(pid_namespace),
        pid_namespace=pid_namespace,
        process_limit=process_limit,
    )


def _probed() -> bool:
    """Does `support()` answer at once (the machine was probed, or a test stands in)?"""
    info = getattr(support, "cache_info", None)
    return info is None or info().currsize > 0


def _probe_mount_namespace(pid_namespace: bool) -> bool:
    """Can a spawner make the mounts approved commands run under (as root or not)?"""
    with tempfile.TemporaryDirectory(prefix="hello-tui-probe-") as scratch:
        writable, protected = Path(scratch) / "repo", Path(scratch) / "repo" / ".git"
        protected.mkdir(parents=True)
        return probe_mounts(writable, protected, pid_namespace=pid_namespace)


def sandbox_status(setting: SandboxSetting = "auto") -> str:
    """The status bar's words: "sandbox: landlock v7", "sandbox: none" or "sandbox: off"."""
    if setting == "off":
        return "sandbox: off"
    found = support()
    if not found.available:
        return "sandbox: none"
    return f"sandbox: landlock v{found.landlock_abi}"


def describe(setting: SandboxSetting = "auto") -> str:
    """One line for `doctor` and the start-up notice."""
    found = support()
    if setting == "off":
        return "off (CODE_AGENT_SANDBOX=off): commands run with the policy alone — dangerous"
    if not found.available:
        system = platform.system()
        why = "macOS has no Landlock" if system == "Darwin" else f"no Landlock on {system}"
        if system == "Linux":
            why = f"this kernel ({platform.release()}) has no Landlock"
        if setting == "require":
            return f"none: {why}; CODE_AGENT_SANDBOX=require, so commands are refused"
        return f"none: {why}; commands run with the policy alone"
    extras = ["seccomp network filter" if found.seccomp else "no seccomp (TCP rules only)"]
    extras.append(
        "mount namespace: read-only outside the repo and for .git/"
        if found.mount_namespace
        else "no mount namespace: approved commands cannot create files at the repo's top"
        " level, and may change file modes outside it"
    )
    extras.append(_spawner_words(found))
    return f"landlock v{found.landlock_abi} ({', '.join(extras)})"


def _spawner_words(found: Support) -> str:
    scoped = found.landlock_abi >= 6
    if found.pid_namespace:
        where = "commands start from a separate spawner in a PID namespace with its own /proc"
    else:
        where = (
            "no PID namespace: commands start from a separate spawner (a subreaper);"
            " other processes' memory and environment stay behind Landlock"
        )
    domain = (
        "each in a nested Landlock domain that cannot signal or trace outside it"
        if scoped
        else "each in a nested Landlock domain (no signal scoping before Landlock v6)"
    )
    if found.pid_namespace and found.process_limit:
        limit = "a process limit per spawner (its PID namespace's pid_max)"
    elif found.counts_processes:
        limit = "a process limit per spawner (RLIMIT_NPROC in its user namespace)"
    else:
        limit = "no process limit as root on this kernel (pid_max per namespace needs Linux 6.14)"
        if not found.pid_namespace:
            limit = "no process limit without a PID namespace"
    return f"{where}, {domain}; {limit}"


def startup_notice(setting: SandboxSetting = "auto") -> str | None:
    """What to tell the user at start when commands are not fully confined, else None."""
    if setting == "off" or not support().available:
        return f"Sandbox {describe(setting)}."
    return None


def startup_notices(settings: Settings) -> list[str]:
    """What to tell the user when a session starts: trust notices, then the sandbox's state."""
    notices = list(settings.notices)
    line = startup_notice(settings.sandbox)
    if line:
        notices.append(line)
    return notices


def check_available(setting: SandboxSetting) -> None:
    """Raise SandboxUnavailable when the setting demands a sandbox this system lacks."""
    if setting == "require" and not support().available:
        raise SandboxUnavailable(
            f"Refused: CODE_AGENT_SANDBOX=require, but there is no OS sandbox here "
            f"({describe(setting)})."
        )


# ---------------------------------------------------------------- what a command may touch


@dataclass(frozen=True)
class SandboxSpec:
    """One command's confinement."""

    repo: Path
    mode: Mode
    network: bool
    private_dir: Path  # HOME and TMPDIR live here; removed after the command
    cwd: Path
    state_dir: Path | None = None
    extra_read: tuple[Path, ...] = ()  # program folders a caller needs (rg's)


@dataclass
class Grants:
    """Path -> rights, as the ruleset will hold them (tests and doctor read it)."""

    rights: dict[str, int] = field(default_factory=dict)

    def add(self, path: str | os.PathLike[str], rights: int) -> None:
        key = os.fspath(path)
        self.rights[key] = self.rights.get(key, 0) | rights


def home_directory() -> Path | None:
    home = os.environ.get("HOME")
    if home:
        return Path(os.path.realpath(home))
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        return Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    return None


def _safe_program_dir(path: Path, home: Path | None) -> bool:
    """A folder of programs may be read, unless it holds the home folder (and its keys)."""
    if not path.is_absolute() or path == Path("/") or not path.is_dir():
        return False
    return home is None or not home.is_relative_to(path)


def program_dirs(path_value: str) -> list[Path]:
    """The folders commands find programs in: PATH, this Python's install, venvs on PATH."""
    return list(_program_dirs(path_value, os.environ.get("HOME", "")))


@lru_cache(maxsize=16)
def _program_dirs(path_value: str, home_value: str) -> tuple[Path, ...]:
    home = home_directory()
    candidates: list[Path] = []
    for entry in path_value.split(os.pathsep):
        if not entry:
            continue
        real = Path(os.path.realpath(entry))
        candidates.append(real)
        venv_config = real.parent / "pyvenv.cfg"
        if venv_config.is_file():
            candidates.append(real.parent)
            candidates.extend(_venv_home(venv_config))
        if real.name == "shims" and (real.parent / "libexec" / "pyenv").is_file():
            # A pyenv (or rbenv-like) shim is a script that runs `<root>/libexec/pyenv`
            # and then the version under `<root>/versions`: the whole root runs programs.
            candidates.append(real.parent)
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        candidates.append(Path(os.path.realpath(prefix)))
    return tuple(p for p in dict.fromkeys(candidates) if _safe_program_dir(p, home))


def _venv_home(config: Path) -> list[Path]:
    """The base Python a venv was made from (its `home = .../bin`): the install prefix."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            return [Path(os.path.realpath(value.strip())).parent]
    return []


def git_metadata_dirs(repo: Path) -> list[Path]:
    """Where the repo's own git data lives when `.git` is a file (a worktree, a submodule):
    only folders that are what the gitfile claims (`core.git_layout.linked_git_dirs`)."""
    from hello_tui.core.git_layout import linked_git_dirs

    return [Path(folder) for folder in linked_git_dirs(repo)]


def protected_paths(spec: SandboxSpec) -> list[Path]:
    """What approved commands may not change inside the repo: `.git` and the state folder."""
    found = []
    dot_git = spec.repo / ".git"
    if dot_git.exists() and not dot_git.is_symlink():
        found.append(dot_git)
    if spec.state_dir is not None and spec.state_dir.is_dir() and not spec.state_dir.is_symlink():
        found.append(spec.state_dir)
    return found


def grants_for(
    spec: SandboxSpec, path_value: str, *, mount_namespace: bool, host_proc: bool = True
) -> Grants:
    """Every path rule of the command's ruleset.

    `host_proc=False` leaves /proc out: a spawner with a PID namespace grants
    the /proc it mounts itself, which shows only its own namespace.
    """
    grants = Grants()
    for system in SYSTEM_PROGRAM_DIRS:
        grants.add(system, READ_EXECUTE)
    for folder in (*program_dirs(path_value), *spec.extra_read):
        grants.add(folder, READ_EXECUTE)
    for name in SYSTEM_READ_FILES:
        grants.add(name, READ)
    if spec.network:
        for name in NETWORK_READ_FILES:
            grants.add(name, READ)
    # /proc: programs read their own entries (/proc/self is a magic link, so
    # Landlock's inode rules cannot grant it alone). Landlock's ptrace rule keeps
    # the environ, memory and descriptors of every process outside the command's
    # domain out of reach.
    if host_proc:
        grants.add("/proc", READ)
    grants.add("/dev/null", DEVICE_RW)
    for device in READABLE_DEVICES:
        grants.add(device, FS_READ_FILE)
    for gitdir in git_metadata_dirs(spec.repo):
        grants.add(gitdir, READ)
    private = WRITE | (FS_EXECUTE if spec.mode == "approved" else 0)
    grants.add(spec.private_dir, private)
    if spec.mode == "read-only":
        grants.add(spec.repo, READ)
        return grants
    if mount_namespace:
        grants.add(spec.repo, WRITE | FS_EXECUTE)
        return grants
    # Without a mount namespace `.git/` can only be kept out by granting every
    # other top-level entry on its own; the top level itself stays read-only.
    grants.add(spec.repo, READ_EXECUTE)
    protected = {p.name for p in protected_paths(spec)} | {".git"}
    if spec.state_dir is not None:
        protected.add(spec.state_dir.name)
    try:
        entries = list(os.scandir(spec.repo))
    except OSError:
        entries = []
    for entry in entries:
        if entry.name in protected or entry.is_symlink():
            continue
        grants.add(entry.path, WRITE | FS_EXECUTE)
    return grants


# ---------------------------------------------------------------- preparing one command


@dataclass(frozen=True)
class Confinement:
    """All a spawner is confined by, and so all its commands: the key that picks one."""

    rules: tuple[tuple[str, int], ...]  # Landlock path rules
    network: bool
    deny_metadata: bool  # seccomp refuses chmod, chown, utimes, xattrs
    writable: tuple[str, ...]  # with a mount namespace: all else is mounted read-only...
    protected: tuple[str, ...]  # ...and these, inside the writable ones, read-only again
    found: Support
    pid_max: int | None = None  # the spawner's PID namespace holds fewer processes than this


def confinement_for(
    spec: SandboxSpec, path_value: str, found: Support, limits: CommandLimits = DEFAULT_LIMITS
) -> Confinement:
    """What a command of `spec` may do, exactly as today's grants for its mode say."""
    mounts = spec.mode == "approved" and found.mount_namespace
    grants = grants_for(spec, path_value, mount_namespace=mounts, host_proc=not found.pid_namespace)
    return Confinement(
        rules=tuple(grants.rights.items()),
        network=spec.network,
        deny_metadata=spec.mode == "read-only",
        writable=(os.fspath(spec.repo), os.fspath(spec.private_dir)) if mounts else (),
        protected=tuple(os.fspath(p) for p in protected_paths(spec)) if mounts else (),
        found=found,
        pid_max=limits.pid_max if found.pid_namespace and found.process_limit else None,
    )


class PreparedSandbox:
    """How one command is confined: the spawner process it starts from (None: no sandbox)."""

    def __init__(
        self,
        spawner: SpawnerProcess | None = None,
        limits: CommandLimits = DEFAULT_LIMITS,
        counts_processes: bool = False,
    ) -> None:
        self.spawner = spawner
        self.limits = limits
        self.counts_processes = counts_processes  # is the process limit in force?

    @property
    def active(self) -> bool:
        return self.spawner is not None


def prepare(
    spec: SandboxSpec,
    setting: SandboxSetting,
    path_value: str,
    *,
    found: Support | None = None,
    limits: CommandLimits = DEFAULT_LIMITS,
) -> PreparedSandbox:
    """The sandbox for one command (blocking: call it from a thread, not the event loop).

    `found` is what the machine offers (default: the probe); a lower ABI or
    no namespaces give the confinement an older kernel would. Raises
    SandboxUnavailable under `require` without a sandbox, and
    SandboxSetupError when the kernel refuses a rule or the spawner fails.
    """
    prepared = _prepare(spec, setting, path_value, found, limits, may_block=True)
    assert prepared is not None
    return prepared


def prepare_at_once(
    spec: SandboxSpec,
    setting: SandboxSetting,
    path_value: str,
    *,
    found: Support | None = None,
    limits: CommandLimits = DEFAULT_LIMITS,
) -> PreparedSandbox | None:
    """`prepare` when it need not block (fit for the event loop), else None: the machine
    is not probed yet, or the command's spawner must be started first."""
    return _prepare(spec, setting, path_value, found, limits, may_block=False)


def _prepare(
    spec: SandboxSpec,
    setting: SandboxSetting,
    path_value: str,
    found: Support | None,
    limits: CommandLimits,
    *,
    may_block: bool,
) -> PreparedSandbox | None:
    if setting == "off":
        return PreparedSandbox(limits=limits)
    if found is None and not may_block and not _probed():
        return None  # the probe starts processes
    found = found or support()
    if not found.available:
        if setting == "require":
            raise SandboxUnavailable(
                "Refused: CODE_AGENT_SANDBOX=require, but there is no OS sandbox here."
            )
        return PreparedSandbox(limits=limits)
    confinement = confinement_for(spec, path_value, found, limits)
    spawner = live_spawner(confinement)
    if spawner is None:
        if not may_block:
            return None
        try:
            spawner = spawner_for(confinement, lambda: _spawner_process(confinement))
        except (OSError, LandlockError) as exc:
            raise SandboxSetupError(f"sandbox: the spawner could not start ({exc})") from None
    return PreparedSandbox(spawner, limits=limits, counts_processes=found.counts_processes)


def _spawner_process(confinement: Confinement) -> SpawnerProcess:
    """A spawner process confined as `confinement` says; every command it starts nests below it."""
    found = confinement.found
    try:
        ruleset = Ruleset(found.landlock_abi, restrict_network=not confinement.network)
    except LandlockError as exc:
        raise SandboxSetupError(f"sandbox: {exc}") from None
    try:
        for path, rights in confinement.rules:
            ruleset.allow(path, rights)
        program = (
            seccomp.build_program(
                deny_sockets=not confinement.network,
                deny_metadata=confinement.deny_metadata,
                deny_tracing=True,
                deny_ipc=confinement.deny_metadata,  # read-only commands
                deny_shared_memory=confinement.deny_metadata,
                deny_others_scheduling=confinement.deny_metadata,
            )
            if found.seccomp
            else None
        )
        mounts = (
            {"writable": list(confinement.writable), "protected": list(confinement.protected)}
            if confinement.writable
            else None
        )
        return SpawnerProcess(
            ruleset.fd,
            seccomp_program=program,
            pid_namespace=found.pid_namespace,
            pid_max=confinement.pid_max,
            proc_rights=READ & ruleset.fs_mask,
            abi=found.landlock_abi,
            mounts=mounts,
        )
    finally:
        ruleset.close()
