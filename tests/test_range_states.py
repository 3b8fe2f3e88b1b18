"""A range's states derived from parent plus changes (harness_gate.history) must equal what
a per-commit read (`artifacts_tree.from_commit`, `artifacts_tree.read_config`) gives, and a range
must be judged exactly as with per-commit reads."""

from __future__ import annotations

from typing import Any

import pytest

from harness_gate import artifacts_tree, git, history
from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.errors import GitError
from tests.adversarial.util import BOUNDARY_ONLY, FOLDER, commit, report, rev, setup_gated
from tests.helpers import Repo

SMALL_CAP = BOUNDARY_ONLY + "max_artifact_bytes = 1024\n"


def _symlink(repo: Repo, rel: str, target: str) -> None:
    path = repo.path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    path.symlink_to(target)


def _gitlink(repo: Repo, rel: str) -> None:
    head = rev(repo, "HEAD")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},{rel}")


def _history(repo: Repo) -> tuple[str, str]:
    """A feature branch off a gated base: an artifact added, changed, deleted; a merge in
    between that changes it again; a symlink, a gitlink, an over-cap file, a type change,
    config edits, and commits that change only code. Returns (base, tip)."""
    setup_gated(repo, config=SMALL_CAP)
    base = rev(repo, "HEAD")
    repo.git("checkout", "-qb", "feature")
    repo.write("harness/notes.txt", "one\n")
    repo.write("harness/big.md", "x" * 2000)  # over the 1024-byte cap: HG512, not read
    repo.write(f"{FOLDER}/evidence.jsonl", "x" * 2000)  # a log: its own, larger cap
    _symlink(repo, "harness/link", "notes.txt")
    commit(repo, "add artifacts")
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "code only")
    repo.git("checkout", "-qb", "side")
    repo.write("harness/side.txt", "side\n")
    repo.git("rm", "-q", "harness/link")
    repo.write("src/b.py", "b = 1\n")
    commit(repo, "side work")
    repo.git("checkout", "-q", "feature")
    repo.write("harness/notes.txt", "two\n")
    repo.write(".harness-gate.toml", SMALL_CAP + "# edited\n")
    commit(repo, "change the artifact and the config")
    repo.git("merge", "-q", "--no-commit", "--no-ff", "side")
    repo.write("harness/notes.txt", "three\n")  # the merge's own change
    repo.git("add", "-A")
    repo.git("commit", "-qm", "merge side", "--no-verify")
    repo.write("src/a.py", "a = 3\n")
    commit(repo, "code only after the merge")
    repo.git("rm", "-q", "harness/notes.txt")
    commit(repo, "delete the artifact")
    repo.git("rm", "-q", "harness/side.txt")
    _symlink(repo, "harness/side.txt", "big.md")  # a type change: file to symlink
    repo.write("harness/big.md", "small now\n")
    commit(repo, "type change, and big.md under the cap")
    repo.write("pyproject.toml", "[project]\nname = 'x'\n")
    repo.git("add", "-A")
    _gitlink(repo, "harness/sub")  # staged by hand: `add -A` would drop it (no work tree)
    repo.git("commit", "-qm", "a gitlink under the root, and a pyproject.toml", "--no-verify")
    assert b"160000" in repo.git("ls-tree", "HEAD", "harness/sub")
    repo.git("update-index", "--force-remove", "harness/sub")
    repo.write("harness/notes.txt", "back\n")
    commit(repo, "the artifact is back")
    return base, rev(repo, "HEAD")


def _same(derived: ArtifactsTree, read: ArtifactsTree) -> None:
    assert list(derived.files.items()) == list(read.files.items())
    assert derived.problems == read.problems
    assert derived.has_root == read.has_root
    assert derived.config == read.config


