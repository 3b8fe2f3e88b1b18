"""Team flows, round 2: every ordinary git move of a team passes at its hook and in CI
(issue 23). The same team as tests/test_scenarios.py: a bare origin, clones with the hooks
`init` writes installed by `pre-commit install`, GitHub's merges in a clone of its own, CI
as fresh clones running the Action."""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_gate import templates
from tests import test_scenarios
from tests.helpers import SCOPE_READ, filled_review
from tests.test_scenarios import Clone, Team, codes, finish, passes, pr, start

pytestmark = [pytest.mark.slow, pytest.mark.integration]

# The team of tests/test_scenarios.py, a copy of its repositories for each test.
team = test_scenarios.team
team_template = test_scenarios.team_template


def _work_while_main_moves_on(team: Team) -> Clone:
    """Alice commits work under her plan while Bob's pull request lands on main; she has
    fetched it, and has not merged it yet."""
    alice, bob = team.developer("alice"), team.developer("bob")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work: app")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    team.merge("bob/docs", "merge")
    alice.git("fetch", "-q", "origin")
    return alice


def test_a_clean_merge_of_main_passes_at_pre_merge_commit(team: Team) -> None:
    """`git merge origin/main` on a planned branch: git runs pre-merge-commit before it
    writes MERGE_HEAD; the gate still knows the merge and judges only the branch's own
    change (main's file is not the branch's work)."""
    alice = _work_while_main_moves_on(team)
    res = alice.git("merge", "--no-edit", "origin/main", check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert len(alice.git("log", "-1", "--format=%P").stdout.split()) == 2  # a merge commit
    finish(alice, "app")  # pre-push judges the merge as a merge too
    passes(team.ci_pull_request("alice/app"))


def test_an_evil_merge_is_still_caught_at_push_and_ci(team: Team) -> None:
    """A merge of main that also slips in a change outside the boundary: the merge commit
    is made with `--no-verify` (or passes pre-merge-commit), but pre-push refuses it and
    CI blocks it (HG101)."""
    alice = _work_while_main_moves_on(team)
    _slip_in_and_be_caught(team, alice, "merge", "--no-commit", "origin/main")


def _slip_in_and_be_caught(team: Team, alice: Clone, *merge: str) -> None:
    """`merge` (a merge of main, stopped before its commit), then a change outside the
    boundary in the merge commit: the commit hook refuses it; made with `--no-verify`,
    pre-push refuses it and CI blocks it (HG101)."""
    alice.git(*merge)
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


# -- a pull or a bare merge that makes a merge commit ------------------------------------------

# `git pull` merges what it fetched (GIT_REFLOG_ACTION `pull ...`, FETCH_HEAD); `git merge`
# alone merges the branch's configured upstream (GIT_REFLOG_ACTION `merge`, no name).
PULL_MERGES = {
    "pull origin main": ("pull", "--no-rebase", "--no-edit", "origin", "main"),
    "pull from the upstream": ("pull", "--no-rebase", "--no-edit"),
    "merge from the upstream": ("merge", "--no-edit"),
}


def _diverged_from_upstream(team: Team, how: str) -> Clone:
    """Alice's planned branch and main both moved on; for the commands without a name the
    branch tracks origin/main. Her branch is not yet fetched up to main for `pull`."""
    alice = _work_while_main_moves_on(team)
    if how != "pull origin main":
        alice.git("branch", "-q", "--set-upstream-to", "origin/main")
    return alice


@pytest.mark.parametrize("how", list(PULL_MERGES))
def test_a_pull_or_bare_merge_of_main_passes_at_pre_merge_commit(team: Team, how: str) -> None:
    """`git pull --no-rebase` (with a remote and branch, or from the upstream) and `git
    merge` alone make a merge commit of main on a planned branch: pre-merge-commit passes it
    as it passes `git merge origin/main`, and so do pre-push and CI."""
    alice = _diverged_from_upstream(team, how)
    res = alice.git(*PULL_MERGES[how], check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert alice.git("log", "-1", "--format=%P").stdout.split()[1] == team.main()  # a merge of main
    finish(alice, "app")
    passes(team.ci_pull_request("alice/app"))


@pytest.mark.parametrize("how", ["pull origin main", "pull from the upstream"])
def test_an_evil_pull_merge_is_still_caught_at_push_and_ci(team: Team, how: str) -> None:
    """A pull whose merge commit also slips in a change outside the boundary (`--no-commit`,
    then the change, then the commit): the commit hook refuses it; made with `--no-verify`,
    pre-push refuses it and CI blocks it (HG101)."""
    alice = _diverged_from_upstream(team, how)
    _slip_in_and_be_caught(team, alice, *PULL_MERGES[how], "--no-commit")


def test_an_evil_pull_merge_amended_is_still_caught_at_push_and_ci(team: Team) -> None:
    """A clean pull merge passes its hook, then `git commit --amend` adds a file outside
    the boundary to it: the amend's hook refuses it; with `--no-verify`, pre-push and CI do."""
    alice = _diverged_from_upstream(team, "pull origin main")
    alice.git(*PULL_MERGES["pull origin main"])
    alice.write("README.md", "# app, evil\n")
    alice.git("add", "README.md")
    refused = alice.git("commit", "--amend", "--no-edit", check=False)
    assert refused.returncode == 1 and "HG101" in refused.stdout + refused.stderr
    alice.git("commit", "--amend", "--no-verify", "--no-edit")
    assert len(alice.git("log", "-1", "--format=%P").stdout.split()) == 2
    push = alice.git("push", "-u", "origin", "HEAD", check=False)
    assert push.returncode != 0 and "HG101" in push.stdout + push.stderr
    alice.git("push", "--no-verify", "-q", "-u", "origin", "HEAD")
    out = team.ci_pull_request("alice/app")
    assert out.code == 1 and "HG101" in codes(out)


def test_a_pull_conflict_resolved_outside_the_boundary_is_caught_at_push_and_ci(team: Team) -> None:
    """`git pull --no-rebase` stops on a conflict; the resolution also changes a file
    outside the boundary: the commit hook refuses it, and made with `--no-verify`, pre-push
    refuses it and CI blocks it (HG101)."""
    alice = _conflicted_merge_of_main(team, *PULL_MERGES["pull origin main"])
    alice.write("src/app.py", "def hello():\n    return 'hi, hey'\n")
    alice.write("README.md", "# app, resolved\n")
    alice.git("add", "-A")
    refused = alice.git("commit", "--no-edit", check=False)
    assert refused.returncode == 1 and "HG101" in refused.stdout + refused.stderr
    alice.git("commit", "-q", "--no-verify", "--no-edit")
    push = alice.git("push", "origin", "HEAD", check=False)
    assert push.returncode != 0 and "HG101" in push.stdout + push.stderr
    alice.git("push", "--no-verify", "-q", "origin", "HEAD")
    out = team.ci_pull_request("alice/app")
    assert out.code == 1 and "HG101" in codes(out)


# Settings a developer may well have (issue 23): in the clone's own config, and in a global
# config under HOME, with attributes that make Python files binary to `git diff`.
CLONE_SETTINGS = {
    "diff.suppressBlankEmpty": "true",
    "diff.noprefix": "true",
    "diff.mnemonicPrefix": "true",
    "core.quotePath": "true",
    "diff.relative": "true",
    "color.ui": "always",
}


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
        # Main's own completed plan came in with the update: the branch's is still the one
        # `status` and `verify` find, without `--plan` (the solo flow of issue 23).
        assert json.loads(alice.hg("status", "--format", "json").stdout)["data"]["plan"] == "app"
        alice.hg("verify")
        alice.commit("Evidence for the updated branch")
        alice.git("push", "-q", "origin", "HEAD")
    passes(team.ci_pull_request("alice/app"))
    passes(team.ci_push_main(team.merge("alice/app", method)))


# -- status says what CI will say -------------------------------------------------------------

STATES = ("planning", "executing", "verified", "reviewing", "completed", "cancelled")
UPDATES = ("not updated", "merged main", "rebased", "conflict resolved")


def _to_state(dev: Clone, branch: str, state: str) -> None:
    """A branch of `dev`'s at `state`, from origin/main's first commit `m0` (commits without
    hooks: the states are what is judged, not how they were reached)."""
    dev.git("checkout", "-q", "-b", branch, "m0")
    dev.hg(
        "plan",
        "new",
        branch,
        "--objective",
        f"Work on {branch}",
        "--boundary",
        "src/app.py",
        "--verify",
        f"tests={test_scenarios.PY} -c pass",
    )
    if state != "planning":
        dev.hg("approve", input=b"y\n")
    dev.git("add", "-A")
    dev.git("commit", "-qnm", "Plan")
    if state == "planning":
        return
    dev.write("src/app.py", "def hello():\n    return 'hi'\n")
    dev.git("commit", "-qanm", "Work")
    if state == "executing":
        return
    if state == "cancelled":
        dev.hg("complete", "--cancel", "--summary", "not needed")
        dev.git("add", "-A")
        dev.git("commit", "-qnm", "Cancel")
        return
    dev.hg("verify")
    dev.git("add", "-A")
    dev.git("commit", "-qnm", "Evidence")
    if state == "verified":
        return
    test_scenarios.review(dev)
    dev.git("add", "-A")
    dev.git("commit", "-qnm", "Review")
    if state == "reviewing":
        return
    dev.hg("complete")
    dev.git("add", "-A")
    dev.git("commit", "-qnm", "Complete")


def _update(dev: Clone, how: str) -> None:
    """Bring the branch up to date with main as a developer does: main has moved on by a
    docs change (`m1`), and then by a change to the branch's own file (`m2`)."""
    if how == "merged main":
        dev.git("merge", "-q", "--no-verify", "--no-edit", "m1")
    elif how == "rebased":
        dev.git("rebase", "-q", "m1")
    elif how == "conflict resolved":
        res = dev.git("merge", "-q", "--no-edit", "m2", check=False)
        if res.returncode != 0:  # the conflict on src/app.py: both sides kept
            if (dev.path / "src/app.py").read_text().count("<<<<<<<"):
                dev.write("src/app.py", "def hello():\n    return 'hi'\n\n\ndef bye():\n    return 'bye'\n")
            dev.git("add", "-A")
            dev.git("commit", "-qn", "--no-edit")


def _main_moves_on(bob: Clone) -> None:
    """Main's commits the states are built from and updated with: `m0` (the adoption), `m1`
    (a docs change), `m2` (a change to src/app.py, the branches' own file), pushed."""
    bob.git("fetch", "-q", "origin")
    bob.git("checkout", "-q", "-B", "main", "origin/main")
    bob.git("tag", "m0")
    bob.write("docs/guide.md", "# guide\n\nMore.\n")
    bob.git("commit", "-qanm", "docs")
    bob.git("tag", "m1")
    bob.write("src/app.py", "def hello():\n    return 'hello'\n\n\ndef bye():\n    return 'bye'\n")
    bob.git("commit", "-qanm", "bye")
    bob.git("tag", "m2")
    bob.git("push", "-q", "--no-verify", "origin", "main", "m0", "m1", "m2")


def test_status_says_what_ci_will_say(team: Team) -> None:
    """Every lifecycle state a branch can be pushed in, not updated, with main merged in,
    rebased, and with a conflict resolved: `status` says blocked exactly when `check
    --stage ci` blocks, on the same codes; then its `next:` names a step (never "none");
    and a review CI finds stale (HG413) is stale in `status`."""
    alice, bob = team.developer("alice"), team.developer("bob")
    _main_moves_on(bob)
    alice.git("fetch", "-q", "--tags", "origin")
    seen = []
    for state in STATES:
        for how in UPDATES:
            branch = f"{state}-{how.replace(' ', '-')}"
            _to_state(alice, branch, state)
            _update(alice, how)
            ci = alice.hg("check", "--stage", "ci", "--base", "origin/main", "--format", "json", check=False)
            st = alice.hg("status", "--json", check=False)
            assert st.returncode == 0, st.stdout
            doc, said = json.loads(ci.stdout), json.loads(st.stdout)["data"]
            blocking = sorted({f["code"] for f in doc["findings"] if f["severity"] == "error"})
            where = f"{state}, {how}: {said['ci']} / {blocking}\nnext: {said['next_step']}"
            assert (said["ci"]["result"] == "blocked") == (ci.returncode == 1), where
            assert sorted({b["code"] for b in said["ci"]["blocking"]}) == blocking, where
            if blocking:
                assert not said["next_step"].startswith("none"), where
                assert "harness-gate" in said["next_step"] or "git " in said["next_step"], where
            stale = {f["path"] for f in doc["findings"] if f["code"] == "HG413" and f["path"].endswith("review.md")}
            for r in said["reviews"]:
                if r["path"] in stale:
                    assert not r["fresh"], where
            seen.append((state, how, tuple(blocking)))

    assert ("completed", "not updated", ()) in seen  # a finished branch passes
    assert any(s == "completed" and codes for s, _, codes in seen)  # and an updated one may block


def _conflicted_merge_of_main(team: Team, *merge: str) -> Clone:
    """alice's completed PR on src/app.py; bob lands another change to the same lines;
    alice merges main (`git merge origin/main`, or the command `merge` names) and gets the
    conflict."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "def hello():\n    return 'hi'\n")
    pr(team, bob, "bob/app", "bob-app", "src/app.py", "def hello():\n    return 'hey'\n")
    team.merge("bob/app", "merge")
    alice.git("fetch", "-q", "origin")
    res = alice.git(*(merge or ("merge", "origin/main")), check=False)
    assert res.returncode == 1 and "CONFLICT" in res.stdout
    return alice


def _documented_ways_through() -> list[list[str]]:
    """The command blocks of docs/workflows.md's "A conflicted merge of the base", each a
    list of the lines as typed (comment kept: it says what the line does)."""
    text = (Path(__file__).parent.parent / "docs/workflows.md").read_text()
    section = text.split("### A conflicted merge of the base", 1)[1].split("\n### ", 1)[0]
    return [block.split("\n```", 1)[0].splitlines() for block in section.split("```bash\n")[1:]]


def _follow(alice: Clone, lines: list[str], resolution: dict[str, str]) -> int:
    """Type `lines` as they are written, after the conflict of `git merge origin/main` (its
    line, the first, already run): a line whose comment says "refused" must be, every other
    must pass. The resolution is written in the editor after the merge, and the reviewer
    fills the review in after `review new`. The number of commands typed after the conflict."""
    first, *rest = lines
    assert first.split("#")[0].split() == ["git", "merge", "origin/main"], first
    for path, text in resolution.items():
        alice.write(path, text)
    for line in rest:
        argv = shlex.split(line.split("#")[0])
        res = alice.git(*argv[1:], check=False) if argv[0] == "git" else alice.hg(*argv[1:], check=False)
        said = res.stdout + res.stderr
        refused = "# refused" in line
        assert (res.returncode != 0) == refused, f"{line}\n{said}"
        if refused:
            assert "HG101" in said and "git checkout MERGE_HEAD -- PATH" in said, said
        if argv[:3] == ["harness-gate", "review", "new"]:
            path = alice.path / res.stdout.split()[1]
            text = filled_review(path.read_text()).replace(templates.IDENTITY_PLACEHOLDER, "Rae Viewer")
            path.write_text(text)
    return len(rest)


def test_a_conflict_resolved_inside_the_boundary_is_the_branchs_own_work(team: Team) -> None:
    """The documented way through a conflicted merge of main on a completed plan, typed as
    docs/workflows.md writes it: resolve, `git add`, commit the merge (it passes: the
    resolution is inside the boundary), verify, a re-review, commit, push: seven commands
    after the conflict, as the docs say. CI passes, and so does main's push check."""
    alice = _conflicted_merge_of_main(team)
    inside, _ = _documented_ways_through()
    typed = _follow(alice, inside[:3], {"src/app.py": "def hello():\n    return 'hi, hey'\n"})
    said = json.loads(alice.hg("status", "--json").stdout)["data"]  # after the merge commit
    assert said["ci"]["result"] == "blocked"
    assert "harness-gate verify" in said["next_step"] and "harness-gate review new" in said["next_step"]
    assert [r["fresh"] for r in said["reviews"]] == [False]
    typed += _follow(alice, ["git merge origin/main", *inside[3:]], {})
    assert (
        typed == 7 and "seven commands, one a line" in (Path(__file__).parent.parent / "docs/workflows.md").read_text()
    )
    said = json.loads(alice.hg("status", "--json").stdout)["data"]
    assert said["ci"]["result"] == "pass", said["ci"]
    passes(team.ci_pull_request("alice/app"))
    passes(team.ci_push_main(team.merge("alice/app", "merge")))


def test_status_during_a_conflicted_merge_names_the_way_through(team: Team) -> None:
    """`git merge origin/main` stopped on a conflict inside the boundary, nothing resolved
    yet: `status`'s next step is to resolve, `git add` and `git commit` the merge (verify
    first would be refused with HG209), in text and in `--json`."""
    alice = _conflicted_merge_of_main(team)
    text = alice.hg("status").stdout
    said = json.loads(alice.hg("status", "--json").stdout)["data"]
    (line,) = [ln for ln in text.splitlines() if ln.startswith("next:")]
    assert line.split(None, 1)[1] == said["next_step"], text
    step = said["next_step"]
    assert step.startswith("finish the merge first"), step
    assert "src/app.py" in step and "git add" in step and "git commit" in step, step
    assert "verify" not in step and step.index("git add") < step.index("git commit"), step
    (ci,) = [ln for ln in text.splitlines() if ln.startswith("ci:")]
    assert ci.endswith("the merge in progress is not committed yet"), ci  # CI judges commits only
    # The step leads through: the merge is committed by its hook.
    alice.write("src/app.py", "def hello():\n    return 'hi, hey'\n")
    alice.git("add", "src/app.py")
    alice.git("commit", "-q", "--no-edit")
    assert not (alice.path / ".git/MERGE_HEAD").exists()


def test_a_resolution_outside_the_boundary_names_the_way_out(team: Team) -> None:
    """A resolution that also changes a file outside the boundary is refused, and the hint
    names the documented way: keep the base's side, commit the merge; then the same five
    commands as a resolution inside it. Typed as docs/workflows.md writes it, to the push:
    CI as a fresh clone passes, and so does main's push check."""
    alice = _conflicted_merge_of_main(team)
    _, outside = _documented_ways_through()
    resolution = {"src/app.py": "def hello():\n    return 'hi, hey'\n", "README.md": "# app, resolved\n"}
    typed = _follow(alice, outside, resolution)
    # git add, the refused commit, then the way out (2) and the five of the inside path.
    assert typed == 2 + 2 + 5
    assert alice.git("show", "HEAD^:README.md").stdout == "# app\n"  # the base's side kept
    passes(team.ci_pull_request("alice/app"))
    passes(team.ci_push_main(team.merge("alice/app", "merge")))


def test_pre_push_after_an_update_from_main_speaks_only_of_the_branchs_own_plans(team: Team) -> None:
    """Alice merges main (holding Bob's landed plan and its evidence) into her pull request
    and pushes: the pushed range holds Bob's commits too, but his plan is not hers to
    verify again, and pre-push says nothing of it."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "def hello():\n    return 'hi'\n")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    passes(team.ci_push_main(team.merge("bob/docs", "merge")))
    alice.git("fetch", "-q", "origin")
    alice.git("merge", "-q", "--no-edit", "origin/main")
    alice.hg("verify")
    alice.commit("Evidence for the updated branch")
    push = alice.git("push", "origin", "HEAD")
    out = push.stdout + push.stderr
    assert push.returncode == 0, out
    assert "plans/docs/" not in out, out
    passes(team.ci_pull_request("alice/app"))


# -- cancelling is never a dead end -----------------------------------------------------------


def test_a_cancelled_plan_has_a_way_to_land_or_to_drop(team: Team) -> None:
    """A BLOCKED review, `complete --cancel`: CI blocks the branch's code, which nothing
    reviewed. The way out the hint names: the branch rebuilt from main with the plan's
    folder alone (the record of the cancelled attempt), force-pushed; CI passes, and so
    does main's push check once it lands."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work: app")
    alice.hg("verify")
    out = alice.hg("review", "new", "--reviewer", "Rae Viewer").stdout
    path = alice.path / out.split()[1]
    path.write_text(path.read_text().replace(*SCOPE_READ).replace(test_scenarios.PLACEHOLDER, "BLOCKED"))
    alice.commit("Review: app, blocked")
    alice.hg("complete", "--cancel")
    alice.commit("Cancel: app")
    alice.git("push", "-q", "-u", "origin", "HEAD")
    blocked = team.ci_pull_request("alice/app")
    assert blocked.code == 1 and "HG419" in codes(blocked), blocked.stdout
    # status says what CI says, and its next step is the way out.
    status = json.loads(alice.hg("status", "--format", "json").stdout)["data"]
    assert status["ci"]["result"] == "blocked"
    assert status["next_step"].startswith("rebuild the branch"), status["next_step"]
    assert "git reset --hard" in status["next_step"]
    # The four commands of the hint.
    alice.git("reset", "-q", "--hard", "origin/main")
    alice.git("checkout", "ORIG_HEAD", "--", "harness/plans/app")
    alice.git("commit", "-qm", "Cancelled: app")
    alice.git("push", "-q", "--force-with-lease", "origin", "HEAD")
    passes(team.ci_pull_request("alice/app"))
    assert alice.git("diff", "--name-only", "origin/main", "HEAD").stdout.split() == [
        f"harness/plans/app/{name}" for name in sorted(p.name for p in (alice.path / "harness/plans/app").iterdir())
    ]
    passes(team.ci_push_main(team.merge("alice/app", "merge")))


# -- following status's next step to a green CI -----------------------------------------------

# The commands a `next:` line names, in the words it names them: the first one in the line is
# the step to take now (status is asked again after each).
_NAMED = re.compile(r"harness-gate (?:verify|review new|complete)\b|\bfills in\b|\bcommit\b|\bpush\b")


def _take_step(dev: Clone, step: str) -> str:
    """Do the first thing `step` names, as a developer who reads it literally; what was done."""
    named = _NAMED.search(step)
    assert named is not None, f"no command named: {step}"
    what = named.group()
    if what == "harness-gate review new":
        dev.hg("review", "new")
    elif what.startswith("harness-gate "):
        dev.hg(*what.split()[1:])
    elif what == "fills in":  # the reviewer, who did not write the change, fills the review in
        rel = step.split("fills in ", 1)[1].split(":", 1)[0]
        path = dev.path / rel
        path.write_text(filled_review(path.read_text()).replace(templates.IDENTITY_PLACEHOLDER, "Rae Viewer"))
    elif what == "commit":
        dev.commit("As status said: " + step[:40])  # `git add -A`, `git commit`: the hooks run
    else:
        dev.git("push", "-q", "origin", "HEAD")  # pre-push runs
    return what


# From three states of test_status_says_what_ci_will_say, the steps `next:` names, in order.
_FOLLOWED = {
    ("completed", "conflict resolved"): ["harness-gate verify", "harness-gate review new", "fills in", "commit"],
    ("verified", "merged main"): [
        "harness-gate verify",
        "harness-gate review new",
        "fills in",
        "harness-gate complete",
        "commit",
    ],
    ("reviewing", "rebased"): [
        "harness-gate verify",
        "harness-gate review new",
        "fills in",
        "harness-gate complete",
        "commit",
    ],
}


@pytest.mark.parametrize(("state", "how"), list(_FOLLOWED))
def test_following_status_next_step_leads_to_a_green_ci(team: Team, state: str, how: str) -> None:
    """A branch in the states of test_status_says_what_ci_will_say, pushed: before each step
    `status`'s `ci:` (text and `--json`) says what CI as a fresh clone says of the pushed
    branch, and the command its `next:` names is the step taken, until CI passes. The push
    CI judges runs pre-push once status says CI passes, and pre-push agrees."""
    alice, bob = team.developer("alice"), team.developer("bob")
    _main_moves_on(bob)
    alice.git("fetch", "-q", "--tags", "origin")
    branch = f"{state}-{how.replace(' ', '-')}"
    _to_state(alice, branch, state)
    _update(alice, how)
    taken: list[str] = []
    for _ in range(12):
        said = json.loads(alice.hg("status", "--json").stdout)["data"]
        text = alice.hg("status").stdout
        verify = () if said["ci"]["result"] == "pass" else ("--no-verify",)
        alice.git("push", "-q", "-f", *verify, "-u", "origin", f"HEAD:{branch}")  # what CI sees
        out = team.ci_pull_request(branch)
        ci_codes = codes(out)
        where = f"after {taken}: status {said['ci']}, CI {out.code} {ci_codes}\nnext: {said['next_step']}"
        assert (said["ci"]["result"] == "pass") == (out.code == 0), where
        assert sorted({b["code"] for b in said["ci"]["blocking"]}) == ci_codes, where
        (ci_line,) = [ln for ln in text.splitlines() if ln.startswith("ci:")]
        assert ci_line.split()[1] == ("pass" if out.code == 0 else "blocked:"), ci_line
        if out.code == 0:
            break
        taken.append(_take_step(alice, said["next_step"]))
    else:
        raise AssertionError(f"CI still blocks after {taken}")
    assert said["state"] == "completed" and taken == _FOLLOWED[state, how], taken
