"""Reading the artifacts root from the work tree, the index and commits."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from harness_gate import artifacts_tree, cache
from harness_gate.errors import GitError
from tests.helpers import Repo


def test_index_and_commit_views_differ_from_the_work_tree(repo: Repo) -> None:
    repo.new_plan()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan")
    repo.write("harness/plans/p1/plan.md", "# Plan\nedited\n")
    repo.write("harness/README.md", "staged\n")
    repo.git("add", "harness/README.md")
    work = artifacts_tree.from_worktree(repo.path)
    index = artifacts_tree.from_index(repo.path)
    head = artifacts_tree.from_commit(repo.path, "HEAD")
    assert work.files["harness/plans/p1/plan.md"] == b"# Plan\nedited\n"
    assert index.files["harness/plans/p1/plan.md"].startswith(b"# Plan\n\n## Objective")
    assert index.files["harness/README.md"] == b"staged\n"
    assert "harness/README.md" not in head.files
    assert head.label == "commit HEAD"


def test_index_view_honours_git_index_file(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.new_plan()
    repo.git("add", "-A")
    alt = repo.path / ".git" / "alt-index"
    monkeypatch.setenv("GIT_INDEX_FILE", str(alt))
    assert artifacts_tree.from_index(repo.path).files == {}
    monkeypatch.delenv("GIT_INDEX_FILE")
    assert "harness/plans/p1/plan.md" in artifacts_tree.from_index(repo.path).files


def test_config_is_read_from_the_same_state(repo: Repo) -> None:
    repo.write(".harness-gate.toml", "artifacts_dir = 'gate'\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "cfg")
    repo.write(".harness-gate.toml", "artifacts_dir = 'other'\n")
    assert artifacts_tree.from_commit(repo.path, "HEAD").artifacts_dir == "gate"
    assert artifacts_tree.from_worktree(repo.path).artifacts_dir == "other"


def test_symlinks_and_submodules_in_the_index_are_findings(repo: Repo) -> None:
    repo.new_plan()
    (repo.path / "harness/link").symlink_to("plans")
    repo.git("add", "-A")
    artifacts = artifacts_tree.from_index(repo.path)
    assert [(f.code, f.path) for f in artifacts.findings] == [("HG516", "harness/link")]


def test_unknown_revision_is_a_git_error(repo: Repo) -> None:
    with pytest.raises(GitError):
        artifacts_tree.from_commit(repo.path, "no-such-rev")


def test_the_rules_fingerprint_reads_the_files_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte of harness-gate's source changed, size and modification time kept: a new
    fingerprint (builds that keep both would otherwise share a cache across rules)."""
    pkg = tmp_path / "harness_gate"
    shutil.copytree(Path(cache.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    target = pkg / "rules" / "authority.py"
    monkeypatch.setattr(cache, "__file__", str(pkg / "cache.py"))
    cache.rules_fingerprint.cache_clear()
    before = cache.rules_fingerprint()
    st = target.stat()
    data = bytearray(target.read_bytes())
    data[-2] = ord("#") if data[-2] != ord("#") else ord(" ")
    target.write_bytes(bytes(data))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    cache.rules_fingerprint.cache_clear()
    try:
        assert cache.rules_fingerprint() != before
    finally:
        cache.rules_fingerprint.cache_clear()
