"""Diff computation and a git that lies: hostile configuration, environment, replace refs,
grafts and index flags never change the gate's verdict; odd kinds of change still count.

Every "verdict unchanged" test asserts the blocking verdict and its exact codes both
without and with the hostile setting, so it fails if either side changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.util import (
    EVIDENCE_AT_PRE_PUSH,
    FOLDER,
    check,
    commit,
    executable,
    report,
    rev,
    setup_gated,
    staged,
)
from tests.helpers import Repo


def _bad_range(repo: Repo) -> tuple[str, str]:
    """A commit outside the boundary (made with --no-verify) on top of the plan."""
    base = rev(repo, "HEAD")
    repo.write("secret/x", "leaked\n")
    return base, commit(repo, "bad")


def test_grafts_cannot_hide_a_range(gated: Repo) -> None:
    """`.git/info/grafts` making the base a child of the tip would empty the range."""
    base, tip = _bad_range(gated)
    expected = (1, [("HG101", "secret/x")])
    assert check(gated, "--range", f"{base}..{tip}") == expected
    assert check(gated, "--base", base, "--head", tip) == expected
    grafts = gated.path / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{base} {tip}\n")
    assert gated.git("rev-list", tip, f"^{base}") == b""  # git itself now sees no commit
    assert check(gated, "--range", f"{base}..{tip}") == expected
    assert check(gated, "--base", base, "--head", tip) == expected


def _evidence_repo(repo: Repo) -> Repo:
    """Like `gated`, but pre-push requires fresh evidence (`python -c pass`)."""
    setup_gated(repo, config=EVIDENCE_AT_PRE_PUSH)
    return repo


def test_clean_filter_cannot_launder_the_fingerprint(repo: Repo, tmp_path: Path) -> None:
    """`filter.<x>.clean` turns the tested bytes into other committed bytes: `verify`
    must neither run the filter nor fingerprint its output."""
    _evidence_repo(repo)
    repo.write("src/a.py", "good\n")
    repo.cli("verify")
    repo.git("add", "-A")
    assert check(repo, "--stage", "pre-push", "--staged") == (0, [])  # no filter: fresh
    repo.git("reset", "-q", "--hard")
    ran = tmp_path / "filter-ran"
    repo.git("config", "filter.evil.clean", f"touch {ran}; sed s/good/bad/")
    repo.git("config", "filter.evil.required", "true")
    repo.write(".git/info/attributes", "*.py filter=evil\n")
    repo.write("src/a.py", "good\n")
    assert report(repo, "verify")["exit_code"] == 0
    assert not ran.exists()  # the fingerprint ran no configured program
    repo.git("add", "-A")  # the user's own `git add` runs the filter: "bad" is committed
    assert ran.exists()
    assert repo.git("show", ":src/a.py") == b"bad\n"
    assert check(repo, "--stage", "pre-push", "--staged") == (1, [("HG302", f"{FOLDER}/evidence.jsonl")])


def test_clean_filter_staged_before_verify(repo: Repo, tmp_path: Path) -> None:
    """The same filter, but the file is staged (filtered) first and its stat data then
    matches the index entry: the fingerprint must still read the bytes on disk."""
    _evidence_repo(repo)
    ran = tmp_path / "filter-ran"
    repo.git("config", "filter.evil.clean", f"touch {ran}; sed s/good/bad/")
    repo.write(".git/info/attributes", "*.py filter=evil\n")
    old = repo.write("src/a.py", "good\n")
    os.utime(old, (1_700_000_000, 1_700_000_000))  # not racily clean: git trusts the stat data
    repo.git("add", "-A")
    assert repo.git("show", ":src/a.py") == b"bad\n"
    ran.unlink()
    assert report(repo, "verify")["exit_code"] == 0
    assert not ran.exists()
    repo.git("add", "-A")
    assert check(repo, "--stage", "pre-push", "--staged") == (1, [("HG302", f"{FOLDER}/evidence.jsonl")])


def test_every_filter_driver_is_disabled_whatever_its_name(repo: Repo, tmp_path: Path) -> None:
    """Driver names may hold dots and `=`, and `.process` drivers run too: neither runs
    while harness-gate fingerprints the work tree or the index."""
    _evidence_repo(repo)
    cleaned, processed = tmp_path / "clean-ran", tmp_path / "process-ran"
    repo.git("config", "filter.a.B=c.clean", f"touch {cleaned}; cat")
    repo.git("config", "filter.proc.process", f"sh -c 'touch {processed}; exit 1'")
    repo.write(".git/info/attributes", "*.py filter=a.B=c\n*.txt filter=proc\n")
    repo.write("src/a.py", "a = 2\n")
    repo.write("src/notes.txt", "n\n")
    assert report(repo, "fingerprint")["exit_code"] == 0
    assert report(repo, "fingerprint", "index")["exit_code"] == 0
    assert report(repo, "status")["exit_code"] == 0
    assert not cleaned.exists()
    assert not processed.exists()
    # Both drivers are real: git's own `add` runs them (and the failing one stops it).
    assert subprocess.run(["git", "add", "-A"], cwd=repo.path, capture_output=True, check=False).returncode != 0
    assert cleaned.exists()
    assert processed.exists()


def test_git_lfs_standard_driver_is_kept(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git LFS's standard driver stays on (the committed pointer is what the fingerprint
    describes); a driver named `lfs` with another command is switched off like any other."""
    _evidence_repo(repo)
    fake = tmp_path / "bin"
    executable(fake / "git-lfs", '#!/bin/sh\n[ "$1" = clean ] || exit 3\nprintf \'pointer %s\\n\' "$(wc -c)"\n')
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    repo.git("config", "filter.lfs.clean", "git-lfs clean -- %f")
    repo.git("config", "filter.lfs.required", "true")
    repo.write(".git/info/attributes", "*.bin filter=lfs\n")
    repo.write("src/big.bin", "x" * 1000)
    fingerprint = report(repo, "fingerprint")["data"]["tree"]
    assert report(repo, "verify")["exit_code"] == 0
    repo.git("add", "-A")
    assert repo.git("show", ":src/big.bin") == b"pointer 1000\n"
    assert fingerprint == report(repo, "fingerprint", "index")["data"]["tree"]
    assert check(repo, "--stage", "pre-push", "--staged") == (0, [])  # the evidence speaks of the pointer
    repo.git("config", "filter.lfs.clean", "git-lfs clean -- %f; true")  # not the standard command
    assert report(repo, "fingerprint")["data"]["tree"] != fingerprint
    assert report(repo, "verify")["exit_code"] == 0
    repo.git("add", "-A")
    assert check(repo, "--stage", "pre-push", "--staged") == (1, [("HG302", f"{FOLDER}/evidence.jsonl")])


