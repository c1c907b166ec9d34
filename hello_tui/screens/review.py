"""The patch review modal: file list + diff, per-hunk accept/decline, edit, accept or reject.

Nothing is written here. The screen answers a PatchDecision (which hunks of
which files, the user's own edits, whether a high-risk patch was explicitly
confirmed) and the patch engine does the rest.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from hello_tui.core.approval import PatchDecision
from hello_tui.engine.types import FilePlan, PatchError, PatchPlan
from hello_tui.screens.confirm import HighRiskConfirmScreen
from hello_tui.screens.decision import DecisionModal
from hello_tui.screens.reject import RejectReasonScreen, confirm_reject_screen
from hello_tui.screens.review_help import ReviewHelpScreen
from hello_tui.widgets.diff_view import DiffView
from hello_tui.widgets.footer import SteadyFooter

# (plan, {path: text the user wrote}) -> the plan recomputed from the user's text.
ReplanFn = Callable[[PatchPlan, dict[str, str]], PatchPlan]

BADGES = {
    "add": ("A", "green"),
    "update": ("M", "yellow"),
    "delete": ("D", "red"),
    "move": ("R", "cyan"),
}


class PatchReviewScreen(DecisionModal[PatchDecision]):
    """Review a PatchPlan; dismisses with the user's PatchDecision."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "accept", "Accept", id="review.accept", tooltip="Apply the accepted hunks"),
        Binding(
            "r",
            "reject_with_reason",
            "Reject",
            id="review.reject",
            tooltip="Reject the whole patch, saying why",
        ),
        Binding(
            "space",
            "toggle_hunk",
            "Toggle",
            id="review.toggle_hunk",
            tooltip="Accept or decline the current hunk",
        ),
        Binding("tab", "next_file", "File", id="review.next_file", tooltip="Next file"),
        Binding(
            "shift+tab", "previous_file", "Previous file", show=False, id="review.previous_file"
        ),
        Binding(
            "e",
            "edit",
            "Edit",
            id="review.edit",
            tooltip="Edit the file as the accepted hunks leave it, in $VISUAL or $EDITOR",
        ),
        Binding("question_mark", "help", "Help", id="review.help"),
        Binding("escape", "confirm_reject", "Reject", show=False, id="review.escape"),
    ]

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    DEFAULT_CSS = """
    PatchReviewScreen { align: center middle; }
    PatchReviewScreen > #review-dialog {
        width: 100%; height: 100%; background: $surface; border: round $primary;
    }
    PatchReviewScreen #review-title { height: 1; padding: 0 1; text-style: bold; }
    PatchReviewScreen #review-risk {
        height: auto; max-height: 4; padding: 0 1; background: $error 25%; color: $text;
    }
    PatchReviewScreen #review-body { height: 1fr; }
    PatchReviewScreen #review-files {
        width: 25%; max-width: 48; height: 100%; border: none; border-right: vkey $panel;
        padding: 0; background: $surface; text-wrap: nowrap; text-overflow: ellipsis;
    }
    PatchReviewScreen #review-files.-single { display: none; }
    PatchReviewScreen.-narrow #review-body { layout: vertical; }
    PatchReviewScreen.-narrow #review-files {
        width: 100%; height: auto; max-height: 4; border-right: none;
        border-bottom: hkey $panel;
    }
    PatchReviewScreen #review-diff { width: 1fr; height: 1fr; }
    PatchReviewScreen #review-status { height: 1; padding: 0 1; color: $text-muted; }
    PatchReviewScreen #arming { padding: 0 1; }
    """

    def __init__(self, plan: PatchPlan, *, replan: ReplanFn | None = None) -> None:
        super().__init__()
        self.plan = plan
        # Edits are re-planned from the proposal, as the apply_patch tool re-plans them
        # from the decision: the same hunks, so a selection means the same in both.
        self.proposed = plan
        self.replan = replan
        self.file_index = 0
        self.user_edits: dict[str, str] = {}
        # Per edited file: how many hunks the user had declined when editing (they are not
        # in the editor's text, so they stay out of the user's version).
        self.left_out: dict[str, int] = {}
        # Declined Hunk.index values per file path; files without hunks are a whole unit.
        self.declined: dict[str, set[int]] = {f.path: set() for f in plan.files}
        self.declined_files: set[str] = set()

    # ---- building -----------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="review-dialog"):
            yield Static(self._title(), id="review-title", markup=False)
            if self.plan.risk.high:
                reasons = "; ".join(self.plan.risk.reasons) or "flagged by the patch engine"
                yield Static(
                    f"⚠ High risk: {reasons}. Accepting asks for a second confirmation.",
                    id="review-risk",
                    markup=False,
                )
            with Horizontal(id="review-body"):
                files = OptionList(*self._file_options(), id="review-files")
                files.can_focus = False
                # One file: the title names it, a list would only take room from the diff.
                files.set_class(len(self.plan.files) == 1, "-single")
                yield files
                yield DiffView(id="review-diff")
            yield Static("", id="review-status", markup=False)
            yield self.arming_line()
            yield SteadyFooter()

    ready_text = "Ready: a accept · space toggle a hunk · r reject · ? help"

    def on_armed(self) -> None:
        self.query_one(DiffView).focus()

    def on_mount(self) -> None:
        if self.plan.files:
            self._show_file(0)
        else:
            view = self.query_one(DiffView)
            view.placeholder = "this patch changes no files"
            view.refresh()
        self._update_status()

    @property
    def current_file(self) -> FilePlan | None:
        return self.plan.files[self.file_index] if self.plan.files else None

    def _title(self) -> str:
        """Counts of what accepting now would write: declined hunks are left out."""
        files = self.plan.files
        added = sum(_added(f, self._declined_of(f)) for f in files)
        removed = sum(_removed(f, self._declined_of(f)) for f in files)
        hunks = sum(len(f.hunks) for f in files)
        accepted = hunks - sum(len(self._declined_of(f)) for f in files if f.hunks)
        if len(files) == 1:
            file = files[0]
            what = f"{file.path} → {file.move_to}" if file.move_to else file.path
        else:
            what = f"{len(files)} files"
        counted = f"{hunks} hunk{'s' if hunks != 1 else ''}"
        if accepted != hunks:
            counted = f"{accepted} of {counted} accepted"
        risk = " · HIGH RISK" if self.plan.risk.high else ""
        return f"Review patch · {what} · {counted} · +{added} −{removed}{risk}"

    def _declined_of(self, file: FilePlan) -> set[int]:
        """Declined Hunk.index values of a file; a file without hunks declines as a unit."""
        if not file.hunks:
            return {-1} if file.path in self.declined_files else set()
        return self.declined.get(file.path, set()) & {h.index for h in file.hunks}

    def _file_risky(self, file: FilePlan) -> bool:
        if file.op == "delete" or file.whole_file_rewrite:
            return True
        return any(file.path in reason for reason in self.plan.risk.reasons)

    def _file_state(self, file: FilePlan) -> str:
        if not file.hunks:
            return "none" if file.path in self.declined_files else "all"
        declined = self.declined[file.path] & {h.index for h in file.hunks}
        if not declined:
            return "all"
        return "none" if len(declined) == len(file.hunks) else "some"

    def _file_prompt(self, file: FilePlan) -> Text:
        mark, mark_style = {
            "all": ("✓", "green"),
            "some": ("◐", "yellow"),
            "none": ("✗", "red"),
        }[self._file_state(file)]
        badge, badge_style = BADGES.get(file.op, ("?", "white"))
        name = f"{file.path} → {file.move_to}" if file.move_to else file.path
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{mark} ", mark_style)
        text.append(f"{badge} ", f"bold {badge_style}")
        declined = self._declined_of(file)
        text.append(f"+{_added(file, declined)}", "green")
        text.append(f" −{_removed(file, declined)} ", "red")
        text.append(name)
        if self._file_risky(file):
            text.append(" ⚠", "bold red")
        return text

    def _file_options(self) -> list[Option]:
        return [Option(self._file_prompt(f), id=f"file-{i}") for i, f in enumerate(self.plan.files)]

    def _refresh_file_prompt(self, index: int) -> None:
        files = self.query_one("#review-files", OptionList)
        files.replace_option_prompt_at_index(index, self._file_prompt(self.plan.files[index]))

    # ---- showing files and hunks ----------------------------------------------

    def _show_file(self, index: int, hunk: int = 0) -> None:
        """Show a file at a hunk (-1: its last)."""
        self.file_index = index
        files = self.query_one("#review-files", OptionList)
        files.highlighted = index
        self.query_one(DiffView).load_plan(self.plan.files[index], hunk)
        self.refresh_bindings()
        self._update_status()

    def _declined_positions(self) -> frozenset[int]:
        view = self.query_one(DiffView)
        file = self.current_file
        if view.diff is None or file is None:
            return frozenset()
        if not file.hunks:
            if file.path in self.declined_files:
                return frozenset(range(len(view.diff.hunks)))
            return frozenset()
        declined = self.declined[file.path]
        return frozenset(p for p, h in enumerate(view.diff.hunks) if h.index in declined)

    @on(DiffView.DiffReady)
    def _diff_ready(self) -> None:
        self.query_one(DiffView).set_declined(self._declined_positions())
        self._update_status()

    @on(DiffView.HunkChanged)
    @on(DiffView.LayoutChanged)
    @on(DiffView.ViewportChanged)
    def _view_changed(self) -> None:
        self._update_status()

    @on(DiffView.BoundaryReached)
    def _boundary_reached(self, event: DiffView.BoundaryReached) -> None:
        """j past a file's last hunk goes on to the next file's first; k back to the
        previous file's last. The ends of the patch stay where they are."""
        target = self.file_index + (1 if event.forward else -1)
        if 0 <= target < len(self.plan.files):
            self._show_file(target, hunk=0 if event.forward else -1)

    @on(DiffView.HeaderClicked)
    def _header_clicked(self) -> None:
        if self.armed:
            self.action_toggle_hunk()

    @on(OptionList.OptionSelected, "#review-files")
    def _file_clicked(self, event: OptionList.OptionSelected) -> None:
        if event.option_index != self.file_index:
            self._show_file(event.option_index)

    def _update_status(self) -> None:
        status = self.query_one("#review-status", Static)
        file = self.current_file
        view = self.query_one(DiffView)
        if file is None:
            status.update("")
            return
        if view.one_pane and view.diff is not None:
            layout = "new file" if view.diff.one_side == "new" else "deleted file"
        else:
            layout = "side by side" if view.is_split else "unified"
        parts = [f"file {self.file_index + 1}/{len(self.plan.files)}"]
        if file.hunks:
            accepted = len(file.hunks) - len(
                self.declined[file.path] & {h.index for h in file.hunks}
            )
            if view.diff is not None and view.hunk_count:
                parts.append(f"hunk {view.current_hunk + 1}/{view.hunk_count}")
            parts.append(f"{accepted}/{len(file.hunks)} hunks accepted")
        else:
            parts.append("declined" if file.path in self.declined_files else "accepted")
        if file.path in self.user_edits:
            left_out = self.left_out.get(file.path, 0)
            parts.append(
                f"edited by you, {_hunks(left_out)} you declined left out"
                if left_out
                else "edited by you"
            )
        parts.append(layout)
        if view.wrap:
            parts.append("wrapped (w)")
        elif view.x_offset:
            parts.append(f"scrolled → {view.x_offset} columns (home)")
        elif view.lines_cut:
            parts.append("long lines cut: ←/→ scroll, w wraps")
        status.update(" · ".join(parts))

    # ---- actions --------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        armed = super().check_action(action, parameters)
        if not armed:
            return armed
        if action in ("next_file", "previous_file"):
            return len(self.plan.files) > 1
        if action == "edit":
            file = self.current_file
            return (
                self.replan is not None
                and file is not None
                and file.op != "delete"
                and not _is_binary(file)
            )
        if action == "toggle_hunk":
            return self.current_file is not None
        return True

    def action_next_file(self) -> None:
        if self.plan.files:
            self._show_file((self.file_index + 1) % len(self.plan.files))

    def action_previous_file(self) -> None:
        if self.plan.files:
            self._show_file((self.file_index - 1) % len(self.plan.files))

    def action_toggle_hunk(self) -> None:
        file = self.current_file
        view = self.query_one(DiffView)
        if file is None or view.diff is None:
            return
        if not file.hunks:
            self.declined_files ^= {file.path}
        else:
            if not view.diff.hunks:
                return
            hunk = view.diff.hunks[view.current_hunk]
            self.declined[file.path] ^= {hunk.index}
        view.set_declined(self._declined_positions())
        self._refresh_file_prompt(self.file_index)
        self.query_one("#review-title", Static).update(self._title())
        self._update_status()

    def accepted_decision(self) -> PatchDecision:
        """The decision `a` produces for the current hunk states (before any confirmation)."""
        selection: dict[str, set[int]] = {}
        everything = True
        for file in self.plan.files:
            if not file.hunks:
                if file.path in self.declined_files:
                    everything = False
                else:
                    selection[file.path] = set()
                continue
            accepted = {h.index for h in file.hunks} - self.declined[file.path]
            if len(accepted) != len(file.hunks):
                everything = False
            if accepted:
                selection[file.path] = accepted
        if not selection:
            return PatchDecision(
                accepted=False,
                reason="the user declined every hunk",
                user_edits=dict(self.user_edits),
            )
        return PatchDecision(
            accepted=True,
            selection=None if everything else selection,
            user_edits=dict(self.user_edits),
        )

    def action_accept(self) -> None:
        decision = self.accepted_decision()
        if not decision.accepted or not self.plan.risk.high:
            self.dismiss(decision)
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                decision.high_risk_confirmed = True
                self.dismiss(decision)

        self.app.push_screen(HighRiskConfirmScreen(self.plan.risk.reasons), confirmed)

    def action_reject(self, reason: str = "") -> None:
        self.dismiss(PatchDecision(accepted=False, reason=reason, user_edits=dict(self.user_edits)))

    def action_confirm_reject(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self.action_reject()

        self.app.push_screen(confirm_reject_screen(), answered)

    def action_reject_with_reason(self) -> None:
        def answered(reason: str | None) -> None:
            if reason is not None:
                self.action_reject(reason)

        self.app.push_screen(RejectReasonScreen(), answered)

    def action_help(self) -> None:
        self.app.push_screen(ReviewHelpScreen())

    def action_edit(self) -> None:
        """Edit the file as accepting now would write it: the declined hunks are not in
        the editor's text, so they stay out of the user's version (nothing comes back)."""
        file = self.current_file
        if self.replan is None or file is None or file.op == "delete" or _is_binary(file):
            return
        declined = self._declined_of(file)
        if file.hunks and len(declined) == len(file.hunks):
            self.notify(
                f"Every hunk of {file.path} is declined: accept one (space) to edit the file.",
                severity="warning",
            )
            return
        from hello_tui.engine.facade import accepted_text

        accepted = {h.index for h in file.hunks} - declined
        proposed = accepted_text(file, accepted)
        edited = self._run_editor(file, proposed)
        if edited is None or edited == proposed:
            return
        edits = {**self.user_edits, file.path: edited}
        try:
            plan = self.replan(self.proposed, edits)
        except PatchError as error:
            self.notify(f"Your edit could not be planned: {error}", severity="error", timeout=8)
            return
        self.user_edits = edits
        self.left_out[file.path] = self.left_out.get(file.path, 0) + len(declined)
        self._adopt_plan(plan, edited_path=file.path)
        left_out = self.left_out[file.path]
        kept_out = f"; the {_hunks(left_out)} you declined stay out" if left_out else ""
        self.notify(f"Using your version of {file.path}{kept_out}.")

    def _adopt_plan(self, plan: PatchPlan, edited_path: str) -> None:
        self.plan = plan
        for file in plan.files:
            self.declined.setdefault(file.path, set())
        # The edited file's hunks are the user's version: all start accepted. Every other
        # file keeps its decisions (its hunks are the proposal's, unchanged).
        self.declined[edited_path] = set()
        self.declined_files.discard(edited_path)
        self.query_one("#review-title", Static).update(self._title())
        files = self.query_one("#review-files", OptionList)
        files.clear_options()
        files.add_options(self._file_options())
        files.set_class(len(plan.files) == 1, "-single")
        self._show_file(min(self.file_index, len(plan.files) - 1))

    def _run_editor(self, file: FilePlan, proposed: str) -> str | None:
        """Open the proposed text in the user's editor; the saved text, or None when nothing
        usable came back (every failure is a notification, and the app carries on)."""
        command = editor_command()
        if isinstance(command, str):
            self.notify(command, severity="error", timeout=8)
            return None
        suffix = Path(file.move_to or file.path).suffix
        handle, name = tempfile.mkstemp(prefix="hello-tui-review-", suffix=suffix)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="") as fh:
                fh.write(proposed)
            outcome = self._run_suspended([*command, name])
            if isinstance(outcome, OSError):
                self.notify(
                    f"Could not start the editor {shlex.join(command)!r}: {outcome}",
                    severity="error",
                    timeout=8,
                )
                return None
            if outcome != 0:
                self.notify(
                    f"The editor {shlex.join(command)!r} exited with status {outcome}; "
                    "edit ignored.",
                    severity="warning",
                    timeout=8,
                )
                return None
            with open(name, encoding="utf-8", newline="") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError) as error:
            self.notify(f"Could not read the edited file: {error}", severity="error")
            return None
        finally:
            try:
                os.unlink(name)
            except OSError:
                pass

    def _run_suspended(self, argv: list[str]) -> int | OSError:
        """Run argv with the terminal handed over; its exit status or the error starting it.

        Nothing may escape the `suspend()` block: Textual resumes the screen only when the
        block ends normally, so an exception there leaves a blank terminal.
        """
        try:
            with self.app.suspend():
                try:
                    return subprocess.run(argv, check=False).returncode
                except OSError as error:
                    return error
        except SuspendNotSupported:
            # No terminal to hand over (headless): the editor runs without one.
            try:
                return subprocess.run(argv, stdin=subprocess.DEVNULL, check=False).returncode
            except OSError as error:
                return error


