"""The patch commands' plain command lines are read without argparse, exactly as argparse
reads them; everything else is left to argparse."""

from __future__ import annotations

import pytest

from hello_tui.cli import build_parser
from hello_tui.commands.patch_args import PATCH_COMMANDS, read_plain

PLAIN = [
    ["apply", "change.diff"],
    ["apply", "-"],
    ["apply", "--yes", "--repo", "some/dir", "change.diff"],
    ["apply", "change.diff", "--dry-run", "--json", "--repo=x"],
    ["apply", "--repo=", "--yes", "--yes", "p"],
    ["apply", "--repo", "a", "--repo", "b", ""],
    ["undo"],
    ["undo", "--force", "--json", "--repo", "r"],
    ["redo", "--force"],
    ["history", "--json"],
    ["recover", "--repo", "."],
]

NOT_PLAIN = [
    [],
    ["tui"],
    ["exec", "do it"],
    ["--repo", ".", "apply", "p"],  # a top-level flag first
    ["apply"],  # the patch is missing
    ["apply", "a", "b"],
    ["apply", "--dry", "p"],  # an abbreviation
    ["apply", "--help"],
    ["apply", "-h", "p"],
    ["apply", "--", "-p"],
    ["apply", "--repo", "-", "p"],  # a value that looks like a flag
    ["apply", "--repo"],
    ["apply", "-p"],
    ["apply", "--yes=1", "p"],
    ["undo", "x"],
    ["history", "--force"],
    ["recover", "--debug"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_plain_lines_read_as_argparse_reads_them(argv):
    fast = read_plain(argv)
    assert fast is not None
    assert vars(fast) == vars(build_parser(argv[0]).parse_args(argv))
    # The whole parser adds the top level's defaults (model flags and the like) only.
    full = vars(build_parser().parse_args(argv))
    assert {k: full[k] for k in vars(fast)} == vars(fast)


@pytest.mark.parametrize("argv", NOT_PLAIN, ids=" ".join)
def test_anything_else_is_argparse_s(argv):
    assert read_plain(argv) is None


def test_every_flag_of_a_patch_command_is_known_to_the_plain_reader():
    # A flag added to a patch command's subparser and not to patch_args would show up here.
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command").choices
    for command in PATCH_COMMANDS:
        flags = {f for a in subparsers[command]._actions for f in a.option_strings}
        for flag in flags - {"-h", "--help", "--repo"}:
            argv = [command, flag] + (["p"] if command == "apply" else [])
            assert read_plain(argv) is not None, flag
