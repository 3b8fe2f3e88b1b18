"""Fail closed: a missing or dying git, a full disk, files of the wrong type, a crashing
rule, a corrupt index and unknown record schemas all end in a reasoned non-zero exit,
never in a pass and never in a traceback."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.adversarial.util import (
    FOLDER,
    check,
    commit,
    error_code,
    executable,
    report,
    rev,
    run_json,
    setup_gated,
    staged,
)
from tests.helpers import Repo


def test_git_missing_from_path(gated: Repo, tmp_path: Path) -> None:
    """No `git` on PATH: exit 2 saying git cannot run (not "not a repository")."""
    gated.write("secret/x", "leak\n")
    gated.git("add", "-A")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for args in (["check", "--staged"], ["verify"], ["fingerprint"]):
        code, doc, err = run_json(gated, *args, env={"PATH": str(empty)})
        assert (code, error_code(doc)) == (2, "HG903"), doc
        assert "cannot run git" in doc["error"]["message"]
        assert err == b""  # no traceback, nothing on stderr


@pytest.mark.parametrize("log", ["evidence.jsonl", "approvals.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_log_of_the_wrong_type_is_refused_not_waited_on(repo: Repo, log: str, kind: str) -> None:
    """A FIFO (or a directory) where an append-only log is expected: `verify` and
    `approve` exit 2 with a reason instead of blocking forever on the FIFO."""
    setup_gated(repo, config='artifacts_dir = "harness"\nreview_stages = []\n')
    path = repo.path / FOLDER / log
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    if log == "approvals.jsonl":
        repo.write(f"{FOLDER}/plan.md", repo.read(f"{FOLDER}/plan.md").replace(b"Do it", b"Do it now"))
        code, doc, err = run_json(repo, "approve", input=b"y\n", timeout=10)
    else:
        code, doc, err = run_json(repo, "verify", timeout=10)
    assert (code, error_code(doc)) == (2, "HG903"), doc
    assert "not a regular file" in doc["error"]["message"]
    assert b"Traceback" not in err


def _faulty_git(tmp_path: Path, subcommand: str, action: str) -> Path:
    """A `git` first on PATH that runs the real git, except for `subcommand`, where it
    does `action` (fault injection around the real git, not a mock of it)."""
    real = shutil.which("git")
    assert real is not None
    body = f"""#!/bin/sh
for a in "$@"; do
  if [ "$a" = "{subcommand}" ]; then
    {action}
  fi
done
exec "{real}" "$@"
"""
    executable(tmp_path / "faulty-bin" / "git", body.replace("REAL", real))
    return tmp_path / "faulty-bin"


# Prints part of the answer, then dies by SIGKILL (an OOM kill, a killed CI job).
KILLED = 'REAL "$@" | head -c 20; kill -KILL $$'
# Prints the answer minus its last N bytes and exits 0 (a git that lies).
TRUNCATED = 'REAL "$@" > "$0.out"; head -c -{n} "$0.out"; exit 0'


def _with_path(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    monkeypatch.setenv("PATH", f"{directory}:{os.environ['PATH']}")


@pytest.mark.parametrize("subcommand", ["diff-index", "cat-file", "ls-files"])
def test_git_killed_mid_answer(gated: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subcommand: str) -> None:
    """git dies by SIGKILL half-way through one plumbing answer: exit 2 (HG903)."""
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "-A")
    assert staged(gated) == (0, [])
    _with_path(monkeypatch, _faulty_git(tmp_path, subcommand, KILLED))
    doc = report(gated, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


def _star_py_plan(repo: Repo) -> None:
    """Boundary `src/*.py`: `src/x.pyc` is outside it, but its prefix `src/x.py` is inside."""
    setup_gated(repo, ("src/*.py",))


def test_truncated_diff_index_answer(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """diff-index's answer loses its last bytes and git exits 0: `src/x.pyc` would be
    read as `src/x.py` (inside the boundary) and pass."""
    _star_py_plan(repo)
    repo.write("src/x.pyc", "compiled\n")
    repo.git("add", "-A")
    assert staged(repo) == (1, [("HG101", "src/x.pyc")])
    _with_path(monkeypatch, _faulty_git(tmp_path, "diff-index", TRUNCATED.format(n=2)))
    doc = report(repo, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


def test_truncated_diff_tree_answer(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same lie from `diff-tree --stdin` while judging a pushed range."""
    _star_py_plan(repo)
    base = rev(repo, "HEAD")
    repo.write("src/x.pyc", "compiled\n")
    tip = commit(repo, "bad")
    assert check(repo, "--range", f"{base}..{tip}") == (1, [("HG101", "src/x.pyc")])
    _with_path(monkeypatch, _faulty_git(tmp_path, "diff-tree", TRUNCATED.format(n=2)))
    doc = report(repo, "check", "--range", f"{base}..{tip}")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


def test_truncated_cat_file_answer(gated: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cat-file --batch` (the plan and its approvals) comes back short with exit 0."""
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "-A")
    _with_path(monkeypatch, _faulty_git(tmp_path, "cat-file", TRUNCATED.format(n=40)))
    doc = report(gated, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc
