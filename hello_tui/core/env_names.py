"""Which files are `.env` files, which hold keys: the one rule, judged by name.

`.env`, `.env.local`, `.envrc` and `prod.env` (and what a `.envs` folder holds), and the backups and swap files
editors leave beside them (`.env~`, `prod.env.bak`, `#.env#`), in any case. The file tools and
the terminal policy ask it before they read (tools/env_files.py), and the patch
engine before it writes (a patch touching one is high risk).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from hello_tui.core.lazy_regex import lazy_compile

# An env file's name, and the copies of it editors and people leave beside it, which
# hold the same keys: `.env-local` / `.env_prod` spellings, a backup (`.env~`,
# `prod.env.bak`), an autosave (`#.env#`), vim's swap file (`..env.swp`); and `.envs`,
# the folder cookiecutter-django keeps them in (`.envs/.production/.django`).
_ENV_NAME = r"#?(?:\.envs?(?:[._-].*)?|\.envrc|.+\.env(?:\..*)?)[~#]?"
# In any case: on a case-insensitive file system (macOS, Windows, a casefolded ext4
# folder) `cat .ENV` reads `.env`.
_ENV_FILE = re.compile(f"^(?:{_ENV_NAME})$", re.IGNORECASE)
# The same rule over many names at once, one per line: a walk asks it once per folder.
# Compiled at their first use: the patch engine judges single names only (`_ENV_FILE`).
_ENV_LINE = lazy_compile(f"^(?:{_ENV_NAME})$", re.MULTILINE | re.IGNORECASE)
_VISIBLE_ENV_LINE = lazy_compile(f"^(?=[^.\n])(?:{_ENV_NAME})$", re.MULTILINE | re.IGNORECASE)


def is_env_file(path: str) -> bool:
    """`.env`, `.env.local`, `.envrc`...: files that usually hold keys (judged by name)."""
    # A bare name (the walks ask for every entry) needs no path object.
    name = path if "/" not in path else PurePosixPath(path).name
    return bool(_ENV_FILE.match(name))


def env_folder_in(rel: str, *, itself: bool = False) -> str | None:
    """The folder named like an env file (`.env/`, `prod.env.d/`, `.envs/`) that the
    repo-relative POSIX path `rel` lies in (`itself`: or is): what it holds holds keys."""
    parts = rel.split("/")
    return next((p for p in (parts if itself else parts[:-1]) if is_env_file(p)), None)


def env_file_names(names: list[str], *, hidden: bool = True) -> set[str]:
    """The names among `names` that `is_env_file` accepts (`hidden=False`: dotfiles left
    out, for walks that skip them), in one regex pass over the folder's names instead of
    a Python call per name: 10,000 files stay cheap."""
    joined = "\n".join(names)
    if ".env" not in joined.lower():
        return set()  # every name the rule accepts holds ".env"; most folders have none
    if joined.count("\n") != max(0, len(names) - 1):
        # A name holding a newline would read as two lines: judge each name alone.
        return {n for n in names if (hidden or not n.startswith(".")) and is_env_file(n)}
    # Every match is a whole line: the rule's alternatives are anchored at both ends.
    pattern = _ENV_LINE if hidden else _VISIBLE_ENV_LINE
    return {m.group(0) for m in pattern.finditer(joined)}
