"""What `/copy [N]` takes from the chat: the last answer whole, or its code block N.

Pure: the app puts the chosen text on the clipboard (OSC 52) and shows the message.
The whole answer is copied as the model wrote it (Markdown); a code block without
its fences and without its last line break, so pasting it into a shell does not
run its last line at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from hello_tui.widgets.chat_markdown import FencedBlock, fenced_blocks

USAGE = "Usage: /copy copies the last answer, /copy N its code block N (numbered in the chat)."


@dataclass(frozen=True)
class CopyChoice:
    text: str | None  # None: nothing is copied
    message: str


def _lines(text: str) -> str:
    count = text.count("\n") + 1
    return "1 line" if count == 1 else f"{count} lines"


def _blocks_hint(blocks: list[FencedBlock]) -> str:
    if not blocks:
        return ""
    if len(blocks) == 1:
        return " Its code block: /copy 1."
    return f" Its {len(blocks)} code blocks: /copy 1 to /copy {len(blocks)}."


def choose_copy(answer: str | None, args: str) -> CopyChoice:
    """What `/copy args` copies from `answer` (the last answer's Markdown, None if none)."""
    arg = args.strip()
    if arg and not (arg.isdecimal() and int(arg) > 0):
        return CopyChoice(None, USAGE)
    if answer is None or not answer.strip():
        return CopyChoice(None, "There is no answer to copy yet.")
    blocks = fenced_blocks(answer)
    if not arg:
        whole = answer.strip("\n").rstrip()
        return CopyChoice(
            whole,
            f"Copied the last answer ({_lines(whole)}) to the clipboard.{_blocks_hint(blocks)}",
        )
    number = int(arg)
    if not blocks:
        return CopyChoice(None, "The last answer has no code blocks; /copy copies all of it.")
    if number > len(blocks):
        count = "1 code block" if len(blocks) == 1 else f"{len(blocks)} code blocks"
        choices = "/copy 1" if len(blocks) == 1 else f"/copy 1 to /copy {len(blocks)}"
        return CopyChoice(None, f"The last answer has {count}: {choices}.")
    block = blocks[number - 1]
    language = block.language or "text"
    return CopyChoice(
        block.code,
        f"Copied code block {number} ({language}, {_lines(block.code)}) to the clipboard.",
    )
