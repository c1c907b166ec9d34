"""Git's C-style path quoting, decoded the way git decodes it and written the way git
writes it (core.quotepath).

git writes a path inside double quotes when it contains a byte that needs
escaping: `"b/caf\\303\\251.txt"`, `"a/tab\\there"`, `"a/say \\"hi\\""`. Inside the
quotes, `\\a \\b \\t \\n \\v \\f \\r \\" \\\\` are single characters and `\\ooo`
(three octal digits) is one byte; the bytes are then read as UTF-8, with
undecodable bytes kept through `surrogateescape` so the name round-trips.
"""

from __future__ import annotations

_SIMPLE = {
    "a": 7,
    "b": 8,
    "t": 9,
    "n": 10,
    "v": 11,
    "f": 12,
    "r": 13,
    '"': 34,
    "\\": 92,
}


# The same escapes the other way: byte -> letter.
_LETTER = {byte: letter for letter, byte in _SIMPLE.items()}


def quote_path(path: str) -> str:
    """A path as git prints it (core.quotepath): C-quoted when a byte needs escaping."""
    raw = path.encode("utf-8", "surrogateescape")
    if not any(b < 0x20 or b in (34, 92) or b >= 0x7F for b in raw):
        return path
    out = []
    for b in raw:
        if b in _LETTER:
            out.append("\\" + _LETTER[b])
        elif b < 0x20 or b >= 0x7F:
            out.append(f"\\{b:03o}")
        else:
            out.append(chr(b))
    return '"' + "".join(out) + '"'


class QuoteError(ValueError):
    """A quoted name that git itself would not accept (bad escape, no closing quote)."""


def unquote_c_style(text: str) -> tuple[str, str]:
    """Decode the quoted name at the start of `text` (which begins with `"`).

    Returns (the name, the text after the closing quote).
    """
    if not text.startswith('"'):
        raise QuoteError("a quoted name starts with a double quote")
    out = bytearray()
    i = 1
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            return out.decode("utf-8", "surrogateescape"), text[i + 1 :]
        if ch != "\\":
            out += ch.encode("utf-8", "surrogateescape")
            i += 1
            continue
        if i + 1 >= n:
            break
        esc = text[i + 1]
        if esc in _SIMPLE:
            out.append(_SIMPLE[esc])
            i += 2
            continue
        if "0" <= esc <= "3":
            digits = text[i + 1 : i + 4]
            if len(digits) == 3 and all("0" <= d <= "7" for d in digits):
                out.append(int(digits, 8))
                i += 4
                continue
        raise QuoteError(f"unknown escape \\{esc} in a quoted name")
    raise QuoteError("a quoted name has no closing double quote")


def is_quoted(text: str) -> bool:
    return text.startswith('"')
