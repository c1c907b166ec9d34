"""git's blob ids: the sha1 of `blob <size>\\0` and the bytes, as `index` lines carry them.

Text patches and the note's diff need these; only binary patches need `binary.py`.
"""

from __future__ import annotations

import hashlib

NULL_OID_CHARS = set("0")


def blob_id(data: bytes) -> str:
    """git's object id of a blob with these bytes (sha1)."""
    h = hashlib.sha1(b"blob %d\x00" % len(data), usedforsecurity=False)
    h.update(data)
    return h.hexdigest()


def is_null_oid(oid: str | None) -> bool:
    return oid is not None and oid != "" and set(oid) <= NULL_OID_CHARS


def oid_matches(oid: str | None, data: bytes) -> bool:
    """The blob id of `data` starts with the (possibly abbreviated) `oid`."""
    return oid is not None and oid != "" and blob_id(data).startswith(oid.lower())
