"""Bytes <-> lines for the patch engine: decoding, BOM, per-line endings, rebuilding.

A file is held as two parallel lists: `lines` (text without endings) and
`eols` (each line's own ending: "\\n", "\\r\\n", "\\r" or "" for a last line
without one). Untouched lines keep their exact bytes this way, and new lines
take the file's first-seen ending.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from hello_tui.patch.types import PatchError

BOM = "\ufeff"
_EOL_SPLIT = re.compile(r"(\r\n|\r|\n)")


@dataclass
class TextFile:
    """A decoded text file split into lines, with what is needed to write it back byte-exact."""

    lines: list[str]
    eols: list[str]
    bom: bool = False

    @property
    def default_eol(self) -> str:
        """The first-seen line ending; "\\n" when the file has none."""
        for eol in self.eols:
            if eol:
                return eol
        return "\n"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split_lines(text: str) -> tuple[list[str], list[str]]:
    """Split on \\n, \\r\\n and lone \\r only (str.splitlines would also split on \\x0c, \\u2028...)."""
    if not text:
        return [], []
    if "\r" not in text:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
            return lines, ["\n"] * len(lines)
        eols = ["\n"] * len(lines)
        eols[-1] = ""
        return lines, eols
    parts = _EOL_SPLIT.split(text)
    lines = parts[0::2]
    eols = parts[1::2]
    if lines[-1] == "":
        lines.pop()
    else:
        eols.append("")
    return lines, eols


def join_lines(lines: list[str], eols: list[str]) -> str:
    if not lines:
        return ""
    n = len(eols)
    # Fast path for the common all-LF file (counted in C, joined in C).
    lf = eols.count("\n")
    if lf == n:
        return "\n".join(lines) + "\n"
    if lf == n - 1 and eols[-1] == "":
        return "\n".join(lines)
    return "".join(map(str.__add__, lines, eols))


def is_binary(data: bytes) -> bool:
    return b"\x00" in data


def decode_text(data: bytes, path: str) -> TextFile:
    """Decode UTF-8 file bytes; binary or undecodable files are refused, never patched."""
    if is_binary(data):
        raise PatchError(f"{path} is a binary file (it contains NUL bytes); it cannot be patched.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PatchError(
            f"{path} is not valid UTF-8 (byte {exc.start}); it is treated as binary and cannot be patched."
        ) from None
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    lines, eols = split_lines(text)
    return TextFile(lines, eols, bom)


def encode_text(tf: TextFile, text: str | None = None) -> bytes:
    """The file's bytes; pass `text` when text_of(tf) is already at hand."""
    if text is None:
        text = join_lines(tf.lines, tf.eols)
    return ((BOM if tf.bom else "") + text).encode("utf-8")


def text_of(tf: TextFile) -> str:
    return join_lines(tf.lines, tf.eols)
