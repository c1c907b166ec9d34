"""The status bar: repo, model, protocol, permission mode, turn state, step n of max,
context used / budget, tokens (and cost when priced), and the command sandbox's state."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

STATE_STYLE = {
    "idle": ("● idle", "#9ece6a"),
    "thinking": ("◌ thinking", "#7aa2f7"),
    "running a tool": ("⚙ running a tool", "#e0af68"),
    "waiting for you": ("✋ waiting for you", "#f7768e"),
    "starting": ("◌ starting", "#7f849c"),
}


# The permission mode's words and colour; ask, the default, is shown quietly.
MODE_STYLE = {
    "ask": ("ask", "#7f849c"),
    "auto-edit": ("⚡ auto-edit", "bold #e0af68"),
    "read-only": ("◇ read-only (plan)", "bold #7dcfff"),
}


def short_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


class StatusBar(Widget):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    repo: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    protocol: reactive[str] = reactive("")
    state: reactive[str] = reactive("idle")
    step: reactive[int] = reactive(0)
    max_steps: reactive[int] = reactive(0)
    tokens: reactive[int] = reactive(0)
    cost: reactive[float | None] = reactive(None)
    mode: reactive[str] = reactive("ask")
    sandbox: reactive[str] = reactive("")
    # The last request's size against the context budget (messages + tool schemas).
    context: reactive[tuple[int, int] | None] = reactive(None)

    def render(self) -> Text:
        label, colour = STATE_STYLE.get(self.state, (self.state, "#c0caf5"))
        sep = (" │ ", "#565f89")
        parts: list[tuple[str, str] | str] = [
            (self.repo, "bold"),
            sep,
            (self.model, "#bb9af7"),
        ]
        if self.protocol:
            parts += [(f" ({self.protocol})", "#7f849c")]
        mode_label, mode_style = MODE_STYLE.get(self.mode, (self.mode, ""))
        parts += [sep, (mode_label, mode_style)]
        parts += [sep, (label, f"bold {colour}")]
        if self.max_steps and self.step:
            parts += [sep, (f"step {self.step}/{self.max_steps}", "")]
        if self.context is not None:
            used, budget = self.context
            colour = "#f7768e" if budget and used > 0.8 * budget else "#7f849c"
            parts += [sep, (f"ctx {short_count(used)}/{short_count(budget)}", colour)]
        parts += [sep, (f"{short_count(self.tokens)} tokens", "")]
        if self.cost is not None:
            parts += [(f" ${self.cost:.4f}", "#e0af68")]
        if self.sandbox:
            unconfined = self.sandbox.endswith(("none", "off"))
            parts += [sep, (self.sandbox, "#f7768e" if unconfined else "#7f849c")]
        return Text.assemble(*parts, no_wrap=True, overflow="ellipsis")
