"""Planning (the dry run): every file's new bytes computed in memory and every check run.

Nothing here writes. A plan records each target's current hash for the stale
guard, the permission bits to write, and its risk. `plan_patch_text` takes
whatever the model wrote (or a patch file: git diffs, format-patch mails);
`plan_file_change` takes one file's new content (the `edit` and `write` tools).

Operations apply in order to an in-memory tree, so a mail series that changes
one file in several mails plans as one change of that file (and one
transaction). A Codex patch names each file once; naming it twice is an error.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hello_tui.config import Settings
from hello_tui.patch.blob_ids import blob_id, oid_matches
from hello_tui.patch.codex_parser import parse_codex
from hello_tui.patch.colour import check_decoloured
from hello_tui.patch.endings import check_converted_add, settle_endings, unconverted_readings
from hello_tui.patch.extract import find_patches
from hello_tui.patch.lines import (
    TextFile,
    decode_text,
    encode_str,
    encode_text,
    has_unicode_text,
    is_binary,
    is_utf8,
    sha256,
    split_git_lines,
    split_lines,
    text_of,
)
from hello_tui.patch.matcher import hunks_from_placements, place_chunks
from hello_tui.patch.model import FileOperation
from hello_tui.patch.paths import check_git_control_files, resolve_patch_path
from hello_tui.patch.rebuild import apply_hunks, diff_hunks, diff_texts
from hello_tui.patch.risk import assess_risk, check_limits, check_strict_suffixes
from hello_tui.patch.types import FilePlan, Hunk, PatchError, PatchPlan, printable

_S_IFMT = 0o170000
_REGULAR, _SYMLINK, _GITLINK = 0o100000, 0o120000, 0o160000


def parse_patch_text(text: str, warnings: list[str] | None = None) -> list[FileOperation]:
    """Every file operation of every patch found in `text`, in order."""
    found = find_patches(text)
    if not found:
        if not text.strip():
            raise PatchError("No files were modified: the patch is empty.")
        return parse_codex(text)  # no recognisable start: let the parser say what is wrong
    ops: list[FileOperation] = []
    for patch in found:
        if patch.error is not None:
            raise patch.error
        if patch.kind == "unified":
            ops.extend(patch.ops)
            if warnings is not None:
                warnings.extend(patch.warnings)
        else:
            ops.extend(parse_codex(patch.text))
    return ops


def _resolve(settings: Settings, raw: str) -> tuple[str, Path]:
    return resolve_patch_path(settings.repo, raw, settings.state_dir_name)


# A work record: identity, no repr (why: COMPARED_BY_VALUE in tests/test_layering.py).
@dataclass(eq=False, repr=False)
class _State:
    """A file as the patch sees it at one point: its bytes and permission bits (None: absent)."""

    data: bytes | None
    mode: int | None = None


# What an existing file holds now, given its repo path, its path and its bytes on disk;
# None: the disk's bytes. The user's editor may hold newer text (tools/editor_texts.py).
CurrentBytes = Callable[[str, Path, bytes], bytes | None]


def _read_disk(rel: str, target: Path, current: CurrentBytes | None = None) -> _State:
    if not os.path.lexists(target):
        return _State(None)
    st = os.stat(target)
    if stat.S_ISDIR(st.st_mode):
        raise PatchError(f"Cannot patch {rel}: it is a directory, not a file.")
    if not stat.S_ISREG(st.st_mode):
        raise PatchError(f"Cannot patch {rel}: it is not a regular file.")
    data = target.read_bytes()
    if current is not None and (newer := current(rel, target, data)) is not None:
        data = newer
    return _State(data, stat.S_IMODE(st.st_mode))


def _read_existing(
    rel: str, target: Path, action: str, current: CurrentBytes | None = None
) -> tuple[bytes, int]:
    state = _read_disk(rel, target, current)
    if state.data is None:
        raise PatchError(f"Cannot {action} {rel}: the file does not exist.")
    return state.data, state.mode or 0


def _umask() -> int:
    """The process umask, read without changing it where the system allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def permissions_for(rel: str, git_mode: int | None, current: int | None) -> int | None:
    """The permission bits to write for a git mode: the executable bit as git leaves it.

    A new file gets 0777 & ~umask when executable (as git creates it), else the default;
    an existing one gains x where it has r, or loses every x bit.
    """
    if git_mode is None:
        return current
    kind = git_mode & _S_IFMT
    if kind == _SYMLINK:
        raise PatchError(
            f"Refused {rel}: the patch creates or changes a symbolic link (mode 120000); "
            "patches do not create or change symbolic links (git would; do it with git)."
        )
    if kind == _GITLINK:
        raise PatchError(
            f"Refused {rel}: the patch changes a submodule (mode 160000); update submodules "
            "with git."
        )
    if kind not in (0, _REGULAR):
        raise PatchError(f"Refused {rel}: mode {git_mode:o} is not a regular file's mode.")
    executable = bool(git_mode & 0o111)
    if current is None:
        return (0o777 & ~_umask()) if executable else None
    if executable:
        return current | ((current & 0o444) >> 2)
    return current & ~0o111


