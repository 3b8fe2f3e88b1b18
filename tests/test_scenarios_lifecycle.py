"""A team's flows beyond the happy path (issue: teams, round 2): the repair and pause loop
driven by commands, cancelling, `verify`'s progress, and the small mends a team met. The
team, its clones and CI as fresh clones are tests/test_scenarios.py's."""

from __future__ import annotations

import os
import pty
import subprocess
import time

import pytest

from tests import test_scenarios
from tests.helpers import SCOPE_READ
from tests.test_scenarios import PLACEHOLDER, PY, Clone, Team, finish, passes, start

# The team's fixtures, shared with tests/test_scenarios.py.
team_template = test_scenarios.team_template
team = test_scenarios.team

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def _verify_argv() -> list[str]:
    return [PY, "-m", "harness_gate", "verify"]


def _slow_plan(dev: Clone) -> None:
    """A branch whose plan's one command runs for about 2.5 s."""
    dev.git("fetch", "-q", "origin")
    dev.git("checkout", "-q", "-b", "alice/slow", "origin/main")
    dev.hg(
        "plan",
        "new",
        "slow",
        "--objective",
        "Slow checks",
        "--boundary",
        "src/**",
        "--verify",
        f"slow={PY} -c 'import time; time.sleep(2.5)'",
    )
    dev.hg("approve", input=b"y\n")
    dev.commit("Plan: slow")
    dev.write("src/app.py", "x = 1\n")
    dev.git("add", "-A")


def test_verify_shows_progress_in_a_pipe(team: Team) -> None:
    """In a pipe (a CI log): a line as the command starts, before it ends, and one as it ends."""
    alice = team.developer("alice")
    _slow_plan(alice)
    proc = subprocess.Popen(_verify_argv(), cwd=alice.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    first = proc.stderr.readline().decode()
    started = time.monotonic()
    assert "slow" in first and "started" in first
    assert proc.poll() is None  # said while the command still runs
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - started > 1.5
    assert proc.returncode == 0, out + err
    (end,) = err.decode().splitlines()
    assert end.startswith("[harness-gate] slow ") and "PASS" in end
    assert "\r" not in err.decode() and "\x1b" not in err.decode()  # nothing redrawn in a log
    assert b"slow" in out  # the report, on stdout as before


def test_verify_shows_progress_on_a_terminal(team: Team) -> None:
    """On a terminal: the command's line as it starts, redrawn with its elapsed time, its result at the end."""
    alice = team.developer("alice")
    _slow_plan(alice)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        _verify_argv(), cwd=alice.path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower
    )
    os.close(follower)
    seen = b""
    timeline: list[tuple[float, bytes]] = []
    start_time = time.monotonic()
    while True:
        try:
            chunk = os.read(leader, 1024)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        timeline.append((time.monotonic() - start_time, chunk))
        seen += chunk
    os.close(leader)
    out = proc.communicate(timeout=60)[0]
    assert proc.returncode == 0, out
    text = seen.decode()
    assert text.startswith("slow `")  # shown at once
    assert "... 1s" in text and "... 2s" in text  # the elapsed time while it runs
    last = text.replace("\r\n", "\n").rstrip("\n").rsplit("\r", 1)[-1]
    assert "PASS" in last and last.startswith("\x1b[Kslow `")
    assert timeline[-1][0] - timeline[0][0] > 1.5  # the first line came while the command ran


def _reviewed(dev: Clone, verdict: str, finding_id: str = "F1") -> str:
    """`review new`, then the reviewer fills in `verdict` (with one finding unless it passes); committed."""
    out = dev.hg("review", "new", "--reviewer", "Rae Viewer").stdout
    rel = out.split()[1]
    path = dev.path / rel
    text = path.read_text().replace(*SCOPE_READ).replace(PLACEHOLDER, verdict)
    if verdict not in ("PASS", "PASS_WITH_NOTES"):
        found = f'"findings": [{{"id": "{finding_id}", "severity": "major", "path": "src/app.py", "summary": "wrong"}}]'
        text = text.replace('"findings": []', found)
    path.write_text(text)
    dev.commit(f"Review: {verdict}")
    return rel


def _next(dev: Clone) -> str:
    line = next(ln for ln in dev.hg("status").stdout.splitlines() if ln.startswith("next:"))
    return line.removeprefix("next:").strip()


