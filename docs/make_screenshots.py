"""Regenerate docs/review.svg: the demo session up to its patch review, saved by the app itself.

Run from the repository root: `python docs/make_screenshots.py`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hello_tui.demo import build_demo_app, copy_demo_repo
from hello_tui.demo.model import ScriptedModelServer
from hello_tui.demo.script import DemoModel
from hello_tui.screens.command_approval import CommandApprovalScreen
from hello_tui.screens.review import PatchReviewScreen


async def _until(pilot, predicate, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise SystemExit("the demo did not reach the expected screen")
        await pilot.pause(0.05)


async def review_screenshot(target: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer(DemoModel()) as server:
        repo = copy_demo_repo(Path(tmp))
        app = build_demo_app(repo, server)
        async with app.run_test(size=(120, 36)) as pilot:
            await _until(pilot, lambda: app.engine is not None)
            await pilot.press("enter")
            await _until(pilot, lambda: isinstance(app.screen, CommandApprovalScreen))
            await pilot.press("a")
            await _until(pilot, lambda: isinstance(app.screen, PatchReviewScreen))
            await pilot.pause(0.3)
            await pilot.press("j", "space")
            await pilot.pause(0.3)
            app.save_screenshot(str(target.name), path=str(target.parent))
            await pilot.press("r")


if __name__ == "__main__":
    out = ROOT / "docs" / "review.svg"
    asyncio.run(review_screenshot(out))
    print(f"wrote {out.relative_to(ROOT)}")
