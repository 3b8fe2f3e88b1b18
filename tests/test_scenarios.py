"""A team: one bare origin, developers' clones with the hooks `init` writes installed through
pre-commit, GitHub's merges done by a clone of its own, and CI as fresh clones running the
Action (tests/github_runner.py) with pull_request, push and merge_group payloads.

Every developer step is what a person types: `harness-gate ...` as a process in the clone,
real `git commit` and `git push` with their hooks. Nothing is judged in-process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_gate.cli import cli
from harness_gate.hooks import local_config
from tests.github_runner import Outcome, run_action
from tests.helpers import built_once, filled_review

# builds a team of clones per test
pytestmark = [pytest.mark.slow, pytest.mark.integration]

PY = Path(sys.executable).as_posix()
# The configuration `init` writes, its entries run from this interpreter (no network).
HOOKS = local_config().replace("entry: harness-gate ", f"entry: {PY} -m harness_gate ")
PLACEHOLDER = "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED"


@dataclass(frozen=True)
class Clone:
    path: Path

    def run(self, *argv: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            list(argv),
            cwd=self.path,
            input=input.decode() if input else None,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
        return proc

    def git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run("git", *args, check=check)

    def hg(self, *args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`harness-gate ARGS`, as typed in the clone: run in this process (click's CliRunner,
        the clone as working directory), as a process start costs more than most commands.
        The hooks and the Action still run the installed entry point as their own processes."""
        here = Path.cwd()
        os.chdir(self.path)
        try:
            res = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
        finally:
            os.chdir(here)
        if check and res.exit_code != 0:
            raise AssertionError(f"harness-gate {' '.join(args)} exited {res.exit_code}:\n{res.output}")
        return subprocess.CompletedProcess(["harness-gate", *args], res.exit_code, res.stdout, res.stderr)

    def write(self, rel: str, text: str) -> None:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def sha(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", rev).stdout.strip()

    def commit(self, message: str) -> subprocess.CompletedProcess[str]:
        """`git add -A && git commit`: the pre-commit hooks run."""
        self.git("add", "-A")
        return self.git("commit", "-qm", message)


class Team:
    """An origin with harness-gate adopted on main, clones of it for two developers (the
    hooks installed) and for GitHub's own merges (no hooks run on the server)."""

    DEVELOPERS = ("alice", "bob")

    def __init__(self, root: Path, runner_temp: Path) -> None:
        self.root = root
        self.runner_temp = runner_temp
        self.origin = root / "origin.git"
        self.github = Clone(root / "github")

    @classmethod
    def build(cls, root: Path) -> None:
        """The team's repositories, from scratch (once per test session: `team` copies them)."""
        origin = root / "origin.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
        team = cls(root, root)
        founder = team.clone("founder")
        founder.write("README.md", "# app\n")
        founder.write(".gitignore", "__pycache__/\n")
        founder.write("src/app.py", "def hello():\n    return 'hello'\n")
        founder.write("docs/guide.md", "# guide\n")
        founder.commit("an existing project")
        founder.hg("init")
        founder.write(".pre-commit-config.yaml", HOOKS)
        founder.commit("adopt harness-gate")  # a plain clone: no hook installed yet
        founder.git("push", "-q", "origin", "main")
        team.clone("github")
        for name in cls.DEVELOPERS:
            team.clone(name).run(PY, "-m", "pre_commit", "install")

    def moved_from(self, template: Path) -> None:
        """This team's copy of the repositories `build` made under `template`."""
        shutil.copytree(template, self.root, symlinks=True)
        for name in ("github", *self.DEVELOPERS):
            Clone(self.root / name).git("remote", "set-url", "origin", str(self.origin))

    def clone(self, name: str) -> Clone:
        path = self.root / name
        subprocess.run(["git", "clone", "-q", str(self.origin), str(path)], check=True, capture_output=True)
        return Clone(path)

    def developer(self, name: str) -> Clone:
        """A developer's clone with the hooks `init` configured installed (`pre-commit install`)."""
        assert name in self.DEVELOPERS
        return Clone(self.root / name)

    def main(self) -> str:
        out = subprocess.run(["git", "rev-parse", "main"], cwd=self.origin, capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def branch(self, name: str) -> str:
        out = subprocess.run(["git", "rev-parse", name], cwd=self.origin, capture_output=True, text=True, check=True)
        return out.stdout.strip()

    # -- CI: a fresh clone for every run -----------------------------------------------------
    def _ci_clone(self, checkout: str) -> Clone:
        ci = self.clone(f"ci-{os.urandom(4).hex()}")
        ci.git("checkout", "-q", "--detach", checkout)
        return ci

    def ci_pull_request(self, branch: str, **inputs: str) -> Outcome:
        head = self.branch(branch)
        ci = self._ci_clone(head)
        payload = {"pull_request": {"base": {"sha": self.main(), "ref": "main"}, "head": {"sha": head}}}
        return run_action(ci.path, self.runner_temp, "pull_request", payload, **inputs)

    def ci_push_main(self, before: str) -> Outcome:
        after = self.main()
        ci = self._ci_clone(after)
        payload = {"ref": "refs/heads/main", "before": before, "after": after, "repository": {"default_branch": "main"}}
        return run_action(ci.path, self.runner_temp, "push", payload)

    # -- GitHub's merge button -----------------------------------------------------------------
    def merge(self, branch: str, method: str) -> str:
        """Merge the pull request as GitHub does; the previous tip of main."""
        gh = self.github
        gh.git("fetch", "-q", "origin")
        gh.git("checkout", "-q", "-B", "main", "origin/main")
        before = gh.sha()
        if method == "merge":
            gh.git("merge", "-q", "--no-ff", "--no-edit", f"origin/{branch}")
        elif method == "squash":
            gh.git("merge", "-q", "--squash", f"origin/{branch}")
            gh.git("commit", "-qm", f"{branch} (#1)")
        else:  # rebase: the pull request's commits replayed onto main
            gh.git("checkout", "-q", "-B", "replay", f"origin/{branch}")
            gh.git("rebase", "-q", "main")
            gh.git("checkout", "-q", "main")
            gh.git("merge", "-q", "--ff-only", "replay")
        gh.git("push", "-q", "origin", "main")
        return before

    def update_branch(self, branch: str) -> None:
        """GitHub's "Update branch": the base merged into the pull request's branch."""
        gh = self.github
        gh.git("fetch", "-q", "origin")
        gh.git("checkout", "-q", "-B", branch, f"origin/{branch}")
        gh.git("merge", "-q", "--no-edit", "origin/main")
        gh.git("push", "-q", "origin", branch)


@pytest.fixture(scope="session")
def team_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The team's repositories, built once: each test works on a copy of its own."""

    def build(path: Path) -> None:
        with pytest.MonkeyPatch.context() as m:
            _pre_commit_home(m, tmp_path_factory)
            Team.build(path / "team")

    return built_once(tmp_path_factory, "team-template", build) / "team"


def _pre_commit_home(m: pytest.MonkeyPatch, factory: pytest.TempPathFactory) -> None:
    m.setenv("PRE_COMMIT_HOME", str(factory.getbasetemp() / "pre-commit-home"))


@pytest.fixture
def team(
    tmp_path: Path,
    runner_temp: Path,
    team_template: Path,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Team]:
    _pre_commit_home(monkeypatch, tmp_path_factory)
    team = Team(tmp_path / "team", runner_temp)
    team.moved_from(team_template)
    yield team


# -- what a developer types -------------------------------------------------------------------


def start(dev: Clone, branch: str, plan_id: str, boundary: str) -> None:
    dev.git("fetch", "-q", "origin")
    dev.git("checkout", "-q", "-b", branch, "origin/main")
    dev.hg(
        "plan",
        "new",
        plan_id,
        "--objective",
        f"Work on {plan_id}",
        "--boundary",
        boundary,
        "--verify",
        f"tests={PY} -c pass",
    )
    dev.hg("approve", input=b"y\n")
    dev.commit(f"Plan: {plan_id}")


def review(dev: Clone) -> None:
    """`harness-gate review new`, then the reviewer fills in PASS."""
    out = dev.hg("review", "new", "--reviewer", "Rae Viewer").stdout
    path = dev.path / out.split()[1]
    path.write_text(filled_review(path.read_text()))


def finish(dev: Clone, plan_id: str) -> None:
    """verify, review, complete; each with its commit; then push."""
    dev.hg("verify")
    review(dev)
    dev.commit(f"Review: {plan_id}")
    dev.hg("complete")
    dev.commit(f"Complete: {plan_id}")
    dev.git("push", "-q", "-u", "origin", "HEAD")


def pr(team: Team, dev: Clone, branch: str, plan_id: str, path: str, text: str) -> None:
    """A whole pull request: plan, work, verify, review, complete, push."""
    start(dev, branch, plan_id, path)
    dev.write(path, text)
    dev.commit(f"Work: {plan_id}")
    finish(dev, plan_id)


def codes(out: Outcome) -> list[str]:
    doc = json.loads(Path(out.outputs["report-path"]).read_text())
    return sorted({f["code"] for f in doc["findings"] if f["severity"] == "error"})


def passes(out: Outcome) -> None:
    assert out.code == 0, out.stdout + out.summary
    assert out.outputs["result"] == "pass"


# -- scenarios -----------------------------------------------------------------------------------


@pytest.mark.parametrize("first", ["alice", "bob"])
def test_two_plans_at_once_merged_in_either_order(team: Team, first: str) -> None:
    """Two developers, two plans open at the same time: nothing shared conflicts, each PR
    is judged by its own plan only, in whichever order they merge."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "def hello():\n    return 'hi'\n")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    passes(team.ci_pull_request("alice/app"))
    passes(team.ci_pull_request("bob/docs"))
    order = ["alice/app", "bob/docs"] if first == "alice" else ["bob/docs", "alice/app"]
    for branch in order:
        before = team.merge(branch, "merge")  # no add/add conflict: no file is shared
        passes(team.ci_push_main(before))
    main = team.clone("after")
    assert (main.path / "harness/plans/app/002-completion.md").is_file()
    assert (main.path / "harness/plans/docs/002-completion.md").is_file()
    assert not (main.path / "harness/active").exists()


def test_a_branch_is_never_judged_by_another_branchs_plan(team: Team) -> None:
    """bob's plan allows docs/**; a commit of his touching src/ is his plan's HG101, never
    allowed or judged by alice's plan for src/**, merged to main meanwhile or not."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "x = 1\n")
    team.merge("alice/app", "merge")
    start(bob, "bob/docs", "docs", "docs/**")
    bob.write("src/app.py", "x = 2\n")
    bob.git("add", "-A")
    res = bob.git("commit", "-qm", "outside", check=False)
    assert res.returncode == 1
    said = res.stdout + res.stderr  # git passes the hook's output on
    assert "HG101" in said and "write boundary of `docs`" in said


@pytest.mark.parametrize("how", ["merge", "rebase", "reverify"])
def test_update_from_main_needs_only_verify(team: Team, how: str) -> None:
    """A completed PR whose base moved on: after "Update branch" (or a rebase) the review
    and the completion still hold; the new tree needs fresh evidence: `verify` and a
    commit (or nothing, with CI's reverify)."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "def hello():\n    return 'hi'\n")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    team.merge("bob/docs", "merge")
    if how == "rebase":
        alice.git("fetch", "-q", "origin")
        alice.git("rebase", "-q", "origin/main")
        alice.git("push", "-q", "--force-with-lease", "origin", "HEAD")  # pre-push judges the rebased commits
    else:
        team.update_branch("alice/app")
        alice.git("pull", "-q", "--ff-only")
    if how == "reverify":
        passes(team.ci_pull_request("alice/app", reverify="true"))  # CI ran the commands on the new head
        return
    stale = team.ci_pull_request("alice/app")
    assert stale.code == 1
    assert codes(stale) == ["HG302"]  # evidence only: the review of the change still holds
    assert "not in this clone" in stale.stdout
    alice.hg("verify")  # the plan is completed; verify still records evidence for it
    alice.commit("Evidence for the updated branch")
    alice.git("push", "-q", "origin", "HEAD")
    passes(team.ci_pull_request("alice/app"))
    before = team.merge("alice/app", "merge")
    passes(team.ci_push_main(before))


@pytest.mark.parametrize("method", ["merge", "squash", "rebase"])
def test_every_merge_method_then_the_next_pr(team: Team, method: str) -> None:
    """Each of GitHub's merge methods, onto a main that moved on meanwhile: main's push
    check passes, and the next PR from the new main passes."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "def hello():\n    return 'hi'\n")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    passes(team.ci_push_main(team.merge("bob/docs", method)))
    passes(team.ci_pull_request("alice/app"))  # not updated: still judged on its own change
    landed = team.ci_push_main(team.merge("alice/app", method))
    passes(landed)
    pr(team, bob, "bob/next", "next", "docs/next.md", "# next\n")
    passes(team.ci_pull_request("bob/next"))
    passes(team.ci_push_main(team.merge("bob/next", method)))


def test_merge_queue(team: Team) -> None:
    """A merge queue's group commit (main moved on, then the PR merged onto it)."""
    alice, bob = team.developer("alice"), team.developer("bob")
    pr(team, alice, "alice/app", "app", "src/app.py", "x = 1\n")
    pr(team, bob, "bob/docs", "docs", "docs/guide.md", "# guide\n\nMore.\n")
    team.merge("bob/docs", "merge")
    gh = team.github
    gh.git("checkout", "-q", "-B", "gh-readonly-queue/main/pr-2", "origin/main")
    gh.git("merge", "-q", "--no-ff", "--no-edit", "origin/alice/app")
    gh.git("push", "-q", "origin", "HEAD")
    group = gh.sha()
    ci = team._ci_clone(group)
    payload = {"merge_group": {"base_sha": team.main(), "head_sha": group}}
    out = run_action(ci.path, team.runner_temp, "merge_group", payload)
    passes(out)
    assert "HG302" in out.stdout  # a warning: the evidence is the PR head's, not the group's


def test_stale_evidence_in_a_fresh_clone(team: Team) -> None:
    """Code changed after `verify`, then pushed: the author's clone and a fresh CI clone
    both block with HG302 (exit 1); CI says the verified tree is not in its clone."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.hg("verify")
    alice.write("src/app.py", "x = 2\n")
    alice.commit("Work, and its evidence for an earlier tree")
    alice.git("push", "-q", "-u", "origin", "HEAD")
    out = team.ci_pull_request("alice/app")
    assert out.code == 1 and out.outputs["result"] == "blocked"
    assert codes(out) == ["HG302", "HG413", "HG415"]
    assert "verified tree" in out.stdout and "not in this clone" in out.stdout
    local = alice.hg("check", "--stage", "ci", "--base", "origin/main", "--format", "json", check=False)
    assert local.returncode == 1
    doc = json.loads(local.stdout)
    assert sorted({f["code"] for f in doc["findings"] if f["severity"] == "error"}) == codes(out)
    assert any("differs in src/app.py" in f["message"] for f in doc["findings"])


def test_work_in_progress_push(team: Team) -> None:
    """A draft: code pushed before any evidence. pre-push warns, the push goes through;
    CI blocks until the plan is finished."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("WIP")
    push = alice.git("push", "-u", "origin", "HEAD")
    assert "HG301" in push.stdout + push.stderr  # said, not refused
    assert team.branch("alice/app") == alice.sha()
    out = team.ci_pull_request("alice/app")
    assert out.code == 1
    assert codes(out) == ["HG301", "HG413", "HG415"]


def test_an_open_plan_is_blocked_at_ci(team: Team) -> None:
    """Verified and reviewed, but never completed: main would hold an open plan."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.hg("verify")
    review(alice)
    alice.commit("Work, evidence, review")
    alice.git("push", "-q", "-u", "origin", "HEAD")
    out = team.ci_pull_request("alice/app")
    assert out.code == 1
    assert codes(out) == ["HG415"]
    assert "plan `app` is still open (reviewing)" in out.stdout


def test_the_first_commit_of_a_new_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git init`, `harness-gate init`, `pre-commit install`, the first commit and push."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(origin)], check=True)
    new = Clone(tmp_path / "new")
    new.path.mkdir()
    new.git("init", "-q", "-b", "main")
    new.write("src/app.py", "x = 1\n")
    new.hg("init")
    new.write(".pre-commit-config.yaml", HOOKS)
    new.run(PY, "-m", "pre_commit", "install")
    new.commit("Start the project with harness-gate")  # the hooks ran, and passed
    new.git("remote", "add", "origin", str(origin))
    new.git("push", "-q", "-u", "origin", "main")
    new.write("src/app.py", "x = 2\n")  # the second commit is judged: no plan yet
    new.git("add", "-A")
    res = new.git("commit", "-qm", "no plan", check=False)
    assert res.returncode == 1
    assert "HG201" in res.stdout + res.stderr