def make_add_plan(
    rel: str, content: str, mode: int | None = None, *, git_lines: bool = False
) -> FilePlan:
    tf = TextFile(*(split_git_lines(content) if git_lines else split_lines(content)))
    hunk = Hunk(0, 0, [], list(tf.lines), no_eol=bool(tf.eols) and tf.eols[-1] == "")
    hunk.new_eols = list(tf.eols)
    data = encode_str(content, rel)
    return FilePlan(path=rel, op="add", new_text=content, new_bytes=data, hunks=[hunk], mode=mode)


def _binary_plan(rel: str, op: str, old: _State, new: _State) -> FilePlan:
    return FilePlan(
        path=rel,
        op=op,  # type: ignore[arg-type]
        old_bytes=old.data,
        old_hash=sha256(old.data) if old.data is not None else None,
        new_bytes=new.data,
        mode=new.mode,
        old_mode=old.mode,
    )


def _delete_plan(rel: str, data: bytes, mode: int) -> FilePlan:
    if is_binary(data):
        return _binary_plan(rel, "delete", _State(data, mode), _State(None))
    tf = decode_text(data, rel)
    hunk = Hunk(0, 0, list(tf.lines), [])
    return FilePlan(
        path=rel,
        op="delete",
        old_text=text_of(tf),
        old_bytes=data,
        old_hash=sha256(data),
        hunks=[hunk],
        mode=mode,
        old_mode=mode,
    )


def finish_update(fp: FilePlan, old: TextFile, hunks: list[Hunk]) -> FilePlan:
    """Fill a FilePlan's new content from its old file and the given hunks."""
    new = apply_hunks(old, hunks)
    fp.hunks = hunks
    fp.new_text = text_of(new)
    fp.new_bytes = encode_text(new, fp.new_text, fp.path)
    return fp


