"""History attacks: merges, rewritten and crafted commits, pushes, shallow clones, size."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.adversarial.util import check, commit, error_code, rev, run_json, setup_gated
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