def editor_command(environ: Mapping[str, str] | None = None) -> list[str] | str:
    """The editor's argv from $VISUAL, then $EDITOR, then vi, split as a shell would
    (`code --wait` works); a message saying what is wrong when it cannot be run."""
    env = os.environ if environ is None else environ
    source = "VISUAL" if env.get("VISUAL", "").strip() else "EDITOR"
    value = env.get(source, "").strip() or "vi"
    try:
        argv = shlex.split(value)
    except ValueError as error:
        return f"${source} is not a valid command ({error}): {value!r}"
    if not argv:
        return f"${source} is empty"
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        where = f"${source}={value!r}" if env.get(source, "").strip() else "the default editor vi"
        return f"Could not start the editor: {argv[0]!r} ({where}) is not installed or not on PATH."
    return argv


def _hunks(count: int) -> str:
    return f"{count} hunk" if count == 1 else f"{count} hunks"


def _is_binary(file: FilePlan) -> bool:
    return (file.old_text is None and file.old_bytes is not None) or (
        file.new_text is None and file.new_bytes is not None
    )


def _added(file: FilePlan, declined: AbstractSet[int] = frozenset()) -> int:
    """Lines the accepted part of a file adds."""
    if file.hunks:
        return sum(len(h.new_lines) for h in file.hunks if h.index not in declined)
    if file.op == "add" and file.new_text and not declined:
        return len(file.new_text.splitlines())
    return 0


def _removed(file: FilePlan, declined: AbstractSet[int] = frozenset()) -> int:
    """Lines the accepted part of a file removes."""
    if file.hunks:
        return sum(len(h.old_lines) for h in file.hunks if h.index not in declined)
    if file.op == "delete" and file.old_text and not declined:
        return len(file.old_text.splitlines())
    return 0
