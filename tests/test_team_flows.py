"""Team flows, round 2: every ordinary git move of a team passes at its hook and in CI
(issue 23). The same team as tests/test_scenarios.py: a bare origin, clones with the hooks
`init` writes installed by `pre-commit install`, GitHub's merges in a clone of its own, CI
as fresh clones running the Action."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import test_scenarios
from tests.test_scenarios import Clone, Team, codes, finish, passes, pr, start

pytestmark = [pytest.mark.slow, pytest.mark.integration]

# The team of tests/test_scenarios.py, a copy of its repositories for each test.
team = test_scenarios.team
team_template = test_scenarios.team_template


def test_a_clean_merge_of_main_passes_at_pre_merge_commit(team: Team) -> None:
    """`git merge origin/main` on a planned branch: git runs pre-merge-commit before it
    writes MERGE_HEAD; the gate still knows the merge and judges only the branch's own
    change (main's file is not the branch's work)."""
    alice, bob = team.developer("alice"), team.developer("bob")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work: app")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    team.merge("bob/docs", "merge")
    alice.git("fetch", "-q", "origin")
    res = alice.git("merge", "--no-edit", "origin/main", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(alice.git("log", "-1", "--format=%P").stdout.split()) == 2  # a merge commit
    finish(alice, "app")  # pre-push judges the merge as a merge too
    passes(team.ci_pull_request("alice/app"))


def test_an_evil_merge_is_still_caught_at_push_and_ci(team: Team) -> None:
    """A merge of main that also slips in a change outside the boundary: the merge commit
    is made with `--no-verify` (or passes pre-merge-commit), but pre-push refuses it and
    CI blocks it (HG101)."""
    alice, bob = team.developer("alice"), team.developer("bob")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work: app")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    team.merge("bob/docs", "merge")
    alice.git("fetch", "-q", "origin")
    alice.git("merge", "--no-commit", "origin/main")
    alice.write("README.md", "# app, evil\n")
    alice.git("add", "README.md")
    refused = alice.git("commit", "--no-edit", check=False)
    assert refused.returncode == 1 and "HG101" in refused.stdout + refused.stderr
    alice.git("commit", "--no-verify", "--no-edit")
    push = alice.git("push", "-u", "origin", "HEAD", check=False)
    assert push.returncode != 0 and "HG101" in push.stdout + push.stderr
    alice.git("push", "--no-verify", "-q", "-u", "origin", "HEAD")
    out = team.ci_pull_request("alice/app")
    assert out.code == 1 and "HG101" in codes(out)


# Settings a developer may well have (issue 23): in the clone's own config, and in a global
# config under HOME, with attributes that make Python files binary to `git diff`.
CLONE_SETTINGS = {
    "diff.suppressBlankEmpty": "true", "diff.noprefix": "true", "diff.mnemonicPrefix": "true",
    "core.quotePath": "true", "diff.relative": "true", "color.ui": "always",
}  # fmt: skip


@contextlib.contextmanager
def own_settings(dev: Clone, home: Path) -> Iterator[None]:
    """The developer's settings on for what `dev` does inside (the clone's config stays)."""
    for key, value in CLONE_SETTINGS.items():
        dev.git("config", key, value)
    home.mkdir(exist_ok=True)
    (home / "attributes").write_text("*.py -diff\n")
    (home / ".gitconfig").write_text(f"[core]\n\tattributesFile = {home / 'attributes'}\n[diff]\n\tcontext = 1\n")
    with pytest.MonkeyPatch.context() as m:
        m.delenv("GIT_CONFIG_GLOBAL")
        m.setenv("HOME", str(home))
        yield


@pytest.mark.parametrize("method", ["merge", "squash", "rebase"])
def test_a_green_pr_updated_from_main_stays_green_after_any_merge_method(
    team: Team, tmp_path: Path, method: str
) -> None:
    """A PR made by a developer with ordinary git settings of their own, completed, then
    "Update branch" (main merged into it), verify, green in CI (a fresh clone without those
    settings); then merged by each of GitHub's methods: main's push check (`--landed`)
    passes too. The review's change id is the same whoever computes it."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    with own_settings(alice, tmp_path / "alice-home"):
        pr(team, alice, "alice/app", "app", "src/app.py", "def hello():\n    return 'hi'\n")
    passes(team.ci_push_main(team.merge("bob/docs", method)))
    team.update_branch("alice/app")
    with own_settings(alice, tmp_path / "alice-home"):
        alice.git("pull", "-q", "--ff-only")
        alice.hg("verify")
        alice.commit("Evidence for the updated branch")
        alice.git("push", "-q", "origin", "HEAD")
    passes(team.ci_pull_request("alice/app"))
    passes(team.ci_push_main(team.merge("alice/app", method)))