# -- hostile configuration and environment -------------------------------------------------

EXPECTED = ((1, [("HG101", "other.py")]), (1, [("HG101", "secret/x")]))


def _verdicts(repo: Repo, base: str, tip: str) -> tuple[tuple[int, list[tuple[str, str]]], ...]:
    """The staged check (other.py staged) and the range check (secret/x committed)."""
    return staged(repo), check(repo, "--range", f"{base}..{tip}")


def _attack_setup(repo: Repo) -> tuple[str, str]:
    base, tip = _bad_range(repo)
    repo.write("other.py", "x = 2\n")
    repo.git("add", "other.py")
    assert _verdicts(repo, base, tip) == EXPECTED
    return base, tip


def test_diff_relative_from_a_subdirectory(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`diff.relative=true`, and the gate run from `src/`: paths outside it still count."""
    base, tip = _attack_setup(gated)
    gated.git("config", "diff.relative", "true")
    monkeypatch.chdir(gated.path / "src")
    assert _verdicts(gated, base, tip) == EXPECTED


@pytest.mark.parametrize("value", ["copies", "true"])
def test_rename_detection_config(gated: Repo, value: str) -> None:
    """`diff.renames` (and `status.renames`) on: a rename still counts on both sides, so
    moving secret/x into src/ is a change outside the boundary."""
    base = rev(gated, "HEAD")
    gated.git("mv", "secret/x", "src/x")
    tip = commit(gated, "move it in")
    gated.git("mv", "other.py", "src/other.py")
    expected = ((1, [("HG101", "other.py")]), (1, [("HG101", "secret/x")]))
    assert _verdicts(gated, base, tip) == expected
    for key in ("diff.renames", "status.renames"):
        gated.git("config", key, value)
    gated.git("config", "diff.renameLimit", "1")
    assert _verdicts(gated, base, tip) == expected


def test_external_diff_driver(gated: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`diff.external` and GIT_EXTERNAL_DIFF naming a script that reports nothing: never run."""
    base, tip = _attack_setup(gated)
    ran = tmp_path / "external-ran"
    script = executable(tmp_path / "nodiff", f"#!/bin/sh\ntouch {ran}\nexit 0\n")
    gated.git("config", "diff.external", str(script))
    gated.write(".git/info/attributes", "* diff=quiet\n")
    gated.git("config", "diff.quiet.command", str(script))
    gated.git("config", "diff.quiet.textconv", str(script))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(script))
    monkeypatch.setenv("GIT_DIFF_OPTS", "--unified=0")
    assert _verdicts(gated, base, tip) == EXPECTED
    assert not ran.exists()


