"""Which word the prompt is completing, and which files it mentions."""

from __future__ import annotations

from hello_tui.widgets.completion import completion_target, mentioned_paths


def test_slash_only_at_the_start_and_before_a_space():
    target = completion_target("/mo", 3)
    assert target is not None and (target.kind, target.typed) == ("slash", "mo")
    assert completion_target("/model gpt", 10) is None
    assert completion_target("say /mo", 7) is None


def test_at_word_under_the_cursor():
    text = "see @src/st and more"
    target = completion_target(text, len("see @src/st"))
    assert target is not None and (target.kind, target.typed) == ("file", "src/st")
    assert text[target.start : target.end] == "@src/st"
    assert completion_target("mail me@example.com", 19) is None  # not a mention
    assert completion_target("@", 1).typed == ""


def test_mentioned_paths_in_order_once_without_trailing_punctuation():
    assert mentioned_paths("@a.py and @b/c.py, then @a.py.") == ["a.py", "b/c.py"]
    assert mentioned_paths("me@example.com") == []
