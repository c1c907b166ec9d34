"""Loading prompts: a repo's override first, then the copy shipped inside the package.

Prompts ship in the wheel as the package `hello_tui.prompts` (mapped from the
top-level `prompts/` folder), so they load whatever `--repo` points at. A
source checkout without an install falls back to that top-level folder. A
repository may override any prompt with `.helloagents/prompts/<name>.md`.
"""

from __future__ import annotations

import functools
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.regular_files import leads_inside, read_regular_file


class PromptNotFound(Exception):
    """No packaged prompt of that name: a broken install, named in the message."""


def _valid_name(name: str) -> bool:
    return bool(name) and all(c.isalnum() or c in "_-" for c in name)


@functools.lru_cache(maxsize=32)
def packaged_prompt(name: str) -> str:
    """The prompt shipped with hello-tui (cached: it cannot change while we run)."""
    if not _valid_name(name):
        raise PromptNotFound(f"'{name}' is not a prompt name")
    filename = f"{name}.md"
    try:
        from importlib.resources import files

        resource = files("hello_tui.prompts").joinpath(filename)
        if resource.is_file():
            return resource.read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, OSError):
        pass
    import hello_tui

    source_copy = Path(hello_tui.__file__).resolve().parent.parent / "prompts" / filename
    if source_copy.is_file():
        return source_copy.read_text(encoding="utf-8")
    raise PromptNotFound(
        f"prompt {filename} is missing from the installed package; reinstall hello-tui"
    )


# A prompt override bigger than this is not a prompt; ours is used.
OVERRIDE_MAX_BYTES = 256 * 1024


def load_prompt(name: str, settings: Settings | None = None) -> str:
    if settings is not None and _valid_name(name):
        folder = settings.state.prompts
        override = folder / f"{name}.md"
        # A cloned repository may commit its state folder: an override is only a regular
        # file that stays in it (`system.md -> /proc/self/environ` would hand the model
        # the app's environment, its key among it).
        if override.is_file() and leads_inside(override, folder):
            try:
                return read_regular_file(override, OVERRIDE_MAX_BYTES).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                pass  # an unreadable override must not stop the agent: use ours
    return packaged_prompt(name)
