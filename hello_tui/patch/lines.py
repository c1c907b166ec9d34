"""Bytes <-> lines for the patch engine: decoding, BOM, per-line endings, rebuilding.

A file is held as two parallel lists: `lines` (text without endings) and
`eols` (each line's own ending: "\\n", "\\r\\n", "\\r" or "" for a last line
without one). Untouched lines keep their exact bytes this way. Two views:
Codex patches see lone "\\r" as a line ending and a BOM set aside (as Codex
does); unified diffs see lines as git does (`git_lines`): they end at "\\n",
a "\\r" before it is part of the ending, any other "\\r" is text, and a BOM is
the first character of the first line.

Files that are not valid UTF-8 (latin-1, cp1252...) are decoded with
`surrogateescape`: every byte that is not UTF-8 becomes one lone surrogate, so
a patch whose lines match byte for byte applies, and encoding gives back the
exact bytes. A file is binary, as git decides it, when a NUL byte occurs in
its first 8000 bytes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from hello_tui.core.lazy_regex import lazy_compile
from hello_tui.patch.types import PatchError

BOM = "\ufeff"
_EOL_SPLIT = lazy_compile(r"(\r\n|\r|\n)")
# git looks for a NUL in this many leading bytes to call a file binary.
BINARY_PROBE_BYTES = 8000


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
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


def split_git_lines(text: str) -> tuple[list[str], list[str]]:
    """Split at "\\n" as git does; "\\r\\n" is one ending, a lone "\\r" stays in its line."""
    if not text:
        return [], []
    if "\r" not in text:
        return split_lines(text)
    lines = text.split("\n")
    last = lines.pop()
    eols = ["\r\n" if line.endswith("\r") else "\n" for line in lines]
    lines = [line[:-1] if eol == "\r\n" else line for line, eol in zip(lines, eols)]
    if last:
        lines.append(last)
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
    return b"\x00" in data[:BINARY_PROBE_BYTES]


def decode_bytes(data: bytes) -> str:
    """Bytes as text: UTF-8, with any other byte kept as a lone surrogate (exact round trip)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape")


def encode_str(text: str, path: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as exc:
        raise PatchError(
            f"The new content of {path} has a character that cannot be written "
            f"(U+{ord(exc.object[exc.start]):04X} at character {exc.start}); remove it."
        ) from None


def decode_text(data: bytes, path: str, *, git_lines: bool = False) -> TextFile:
    """Decode file bytes into lines; binary files (as git decides) are refused, never patched.

    With `git_lines` the file is split as git splits it and a UTF-8 BOM stays the first
    character of the first line (so a diff can match, add or remove it); otherwise the
    BOM is set aside (and kept on write) and a lone "\\r" ends a line too.
    """
    if is_binary(data):
        raise PatchError(
            f"{path} is a binary file (it contains NUL bytes); a text patch cannot change it. "
            "Binary files change only through a `GIT binary patch` (git diff --binary)."
        )
    text = decode_bytes(data)
    if git_lines:
        return TextFile(*split_git_lines(text))
    bom = text.startswith(BOM)
    if bom:
        text = text[1:]
    lines, eols = split_lines(text)
    return TextFile(lines, eols, bom)


def encode_text(tf: TextFile, text: str | None = None, path: str = "the file") -> bytes:
    """The file's bytes; pass `text` when text_of(tf) is already at hand."""
    if text is None:
        text = join_lines(tf.lines, tf.eols)
    return encode_str((BOM if tf.bom else "") + text, path)


def text_of(tf: TextFile) -> str:
    return join_lines(tf.lines, tf.eols)


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def has_unicode_text(text: str) -> bool:
    """Non-ASCII characters that are real text (not bytes kept as lone surrogates)."""
    return any(ord(c) > 127 and not 0xDC80 <= ord(c) <= 0xDCFF for c in text)
