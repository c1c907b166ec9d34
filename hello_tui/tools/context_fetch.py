"""The `context_fetch` tool: one call that searches files, notes, memory and test failures.

Owns the budget (about 800 tokens per source unless `budget_tokens` says
otherwise), ranking and de-duplication across sources, the text the model
reads, and the cache. Cached answers are keyed on (query, sources, paths,
budget, regex) and are only reused while every source's fingerprint (file
count, newest mtime, total size; stats of notes, memory and test reports) is
unchanged, so an edited file is never answered from a stale cache.

Like the file tools it never shows `.git/` or the state folder, never follows
a link out of the repo, and asks the user before it searches a `.env` file it
was given in `paths`; env files met while searching a folder are skipped, and
the answer says which.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from hello_tui.core.tools import Tool, ToolArgs, ToolContext, ToolResult
from hello_tui.tools import context_sources as src
from hello_tui.tools.env_files import approve_env_read, reaches_env_file
from hello_tui.tools.env_skips import skipped_note
from hello_tui.tools.grep import find_rg
from hello_tui.tools.paths import PathError, hidden_area, resolve_repo_path
from hello_tui.tools.shell import sandbox
from hello_tui.tools.shell.runner import RunConfig

SourceName = Literal["files", "notes", "memory", "tests"]
ALL_SOURCES: tuple[str, ...] = ("files", "notes", "memory", "tests")
TOKENS_PER_SOURCE = 800
CACHE_ENTRIES = 32
ENV_HOW = "give it in paths"


def estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class ContextFetchArgs(ToolArgs):
    query: str = Field(min_length=1)
    sources: list[SourceName] | None = Field(None)
    paths: list[str] | None = Field(None)
    budget_tokens: int | None = Field(None, ge=100, le=32000)
    regex: bool = False


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())[:300]


class ContextFetchTool(Tool):
    name = "context_fetch"
    description = (
        "Gather ranked context for a question from files, notes, memory and test failures."
    )
    Args = ContextFetchArgs

    def __init__(
        self,
        *,
        force_python: bool | None = None,
        token_counter: Callable[[str], int] | None = None,
    ) -> None:
        if force_python is None:
            force_python = os.environ.get("HELLO_TUI_GREP", "").lower() == "python"
        self.rg = None if force_python else find_rg()
        self.count_tokens = token_counter or estimate_tokens
        self._cache: OrderedDict[tuple, tuple[tuple, ToolResult]] = OrderedDict()
        self.cache_hits = 0

    # ------------------------------------------------------------------ gathering

    async def _search(
        self, name: str, args: ContextFetchArgs, ctx: ToolContext, rels: list[str]
    ) -> tuple[list[src.Snippet], bool]:
        named = {rel for rel in rels if (ctx.repo / rel).is_file()}
        state = ctx.settings.state
        state_dir = ctx.settings.state_dir_name
        if name == "files":
            confined_only = ctx.settings.sandbox == "require" and not sandbox.support().available
            if self.rg and not confined_only:
                config = RunConfig.from_settings(ctx.settings)
                return await src.search_files_rg(
                    self.rg, config, rels, args.query, args.regex, state_dir, named
                )
            return await asyncio.to_thread(
                src.search_files_python, ctx.repo, rels, args.query, args.regex, state_dir
            )
        if name == "notes":
            return await asyncio.to_thread(src.search_notes, state.notes, args.query), False
        if name == "memory":
            return await asyncio.to_thread(src.search_memory, state.memory, args.query), False
        return await asyncio.to_thread(src.search_tests, ctx.repo, args.query, state_dir), False

    def _fingerprint(self, sources: list[str], ctx: ToolContext, rels: list[str]) -> tuple:
        state = ctx.settings.state
        parts: list[Any] = []
        for name in sources:
            if name == "files":
                parts.append(src.files_fingerprint(ctx.repo, rels, ctx.settings.state_dir_name))
            elif name == "notes":
                parts.append(src.dir_fingerprint(state.notes))
            elif name == "memory":
                parts.append(src.dir_fingerprint(state.memory))
            else:
                parts.append(src.tests_fingerprint(ctx.repo, ctx.settings.state_dir_name))
        return tuple(parts)

    # ------------------------------------------------------------------ the tool

    async def run(self, args: ContextFetchArgs, ctx: ToolContext) -> ToolResult:
        query = args.query
        if not query.strip():
            return ToolResult.error("context_fetch needs a non-empty query.")
        if "\n" in query or "\x00" in query:
            return ToolResult.error("The query must be one line without NUL bytes.")
        sources = list(dict.fromkeys(args.sources or ALL_SOURCES))
        if not sources:
            return ToolResult.error(f"sources is empty; use any of {', '.join(ALL_SOURCES)}.")
        rels: list[str] = []
        for raw in args.paths or ["."]:
            try:
                target = resolve_repo_path(ctx.repo, raw)
            except PathError as exc:
                return ToolResult(status="error", text=str(exc), declined=True)
            hidden = hidden_area(target, ctx.settings.state_dir_name)
            if hidden:
                return ToolResult(status="error", text=f"Refused: {hidden}.", declined=True)
            if not target.path.exists():
                return ToolResult.error(f"Path '{target.rel}' does not exist.")
            # Judged by where it leads too: `notes.txt -> .env` (or a hard link) is the .env.
            if target.path.is_file() and reaches_env_file(target.path, ctx.repo):
                declined = await approve_env_read(ctx, "context_fetch", target.rel)
                if declined is not None:
                    return declined
            if target.path.is_dir() and target.real_rel not in ("", target.rel):
                # A folder reached through a link (`cfg -> prod.env.d`) is searched where it
                # is: only that path says its files are in an env folder.
                rels.append(target.real_rel)
            else:
                rels.append(target.rel)
        rels = list(dict.fromkeys(rels))

        key = (query, tuple(sources), tuple(rels), args.budget_tokens, args.regex)
        fingerprint = await asyncio.to_thread(self._fingerprint, sources, ctx, rels)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == fingerprint:
            self.cache_hits += 1
            self._cache.move_to_end(key)
            result = cached[1]
            return result.model_copy(update={"data": {**result.data, "cached": True}})

        found: dict[str, list[src.Snippet]] = {}
        failures: dict[str, str] = {}
        truncated: dict[str, bool] = {}
        for name in sources:
            try:
                found[name], truncated[name] = await self._search(name, args, ctx, rels)
            except src.SourceFailed as exc:
                failures[name] = str(exc)
            except (OSError, ValueError) as exc:
                failures[name] = f"{type(exc).__name__}: {exc}"
        skipped = next(
            (list(p.env_skipped) for p in fingerprint if isinstance(p, src.FilesFingerprint)), []
        )
        result = self._compose(args, sources, found, failures, truncated, skipped)
        if not failures:
            self._cache[key] = (fingerprint, result)
            self._cache.move_to_end(key)
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return result

    def _compose(
        self,
        args: ContextFetchArgs,
        sources: list[str],
        found: dict[str, list[src.Snippet]],
        failures: dict[str, str],
        truncated: dict[str, bool],
        env_skipped: list[str],
    ) -> ToolResult:
        per_source = (
            max(50, args.budget_tokens // len(sources)) if args.budget_tokens else TOKENS_PER_SOURCE
        )
        seen: set[str] = set()
        sections: list[str] = [f"context_fetch {args.query!r} (sources: {', '.join(sources)})"]
        data: dict[str, Any] = {"query": args.query, "sources": {}, "cached": False}
        for name in sources:
            if name in failures:
                sections.append(f"## {name}: could not search — {failures[name]}")
                data["sources"][name] = {"status": "error", "error": failures[name], "items": []}
                continue
            ranked = sorted(found[name], key=lambda s: (-s.score, s.title))
            kept: list[src.Snippet] = []
            duplicates = omitted = used = 0
            for snip in ranked:
                fingerprint = _normalise(snip.body)
                if fingerprint in seen:
                    duplicates += 1
                    continue
                cost = self.count_tokens(f"{snip.title}\n{snip.body}")
                # The first snippet is always shown (cut if needed) so a hit is never invisible.
                if kept and used + cost > per_source:
                    omitted += 1
                    continue
                if not kept and cost > per_source:
                    snip = src.Snippet(
                        snip.source,
                        snip.title,
                        snip.body[: per_source * 4] + "\n… [cut to fit the budget]",
                        snip.score,
                        snip.data,
                    )
                    cost = per_source
                seen.add(fingerprint)
                kept.append(snip)
                used += cost
            notes = []
            if omitted:
                notes.append(f"{omitted} more left out for the budget")
            if duplicates:
                notes.append(f"{duplicates} duplicate(s) dropped")
            if truncated.get(name):
                notes.append(
                    f"search stopped after {src.MAX_TOTAL_MATCHES} matches; narrow it with paths"
                )
            tail = f"; {'; '.join(notes)}" if notes else ""
            if not kept:
                sections.append(f"## {name}: no match{tail}")
            else:
                sections.append(f"## {name} ({len(kept)} result(s), ~{used} tokens{tail})")
                for snip in kept:
                    sections.append(f"### {snip.title}\n{snip.body}")
            skipped = env_skipped if name == "files" else []
            if skipped:
                sections.append(skipped_note(skipped, ENV_HOW))
            data["sources"][name] = {
                "status": "ok",
                "items": [
                    {"title": s.title, "text": s.body, "score": s.score, **s.data} for s in kept
                ],
                "omitted": omitted,
                "duplicates": duplicates,
                "truncated": bool(truncated.get(name)),
                "tokens": used,
                **({"env_files_skipped": skipped} if skipped else {}),
            }
        text = "\n\n".join(sections)
        if failures and len(failures) == len(sources):
            return ToolResult.error(text, data)
        if failures:
            return ToolResult.partial(text, data)
        return ToolResult.ok(text, data)
