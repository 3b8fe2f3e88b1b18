"""Write authority in every lifecycle state, as docs/lifecycle.md's table says, at each stage.

A plan folder is brought to a state and committed on a branch; then a code commit inside
the plan's boundary is judged at pre-commit (the index), pre-push (the range of that one
commit) and CI (the pull request, that commit's own verdict). The expected answer is read
from the docs' table, so the docs and the code cannot drift apart. The attack it pins: a
paused plan regained its write authority through an unapproved Repair Resume.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from harness_gate import templates
from harness_gate.lifecycle import PlanState
from tests.adversarial.util import BOUNDARY_ONLY, FOLDER, commit, report, rev
from tests.helpers import TREE, Repo, amendment_md, completion_md, plan_sha, repair_md, review_md, sha

DOCS = Path(__file__).resolve().parents[2] / "docs" / "lifecycle.md"


def documented_authority() -> dict[str, str]:
    """state value -> the table's `write authority` cell (docs/lifecycle.md, ## States)."""
    text = DOCS.read_text(encoding="utf-8").split("## States", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            out[name] = cells[2]
    return out


def may_write(cell: str, before: str | None) -> bool:
    if cell.startswith("yes"):
        return True
    if cell.startswith("no"):
        return False
    assert cell.startswith("the previous policy's"), cell
    assert before is not None
    return may_write(documented_authority()[before], None)


def _pause(repo: Repo, psha: str, state: str) -> str:
    return templates.pause(
        binding={"plan_sha256": psha, "amendment_sha256": None},
        pause={
            "state": state,
            "reason": "stuck",
            "completed_rounds": 1,
            "remaining_findings": ["F1"],
            "verification_trend": "unchanged",
            "latest_diff": TREE,
            "latest_verification": "a" * 64,
        },
    )


def _resume(repo: Repo, psha: str, pause: str) -> str:
    return templates.resume(
        binding={
            "plan_sha256": psha,
            "amendment_sha256": None,
            "pause": pause,
            "pause_sha256": sha(repo, f"{FOLDER}/{pause}"),
            "latest_diff": TREE,
            "latest_verification": "a" * 64,
        },
        rounds=1,
    )


def _blocked_and_paused(repo: Repo, psha: str) -> None:
    repo.write(f"{FOLDER}/001-review.md", review_md(psha, "BLOCKED"))
    repo.write(f"{FOLDER}/002-pause.md", _pause(repo, psha, "paused_blocked"))


def _to_state(repo: Repo, case: str) -> None:
    """Write plan p1's artifacts (approved plan) so that it is in `case`'s state."""
    psha = plan_sha(repo, FOLDER)
    w = repo.write
    steps: dict[str, Callable[[], object]] = {
        "executing": lambda: None,
        "auto_repairing": lambda: w(f"{FOLDER}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",))),
        "verifying": lambda: (
            w(f"{FOLDER}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",))),
            w(f"{FOLDER}/002-repair.md", repair_md(psha, "001-review.md", 1)),
        ),
        "reviewing": lambda: w(f"{FOLDER}/001-review.md", review_md(psha, "PASS")),
        "awaiting_amendment_approval": lambda: w(f"{FOLDER}/001-amendment.md", amendment_md(psha, material=True)),
        "awaiting_amendment_approval-after-pause": lambda: (
            _blocked_and_paused(repo, psha),
            w(f"{FOLDER}/003-amendment.md", amendment_md(psha, material=True)),
        ),
        "awaiting_resume_approval": lambda: (
            _blocked_and_paused(repo, psha),
            w(f"{FOLDER}/003-resume.md", _resume(repo, psha, "002-pause.md")),
        ),
        "awaiting_amendment_approval-after-resume": lambda: (
            _blocked_and_paused(repo, psha),
            w(f"{FOLDER}/003-resume.md", _resume(repo, psha, "002-pause.md")),
            w(f"{FOLDER}/004-amendment.md", amendment_md(psha, material=True)),
        ),
        "paused_no_progress": lambda: (
            w(f"{FOLDER}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",))),
            w(f"{FOLDER}/002-repair.md", repair_md(psha, "001-review.md", 1)),
            w(f"{FOLDER}/003-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",))),
        ),
        "paused_no_progress-reported": lambda: (
            w(f"{FOLDER}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",))),
            w(f"{FOLDER}/002-repair.md", repair_md(psha, "001-review.md", 1)),
            w(f"{FOLDER}/003-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",))),
            w(f"{FOLDER}/004-pause.md", _pause(repo, psha, "paused_no_progress")),
        ),
        "paused_blocked": lambda: w(f"{FOLDER}/001-review.md", review_md(psha, "BLOCKED")),
        "paused_blocked-reported": lambda: _blocked_and_paused(repo, psha),
        "completed": lambda: (
            w(f"{FOLDER}/001-review.md", review_md(psha, "PASS")),
            w(f"{FOLDER}/002-completion.md", completion_md(repo, FOLDER, psha)),
        ),
        "cancelled": lambda: w(
            f"{FOLDER}/001-completion.md", completion_md(repo, FOLDER, psha, None, outcome="cancelled")
        ),
        "invalid": lambda: w(f"{FOLDER}/plan.md", "# not a plan\n"),
    }
    steps[case]()


