"""The work tree's fingerprint taken two ways: `add -A` walking every folder, and the
untracked files a `git status` of the same moment listed, taken by name (what Stop does,
so that it does not walk every untracked folder twice). The two must give one tree."""

from __future__ import annotations

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
