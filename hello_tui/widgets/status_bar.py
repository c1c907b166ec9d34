"""The status bar: repo, model, protocol, permission mode, turn state, step n of max,
context used / budget, tokens (and cost when priced), and the command sandbox's state.

The fields are laid out by priority: when the bar is narrower than all of them, the
least important fields are left out whole (never cut mid-word), so what matters most —
the turn's state, the permission mode, the model — survives at any width. An
unconfined sandbox is a warning and ranks with the model; a confined one ranks low.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
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

NO_MODEL = "no model configured: /setup"
SEPARATOR = " │ "
SEPARATOR_STYLE = "#565f89"

# Which field stays longest when the bar is narrow (0 first); the display order is
# the order the fields are listed in `fields()`.
PRIORITY = {
    "state": 0,
    "mode": 1,
    "model": 2,
    "sandbox-unconfined": 3,
    "step": 4,
    "cost": 5,
    "context": 6,
    "tokens": 7,
    "sandbox": 8,
    "repo": 9,
    "protocol": 10,
}


def short_count(n: int) -> str:
    """12345 -> "12.3k", 128000 -> "128k" (a ".0" says nothing), 2500000 -> "2.5M"."""
    for size, unit in ((1_000_000, "M"), (1000, "k")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + unit
    return str(n)


@dataclass(frozen=True)
class Field:
    """One piece of the bar; `attached` ones follow the previous field without a separator."""

    name: str
    text: str
    style: str
    attached: bool = False

    @property
    def priority(self) -> int:
        return PRIORITY[self.name]


def lay_out(fields: list[Field], width: int) -> list[Field]:
    """The fields that fit in `width` cells, in display order: the least important ones
    are dropped first, whole."""
    kept = list(fields)

    def used(chosen: list[Field]) -> int:
        total = 0
        for i, field in enumerate(chosen):
            gap = 0 if i == 0 or field.attached else cell_len(SEPARATOR)
            total += gap + cell_len(field.text)
        return total

    while len(kept) > 1 and used(kept) > width:
        kept.remove(max(kept, key=lambda f: f.priority))
    return kept


class StatusBar(Widget):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    repo: reactive[str] = reactive("")
    model: reactive[str] = reactive("")
    # False until a model is set up: the bar says so instead of naming the default model.
    configured: reactive[bool] = reactive(True)
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

    def fields(self) -> list[Field]:
        """Every field there is something to show for, in display order."""
        out = [Field("repo", self.repo, "bold")] if self.repo else []
        if self.configured:
            out.append(Field("model", self.model, "#bb9af7"))
            if self.protocol:
                out.append(Field("protocol", f" ({self.protocol})", "#7f849c", attached=True))
        else:
            out.append(Field("model", NO_MODEL, "bold #e0af68"))
        mode_label, mode_style = MODE_STYLE.get(self.mode, (self.mode, ""))
        out.append(Field("mode", mode_label, mode_style))
        label, colour = STATE_STYLE.get(self.state, (self.state, "#c0caf5"))
        out.append(Field("state", label, f"bold {colour}"))
        if self.max_steps and self.step:
            out.append(Field("step", f"step {self.step}/{self.max_steps}", ""))
        if self.context is not None:
            used, budget = self.context
            colour = "#f7768e" if budget and used > 0.8 * budget else "#7f849c"
            out.append(Field("context", f"ctx {short_count(used)}/{short_count(budget)}", colour))
        out.append(Field("tokens", f"{short_count(self.tokens)} tokens", ""))
        if self.cost is not None:
            out.append(Field("cost", f"${self.cost:.4f}", "#e0af68"))
        if self.sandbox:
            unconfined = self.sandbox.endswith(("none", "off"))
            name = "sandbox-unconfined" if unconfined else "sandbox"
            out.append(Field(name, self.sandbox, "#f7768e" if unconfined else "#7f849c"))
        return out

    def render(self) -> Text:
        width = self.content_size.width or self.size.width or 10_000
        parts: list[tuple[str, str] | str] = []
        for i, field in enumerate(lay_out(self.fields(), width)):
            if i and not field.attached:
                parts.append((SEPARATOR, SEPARATOR_STYLE))
            parts.append((field.text, field.style))
        return Text.assemble(*parts, no_wrap=True, overflow="ellipsis")
