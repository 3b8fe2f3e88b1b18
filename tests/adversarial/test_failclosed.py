"""Fail closed: a missing or dying git, a full disk, files of the wrong type, a crashing
rule, a corrupt index and unknown record schemas all end in a reasoned non-zero exit,
never in a pass and never in a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.adversarial.util import FOLDER, error_code, run_json, setup_gated
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
