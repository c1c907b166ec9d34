"""`GIT binary patch` data: base85 lines, zlib and git's delta format.

After `GIT binary patch` come one or two hunks (forward, then the optional
reverse), each `literal <size>` or `delta <size>` followed by data lines and a
blank line. A data line is a length character (`A`-`Z` = 1-26 bytes, `a`-`z` =
27-52) then base85 in groups of five characters (git's alphabet, the same as
RFC 1924's). The bytes are zlib-deflated; inflated, they are the new file
(literal) or a delta against the old file: two varint sizes, then copy
(high bit set: offset and size bytes chosen by the low bits) and insert
(1-127 literal bytes) instructions.

Results and sources are checked against the blob ids of git's `index <old>..<new>`
line (patch/blob_ids.py). A text patch never loads this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from hello_tui.patch.blob_ids import blob_id, is_null_oid, oid_matches
from hello_tui.patch.types import PatchError

TYPE_CHECKING = False  # typing is not imported at run time: it costs every command
if TYPE_CHECKING:
    from typing import Literal

# base64 and zlib are imported where a binary patch is read: a text patch never needs them.


@dataclass
class BinaryHunk:
    """One direction of a `GIT binary patch`: a literal or a delta, inflated."""

    method: Literal["literal", "delta"]
    size: int  # inflated size, from the hunk's header
    data: bytes  # inflated


@dataclass
class BinaryPatch:
    """A `GIT binary patch`: the forward hunk and, when given, the reverse one."""

    forward: BinaryHunk
    reverse: BinaryHunk | None = None


class BinaryCorrupt(ValueError):
    """Binary patch data that does not decode (the message says where)."""


def _byte_length(ch: str) -> int:
    if "A" <= ch <= "Z":
        return ord(ch) - ord("A") + 1
    if "a" <= ch <= "z":
        return ord(ch) - ord("a") + 27
    raise BinaryCorrupt(f"bad length character {ch!r}")


def _parse_hunk(lines: list[str], i: int) -> tuple[BinaryHunk | None, int]:
    """The hunk starting at lines[i] (None when lines[i] is not `literal`/`delta`), next index."""
    import zlib
    from base64 import b85decode

    if i >= len(lines):
        return None, i
    head = lines[i].rstrip("\r")
    for method in ("literal", "delta"):
        if head.startswith(method + " "):
            break
    else:
        return None, i
    size_text = head[len(method) + 1 :].strip()
    if not size_text.isdigit():
        raise BinaryCorrupt(f"line {i + 1}: bad size in {head!r}")
    size = int(size_text)
    raw = bytearray()
    j = i + 1
    while True:
        if j >= len(lines):
            raise BinaryCorrupt(f"line {j}: binary hunk ends without its blank line")
        line = lines[j].rstrip("\r")
        j += 1
        if line == "":
            break
        encoded = line[1:]
        if len(line) < 6 or len(encoded) % 5:
            raise BinaryCorrupt(f"line {j}: data line of bad length")
        want = _byte_length(line[0])
        available = len(encoded) // 5 * 4
        if want > available or want <= available - 4:
            raise BinaryCorrupt(f"line {j}: length character does not fit the data")
        try:
            raw += b85decode(encoded)[:want]
        except ValueError:
            raise BinaryCorrupt(f"line {j}: not base85 data") from None
    try:
        inflated = zlib.decompress(bytes(raw))
    except zlib.error as exc:
        raise BinaryCorrupt(f"line {i + 1}: the data does not inflate ({exc})") from None
    if len(inflated) != size:
        raise BinaryCorrupt(
            f"line {i + 1}: the data inflates to {len(inflated)} bytes, the header says {size}"
        )
    return BinaryHunk(method, size, inflated), j  # type: ignore[arg-type]


def parse_binary_patch(lines: list[str], i: int) -> tuple[BinaryPatch, int]:
    """Parse the hunks after a `GIT binary patch` line (lines[i] is the first hunk's header)."""
    forward, j = _parse_hunk(lines, i)
    if forward is None:
        raise BinaryCorrupt(f"line {i + 1}: expected 'literal <size>' or 'delta <size>'")
    reverse, k = _parse_hunk(lines, j)
    return BinaryPatch(forward, reverse), (k if reverse is not None else j)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise BinaryCorrupt("delta header is cut short")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def apply_delta(source: bytes, delta: bytes) -> bytes:
    try:
        return _apply_delta(source, delta)
    except IndexError:
        raise BinaryCorrupt("a delta instruction is cut short") from None


def _apply_delta(source: bytes, delta: bytes) -> bytes:
    src_size, pos = _varint(delta, 0)
    if src_size != len(source):
        raise BinaryCorrupt(
            f"the delta is for a {src_size}-byte file, the file has {len(source)} bytes"
        )
    dst_size, pos = _varint(delta, pos)
    out = bytearray()
    n = len(delta)
    while pos < n:
        op = delta[pos]
        pos += 1
        if op & 0x80:
            offset = size = 0
            for bit in range(4):
                if op & (1 << bit):
                    offset |= delta[pos] << (8 * bit)
                    pos += 1
            for bit in range(3):
                if op & (1 << (4 + bit)):
                    size |= delta[pos] << (8 * bit)
                    pos += 1
            if size == 0:
                size = 0x10000
            if offset + size > len(source):
                raise BinaryCorrupt("a delta copy reaches past the end of the file")
            out += source[offset : offset + size]
        elif op:
            if pos + op > n:
                raise BinaryCorrupt("a delta insert is cut short")
            out += delta[pos : pos + op]
            pos += op
        else:
            raise BinaryCorrupt("a delta has the reserved instruction 0")
    if len(out) != dst_size:
        raise BinaryCorrupt(f"the delta makes {len(out)} bytes, its header says {dst_size}")
    return bytes(out)


def apply_binary_patch(
    path: str, patch: BinaryPatch, old: bytes | None, old_oid: str | None, new_oid: str | None
) -> bytes:
    """The new bytes, checked against the index line's blob ids when it has them."""
    if old is not None and old_oid and not is_null_oid(old_oid) and not oid_matches(old_oid, old):
        raise PatchError(
            f"The binary patch is for another version of {path}: it applies to blob "
            f"{old_oid}, the file is blob {blob_id(old)[: max(len(old_oid), 7)]}."
        )
    hunk = patch.forward
    if hunk.method == "literal":
        result = hunk.data
    else:
        if old is None:
            raise PatchError(f"Cannot apply the binary delta to {path}: the file does not exist.")
        if not old_oid:
            raise PatchError(
                f"Cannot apply the binary delta to {path}: the patch has no `index` line, so "
                "the file it was made against cannot be checked. Use `git diff --binary`."
            )
        try:
            result = apply_delta(old, hunk.data)
        except BinaryCorrupt as exc:
            raise PatchError(f"The binary delta does not apply to {path}: {exc}.") from None
    if new_oid and not is_null_oid(new_oid) and not oid_matches(new_oid, result):
        raise PatchError(
            f"The binary patch to {path} makes the wrong result: expected blob {new_oid}, "
            f"got {blob_id(result)[: max(len(new_oid), 7)]}."
        )
    return result
