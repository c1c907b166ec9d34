"""The first screen when no model is configured: how to configure one, and `hello-tui demo`."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Markdown

SETUP_TEXT = """\
# No model is configured yet

hello-tui works with any OpenAI-compatible endpoint. Set these in the
environment or in `<repo>/.env`, or pass them as flags
(`--base-url`, `--model`, `--api-key`):

| provider | settings |
| --- | --- |
| OpenAI | `OPENAI_API_KEY=sk-…` (model `gpt-4o-mini` by default) |
| DeepSeek | `LLM_BASE_URL=https://api.deepseek.com/v1` `DEEPSEEK_API_KEY=…` `LLM_MODEL_ID=deepseek-chat` |
| Qwen (DashScope) | `LLM_BASE_URL=https://dashscope.aliyuncs.com/compatible-mode/v1` `DASHSCOPE_API_KEY=…` `LLM_MODEL_ID=qwen-plus` |
| Ollama (local) | `LLM_BASE_URL=http://localhost:11434/v1` `LLM_MODEL_ID=qwen2.5-coder:7b` (no key) |
| vLLM (local) | `LLM_BASE_URL=http://localhost:8000/v1` `LLM_MODEL_ID=<served model>` (no key) |

Then check it with `hello-tui doctor`.

**Just looking?** Run `hello-tui demo`: a sample repository with a bug and a
built-in scripted model, no API key needed.
"""


class SetupHelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Continue", id="setup.close", tooltip="Close this page"),
        Binding("ctrl+q", "app.quit", "Quit", id="setup.quit", tooltip="Leave hello-tui"),
    ]

    DEFAULT_CSS = """
    SetupHelpScreen { align: center middle; }
    SetupHelpScreen > #setup-box {
        width: 110; max-width: 98%; height: 90%; border: round $warning; background: $surface;
        padding: 0 1;
    }
    """

    def __init__(self, problem: str = "") -> None:
        super().__init__()
        self.problem = problem

    def compose(self) -> ComposeResult:
        box = VerticalScroll(id="setup-box")
        box.border_title = "Set up a model"
        with box:
            text = SETUP_TEXT
            if self.problem:
                text = f"> {self.problem}\n\n" + text
            yield Markdown(text, id="setup-text")
        yield Footer()

    def action_dismiss(self) -> None:
        self.dismiss(None)
