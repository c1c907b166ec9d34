"""Mail patches (`git format-patch`, mbox files with several mails): what is not patch text.

A mail starts with mbox's `From <sha> <date>` line (or, at the top of the
text, with its own `From:` header). Its headers run to the first blank line;
the commit message then runs to the first line git's mailinfo calls a patch
break (`---`, `--- <file>`, `diff -`, `Index: `). Headers and message are
removed here, so nothing in a commit message can be read as a patch; the
`---` diffstat and the `-- ` signature after the last hunk are left to the
diff parser, which knows from the hunk counts where hunks end. A body sent
as quoted-printable or base64 is decoded first, as `git am` does. A MIME
multipart mail (`git format-patch --attach` or `--inline`) is unpacked with
the standard library's email parser: its parts' bodies, each decoded, are
read in order as one body, so a closing boundary is never read as a hunk line.

Mails are kept in their order: the parser then applies them one after the
other, as one transaction.
"""

from __future__ import annotations

import re

from hello_tui.core.lazy_regex import lazy_compile

_FORMAT_PATCH_FROM = lazy_compile(r"^From [0-9a-f]{40} ")
_MBOX_FROM = lazy_compile(r"^From \S+ ")
_HEADER = lazy_compile(r"^[A-Za-z][A-Za-z0-9-]*:")
_ENCODING = lazy_compile(r"^content-transfer-encoding:\s*([\w-]+)", re.IGNORECASE)
_MULTIPART = lazy_compile(r"^content-type:\s*multipart/", re.IGNORECASE)


def _is_header(line: str) -> bool:
    return bool(_HEADER.match(line))


def _mail_starts(lines: list[str]) -> list[int]:
    starts = []
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    for i, line in enumerate(lines):
        if not line.startswith("From"):
            continue
        if _FORMAT_PATCH_FROM.match(line):
            starts.append(i)
        elif i == first and _MBOX_FROM.match(line) and i + 1 < len(lines):
            if _is_header(lines[i + 1]):
                starts.append(i)
        elif i == first and line.startswith("From: ") and _has_subject(lines, i):
            starts.append(i)
    return starts


def _has_subject(lines: list[str], i: int) -> bool:
    for line in lines[i : i + 40]:
        if not line.strip("\r"):
            return False
        if line.lower().startswith("subject:"):
            return True
    return False


def _is_patch_break(line: str) -> bool:
    """git mailinfo's patchbreak(): where the commit message ends and the patch begins."""
    line = line.rstrip("\r")
    if line.startswith(("diff -", "Index: ")):
        return True
    if line.startswith("---"):
        rest = line[3:]
        if rest.startswith(" ") and rest[1:2] and not rest[1].isspace():
            return True
        return rest.strip() == ""
    return False


def _decode_body(body: list[str], encoding: str | None) -> list[str]:
    if encoding not in ("quoted-printable", "base64"):
        return body
    import base64  # here: a patch without an encoded mail body never needs them
    import binascii
    import quopri

    raw = "\n".join(body).encode("utf-8", "surrogateescape")
    try:
        data = quopri.decodestring(raw) if encoding == "quoted-printable" else base64.b64decode(raw)
    except (binascii.Error, ValueError):
        return body  # not what the header says: leave it for the parser to judge
    return data.decode("utf-8", "surrogateescape").split("\n")


def _multipart_body(mail: list[str]) -> list[str]:
    """A MIME multipart mail's parts (headers and boundaries gone, each part decoded) in order."""
    from email import message_from_bytes  # only mails need the email package
    from email.policy import compat32

    message = message_from_bytes(
        "\n".join(mail).encode("utf-8", "surrogateescape"), policy=compat32
    )
    body: list[str] = []
    for part in message.walk():
        if part.is_multipart():
            continue
        data = part.get_payload(decode=True)
        if not isinstance(data, bytes):
            continue
        text = data.decode("utf-8", "surrogateescape")
        body += text.removesuffix("\n").split("\n") if text else []
    # As a plain mail's lines end: with the empty string after the last line's newline.
    # Without it a part's last line (the blank line that ends a binary hunk) lost its end.
    return [*body, ""] if body else body


def _one_mail(lines: list[str]) -> list[str]:
    """The patch part of one mail (lines after its commit message), decoded."""
    i = 1 if lines and lines[0].startswith("From ") and not lines[0].startswith("From:") else 0
    headers_start = i
    encoding = None
    multipart = False
    while i < len(lines) and lines[i].strip("\r"):
        m = _ENCODING.match(lines[i])
        if m:
            encoding = m.group(1).lower()
        multipart = multipart or bool(_MULTIPART.match(lines[i]))
        i += 1
    if multipart:
        body = _multipart_body(lines[headers_start:])
    else:
        body = _decode_body(lines[i:], encoding)
    for j, line in enumerate(body):
        if _is_patch_break(line):
            return body[j:]
    return []


def strip_mail_messages(text: str) -> str:
    """`text` without mail headers and commit messages; unchanged when it holds no mail."""
    if "From" not in text:
        return text
    lines = text.split("\n")
    starts = _mail_starts(lines)
    if not starts:
        return text
    out = lines[: starts[0]]
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        if k and lines[start].startswith("From "):
            # The envelope line stays as the end of the previous mail's patch: a MIME mail's
            # patch has no `-- ` signature after it, and the next mail's `---` diffstat must
            # not read as more lines of its last hunk.
            out.append(lines[start])
        out += _one_mail(lines[start:end])
    return "\n".join(out)
