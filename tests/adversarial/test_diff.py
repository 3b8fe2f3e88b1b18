"""Diff computation and a git that lies: hostile configuration, environment, replace refs,
grafts and index flags never change the gate's verdict; odd kinds of change still count.

Every "verdict unchanged" test asserts the blocking verdict and its exact codes both
without and with the hostile setting, so it fails if either side changes."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.util import check, commit, rev
from tests.helpers import Repo


def _bad_range(repo: Repo) -> tuple[str, str]:
    """A commit outside the boundary (made with --no-verify) on top of the plan."""
    base = rev(repo, "HEAD")
    repo.write("secret/x", "leaked\n")
    return base, commit(repo, "bad")


def test_grafts_cannot_hide_a_range(gated: Repo) -> None:
    """`.git/info/grafts` making the base a child of the tip would empty the range."""
    base, tip = _bad_range(gated)
    expected = (1, [("HG101", "secret/x")])
    assert check(gated, "--range", f"{base}..{tip}") == expected
    assert check(gated, "--base", base, "--head", tip) == expected
    grafts = gated.path / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{base} {tip}\n")
    assert gated.git("rev-list", tip, f"^{base}") == b""  # git itself now sees no commit
    assert check(gated, "--range", f"{base}..{tip}") == expected
    assert check(gated, "--base", base, "--head", tip) == expected