# (case, the state it reaches, the state before the pending artifact where the table defers to it)
CASES = [
    ("planning", "planning", None),
    ("executing", "executing", None),
    ("auto_repairing", "auto_repairing", None),
    ("verifying", "verifying", None),
    ("reviewing", "reviewing", None),
    ("awaiting_amendment_approval", "awaiting_amendment_approval", "executing"),
    ("awaiting_amendment_approval-after-pause", "awaiting_amendment_approval", "paused_blocked"),
    ("awaiting_amendment_approval-after-resume", "awaiting_amendment_approval", "paused_blocked"),
    ("awaiting_resume_approval", "awaiting_resume_approval", None),
    ("paused_no_progress", "paused_no_progress", None),
    ("paused_no_progress-reported", "paused_no_progress", None),
    ("paused_blocked", "paused_blocked", None),
    ("paused_blocked-reported", "paused_blocked", None),
    ("completed", "completed", None),
    ("cancelled", "cancelled", None),
    ("invalid", "invalid", None),
]


def test_every_state_is_covered_and_documented() -> None:
    table = documented_authority()
    assert set(table) == {s.value for s in PlanState}
    assert {state for _, state, _ in CASES} == {s.value for s in PlanState}


def _branch_in_state(repo: Repo, case: str) -> str:
    """main adopted (boundary only); branch `feature`: plan p1 (approved unless `planning`)
    brought to `case`'s state and committed, then `src/a.py` changed and staged."""
    repo.write("README.md", "x\n")
    repo.write("src/a.py", "a = 1\n")
    commit(repo, "init")
    assert repo.cli("init").exit_code == 0
    repo.write(".harness-gate.toml", BOUNDARY_ONLY)
    commit(repo, "adopt")
    repo.git("checkout", "-qb", "feature")
    res = repo.cli(
        "plan", "new", "p1", "--objective", "Do it", "--verify", "tests=python -c pass", "--boundary", "src/**"
    )
    assert res.exit_code == 0, res.output
    if case != "planning":
        repo.approve()
        _to_state(repo, case)
    base = commit(repo, f"plan p1: {case}")
    repo.write("src/a.py", "a = 2\n")
    repo.git("add", "-A")
    return base


@pytest.mark.parametrize(("case", "state", "before"), CASES, ids=[c for c, _, _ in CASES])
def test_write_authority_matches_the_docs_at_every_stage(repo: Repo, case: str, state: str, before: str | None) -> None:
    want = may_write(documented_authority()[state], before)
    base = _branch_in_state(repo, case)
    status = repo.cli("status", "--json")
    assert f'"state": "{state}"' in status.output, status.output
    # Each state is reached by a legal history: nothing but the authority is in question.
    assert (repo.cli("lint").exit_code == 0) is (case != "invalid")

    staged = report(repo, "check", "--staged")
    assert (staged["exit_code"] == 0) is want, (case, staged["findings"])

    code = commit(repo, "code")
    pushed = report(repo, "check", "--range", f"{base}..{code}")
    assert (pushed["exit_code"] == 0) is want, (case, pushed["findings"])

    ci = report(repo, "check", "--base", "main", "--head", code, "--stage", "ci")
    verdicts = {v["oid"]: v["verdict"] for v in ci["data"]["commit_verdicts"]}
    assert verdicts[code] == ("pass" if want else "blocked"), (case, ci["findings"])
    assert ci["exit_code"] != 0 or want
    assert rev(repo, "HEAD") == code
