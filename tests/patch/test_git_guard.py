"""No patch creates or changes a nested git repository's control files."""

from __future__ import annotations

import pytest

from hello_tui.patch import PatchError, commit_plan, plan_patch_text

from .conftest import snapshot, write


def add(*paths: str) -> str:
    body = "".join(f"*** Add File: {p}\n+x\n" for p in paths)
    return f"*** Begin Patch\n{body}*** End Patch\n"


def refused(repo, settings, text: str) -> str:
    before = snapshot(repo)
    with pytest.raises(PatchError) as info:
        commit_plan(plan_patch_text(text, settings), settings)
    assert snapshot(repo) == before
    assert "control folder" in str(info.value) or ".git/" in str(info.value)
    return str(info.value)


@pytest.mark.parametrize(
    "path",
    [
        "fixtures/repo.git/config",
        "fixtures/repo.git/HEAD",
        "fixtures/repo.git/hooks/post-checkout",
        "deep/er/Bare.GIT/objects/info/alternates",
    ],
)
def test_bare_repository_layouts_by_name(repo, settings, path):
    folder = next(p for p in path.split("/") if p.casefold().endswith(".git"))
    message = refused(repo, settings, add(path))
    assert f"{path.split(folder)[0]}{folder}/ is a git repository's control folder" in message


@pytest.mark.parametrize(
    "name",
    # git's is_ntfs_dotgit (case, trailing dots and spaces, streams, 8.3) and
    # is_hfs_dotgit (ignored zero-width and direction code points)
    [
        ".GIT",
        ".Git.",
        ".git ",
        "GIT~1",
        "git~1. ",
        ".git::$INDEX_ALLOCATION",
        ".g\u200cit",
        "\ufeff.GIT",
        ".gi\u206ft",
    ],
)
def test_dotgit_spelled_the_ways_git_refuses(repo, settings, name):
    assert "nothing inside .git/ may be patched" in refused(
        repo, settings, add(f"vendor/{name}/config")
    )


def test_a_folder_that_would_become_a_git_directory(repo, settings):
    message = refused(repo, settings, add("sub/HEAD", "sub/objects/ab/cd", "sub/refs/heads/main"))
    assert "sub/ is a git repository's control folder" in message


def test_an_existing_nested_git_directory_cannot_be_changed(repo, settings):
    for p in ("tools/vendored/HEAD", "tools/vendored/objects/.keep", "tools/vendored/refs/.keep"):
        write(repo, p, "ref: refs/heads/main\n")
    write(repo, "tools/vendored/config", "[core]\n")
    text = (
        "*** Begin Patch\n*** Update File: tools/vendored/config\n@@\n-[core]\n"
        "+[core]\n+\tfsmonitor = touch /tmp/pwned\n*** End Patch\n"
    )
    assert "tools/vendored/ is a git repository's control folder" in refused(repo, settings, text)
    refused(repo, settings, add("tools/vendored/hooks/pre-commit"))


def test_ordinary_files_with_the_same_names_are_fine(repo, settings):
    result = commit_plan(
        plan_patch_text(
            add("docs/HEAD.md", "src/config", "app/hooks/use_it.js", "refs/x"), settings
        ),
        settings,
    )
    assert len(result.added) == 4


def test_checked_again_at_commit_when_the_tree_changed_since_planning(repo, settings):
    """A folder that became a bare repository after the plan was made is refused when writing."""
    plan = plan_patch_text(add("sub/config"), settings)
    for p in ("sub/HEAD", "sub/objects/.keep", "sub/refs/.keep"):
        write(repo, p, "ref: refs/heads/main\n")
    before = snapshot(repo)
    with pytest.raises(PatchError) as info:
        commit_plan(plan, settings)
    assert "sub/ is a git repository's control folder" in str(info.value)
    assert snapshot(repo) == before


def commondir_files(x: str = "x", y: str = "y") -> dict[str, str]:
    """The five files that make `x/` a repository to git, with `y/` as its common directory."""
    return {
        f"{x}/HEAD": "ref: refs/heads/main\n",
        f"{x}/commondir": f"../{y}\n",
        f"{y}/objects/.keep": "",
        f"{y}/refs/.keep": "",
        f"{y}/config": '[diff "t"]\n\ttextconv = touch pwned\n',
    }


def add_files(files: dict[str, str]) -> str:
    body = "".join(
        f"*** Add File: {p}\n" + "".join(f"+{line}\n" for line in (text or "\n").splitlines())
        for p, text in files.items()
    )
    return f"*** Begin Patch\n{body}*** End Patch\n"


def test_a_patch_cannot_build_a_commondir_repository(repo, settings):
    message = refused(repo, settings, add_files(commondir_files()))
    assert "x/ is a git repository's control folder" in message
    assert "commondir" in message


def test_head_and_commondir_alone_are_refused_before_the_common_directory_exists(repo, settings):
    files = commondir_files()
    first = {k: v for k, v in files.items() if k.startswith("x/")}
    assert "x/ is a git repository's control folder" in refused(repo, settings, add_files(first))


def test_a_patch_cannot_complete_a_commondir_layout_that_is_already_there(repo, settings):
    write(repo, "deep/x/HEAD", "ref: refs/heads/main\n")
    write(repo, "deep/x/commondir", "../../other/y\n")
    files = {
        "other/y/objects/.keep": "",
        "other/y/refs/.keep": "",
        "other/y/config": "[core]\n",
    }
    message = refused(repo, settings, add_files(files))
    assert "other/y/ is a git repository's control folder" in message
    assert "deep/x/" in message
    # Its config cannot be written once it is a repository either.
    for rel in ("other/y/objects/.keep", "other/y/refs/.keep"):
        write(repo, rel, "")
    assert "deep/x/" in refused(repo, settings, add_files({"other/y/config": "[core]\n"}))


def test_files_named_like_commondir_parts_elsewhere_are_fine(repo, settings):
    files = {"docs/commondir": "../y\n", "y/objects/a.py": "x = 1\n", "y/config": "[x]\n"}
    result = commit_plan(plan_patch_text(add_files(files), settings), settings)
    assert len(result.added) == 3
