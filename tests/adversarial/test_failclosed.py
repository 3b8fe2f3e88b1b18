"""Fail closed: a missing or dying git, a full disk, files of the wrong type, a crashing
rule, a corrupt index and unknown record schemas all end in a reasoned non-zero exit,
never in a pass and never in a traceback."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.util import error_code, run_json
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
