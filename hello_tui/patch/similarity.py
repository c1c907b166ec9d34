"""git's estimate of how alike two files are: the `similarity index` of a rename.

The same arithmetic as git's diffcore-delta.c and diffcore-rename.c: each file
is cut into spans that end at a newline or after 64 bytes (a CR before LF is
skipped in text; a last line without newline makes no span), each span hashed into one of 107927 buckets; the bytes both
files share are, bucket by bucket, the smaller of the two byte counts; the
score is those shared bytes over the larger file's size, on git's scale of
60000, printed as a whole percentage rounded down. One pass over each file.
"""

from __future__ import annotations

from collections import Counter

from hello_tui.patch.lines import is_binary

HASHBASE = 107927
MAX_SCORE = 60000
_MASK = 0xFFFFFFFF  # git's accumulators are 32-bit unsigned ints


def _spans(data: bytes) -> Counter[int]:
    """Bytes per span hash, as git's `hash_chars` counts them."""
    text = not is_binary(data)
    counts: Counter[int] = Counter()
    accum1 = accum2 = n = 0
    size = len(data)
    for k, c in enumerate(data):
        if text and c == 13 and k + 1 < size and data[k + 1] == 10:
            continue
        old_1 = accum1
        accum1 = ((accum1 << 7) ^ (accum2 >> 25)) & _MASK
        accum2 = ((accum2 << 7) ^ (old_1 >> 25)) & _MASK
        accum1 = (accum1 + c) & _MASK
        n += 1
        if n < 64 and c != 10:
            continue
        counts[((accum1 + accum2 * 0x61) & _MASK) % HASHBASE] += n
        accum1 = accum2 = n = 0
    # git counts no span for the bytes after the last newline: they are never "copied".
    return counts


def similarity_score(old: bytes, new: bytes) -> int:
    """git's rename score of old -> new, 0 to MAX_SCORE."""
    if old == new:
        return MAX_SCORE
    max_size = max(len(old), len(new))
    if not new or not max_size:
        return 0
    src, dst = _spans(old), _spans(new)
    copied = sum(min(count, dst[h]) for h, count in src.items() if h in dst)
    return copied * MAX_SCORE // max_size


def similarity_percent(old: bytes, new: bytes) -> int:
    return similarity_score(old, new) * 100 // MAX_SCORE
