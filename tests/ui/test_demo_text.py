"""The demo's welcome names the review's keys as the review binds them."""

from __future__ import annotations

from textual.binding import Binding

from hello_tui.demo import WELCOME
from hello_tui.screens.reject import RejectReasonScreen
from hello_tui.screens.review import PatchReviewScreen

# What the welcome says -> the key and the action the review must bind it to.
CLAIMS = {
    "space toggles a hunk": ("space", "toggle_hunk"),
    "`a` applies the hunks you kept": ("a", "accept"),
    "`r` rejects and asks why": ("r", "reject_with_reason"),
    "Esc asks before rejecting": ("escape", "confirm_reject"),
    "`?` lists every key": ("question_mark", "help"),
}


def _bound(screen: type) -> set[tuple[str, str]]:
    pairs = set()
    for binding in screen.BINDINGS:
        assert isinstance(binding, Binding)
        for key in binding.key.split(","):
            pairs.add((key.strip(), binding.action))
    return pairs


def test_every_key_the_welcome_names_does_what_it_says():
    bound = _bound(PatchReviewScreen)
    for phrase, pair in CLAIMS.items():
        assert phrase in WELCOME, phrase
        assert pair in bound, f"{phrase!r}: the review binds no {pair}"


def test_enter_skips_the_reason_as_the_welcome_says():
    assert "Enter skips the reason" in WELCOME
    assert "just Enter" in RejectReasonScreen.ready_text
