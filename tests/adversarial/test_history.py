"""History attacks: merges, rewritten and crafted commits, pushes, shallow clones, size."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial.util import check, commit, error_code, executable, report, rev, run_json, setup_gated, staged
from tests.helpers import Repo

# Every root file `init` writes, listed exactly: only the deletion of other.py is outside.
WIDE = ("src/**", ".gitattributes", ".harness-gate.toml", ".pre-commit-config.yaml", "README.md", "secret/**")


def _shallow_clone(repo: Repo, dest: Path, depth: int = 1) -> Path:
    subprocess.run(
        ["git", "clone", "-q", f"--depth={depth}", "--no-single-branch", f"file://{repo.path}", str(dest)],
        check=True,
        capture_output=True,
    )
    return dest


def test_shallow_range_whose_history_is_cut_is_hg905(repo: Repo, tmp_path: Path) -> None:
    """A shallow clone cuts the tip's parents: judged as a root commit, its deletion of
    other.py (outside the boundary) would vanish and the range would pass."""
    setup_gated(repo, WIDE)
    base = rev(repo, "HEAD")
    repo.git("checkout", "-qb", "feature")
    repo.git("rm", "-q", "other.py")
    repo.write("src/a.py", "a = 2\n")
    tip = commit(repo, "feature")
    assert check(repo, "--range", f"{base}..{tip}") == (1, [("HG101", "other.py")])
    clone = _shallow_clone(repo, tmp_path / "shallow")
    code, doc, err = run_json(repo, "check", "--range", f"{base}..{tip}", cwd=clone)
    assert (code, error_code(doc)) == (2, "HG905"), doc
    assert b"Traceback" not in err


def test_shallow_range_whose_base_is_missing_is_hg905(gated: Repo, tmp_path: Path) -> None:
    """The range's base was never fetched into the shallow clone: exit 2, never PASS."""
    base = rev(gated, "HEAD~1")
    gated.write("src/a.py", "a = 3\n")
    tip = commit(gated, "work")
    clone = _shallow_clone(gated, tmp_path / "shallow")
    code, doc, _ = run_json(gated, "check", "--range", f"{base}..{tip}", cwd=clone)
    assert (code, error_code(doc)) == (2, "HG905"), doc


def _branch_and_main(repo: Repo) -> str:
    """feature: a change inside the boundary; main: its own later change. Returns main's tip."""
    repo.git("checkout", "-qb", "feature")
    repo.write("src/a.py", "feature\n")
    commit(repo, "feature work")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "main moved on\n")
    main = commit(repo, "main work")
    repo.git("checkout", "-q", "feature")
    return main


def test_evil_merge_adds_a_change_neither_parent_has(gated: Repo) -> None:
    """A merge whose result changes other.py, which neither parent changed (its own change)."""
    _branch_and_main(gated)
    gated.git("merge", "-q", "--no-commit", "--no-ff", "main")
    gated.write("other.py", "evil\n")
    gated.git("add", "other.py")
    assert staged(gated) == (1, [("HG101", "other.py")])  # judged while being committed
    gated.git("commit", "-qm", "merge main", "--no-verify")
    assert check(gated, "--base", "main") == (1, [("HG101", "other.py")])
    assert check(gated, "--range", "main..feature") == (1, [("HG101", "other.py")])


def test_merge_ours_drops_the_other_side_while_being_committed(gated: Repo) -> None:
    """`git merge -s ours`: main's README.md change silently undone by the merge."""
    _branch_and_main(gated)
    gated.git("merge", "-q", "-s", "ours", "--no-commit", "main")
    assert staged(gated) == (1, [("HG101", "README.md")])