class _Planner:
    """Applies operations in order to the tree as the patch sees it, one FilePlan each."""

    def __init__(
        self, settings: Settings, warnings: list[str], current: CurrentBytes | None = None
    ) -> None:
        self.settings = settings
        self.warnings = warnings
        self.current = current
        self.disk: dict[str, _State] = {}
        self.tree: dict[str, _State] = {}
        self.order: list[str] = []

    def state(self, rel: str, target: Path) -> _State:
        if rel not in self.tree:
            self.disk[rel] = _read_disk(rel, target, self.current)
            self.tree[rel] = self.disk[rel]
            self.order.append(rel)
        return self.tree[rel]

    def set(self, rel: str, state: _State) -> None:
        self.tree[rel] = state

    # ---- one operation ------------------------------------------------------------

    def plan(self, op: FileOperation, rel: str, target: Path) -> list[FilePlan]:
        current = self.state(rel, target)
        if op.copy:
            # git reads a copy's source as it was before the patch, whatever earlier
            # sections did to it (apply.c, previous_patch): `git diff -C` copies from the
            # old tree, so sphinx's CHANGES.rst, changed and copied to doc/changes/9.0.rst
            # in one commit, gives hunks that fit only its old text.
            current = self.disk[rel]
        plans = self._plan(op, rel, current)
        if op.decoloured and op.kind != "delete" and op.binary is None:
            check_decoloured(rel, op.old_oid, op.new_oid, current.data, plans[-1].new_bytes)
        return plans

    def _plan(self, op: FileOperation, rel: str, current: _State) -> list[FilePlan]:
        if op.kind == "update" and current.data is None and op.maybe_new:
            return [self._add(op, rel, current, op_content_of_new(op))]
        if op.kind == "add":
            return [self._add(op, rel, current, op.content or "")]
        if current.data is None:
            action = "delete" if op.kind == "delete" else "update"
            raise PatchError(f"Cannot {action} {rel}: the file does not exist.")
        if op.kind == "delete":
            return [self._delete(op, rel, current)]
        return [self._update(op, rel, current)]

    def _add(self, op: FileOperation, rel: str, current: _State, content: str) -> FilePlan:
        if current.data is not None:
            raise PatchError(
                f"Cannot add {rel}: target already exists. Update it with '*** Update File: {rel}' "
                "or choose another path."
            )
        mode = permissions_for(rel, op.new_mode, None)
        if op.binary_without_data:
            raise _no_binary_data(rel)
        if op.binary is not None:
            from hello_tui.patch.binary import apply_binary_patch  # binary patches only

            data = apply_binary_patch(rel, op.binary, None, None, op.new_oid)
            fp = _binary_plan(rel, "add", _State(None), _State(data, mode))
        else:
            fp = make_add_plan(rel, content, mode, git_lines=op.dialect == "unified")
            oid = op.new_oid
            if oid and not _null(oid) and not oid_matches(oid, fp.new_bytes or b""):
                # A copy of the patch converted to CRLF on its way (a paste, a mail client)
                # gives a new file CRs it never had, or takes one it had for the copy's;
                # its index line names the file as it was.
                for text in unconverted_readings(content):
                    if oid_matches(oid, encode_str(text, rel)):
                        fp = make_add_plan(rel, text, mode, git_lines=op.dialect == "unified")
                        break
                else:
                    if not op.decoloured:  # a coloured diff's own check says why (plan())
                        check_converted_add(rel, oid, fp.new_bytes or b"", op.crlf_copy)
                    self._oid_mismatch_warning(rel, oid, fp.new_bytes or b"")
        self.set(rel, _State(fp.new_bytes, mode))
        return fp

    def _delete(self, op: FileOperation, rel: str, current: _State) -> FilePlan:
        data = current.data or b""
        if op.dialect == "unified":
            self._check_deleted_content(op, rel, data)
        fp = _delete_plan(rel, data, current.mode or 0)
        self.set(rel, _State(None))
        return fp

    def _check_deleted_content(self, op: FileOperation, rel: str, data: bytes) -> None:
        """A diff that deletes a file shows what it deletes: the file must hold just that."""
        if op.binary_without_data:
            raise _no_binary_data(rel)
        if op.old_oid and not _null(op.old_oid) and not oid_matches(op.old_oid, data):
            raise PatchError(
                f"Cannot delete {rel}: the patch deletes blob {op.old_oid}, but the file is "
                f"blob {blob_id(data)[: max(len(op.old_oid), 7)]} (it changed)."
            )
        if op.binary is not None:
            reverse = op.binary.reverse
            if reverse is not None and reverse.method == "literal" and reverse.data != data:
                raise PatchError(
                    f"Cannot delete {rel}: the file is not the one the binary patch deletes."
                )
            if reverse is None and not op.old_oid:
                raise PatchError(
                    f"Cannot delete the binary file {rel}: the patch neither carries its content "
                    "nor names it in an `index` line, so nothing shows it is the same file."
                )
            return
        if is_binary(data):
            raise PatchError(
                f"Cannot delete {rel}: it is a binary file and the patch shows it as text."
            )
        old = decode_text(data, rel, git_lines=True)
        if not op.chunks:
            if old.lines:
                raise PatchError(
                    f"Cannot delete {rel}: the patch deletes an empty file, but {rel} has "
                    f"{len(old.lines)} lines."
                )
            return
        placements = place_chunks(rel, old.lines, op.chunks, self.warnings, old.eols)
        left = apply_hunks(old, hunks_from_placements(old.lines, placements, 0, old.eols))
        if left.lines:
            raise PatchError(
                f"Cannot delete {rel}: the patch removes {sum(len(c.old_lines) for c in op.chunks)} "
                f"lines, but the file has {len(old.lines)}; it holds more than the patch shows."
            )

    def _update(self, op: FileOperation, rel: str, current: _State) -> FilePlan:
        data = current.data or b""
        dest_rel = None
        if op.move_to is not None:
            dest_rel, dest = _resolve(self.settings, op.move_to)
            if dest_rel == rel:
                raise PatchError(f"Cannot move {rel} onto itself.")
            if self.state(dest_rel, dest).data is not None:
                raise PatchError(
                    f"Cannot {'copy' if op.copy else 'move'} to {dest_rel}: target already "
                    f"exists. Update it with '*** Update File: {dest_rel}' or choose another path."
                )
        explicit = op.new_mode if op.new_mode is not None and op.new_mode != op.old_mode else None
        mode = permissions_for(rel, explicit, current.mode)
        if op.binary_without_data or op.binary is not None or is_binary(data):
            fp = self._binary_update(op, rel, current, mode)
        else:
            fp = self._text_update(op, rel, current, mode)
        if dest_rel is not None:
            if op.copy:
                fp = self._as_copy(fp, dest_rel)
            else:
                fp.op = "move"
                fp.move_to = dest_rel
                self.set(rel, _State(None))
            self.set(dest_rel, _State(fp.new_bytes, mode if not op.copy else fp.mode))
        else:
            self.set(rel, _State(fp.new_bytes, mode))
        return fp

    def _binary_update(
        self, op: FileOperation, rel: str, current: _State, mode: int | None
    ) -> FilePlan:
        data = current.data or b""
        if op.binary is not None:
            from hello_tui.patch.binary import apply_binary_patch  # binary patches only

            new = apply_binary_patch(rel, op.binary, data, op.old_oid, op.new_oid)
        elif op.binary_without_data:
            raise _no_binary_data(rel)
        elif op.chunks or op.whole_file:
            decode_text(data, rel)  # raises: a text patch cannot change a binary file
            new = data
        else:
            new = data  # a rename or mode change of a binary file: its bytes stay
        return _binary_plan(rel, "update", current, _State(new, mode))

    def _text_update(
        self, op: FileOperation, rel: str, current: _State, mode: int | None
    ) -> FilePlan:
        data = current.data or b""
        unified = op.dialect == "unified"
        old = decode_text(data, rel, git_lines=unified)
        fp = FilePlan(
            path=rel,
            op="update",
            old_text=text_of(old),
            old_bytes=data,
            old_hash=sha256(data),
            mode=mode,
            old_mode=current.mode,
            git_lines=unified,
        )
        if op.whole_file:
            fp.whole_file_rewrite = True
            hunks = diff_hunks(old, op.content or "")
        elif op.chunks:
            placements = place_chunks(rel, old.lines, op.chunks, self.warnings, old.eols)
            hunks = hunks_from_placements(old.lines, placements, 0, old.eols)
        else:
            hunks = []
        if not unified and not is_utf8(data):
            added = "".join(line for h in hunks for line in h.new_lines)
            if has_unicode_text(added):
                raise PatchError(
                    f"{rel} is not UTF-8 (it is in a legacy encoding such as latin-1), and the "
                    "patch adds non-ASCII text, which would be written as UTF-8 and mix two "
                    "encodings in one file. Write those characters as the file's own bytes, or "
                    "keep the added lines ASCII."
                )
        fp = finish_update(fp, old, hunks)
        if unified and hunks and not op.whole_file:
            settle_endings(
                rel,
                op.old_oid,
                op.new_oid,
                data,
                hunks,
                lambda again: finish_update(fp, old, again).new_bytes or b"",
                fp.new_bytes or b"",
            )
        return fp

    @staticmethod
    def _as_copy(fp: FilePlan, dest_rel: str) -> FilePlan:
        """git's `copy from/to`: the source stays, the copy is a new file with the new bytes."""
        new_text = fp.new_text
        copy = FilePlan(path=dest_rel, op="add", new_text=new_text, new_bytes=fp.new_bytes)
        copy.mode = fp.mode
        if new_text is not None:
            lines, eols = split_lines(new_text)
            hunk = Hunk(0, 0, [], lines, no_eol=bool(eols) and eols[-1] == "")
            hunk.new_eols = list[str | None](eols)
            copy.hunks = [hunk]
        return copy

    def _oid_mismatch_warning(self, rel: str, oid: str, data: bytes) -> None:
        self.warnings.append(
            f"{rel}: the patch's index line names blob {oid}, but the new file is blob "
            f"{blob_id(data)[: max(len(oid), 7)]}."
        )

    # ---- the whole patch ------------------------------------------------------------

    def combined(self) -> list[FilePlan]:
        """One FilePlan per path, from the disk to the final tree (several mails, one file)."""
        plans: list[FilePlan] = []
        for rel in self.order:
            before, after = self.disk[rel], self.tree[rel]
            if before.data is None and after.data is None:
                continue
            if before.data == after.data and before.mode == after.mode:
                continue
            plans.append(_plan_between(rel, before, after))
        return plans


