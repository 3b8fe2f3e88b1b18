"""The project's own habits, held by its history: every commit since the habit was agreed
has a subject of at most 72 characters, the width `git log --oneline` and most review
tools show whole. The detail goes in the body."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The last commit before the habit held; every later one keeps it.
SINCE = "30f5ad29746b20c28d8ea663ea74f66a51fa3cd3"
LIMIT = 72


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    command = ["git", "-C", str(ROOT), "--no-replace-objects", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_commit_subjects_fit_in_72_characters() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a clone of the project (an sdist or an installed copy)")
    if _git("cat-file", "-e", f"{SINCE}^{{commit}}").returncode != 0:
        pytest.skip("a shallow clone without the commit the habit starts from")
    listed = _git("log", "--format=%H %s", f"{SINCE}..HEAD")
    assert listed.returncode == 0, listed.stderr
    long = [line for line in listed.stdout.splitlines() if len(line.split(" ", 1)[1]) > LIMIT]
    assert not long, "subjects over 72 characters:\n" + "\n".join(long)