def test_core_ignorecase(gated: Repo) -> None:
    """`core.ignorecase=true` on a case-sensitive file system: `SRC/evil.py` is still not
    `src/evil.py`, and the artifacts root is not `HARNESS/`."""
    blob = gated.git("hash-object", "-w", "--stdin", input=b"evil\n").decode().strip()
    for path in ("SRC/evil.py", "Harness/plans/p1/plan.md"):
        gated.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    expected = (
        1,
        [("HG101", "Harness/plans/p1/plan.md"), ("HG101", "SRC/evil.py"), ("HG106", "Harness/plans/p1/plan.md")],
    )
    assert staged(gated) == expected
    gated.git("config", "core.ignorecase", "true")
    assert staged(gated) == expected


def test_lying_fsmonitor(gated: Repo, tmp_path: Path) -> None:
    """`core.fsmonitor` names a hook that says nothing changed: git's own `status` and
    `add` then miss an edit, but the gate never asks the hook, and the fingerprint sees it."""
    base, tip = _attack_setup(gated)
    ran = tmp_path / "fsmonitor-ran"
    hook = executable(tmp_path / "fsmonitor", f"#!/bin/sh\ntouch {ran}\nprintf 'token\\0'\n")
    gated.git("config", "core.fsmonitor", str(hook))
    gated.git("update-index", "--fsmonitor")
    gated.git("status")  # the hook's token is now in the index
    before = report(gated, "fingerprint")["data"]["tree"]
    gated.write("src/a.py", "edited after the token\n")
    assert gated.git("status", "--porcelain", "--untracked-files=no") == b"M  other.py\n"  # git is fooled
    ran.unlink()
    assert _verdicts(gated, base, tip) == EXPECTED
    assert report(gated, "fingerprint")["data"]["tree"] != before  # harness-gate is not
    assert not ran.exists()


HOSTILE_PARAMETERS = {
    "hooksPath": "'core.hooksPath'='/nonexistent'",
    "noprefix-and-status": "'diff.noprefix'='true' 'status.showUntrackedFiles'='no' 'status.relativePaths'='true'",
    "quotePath-and-abbrev": "'core.quotePath'='true' 'core.abbrev'='7' 'diff.ignoreSubmodules'='all'",
    "worktree-elsewhere": "'core.worktree'='/tmp'",
    "fsmonitor": "'core.fsmonitor'='/bin/true' 'core.untrackedCache'='true'",
}


