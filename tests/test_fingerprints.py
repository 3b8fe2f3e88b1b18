"""The work tree's fingerprint taken two ways: `add -A` walking every folder, and the
untracked files a `git status` of the same moment listed, taken by name (what Stop does,
so that it does not walk every untracked folder twice). The two must give one tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from harness_gate import fingerprints, git
from tests.helpers import Repo

ARTIFACTS = "harness"


def both(repo: Repo) -> tuple[str, str]:
    walked = git.worktree_tree(repo.path, ARTIFACTS)
    listed = fingerprints.untracked_listed(git.status_records(repo.path, ignore_files=True))
    assert listed is not None
    return walked, git.worktree_tree(repo.path, ARTIFACTS, untracked=listed)


@pytest.fixture
def busy(repo: Repo) -> Repo:
    """A work tree in every state a file can be in beside HEAD and the index."""
    repo.write(".gitignore", "*.log\nbuild/\n")
    for rel in ("src/a.py", "src/gone.py", "src/staged_gone.py", "src/mode.sh", "kept.log", "-dash.py"):
        repo.write(rel, f"{rel}\n")
    repo.write(f"{ARTIFACTS}/plans/p/plan.md", "plan\n")
    repo.git("add", "-A")
    repo.git("add", "-f", "kept.log")
    repo.git("commit", "-qm", "base")
    repo.write("src/a.py", "changed\n")  # modified, not staged
    (repo.path / "src/gone.py").unlink()  # deleted, not staged
    repo.git("rm", "-q", "src/staged_gone.py")  # deleted and staged
    (repo.path / "src/mode.sh").chmod(0o700)  # mode only
    repo.write("kept.log", "tracked though ignored\n")
    repo.write("-dash.py", "a leading dash\n")
    repo.write("src/deep/er/new.py", "untracked, nested\n")
    repo.write("src/spaced name.py", "untracked\n")
    repo.write("src/ünï.py", "untracked, not ASCII\n")
    repo.write("src/line\nbreak.py", "untracked, a newline in its name\n")
    repo.write("src/noise.log", "ignored\n")
    repo.write("build/out.py", "in an ignored folder\n")
    repo.write(f"{ARTIFACTS}/plans/p/evidence.jsonl", "not part of the fingerprint\n")
    repo.write("src/staged.py", "staged new\n")
    repo.git("add", "src/staged.py")
    repo.write("src/staged.py", "staged new, then changed\n")
    repo.write("src/intent.py", "intent to add\n")
    repo.git("add", "-N", "src/intent.py")
    repo.write("src/added_gone.py", "added, then removed\n")
    repo.git("add", "src/added_gone.py")
    (repo.path / "src/added_gone.py").unlink()
    (repo.path / "src/link.py").symlink_to("a.py")  # an untracked symbolic link
    return repo


def test_the_listed_untracked_files_give_the_walked_tree(busy: Repo) -> None:
    walked, listed = both(busy)
    assert walked == listed
    # The comparison can fail: a listing that misses a file gives another tree.
    assert git.worktree_tree(busy.path, ARTIFACTS, untracked=[]) != walked


def test_a_file_gone_since_the_listing_is_not_in_the_tree(busy: Repo) -> None:
    listed = fingerprints.untracked_listed(git.status_records(busy.path, ignore_files=True))
    assert listed is not None and "src/deep/er/new.py" in listed
    (busy.path / "src/deep/er/new.py").unlink()
    assert git.worktree_tree(busy.path, ARTIFACTS, untracked=listed) == git.worktree_tree(busy.path, ARTIFACTS)


def test_the_real_index_is_not_written(busy: Repo) -> None:
    before = busy.git("ls-files", "-s", "-z")
    both(busy)
    assert busy.git("ls-files", "-s", "-z") == before


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda r: r.write("src/.gitignore", "*\n"), id="an ignore file that ignores itself"),
        pytest.param(lambda r: r.write("src/.gitignore", "*.tmp\n"), id="any untracked ignore file"),
        pytest.param(lambda r: r.git("init", "-q", "src/sub"), id="a repository of its own"),
    ],
)
def test_a_listing_that_says_more_than_add_stages_is_not_used(repo: Repo, make: object) -> None:
    repo.write("a.py", "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "base")
    make(repo)  # type: ignore[operator]
    assert fingerprints.untracked_listed(git.status_records(repo.path, ignore_files=True)) is None


def test_outputs_are_always_walked(busy: Repo) -> None:
    """Untracked outputs (`verify_outputs`) are left out by git's own pathspecs: with any,
    the listing is not used, whatever it holds."""
    listed = fingerprints.untracked_listed(git.status_records(busy.path, ignore_files=True))
    walked = git.worktree_tree(busy.path, ARTIFACTS, ["src/deep/**"])
    assert git.worktree_tree(busy.path, ARTIFACTS, ["src/deep/**"], untracked=listed) == walked
    assert git.worktree_tree(busy.path, ARTIFACTS, ["src/deep/**"], untracked=[]) == walked


def test_a_file_no_tree_can_hold_is_left_out_of_a_listing(busy: Repo) -> None:
    """A FIFO or a device cannot be added (`update-index --add` refuses it), and no commit
    carries one: a listing that names one gives the tree without it."""
    without = git.worktree_tree(busy.path, ARTIFACTS)
    os.mkfifo(busy.path / "src/pipe")
    listed = fingerprints.untracked_listed(git.status_records(busy.path, ignore_files=True))
    assert listed is not None
    assert git.unstorable(busy.path, [*listed, "src/pipe"]) == ["src/pipe"]
    assert git.worktree_tree(busy.path, ARTIFACTS, untracked=[*listed, "src/pipe"]) == without


_PROBE = """
import json, sys
from pathlib import Path
from harness_gate import fingerprints, git
from harness_gate.config import Config
root = Path(sys.argv[1])
listed = fingerprints.untracked_listed(git.status_records(root, ignore_files=True))
print(json.dumps([
    git.worktree_tree(root, "harness"), listed and git.worktree_tree(root, "harness", untracked=listed),
    fingerprints.untracked_files(root, Config()),
]))
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_sandbox_placeholder_is_left_out(busy: Repo) -> None:
    """Claude Code's sandbox (bubblewrap) binds /dev/null over names it denies: git lists
    each as an untracked file (the folder says a regular file is there), and `add -A`
    then fails on the device. The fingerprint is the tree without them, as the real
    tree is once the sandbox is gone."""
    without = git.worktree_tree(busy.path, ARTIFACTS)
    binds: list[str] = []
    for rel in ("CLAUDE.md", "src/.bashrc", "AGENTS.md"):
        (busy.path / rel).touch()
        binds += ["--dev-bind", "/dev/null", str(busy.path / rel)]
    probe = [shutil.which("bwrap") or "bwrap", "--dev-bind", "/", "/", *binds, "--", sys.executable, "-c", _PROBE]
    proc = subprocess.run([*probe, str(busy.path)], cwd=busy.path, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    walked, listed, untracked = json.loads(proc.stdout)
    assert walked == without and listed in (None, without)
    assert not {"CLAUDE.md", "src/.bashrc"} & set(untracked)