def test_a_blocked_review_is_paused_and_resumed_by_commands(team: Team) -> None:
    """BLOCKED: `status` names `pause`, then `resume` and `approve`; each writes its artifact
    with its hashes filled in; the repaired work passes a new review and lands green."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work")
    alice.hg("verify")
    _reviewed(alice, "BLOCKED")
    assert "harness-gate pause" in _next(alice)
    said = alice.hg("pause").stdout
    assert "wrote harness/plans/app/002-pause.md" in said
    alice.commit("Pause")
    assert alice.hg("lint").returncode == 0
    assert "harness-gate resume" in _next(alice)
    alice.hg("resume")
    assert "harness-gate approve" in _next(alice)
    alice.hg("approve", input=b"y\n")
    alice.commit("Resume")
    state = alice.hg("status", "--json").stdout
    assert '"state": "auto_repairing"' in state
    alice.write("src/app.py", "x = 2\n")  # the repair, inside the boundary
    alice.commit("Repair")
    assert "Repair Record" not in _next(alice)
    finish(alice, "app")
    passes(team.ci_pull_request("alice/app"))


def test_repair_required_needs_no_repair_record(team: Team) -> None:
    """REPAIR_REQUIRED: `status` asks for the fix, `verify` and a new review, never a
    hand-written Repair Record; the branch lands green."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work")
    alice.hg("verify")
    _reviewed(alice, "REPAIR_REQUIRED")
    step = _next(alice)
    assert "Repair Record" not in step and "harness-gate review new" in step
    alice.write("src/app.py", "x = 2\n")
    alice.commit("Repair")
    finish(alice, "app")
    passes(team.ci_pull_request("alice/app"))


@pytest.mark.parametrize("rule", ["HG403", "HG402"])
def test_a_circuit_breaker_is_paused_by_command(team: Team, rule: str) -> None:
    """The same finding twice (HG403), or the repair budget spent (HG402): `pause` writes a
    Pause Report that says so and lints."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    rounds = 2 if rule == "HG403" else 4
    for n in range(rounds):
        alice.write("src/app.py", f"x = {n}\n")
        alice.commit(f"Work {n}")
        alice.hg("verify")
        _reviewed(alice, "REPAIR_REQUIRED", "F1" if rule == "HG403" else f"F{n}")
    assert "harness-gate pause" in _next(alice)
    alice.hg("pause")
    alice.commit("Pause")
    text = (alice.path / f"harness/plans/app/{rounds + 1:03d}-pause.md").read_text()
    assert ("consecutive reviews" if rule == "HG403" else "repair budget is spent") in text
    assert alice.hg("lint").returncode == 0


def test_an_approved_amendment_is_committed_by_the_command_approve_names(team: Team) -> None:
    """After `plan amend` and `approve` the amendment is a new, untracked file: `git commit
    -a` is refused; the `git add` that `approve` names, then a commit, passes."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.hg("plan", "amend", "--add-boundary", "docs/guide.md")
    said = alice.hg("approve", input=b"y\n").stdout
    add = next(ln for ln in said.splitlines() if ln.startswith("next:")).split("commit both: ", 1)[1]
    assert add.startswith("git add harness/plans/app/001-amendment.md harness/plans/app/approvals.jsonl")
    alice.write("docs/guide.md", "# guide\n\nAmended.\n")
    assert alice.git("commit", "-qam", "Amend and work", check=False).returncode == 1  # the amendment is untracked
    alice.git(*add.split(" && ")[0].split()[1:])  # the `git add` approve named
    alice.git("commit", "-qam", "Amend and work")
    assert alice.git("status", "--porcelain").stdout == ""


def test_a_pick_naming_an_ended_plan_is_ignored(team: Team) -> None:
    """Two plans on one branch, `plan use` picks the first, which completes: `status` and
    `verify` mean the one still open, as the pick is ignored once it names no candidate."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.hg("plan", "new", "docs", "--objective", "Docs", "--boundary", "docs/**", "--verify", f"tests={PY} -c pass")
    alice.hg("approve", input=b"y\n")
    alice.commit("Plan: docs")
    alice.hg("plan", "use", "app")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("Work: app")
    alice.hg("verify")
    _reviewed(alice, "PASS")
    alice.hg("complete")
    alice.commit("Complete: app")
    status = alice.hg("status").stdout
    assert status.startswith("plan:       docs "), status
    assert "plan docs" in alice.hg("verify", "--format", "json").stdout.replace('"plan": "docs"', "plan docs")


def test_the_step_summary_renders_code_in_hints_as_code(team: Team) -> None:
    """A blocked pull request's step summary: the commands its hints name (in backticks)
    are code, not literal backticks."""
    alice = team.developer("alice")
    start(alice, "alice/app", "app", "src/app.py")
    alice.write("src/app.py", "x = 1\n")
    alice.commit("WIP")
    alice.git("push", "-q", "-u", "origin", "HEAD")
    out = team.ci_pull_request("alice/app")
    assert out.code == 1
    assert "<code>harness-gate review new</code>" in out.summary
    assert "&#96;" not in out.summary