def op_content_of_new(op: FileOperation) -> str:
    return "".join(
        text + eol for ch in op.chunks for (_, text), eol in zip(ch.items, ch.eols or [])
    )


def _null(oid: str) -> bool:
    return set(oid) <= {"0"}


def _no_binary_data(rel: str) -> PatchError:
    return PatchError(
        f"Cannot apply the binary change to {rel}: the patch says only 'Binary files differ' "
        "and carries no data (git apply refuses it too). Make the patch with "
        "`git diff --binary` (or `git format-patch`, which includes the data)."
    )


def _decodable(data: bytes | None) -> bool:
    return data is None or not is_binary(data)


def _plan_between(rel: str, before: _State, after: _State) -> FilePlan:
    if before.data is None:
        if not _decodable(after.data):
            return _binary_plan(rel, "add", before, after)
        text = text_of(decode_text(after.data or b"", rel, git_lines=True))
        fp = make_add_plan(rel, text, git_lines=True)
        fp.new_bytes = after.data
        fp.mode = after.mode
        return fp
    if after.data is None:
        return _delete_plan(rel, before.data, before.mode or 0)
    if not (_decodable(before.data) and _decodable(after.data)):
        return _binary_plan(rel, "update", before, after)
    old = decode_text(before.data, rel, git_lines=True)
    new = decode_text(after.data, rel, git_lines=True)
    fp = FilePlan(
        path=rel,
        op="update",
        old_text=text_of(old),
        old_bytes=before.data,
        old_hash=sha256(before.data),
        mode=after.mode,
        old_mode=before.mode,
        git_lines=True,
    )
    finish_update(fp, old, diff_texts(old, new))
    if fp.new_bytes != after.data:  # diff_texts is exact; this guards the promise
        raise PatchError(f"Internal error while combining the changes to {rel}; nothing written.")
    return fp


