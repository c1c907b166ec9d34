"""Limits and risk of a planned patch, counted honestly.

Limits (10 files, 800 changed lines by default) refuse a patch outright.
Risk marks a patch that needs explicit confirmation: it deletes a file,
touches 6 or more files, changes 400 or more lines, rewrites a whole file,
or touches a sensitive file. The optional strict allow-list refuses writes to
files whose suffix is not on the list.
"""

from __future__ import annotations

import fnmatch
import posixpath

from hello_tui.config import Settings
from hello_tui.core.env_names import is_env_file
from hello_tui.patch.types import FilePlan, PatchError, Risk

# Keys and certificates, in any case (a case-insensitive file system opens `TLS.KEY`
# for `tls.key`); env files by the project's one rule for them.
SENSITIVE_PATTERNS = ("*.pem", "*.key", "id_rsa*")
STRICT_WRITE_SUFFIXES = (
    ".py",
    ".md",
    ".toml",
    ".json",
    ".yml",
    ".yaml",
    ".txt",
    ".html",
    ".htm",
    ".css",
    ".js",
)
RISKY_FILE_COUNT = 6
RISKY_LINE_COUNT = 400


def touched_paths(fp: FilePlan) -> list[str]:
    return [fp.path] + ([fp.move_to] if fp.move_to else [])


def changed_lines(fp: FilePlan) -> int:
    """Added plus removed lines; a whole-file rewrite counts every line it writes."""
    removed = fp.removed_lines
    if fp.whole_file_rewrite and fp.new_text is not None:
        from hello_tui.patch.lines import split_lines

        return len(split_lines(fp.new_text)[0]) + removed
    return fp.added_lines + removed


def is_sensitive(path: str) -> bool:
    name = posixpath.basename(path)
    if is_env_file(name):
        return True
    return any(fnmatch.fnmatchcase(name.lower(), pat) for pat in SENSITIVE_PATTERNS)


def check_strict_suffixes(files: list[FilePlan], settings: Settings) -> None:
    if not settings.strict_write_suffixes:
        return
    for fp in files:
        for path in touched_paths(fp):
            suffix = posixpath.splitext(path)[1].lower()
            if suffix not in STRICT_WRITE_SUFFIXES:
                raise PatchError(
                    f"Refused {path}: strict write mode only allows files ending in "
                    f"{' '.join(STRICT_WRITE_SUFFIXES)} (CODE_AGENT_STRICT_WRITE)."
                )


def check_limits(files: list[FilePlan], settings: Settings) -> None:
    if len(files) > settings.patch_max_files:
        raise PatchError(
            f"Patch refused: it touches {len(files)} files, the limit is {settings.patch_max_files} "
            "(CODE_AGENT_PATCH_MAX_FILES). Split it into smaller patches."
        )
    total = sum(changed_lines(fp) for fp in files)
    if total > settings.patch_max_lines:
        raise PatchError(
            f"Patch refused: it changes {total} lines, the limit is {settings.patch_max_lines} "
            "(CODE_AGENT_PATCH_MAX_LINES). Split it into smaller patches."
        )


def assess_risk(files: list[FilePlan]) -> Risk:
    reasons: list[str] = []
    for fp in files:
        if fp.op == "delete":
            reasons.append(f"deletes {fp.path}")
        if fp.whole_file_rewrite:
            reasons.append(f"rewrites the whole of {fp.path}")
        for path in touched_paths(fp):
            if is_sensitive(path):
                reasons.append(f"touches the sensitive file {path}")
    if len(files) >= RISKY_FILE_COUNT:
        reasons.append(f"touches {len(files)} files")
    total = sum(changed_lines(fp) for fp in files)
    if total >= RISKY_LINE_COUNT:
        reasons.append(f"changes {total} lines")
    return Risk(high=bool(reasons), reasons=reasons)