@pytest.mark.slow
@pytest.mark.parametrize("from_root", [False, True])
def test_derived_states_equal_per_commit_reads(repo: Repo, from_root: bool) -> None:
    base, tip = _history(repo)
    cfg = artifacts_tree.read_config(repo.path, base)
    listing = git.commits(repo.path, tip, [] if from_root else [base])
    assert any(len(c.parents) > 1 for c in listing)
    states = history.RangeStates(repo.path, cfg, listing, extra=(base, tip))
    revs = {c.oid for c in listing} | {p for c in listing for p in c.parents} | {base, tip}
    for oid in sorted(revs):
        _same(states.artifacts_tree(oid), artifacts_tree.from_commit(repo.path, oid, cfg))
        assert states.config(oid) == artifacts_tree.read_config(repo.path, oid)
    # A commit that changes no artifact shares its parent's state object.
    code_only = [
        c for c in listing if len(c.parents) == 1 and not any(ch.path.startswith(b"harness/") for ch in c.changes)
    ]
    assert code_only
    for c in code_only:
        assert states.artifacts_tree(c.oid) is states.artifacts_tree(c.parents[0])


def _findings(repo: Repo, *args: str) -> tuple[int, list[tuple[Any, ...]]]:
    doc = report(repo, "check", *args)
    return doc["exit_code"], [(f["code"], f["path"], f.get("line"), f["message"]) for f in doc["findings"]]


@pytest.mark.slow
def test_range_findings_equal_per_commit_reads(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole check over the range, once with derived states and once with every state
    read from git per commit (the reading the derivation replaces)."""
    base, tip = _history(repo)
    # Approved artifacts changed and deleted on top, for findings that read old states.
    repo.write(f"{FOLDER}/plan.md", repo.read(f"{FOLDER}/plan.md") + b"\nedited\n")
    commit(repo, "edit the approved plan")
    repo.write("src/a.py", "a = 4\n")
    commit(repo, "code under an unapproved plan")
    repo.git("rm", "-q", f"{FOLDER}/approvals.jsonl")
    commit(repo, "delete the approvals")
    tip = rev(repo, "HEAD")
    derived = _findings(repo, "--range", f"{base}..{tip}")

    def per_commit(self: history.RangeStates, oid: str) -> ArtifactsTree:
        return artifacts_tree.from_commit(self.root, oid, self.cfg)

    monkeypatch.setattr(history.RangeStates, "artifacts_tree", per_commit)
    monkeypatch.setattr(history.RangeStates, "config", lambda self, oid: artifacts_tree.read_config(self.root, oid))
    assert derived == _findings(repo, "--range", f"{base}..{tip}")
    codes = {(code, path) for code, path, _, _ in derived[1]}
    assert ("HG512", "harness/big.md") in codes  # over the cap while it was
    assert ("HG516", "harness/link") in codes  # a symlink under the root
    assert ("HG210", f"{FOLDER}/plan.md") in codes  # the approved plan edited
    assert ("HG211", f"{FOLDER}/approvals.jsonl") in codes  # the log deleted
    assert derived[0] == 1


@pytest.mark.slow
def test_a_change_that_does_not_fit_its_parent_is_an_error(repo: Repo) -> None:
    """Fail closed: a listing whose changes contradict the parent's state is never judged."""
    base, tip = _history(repo)
    cfg = artifacts_tree.read_config(repo.path, base)
    listing = git.commits(repo.path, tip, [base])
    first = listing[0]
    assert any(c.path.startswith(b"harness/") for c in first.changes)
    forged = git.Commit(first.oid, first.parents, tuple(c for c in first.changes if c.path != b"harness/notes.txt"))
    later = [c for c in listing[1:] if len(c.parents) == 1 and any(ch.path == b"harness/notes.txt" for ch in c.changes)]
    assert later  # the next change of notes.txt modifies a file the forged listing never added
    with pytest.raises(GitError, match="does not fit its parent"):
        history.RangeStates(repo.path, cfg, [forged, *listing[1:]], extra=(base, tip))


@pytest.mark.slow
def test_only_a_commit_that_leaves_the_root_alone_shares_its_parents_state(repo: Repo) -> None:
    """`shares_parent_state` (signed mode reuses the parent's vouched state, and its blame)."""
    base, tip = _history(repo)
    cfg = artifacts_tree.read_config(repo.path, base)
    listing = git.commits(repo.path, tip, [base])
    states = history.RangeStates(repo.path, cfg, listing, extra=(base, tip))
    for c in listing:
        touches = any(ch.path.startswith(b"harness/") for ch in c.changes)
        assert states.shares_parent_state(c) == (len(c.parents) == 1 and not touches)
