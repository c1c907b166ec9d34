"""`hello-tui doctor`: the resolved configuration, where each value came from, and a preflight.

It also says how commands are confined (the sandbox line) and repeats the
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
    src = settings.sources
    price = (
        "not set"
        if settings.price_input is None and settings.price_output is None
        else f"input {settings.price_input or 0:g} / output {settings.price_output or 0:g} "
        "per million tokens"
    )
    dotenv = settings.repo / ".env"
    return [
        ("repo", str(settings.repo), ""),
        ("project", settings.project, ""),
        (".env", "found" if dotenv.is_file() else "none", ""),
        ("provider", settings.provider, ""),
        ("base url", settings.base_url, src.get("base_url", "")),
        ("model", settings.model, src.get("model", "")),
        ("api key", settings.masked_key, src.get("api_key", "")),
        ("protocol", settings.protocol, src.get("protocol", "")),
        ("max steps", str(settings.max_steps), src.get("max_steps", "")),
        ("timeout", f"{settings.timeout:g}s", src.get("timeout", "")),
        ("temperature", f"{settings.temperature:g}", src.get("temperature", "")),
        ("state folder", str(settings.state.root), src.get("state_dir", "")),
        ("sandbox", describe_sandbox(settings.sandbox), src.get("sandbox", "")),
        ("prices", price, ""),
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


async def _preflight(settings: Settings):
    from hello_tui.llm import LLMClient

    client = LLMClient(settings)
    try:
        return await client.preflight()
    finally:
        await client.aclose()


def run_doctor(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        settings = settings_from_args(args)
    except ConfigError as exc:
        print(f"configuration error: {exc}", file=out)
        return 2
    _print_settings(settings, out)
    try:
        result = asyncio.run(_preflight(settings))
    except Exception as exc:  # noqa: BLE001 - doctor reports; it never shows a traceback
        print(f"preflight: FAILED — {type(exc).__name__}: {exc}", file=out)
        return 2
    if result.ok:
        print(f"preflight: OK in {result.latency * 1000:.0f} ms — {result.message}", file=out)
        return 0
    print(f"preflight: FAILED — {result.message}", file=out)
    if result.hint and result.hint not in result.message:
        print(f"  fix: {result.hint}", file=out)
    return 2