def test_amend_then_force_push(gated: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pushed good commit amended to add secret/x, then force-pushed: the pre-push range
    from the old (now unreachable) tip to the new one holds the amended commit."""
    gated.write("src/a.py", "good\n")
    old = commit(gated, "good")
    gated.write("secret/x", "amended in\n")
    gated.git("add", "-A")
    gated.git("commit", "-q", "--amend", "--no-edit", "--no-verify")
    new = rev(gated, "HEAD")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", old)
    monkeypatch.setenv("PRE_COMMIT_TO_REF", new)
    assert check(gated, "--stage", "pre-push") == (1, [("HG101", "secret/x")])


def test_rebase_carries_a_no_verify_commit(gated: Repo) -> None:
    """A feature branch rebased onto a newer main: the rebased copy of its --no-verify
    commit is judged on its own."""
    gated.git("checkout", "-qb", "feature")
    gated.write("secret/x", "sneaky\n")
    commit(gated, "bad")
    gated.write("src/a.py", "good\n")
    commit(gated, "good")
    gated.git("checkout", "-q", "main")
    gated.write("README.md", "main moved on\n")
    commit(gated, "main work")
    gated.git("checkout", "-q", "feature")
    gated.git("rebase", "-q", "main")
    assert check(gated, "--base", "main") == (1, [("HG101", "secret/x")])


def test_cherry_pick_of_an_outside_change(gated: Repo) -> None:
    """A commit from another branch cherry-picked (hooks do not run for it)."""
    base = rev(gated, "HEAD")
    gated.git("checkout", "-qb", "elsewhere")
    gated.write("other.py", "from elsewhere\n")
    picked = commit(gated, "other branch")
    gated.git("checkout", "-q", "main")
    gated.git("cherry-pick", picked)
    assert check(gated, "--range", f"{base}..HEAD") == (1, [("HG101", "other.py")])


def test_no_verify_commit_is_stopped_by_the_real_pre_push_hook(gated: Repo, tmp_path: Path) -> None:
    """`git commit --no-verify`, then a real `git push`: the pre-push hook judges the range
    and the remote never receives the commit."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    gated.git("remote", "add", "origin", str(remote))
    gated.git("push", "-q", "origin", "main")
    pushed = rev(gated, "HEAD")
    hook = f"""#!/bin/sh
while read local_ref local_sha remote_ref remote_sha; do
  "{sys.executable}" -m harness_gate check --stage pre-push --range "$remote_sha..$local_sha" || exit 1
done
"""
    executable(gated.path / ".git" / "hooks" / "pre-push", hook)
    gated.write("secret/x", "sneaky\n")
    commit(gated, "bad")
    proc = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=gated.path, capture_output=True, check=False)
    assert proc.returncode != 0
    assert b"HG101" in proc.stdout + proc.stderr
    remote_tip = subprocess.run(["git", "rev-parse", "main"], cwd=remote, capture_output=True, check=True)
    assert remote_tip.stdout.decode().strip() == pushed


def test_force_push_over_a_tip_never_fetched(gated: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The remote's old tip is unknown here (force-push over someone else's commit): the
    remote's branches bound the range instead, never an empty range."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    gated.git("remote", "add", "origin", str(remote))
    gated.git("push", "-q", "origin", "main")
    gated.git("fetch", "-q", "origin")
    gated.write("secret/x", "sneaky\n")
    tip = commit(gated, "bad")
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", "1234567" * 5 + "12345")  # 40 hex, not in the clone
    monkeypatch.setenv("PRE_COMMIT_TO_REF", tip)
    monkeypatch.setenv("PRE_COMMIT_REMOTE_NAME", "origin")
    assert check(gated, "--stage", "pre-push") == (1, [("HG101", "secret/x")])


# -- crafted commits ---------------------------------------------------------------------------


def _tree_with(repo: Repo, path: str, data: bytes) -> str:
    """HEAD's tree with `path` written, built with plumbing in a private index."""
    env = {**os.environ, "GIT_INDEX_FILE": str(repo.path / ".git" / "crafted-index")}
    blob = repo.git("hash-object", "-w", "--stdin", input=data).decode().strip()
    for args in (["read-tree", "HEAD"], ["update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"]):
        subprocess.run(["git", *args], cwd=repo.path, env=env, capture_output=True, check=True)
    out = subprocess.run(["git", "write-tree"], cwd=repo.path, env=env, capture_output=True, check=True)
    return out.stdout.decode().strip()