@pytest.mark.parametrize("setting", sorted(HOSTILE_PARAMETERS))
def test_git_config_parameters(gated: Repo, monkeypatch: pytest.MonkeyPatch, setting: str) -> None:
    """GIT_CONFIG_PARAMETERS (what `git -c` exports to hooks) never reaches the gate's git."""
    base, tip = _attack_setup(gated)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", HOSTILE_PARAMETERS[setting])
    assert _verdicts(gated, base, tip) == EXPECTED


def test_git_config_count_key_value(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIT_CONFIG_COUNT/KEY/VALUE, the other way to inject configuration through the
    environment (here: a work tree elsewhere and hidden submodules)."""
    base, tip = _attack_setup(gated)
    pairs = [("core.worktree", "/tmp"), ("diff.ignoreSubmodules", "all"), ("core.fsmonitor", "/bin/true")]
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(pairs)))
    for i, (key, value) in enumerate(pairs):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{i}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{i}", value)
    assert _verdicts(gated, base, tip) == EXPECTED


def test_pathspec_environment_all_at_once(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """GIT_{LITERAL,GLOB,NOGLOB,ICASE}_PATHSPECS change what `:(literal)harness/` lists."""
    base, tip = _attack_setup(gated)
    for var in ("GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"):
        with monkeypatch.context() as m:
            m.setenv(var, "1")
            assert _verdicts(gated, base, tip) == EXPECTED, var


# -- replace refs --------------------------------------------------------------------------


def test_replaced_commit(gated: Repo) -> None:
    """`git replace BAD GOOD`: git now shows the innocent commit, the gate the real one."""
    base, tip = _bad_range(gated)
    gated.git("checkout", "-q", "-b", "innocent", base)
    gated.write("src/a.py", "a = 5\n")
    good = commit(gated, "innocent")
    gated.git("checkout", "-q", "main")
    gated.git("replace", tip, good)
    assert b"secret/x" not in gated.git("show", "--stat", tip)  # git is fooled
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG101", "secret/x")])
    assert check(gated, "--base", base, "--head", tip) == (1, [("HG101", "secret/x")])


def test_replaced_tree(gated: Repo) -> None:
    """The bad commit's tree replaced by its parent's tree: an empty-looking commit."""
    base, tip = _bad_range(gated)
    gated.git("replace", rev(gated, f"{tip}^{{tree}}"), rev(gated, f"{base}^{{tree}}"))
    assert gated.git("diff", "--name-only", base, tip) == b""  # git is fooled
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG101", "secret/x")])


def test_replaced_blob_of_a_symlink(gated: Repo) -> None:
    """An escaping symlink's target blob replaced by an innocent one (`a.py`)."""
    (gated.path / "src" / "link").symlink_to("../../outside")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG104", "src/link")])
    evil = gated.git("rev-parse", ":src/link").decode().strip()
    innocent = gated.git("hash-object", "-w", "--stdin", input=b"a.py").decode().strip()
    gated.git("replace", "-f", evil, innocent)
    assert gated.git("cat-file", "-p", evil) == b"a.py"  # git is fooled
    assert staged(gated) == (1, [("HG104", "src/link")])


def test_replaced_approval_log(gated: Repo) -> None:
    """The committed approvals.jsonl blob replaced by one approving a wider plan."""
    plan = f"{FOLDER}/plan.md"
    gated.write(plan, gated.read(plan).replace(b"`src/**`", b"`src/**`\n- `secret/**`"))
    gated.approve()
    wider = gated.git("hash-object", "-w", f"{FOLDER}/approvals.jsonl").decode().strip()
    gated.git("checkout", "-q", "--", FOLDER)
    real = gated.git("rev-parse", f"HEAD:{FOLDER}/approvals.jsonl").decode().strip()
    gated.write(plan, gated.read(plan).replace(b"`src/**`", b"`src/**`\n- `secret/**`"))
    gated.write("secret/x", "now inside?\n")
    gated.git("add", "-A")
    expected = (1, [("HG203", plan), ("HG210", plan)])
    assert staged(gated) == expected
    gated.git("replace", real, wider)
    assert staged(gated) == expected


# -- index flags -----------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_index_flags_do_not_hide_a_staged_change(gated: Repo, tmp_path: Path, flag: str) -> None:
    """A staged change outside the boundary, then flagged so `git status` shows nothing:
    the commit the user makes still holds it, and the real pre-commit hook blocks it."""
    hook = gated.path / ".git" / "hooks" / "pre-commit"
    executable(hook, f'#!/bin/sh\nexec "{sys.executable}" -m harness_gate check --stage pre-commit --staged\n')
    head = rev(gated, "HEAD")
    gated.write("secret/x", "leaked\n")
    gated.git("add", "secret/x")
    gated.git("update-index", flag, "secret/x")
    assert gated.git("status", "--porcelain", "--untracked-files=no") in (b"", b"M  secret/x\n")
    assert staged(gated) == (1, [("HG101", "secret/x")])
    for args in (["commit", "-qm", "sneak"], ["commit", "-qam", "sneak"]):
        proc = subprocess.run(["git", *args], cwd=gated.path, capture_output=True, check=False)
        assert proc.returncode == 1, proc.stderr
        assert b"HG101" in proc.stdout + proc.stderr
    assert rev(gated, "HEAD") == head
    refused = report(gated, "verify")  # and no evidence for a hidden edit
    assert refused["exit_code"] == 1 and [f["code"] for f in refused["findings"]] == ["HG308"]


# -- odd kinds of change -----------------------------------------------------------------------


def test_rename_source_outside_in_a_range(gated: Repo) -> None:
    """A commit renaming secret/x into src/ with a small edit (rename detection would pair
    them): the deleted source is outside the boundary."""
    base = rev(gated, "HEAD")
    gated.git("mv", "secret/x", "src/x")
    gated.write("src/x", "secret\nplus one line\n")
    tip = commit(gated, "rename")
    gated.git("config", "diff.renames", "copies")
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG101", "secret/x")])


def test_typechange_file_to_symlink_outside(gated: Repo) -> None:
    """other.py replaced by a symlink into the boundary: a typechange outside it."""
    (gated.path / "other.py").unlink()
    (gated.path / "other.py").symlink_to("src/a.py")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG101", "other.py")])


def test_mode_only_change_outside(gated: Repo) -> None:
    """chmod +x on disk, nothing else: a mode change outside the boundary, also in a range
    and whatever `core.fileMode` says afterwards."""
    base = rev(gated, "HEAD")
    (gated.path / "other.py").chmod(0o755)
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG101", "other.py")])
    tip = commit(gated, "chmod")
    gated.git("config", "core.fileMode", "false")
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG101", "other.py")])


def test_file_inside_the_boundary_becomes_a_submodule(gated: Repo) -> None:
    """src/a.py replaced by a gitlink: a new submodule not named in the boundary (HG105);
    a submodule added outside it (HG105), then its pointer moved (HG101), even with
    `diff.ignoreSubmodules=all`."""
    head = rev(gated, "HEAD")
    gated.git("rm", "-q", "--cached", "src/a.py")
    gated.git("update-index", "--add", "--cacheinfo", f"160000,{head},src/a.py")
    assert staged(gated) == (1, [("HG105", "src/a.py")])
    gated.git("reset", "-q", "--hard")
    gated.git("update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    base = rev(gated, "HEAD")
    gated.git("commit", "-qm", "vendor", "--no-verify")
    tip = rev(gated, "HEAD")
    assert check(gated, "--range", f"{base}..{tip}") == (1, [("HG105", "vendor/lib")])
    gated.git("update-index", "--cacheinfo", f"160000,{rev(gated, 'HEAD~2')},vendor/lib")
    gated.git("config", "diff.ignoreSubmodules", "all")
    assert staged(gated) == (1, [("HG101", "vendor/lib")])