def _refuse_links(op: FileOperation) -> None:
    """A diff that changes a symbolic link or a submodule is refused before its path is."""
    for git_mode in (op.old_mode, op.new_mode):
        if git_mode is not None and git_mode & _S_IFMT in (_SYMLINK, _GITLINK):
            permissions_for(op.path, git_mode, None)


def _check_duplicates(ops: list[FileOperation], resolved: list[tuple[str, str | None]]) -> bool:
    """Whether some path is touched twice; an error when a Codex section is one of them."""
    seen: dict[str, FileOperation] = {}
    repeated = False
    for op, (rel, dest) in zip(ops, resolved):
        for name in [rel] + ([dest] if dest else []):
            if name in seen:
                first = seen[name]
                if op.dialect == "codex" or first.dialect == "codex":
                    raise PatchError(
                        f"{name} appears in more than one section of the patch (lines "
                        f"{first.source_line} and {op.source_line}); put all its changes in one "
                        "section."
                    )
                repeated = True
            seen[name] = op
    return repeated


def plan_operations(
    ops: list[FileOperation],
    settings: Settings,
    source_text: str = "",
    warnings: list[str] | None = None,
    *,
    limits: bool = True,
    current: CurrentBytes | None = None,
) -> PatchPlan:
    if not ops:
        raise PatchError("No files were modified: the patch contains no file operations.")
    notes = warnings if warnings is not None else []
    resolved = []
    for op in ops:
        _refuse_links(op)
        rel, target = _resolve(settings, op.path)
        dest = _resolve(settings, op.move_to)[0] if op.move_to is not None else None
        resolved.append((rel, target, dest))
    repeated = _check_duplicates(ops, [(rel, dest) for rel, _, dest in resolved])
    planner = _Planner(settings, notes, current)
    files: list[FilePlan] = []
    for op, (rel, target, _dest) in zip(ops, resolved):
        files.extend(planner.plan(op, rel, target))
    if repeated:
        files = planner.combined()
        if not files:
            raise PatchError("No files were modified: the patch's changes cancel each other out.")
    _check_control_files(settings, files)
    return finalize_plan(files, settings, printable(source_text), warnings=notes, limits=limits)


