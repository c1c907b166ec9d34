"""Prompts load from the installed package whatever --repo is; a repo may override one."""

from __future__ import annotations

import pytest

from hello_tui.config import load_settings
from hello_tui.prompts_loader import PromptNotFound, load_prompt, packaged_prompt


def settings(repo):
    return load_settings(repo, base_url="http://127.0.0.1:9/v1", api_key="k", environ={})


@pytest.mark.parametrize("name", ["system", "react", "summarize_observation"])
def test_packaged_prompts_load_through_the_package(name):
    from importlib.resources import files

    resource = files("hello_tui.prompts").joinpath(f"{name}.md")
    assert resource.is_file()
    assert load_prompt(name) == resource.read_text(encoding="utf-8")


def test_repo_elsewhere_does_not_change_the_prompts(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.md").write_text("WRONG PROMPT")
    assert load_prompt("system", settings(tmp_path)) == packaged_prompt("system")


def test_repo_override_wins(tmp_path):
    override = tmp_path / ".helloagents" / "prompts"
    override.mkdir(parents=True)
    (override / "react.md").write_text("our own react rules")
    assert load_prompt("react", settings(tmp_path)) == "our own react rules"
    assert load_prompt("system", settings(tmp_path)) == packaged_prompt("system")


def test_unknown_or_unsafe_names_are_refused():
    with pytest.raises(PromptNotFound):
        load_prompt("no_such_prompt")
    with pytest.raises(PromptNotFound):
        load_prompt("../pyproject")


def test_system_prompt_carries_the_rules():
    system = load_prompt("system").lower()
    for rule in (
        "inside one local repository",
        "not a chatbot",
        "only way to change a file",
        "*** begin patch",
        "@@",
        "about 3 lines",
        "evidence",
        "approval",
        "relative",
    ):
        assert rule in system, rule


def test_summary_prompt_has_its_sections():
    text = load_prompt("summarize_observation")
    assert "## Summary" in text and "## Key Details" in text and "## Next" in text