def test_commit_tree_with_a_duplicated_parent(gated: Repo) -> None:
    """`git commit-tree -p HEAD -p HEAD`: a "merge" whose parents are one commit."""
    base = rev(gated, "HEAD")
    tree = _tree_with(gated, "other.py", b"crafted\n")
    crafted = gated.git("commit-tree", tree, "-p", base, "-p", base, "-m", "crafted").decode().strip()
    assert check(gated, "--range", f"{base}..{crafted}") == (1, [("HG101", "other.py")])


def test_commit_tree_merge_with_an_unrelated_root(gated: Repo) -> None:
    """A crafted merge whose second parent is a root commit carrying the change: that root
    is in the range and judged whole (it has no plan at all)."""
    base = rev(gated, "HEAD")
    blob = gated.git("hash-object", "-w", "--stdin", input=b"evil\n").decode().strip()
    evil_tree = gated.git("mktree", input=f"100644 blob {blob}\tevil.py\n".encode()).decode().strip()
    root = gated.git("commit-tree", evil_tree, "-m", "root").decode().strip()
    merged = _tree_with(gated, "evil.py", b"evil\n")
    crafted = gated.git("commit-tree", merged, "-p", base, "-p", root, "-m", "merge").decode().strip()
    assert check(gated, "--range", f"{base}..{crafted}") == (1, [("HG201", "harness/plans")])


def test_commit_tree_on_top_of_the_plan(gated: Repo) -> None:
    """A commit built with plumbing only (no index, no hooks) changing secret/x."""
    base = rev(gated, "HEAD")
    tree = _tree_with(gated, "secret/x", b"crafted\n")
    crafted = gated.git("commit-tree", tree, "-p", base, "-m", "plumbing").decode().strip()
    gated.git("update-ref", "refs/heads/main", crafted)
    assert check(gated, "--base", base) == (1, [("HG101", "secret/x")])


# -- size --------------------------------------------------------------------------------------


def test_huge_change_set_with_one_path_outside(gated: Repo) -> None:
    """5,000 staged files, one of them outside the boundary: exactly that one is HG101,
    in the index and again as a pushed commit."""
    blob = gated.git("hash-object", "-w", "--stdin", input=b"x\n").decode().strip()
    paths = [f"src/gen/{i // 100:02d}/f{i:04d}.py" for i in range(4999)] + ["secret/needle"]
    gated.git("update-index", "--add", "--index-info", input="".join(f"100644 {blob}\t{p}\n" for p in paths).encode())
    assert staged(gated) == (1, [("HG101", "secret/needle")])
    base = rev(gated, "HEAD")
    gated.git("commit", "-qm", "huge", "--no-verify")
    doc = report(gated, "check", "--range", f"{base}..HEAD")
    assert [(f["code"], f["path"]) for f in doc["findings"]] == [("HG101", "secret/needle")]
    assert doc["data"]["changes"] == 5000


def test_crafted_shallow_file_cannot_cut_a_commit_loose(repo: Repo) -> None:
    """`.git/shallow` written by hand (a graft that only removes parents) turns the tip into
    a "root" whose deletion of other.py would vanish: HG905, never a pass."""
    setup_gated(repo, WIDE)
    base = rev(repo, "HEAD")
    repo.git("rm", "-q", "other.py")
    tip = commit(repo, "delete other.py")
    assert check(repo, "--range", f"{base}..{tip}") == (1, [("HG101", "other.py")])
    (repo.path / ".git" / "shallow").write_text(f"{tip}\n")
    assert repo.git("rev-list", "--parents", "-n", "1", tip).split() == [tip.encode()]  # git is fooled
    doc = report(repo, "check", "--range", f"{base}..{tip}")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG905"), doc
