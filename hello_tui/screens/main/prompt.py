"""The prompt: what a submitted line means, slash commands, completion, attachments, the queue.

A line is a quit (`:q`), a slash command of the command table, a `!command`,
a `:plan <goal>`, or a message for the agent. Slash commands run through a
table of callables the app hands over, checked against the command table when
the controller is made, so a command without a handler (or the reverse)
cannot start. A message sent while a turn runs waits in the queue; when the
turn ends the next one is sent, or, when the user interrupted the turn, they
all come back to the prompt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from hello_tui.screens.command_table import SLASH_COMMANDS, command_named, matching_commands
from hello_tui.screens.main.host import Host
from hello_tui.screens.main.turns import TurnController
from hello_tui.widgets.completion import (
    CompletionList,
    Suggestion,
    completion_target,
    mentioned_paths,
)

if TYPE_CHECKING:
    from hello_tui.engine.types import Attachment

FILE_SUGGESTIONS = 12
# What /init asks the agent; the AGENTS.md it proposes goes through the normal review.
INIT_PROMPT = (
    "/init: explore this repository (its layout, languages, how to build, test and lint it, "
    "its conventions) and propose an AGENTS.md at the repository root for coding agents: "
    "the project in two sentences, the commands to build, test and lint, the layout, the "
    "conventions to follow, and what not to touch. If an AGENTS.md exists, propose "
    "improvements to it instead. Propose it as a patch."
)

SlashHandler = Callable[[str], None]


class PromptController:
    def __init__(
        self,
        host: Host,
        turns: TurnController,
        open_setup: Callable[[], None],
    ) -> None:
        self.host = host
        self.views = host.views
        self.turns = turns
        self._open_setup = open_setup
        self.commands: dict[str, SlashHandler] = {}

    def set_commands(self, handlers: Mapping[str, SlashHandler]) -> None:
        """The slash commands' handlers, by name: exactly the command table's commands."""
        listed = {c.name for c in SLASH_COMMANDS}
        if set(handlers) != listed:
            missing, unknown = listed - set(handlers), set(handlers) - listed
            raise ValueError(f"slash commands without a handler {missing}, not listed {unknown}")
        self.commands = dict(handlers)

    # ------------------------------------------------------------ a submitted line
    def submit(self, raw: str) -> None:
        text = raw.strip()
        if not text:
            return
        lowered = text.lower()
        if lowered in (":q", ":quit"):
            self.host.exit(0)
            return
        if self._slash_command(text) or self._shell_line(text):
            return
        if lowered.startswith(":plan"):
            goal = text[len(":plan") :].strip()
            if not goal:
                self.views.chat.add("notice", "Usage: `:plan <goal>`")
                return
            self.send(text, plan_goal=goal)
            return
        if text.startswith("/") and " " not in text:
            self.views.chat.add("notice", f"Unknown command {text}. Type /help for the list.")
            return
        self.send(text)

    def send(self, text: str, plan_goal: str | None = None) -> None:
        """A message for the agent: sent now, queued behind a running turn, or held back."""
        if self.turns.running:
            self.queue(text)
            return
        if not self.host.settings.model_configured:
            # Never call a provider without a key: the prompt keeps its text for later.
            self.views.prompt.load_text(text)
            self.views.chat.add("notice", "No model is configured, so nothing was sent; /setup.")
            self._open_setup()
            return
        self.turns.start(text, plan_goal)

    def _slash_command(self, text: str) -> bool:
        """A `/name args` line of the command table runs its handler; False if not one."""
        if not text.startswith("/"):
            return False
        name, _, args = text[1:].partition(" ")
        command = command_named(name.lower())
        if command is None:
            return False
        self.commands[command.name](args.strip())
        return True

    def _shell_line(self, text: str) -> bool:
        if not text.startswith("!"):
            return False
        command = text[1:].strip()
        if not command:
            self.views.chat.add("notice", "Type a command after `!`, e.g. `!git status`.")
        else:
            self.turns.run_user_command(text, command)
        return True

    # ------------------------------------------------------------ commands it owns
    def copy(self, args: str) -> None:
        """`/copy [N]`: the last answer, or its code block N, on the clipboard (OSC 52)."""
        from hello_tui.widgets.chat_copy import choose_copy

        answer = self.views.chat.history.last_answer()
        choice = choose_copy(answer.text if answer is not None else None, args)
        if choice.text is None:
            self.host.notify(choice.message, title="Nothing copied", severity="warning", timeout=6)
            return
        self.host.copy_to_clipboard(choice.text)
        self.host.notify(choice.message, title="Copied", timeout=4)

    def init(self, args: str) -> None:
        self.send(INIT_PROMPT)

    def show_mcp_servers(self, args: str = "") -> None:
        """`/mcp`: the configured MCP servers, their state and their tools, as a chat notice."""
        from hello_tui.engine.types import render_mcp_servers

        engine = self.host.engine
        if engine is None:
            self.views.chat.add(
                "notice", "The agent is not started yet; try /mcp again in a moment."
            )
            return
        listing = render_mcp_servers(engine.mcp_servers())
        self.views.chat.add(
            "notice", f"MCP servers (they start at the first turn):\n\n```text\n{listing}\n```"
        )

    def prefill_plan(self) -> None:
        prompt = self.views.prompt
        prompt.load_text(":plan ")
        prompt.move_cursor(prompt.document.end)
        prompt.focus()

    # ------------------------------------------------------------ completion and attachments
    def update_completion(self) -> None:
        """Suggestions for the word at the cursor, and chips for the files mentioned."""
        prompt, engine = self.views.prompt, self.host.engine
        text = prompt.text
        row, column = prompt.cursor_location
        lines = text.split("\n")
        cursor = sum(len(line) + 1 for line in lines[:row]) + column
        target = completion_target(text, cursor)
        suggestions: list[Suggestion] = []
        if target is not None and target.kind == "slash":
            suggestions = [
                Suggestion(c.name, c.help, c.usage) for c in matching_commands(target.typed)
            ]
            if len(suggestions) == 1 and suggestions[0].value == target.typed:
                suggestions = []  # typed in full: nothing left to complete
        elif target is not None and engine is not None:
            found = engine.file_index().search(target.typed, limit=FILE_SUGGESTIONS)
            suggestions = [Suggestion(path) for path in found if path != target.typed]
        if suggestions and target is not None:
            self.views.completion.show(target, suggestions)
        else:
            self.views.completion.hide()
        self.views.chips.set_paths(self._attachable(mentioned_paths(text)))

    def completion_chosen(self, message: CompletionList.Chosen) -> None:
        prompt, target = self.views.prompt, message.target
        text = prompt.text
        prefix = "/" if target.kind == "slash" else "@"
        replacement = prefix + message.suggestion.value + " "
        new_text = text[: target.start] + replacement + text[target.end :].lstrip(" ")
        prompt.load_text(new_text)
        cursor = target.start + len(replacement)
        before = new_text[:cursor]
        prompt.move_cursor((before.count("\n"), len(before.rsplit("\n", 1)[-1])))
        self.views.completion.hide()

    def _attachable(self, paths: list[str]) -> list[str]:
        engine = self.host.engine
        if engine is None:
            return []
        index = engine.file_index()
        return [p for p in paths if p in index]

    async def attachments(self, text: str) -> list[Attachment]:
        """The files the prompt mentions with `@path`, read (and cut) for the message."""
        engine = self.host.engine
        assert engine is not None
        attached = []
        for path in self._attachable(mentioned_paths(text)):
            try:
                attached.append(await engine.attachment(path))
            except (ValueError, OSError) as exc:
                self.views.chat.add("notice", f"Not attached: {exc}")
        if attached:
            chips = ", ".join(f"`{a.path}`" + (" (cut)" if a.cut else "") for a in attached)
            self.views.chat.add("notice", f"📎 Attached: {chips}")
        return attached

    # ------------------------------------------------------------ the queue
    def queue(self, text: str) -> None:
        """A message sent during a turn waits, shown as pending, until the turn ends."""
        self.views.queued.push(text)
        self.host.refresh_bindings()

    def edit_queued(self) -> str | None:
        """↑ on an empty prompt: the newest queued message comes back to be edited."""
        text = self.views.queued.take_last()
        self.host.refresh_bindings()
        return text

    def drop_queued(self) -> None:
        dropped = self.views.queued.take_last()
        self.host.refresh_bindings()
        if dropped is not None:
            self.host.notify("Queued message dropped.", timeout=3)

    def after_turn(self, interrupted: bool) -> None:
        """The turn is over on screen: send the next queued message, or hand them back."""
        queued, prompt = self.views.queued, self.views.prompt
        if not queued.items:
            return
        if interrupted:
            # The user stopped the agent: what they queued is theirs to send again.
            texts = queued.take_all()
            draft = prompt.text.strip()
            prompt.load_text("\n\n".join([*texts, draft] if draft else texts))
            prompt.move_cursor(prompt.document.end)
            # The turn's own notice said "Turn cancelled."; this one says where the queue went.
            back = (
                "Your queued message is"
                if len(texts) == 1
                else f"Your {len(texts)} queued messages are"
            )
            self.views.chat.add("notice", f"{back} back in the prompt.")
            self.host.refresh_bindings()
            return
        text = queued.take_first()
        self.host.refresh_bindings()
        if text is not None:
            self.submit(text)
