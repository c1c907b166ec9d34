"""Safety enforced in code: paths, binaries, existing/missing targets, limits, risk, strict suffixes."""

from __future__ import annotations

import os

import pytest

from hello_tui.patch import PatchError, plan_file_change, plan_patch_text

from .conftest import snapshot, write


def patch(*body: str) -> str:
    return "*** Begin Patch\n" + "\n".join(body) + "\n*** End Patch\n"


@pytest.mark.parametrize(
    "path, why",
    [
        ("/etc/passwd", "absolute"),
        ("~/x.txt", "~"),
        ("../outside.txt", "outside the repository"),
        ("a/../../outside.txt", "outside the repository"),
        ("a\x00b", "NUL"),
        (".git/config", ".git"),
        ("sub/.git/hooks/pre-commit", ".git"),
        (".helloagents/notes/x.md", "state folder"),
    ],
)
def test_refused_paths(repo, settings, path, why):
    with pytest.raises(PatchError, match="Refused") as err:
        plan_patch_text(patch(f"*** Add File: {path}", "+x"), settings)
    assert why in str(err.value)


def test_symlinked_file_is_refused(repo, settings, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("s\n")
    os.symlink(outside, repo / "link.txt")
    with pytest.raises(PatchError, match="symbolic link"):
        plan_patch_text(patch("*** Update File: link.txt", "-s", "+t"), settings)
    assert outside.read_text() == "s\n"


def test_symlinked_parent_folder_leading_outside_is_refused(repo, settings, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, repo / "out")
    with pytest.raises(PatchError, match="leading outside"):
        plan_patch_text(patch("*** Add File: out/new.txt", "+x"), settings)
    assert list(outside.iterdir()) == []


def test_symlinked_parent_into_git_is_refused(repo, settings):
    (repo / ".git").mkdir()
    os.symlink(repo / ".git", repo / "g")
    with pytest.raises(PatchError, match=".git"):
        plan_patch_text(patch("*** Add File: g/config", "+x"), settings)


def test_binary_files_are_never_patched_as_text(repo, settings):
    write(repo, "bin.dat", b"a\x00b\n")
    with pytest.raises(PatchError, match="binary"):
        plan_patch_text(patch("*** Update File: bin.dat", "-a", "+b"), settings)


def test_legacy_encoded_file_never_gets_utf8_text_mixed_in(repo, settings):
    write(repo, "latin.txt", "caf\xe9\n".encode("latin-1"))
    with pytest.raises(PatchError, match="not UTF-8") as err:
        plan_patch_text(patch("*** Update File: latin.txt", "@@", "+na\u00efve"), settings)
    assert "mix two encodings" in str(err.value)
    plan = plan_patch_text(patch("*** Update File: latin.txt", "@@", "+ascii"), settings)
    assert plan.files[0].new_bytes == b"caf\xe9\nascii\n"


def test_add_onto_existing_and_move_onto_existing_are_errors(repo, settings):
    write(repo, "a.txt", "a\n")
    write(repo, "b.txt", "b\n")
    with pytest.raises(PatchError, match="already exists"):
        plan_patch_text(patch("*** Add File: a.txt", "+new"), settings)
    with pytest.raises(PatchError, match="already exists"):
        plan_patch_text(patch("*** Update File: a.txt", "*** Move to: b.txt", "-a", "+c"), settings)


def test_update_or_delete_of_missing_file_and_delete_of_folder(repo, settings):
    (repo / "folder").mkdir()
    with pytest.raises(PatchError, match="does not exist"):
        plan_patch_text(patch("*** Update File: nope.txt", "-a", "+b"), settings)
    with pytest.raises(PatchError, match="does not exist"):
        plan_patch_text(patch("*** Delete File: nope.txt"), settings)
    with pytest.raises(PatchError, match="directory"):
        plan_patch_text(patch("*** Delete File: folder"), settings)


def test_file_limit(repo, settings):
    body = [line for i in range(11) for line in (f"*** Add File: f{i}.txt", "+x")]
    with pytest.raises(PatchError, match="touches 11 files, the limit is 10"):
        plan_patch_text(patch(*body), settings)
    plan = plan_patch_text(patch(*body), settings.with_changes(patch_max_files=11))
    assert len(plan.files) == 11


def test_line_limit_counts_added_and_removed(repo, settings):
    write(repo, "big.txt", "".join(f"{i}\n" for i in range(500)))
    small = settings.with_changes(patch_max_lines=999)
    plan = plan_patch_text(patch("*** Delete File: big.txt"), small)
    assert plan.files[0].removed_lines == 500
    with pytest.raises(PatchError, match="changes 1000 lines, the limit is 999"):
        plan_patch_text(
            patch(
                "*** Update File: big.txt",
                *[f"-{i}" for i in range(500)],
                *[f"+n{i}" for i in range(500)],
            ),
            small,
        )


def test_whole_file_rewrite_counts_every_line_it_writes(repo, settings):
    write(repo, "w.txt", "a\n")
    with pytest.raises(PatchError, match="limit is 5"):
        plan_patch_text(
            patch("*** Update File: w.txt", *[f"line{i}" for i in range(6)]),
            settings.with_changes(patch_max_lines=5),
        )


def test_limits_come_from_the_environment(repo):
    from hello_tui.config import load_settings

    s = load_settings(repo, environ={"CODE_AGENT_PATCH_MAX_FILES": "1"})
    with pytest.raises(PatchError, match="limit is 1"):
        plan_patch_text(patch("*** Add File: a.txt", "+a", "*** Add File: b.txt", "+b"), s)


@pytest.mark.parametrize(
    "name",
    [".env", ".env.local", "prod.env", ".ENV", "server.pem", "TLS.KEY", "id_rsa", "id_rsa.pub"],
)
def test_sensitive_files_are_high_risk(repo, settings, name):
    plan = plan_patch_text(patch(f"*** Add File: cfg/{name}", "+x"), settings)
    assert plan.risk.high and plan.risk.reasons == [f"touches the sensitive file cfg/{name}"]


def test_risk_rules(repo, settings):
    write(repo, "d.txt", "x\n")
    assert plan_patch_text(patch("*** Delete File: d.txt"), settings).risk.reasons == [
        "deletes d.txt"
    ]
    six = [line for i in range(6) for line in (f"*** Add File: f{i}.txt", "+x")]
    assert "touches 6 files" in plan_patch_text(patch(*six), settings).risk.reasons
    five = [line for i in range(5) for line in (f"*** Add File: f{i}.txt", "+x")]
    assert not plan_patch_text(patch(*five), settings).risk.high
    many = plan_patch_text(patch("*** Add File: m.txt", *["+x"] * 400), settings)
    assert many.risk.reasons == ["changes 400 lines"]
    assert not plan_patch_text(patch("*** Add File: m.txt", *["+x"] * 399), settings).risk.high


def test_strict_write_suffixes_when_switched_on(repo, settings):
    strict = settings.with_changes(strict_write_suffixes=True)
    with pytest.raises(PatchError, match="strict write mode"):
        plan_patch_text(patch("*** Add File: run.sh", "+echo"), strict)
    assert plan_patch_text(patch("*** Add File: ok.py", "+x = 1"), strict).files[0].path == "ok.py"
    assert plan_patch_text(patch("*** Add File: run.sh", "+echo"), settings).files


def test_plan_is_a_dry_run(repo, settings):
    write(repo, "a.txt", "a\n")
    before = snapshot(repo)
    plan = plan_patch_text(
        patch("*** Update File: a.txt", "-a", "+b", "*** Add File: n.txt", "+n"), settings
    )
    assert plan.files[0].new_bytes == b"b\n" and plan.files[1].new_bytes == b"n\n"
    assert snapshot(repo) == before
    assert not (repo / ".helloagents").exists()


def test_plan_file_change_paths_are_checked_too(repo, settings):
    with pytest.raises(PatchError, match="Refused"):
        plan_file_change(settings, "../x.txt", "x")
