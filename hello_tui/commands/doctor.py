"""`hello-tui doctor`: the resolved configuration, where each value came from, and a preflight.

After a good preflight it says the context budget and where it comes from
(the model's window, see `llm.model_window`). It also says how commands are confined (the sandbox line) and repeats the
start-up notices (a key held back from a URL the repo's .env chose). Exit 0
when the model answered the one-token preflight, 2 when the configuration is
wrong or the model cannot be used; never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TextIO

from hello_tui.config import ConfigError, Settings, settings_from_args
from hello_tui.tools.shell.sandbox import describe as describe_sandbox


def _describe(settings: Settings) -> list[tuple[str, str, str]]:
    """(label, value, source) rows, in the order a user checks them."""
    from hello_tui.llm.prices import price_for
    from hello_tui.userconfig import config_path

    src = settings.sources
    known = price_for(settings)
    price, price_source = (
        ("unknown for this model (set LLM_PRICE_INPUT / LLM_PRICE_OUTPUT)", "")
        if known is None
        else (
            f"input {known.input:g} / output {known.output:g} USD per million tokens",
            known.source,
        )
    )
    dotenv = settings.repo / ".env"
    return [
        ("repo", str(settings.repo), ""),
        ("project", settings.project, ""),
        (".env", "found" if dotenv.is_file() else "none", ""),
        ("user config", src.get("user_config") or f"none ({config_path()})", ""),
        ("provider", settings.provider, ""),
        ("base url", settings.base_url, src.get("base_url", "")),
        ("model", settings.model, src.get("model", "")),
        ("api key", settings.masked_key, src.get("api_key", "")),
        ("protocol", settings.protocol, src.get("protocol", "")),
        ("mode", settings.mode, src.get("mode", "")),
        ("notifications", settings.notifications, src.get("notifications", "")),
        ("max steps", str(settings.max_steps), src.get("max_steps", "")),
        ("timeout", f"{settings.timeout:g}s", src.get("timeout", "")),
        ("deadline", f"{settings.request_deadline:g}s", src.get("request_deadline", "")),
        ("answer cap", f"{settings.max_answer_bytes} bytes", src.get("max_answer_bytes", "")),
        ("temperature", f"{settings.temperature:g}", src.get("temperature", "")),
        ("state folder", str(settings.state.root), src.get("state_dir", "")),
        ("sandbox", describe_sandbox(settings.sandbox), src.get("sandbox", "")),
        ("prices", price, price_source),
    ]


def _print_settings(settings: Settings, out: TextIO) -> None:
    rows = _describe(settings)
    width = max(len(label) for label, _, _ in rows)
    print("hello-tui configuration", file=out)
    for label, value, source in rows:
        suffix = f"   ({source})" if source else ""
        print(f"  {label.ljust(width)}  {value}{suffix}", file=out)
    for notice in settings.notices:
        print(f"note: {notice}", file=out)


def _print_recovery(settings: Settings, out: TextIO) -> None:
    """Like every command that touches the repo's state: finish an interrupted patch first."""
    from hello_tui.commands.patch_commands import recover_first

    recovered, blocked = recover_first(settings)
    for line in recovered:
        print(f"  recovered: {line}", file=out)
    if blocked is not None:
        print(f"  interrupted patch not recovered: {blocked}", file=out)


def _print_mcp(settings: Settings, out: TextIO) -> None:
    from hello_tui.commands.mcp import doctor_lines

    try:
        lines = doctor_lines(settings)
    except Exception as exc:  # noqa: BLE001 - doctor reports; it never shows a traceback
        lines = [f"mcp: the check failed — {type(exc).__name__}: {exc}"]
    for line in lines:
        print(line, file=out)


async def _preflight(settings: Settings):
    from hello_tui.llm import LLMClient

    client = LLMClient(settings)
    try:
        return await client.preflight()
    finally:
        await client.aclose()


def _print_budget(settings: Settings, out: TextIO) -> None:
    """The context budget and where it comes from: the model's window (as the endpoint, the
    built-in table or the default says) or the override, and a warning when they disagree."""
    from hello_tui.llm.model_window import (
        budget_for,
        budget_warning,
        cached_window,
        describe_budget,
    )
    from hello_tui.mcp.budget import schema_budget

    budget = budget_for(settings, cached_window(settings))
    print(f"context budget: {describe_budget(budget)}", file=out)
    if budget.window.tokens != budget.tokens:
        print(f"  model window: {budget.window.tokens} tokens ({budget.window.source})", file=out)
    print(f"  MCP tool schemas: up to {schema_budget(budget.tokens)} tokens of it", file=out)
    warning = budget_warning(budget)
    if warning is not None:
        print(f"  warning: {warning}", file=out)


def run_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=out)
        return 2
    _print_settings(settings, out)
    _print_recovery(settings, out)
    _print_mcp(settings, out)
    try:
        result = asyncio.run(_preflight(settings))
    except Exception as exc:  # noqa: BLE001 - doctor reports; it never shows a traceback
        print(f"preflight: FAILED — {type(exc).__name__}: {exc}", file=out)
        return 2
    if result.ok:
        print(f"preflight: OK in {result.latency * 1000:.0f} ms — {result.message}", file=out)
        _print_budget(settings, out)
        return 0
    print(f"preflight: FAILED — {result.message}", file=out)
    if result.hint and result.hint not in result.message:
        print(f"  fix: {result.hint}", file=out)
    return 2
