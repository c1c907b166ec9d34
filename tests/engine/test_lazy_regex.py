"""core/lazy_regex: compiled at the first use, then as fast as a compiled pattern."""

from __future__ import annotations

import re

from hello_tui.core.lazy_regex import lazy_compile


def test_it_compiles_at_its_first_use_and_behaves_as_the_pattern():
    pattern = lazy_compile(r"^(?P<word>\w+)-", re.IGNORECASE)
    assert "match" not in vars(pattern)  # nothing compiled yet
    found = pattern.match("Hello-there")
    assert found is not None and found["word"] == "Hello"
    assert pattern.sub("", "ab-cd") == "cd"
    assert pattern.pattern == r"^(?P<word>\w+)-" and pattern.flags & re.IGNORECASE
    assert pattern.groupindex == {"word": 1}
    assert vars(pattern)["match"].__self__ is vars(pattern)["sub"].__self__  # one compile