def _check_control_files(settings: Settings, files: list[FilePlan]) -> None:
    after: dict[str, bytes | None] = {}
    for fp in files:
        written = fp.new_bytes if fp.new_bytes is not None else (fp.old_bytes or b"")
        if fp.op == "move":
            after[fp.path] = None
            after[fp.move_to or ""] = written
        else:
            after[fp.path] = None if fp.op == "delete" else written
    check_git_control_files(settings.repo, after, settings.state_dir_name)


def finalize_plan(
    files: list[FilePlan],
    settings: Settings,
    source_text: str,
    declined: int = 0,
    warnings: list[str] | None = None,
    *,
    limits: bool = True,
) -> PatchPlan:
    check_strict_suffixes(files, settings)
    if limits:
        check_limits(files, settings)
    return PatchPlan(
        files=files,
        risk=assess_risk(files),
        source_text=source_text,
        declined_hunks=declined,
        warnings=list(warnings or []),
    )


def plan_patch_text(
    text: str, settings: Settings, *, limits: bool = True, current: CurrentBytes | None = None
) -> PatchPlan:
    """Extract, parse and plan every patch in `text`; PatchError says what to fix.

    `limits` (files and changed lines per patch) bound what the agent may propose; a patch
    file the user applies (`hello-tui apply`) is bounded only by its risk confirmation.
    """
    warnings: list[str] = []
    ops = parse_patch_text(text, warnings)
    return plan_operations(
        ops, settings, source_text=text, warnings=warnings, limits=limits, current=current
    )


def plan_file_change(
    settings: Settings,
    path: str,
    new_text: str | None,
    *,
    whole_file: bool = False,
    current: CurrentBytes | None = None,
) -> PatchPlan:
    """A plan for one file's new content (None deletes it), with git's hunks for review."""
    rel, target = _resolve(settings, path)
    if new_text is None:
        data, mode = _read_existing(rel, target, "delete", current)
        files = [_delete_plan(rel, data, mode)]
    elif not os.path.lexists(target):
        files = [make_add_plan(rel, new_text.removeprefix("\ufeff"))]
    else:
        data, mode = _read_existing(rel, target, "update", current)
        old = decode_text(data, rel)
        fp = FilePlan(
            path=rel,
            op="update",
            old_text=text_of(old),
            old_bytes=data,
            old_hash=sha256(data),
            mode=mode,
            old_mode=mode,
            whole_file_rewrite=whole_file,
        )
        files = [finish_update(fp, old, diff_hunks(old, new_text))]
    _check_control_files(settings, files)
    from hello_tui.patch.written_diff import written_diff

    plan = finalize_plan(files, settings, "")
    plan.source_text = written_diff(plan, binary_literals=False)
    return plan
