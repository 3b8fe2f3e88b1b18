"""Evidence names its plan: a record copied from one plan's log into another's does not
count there, even when the two plans' plan.md hold the same bytes (so the plan hash, the
policy hash, the command and the tree all match); and a record that names no plan (the
v1 schema, written before records named theirs) counts for no plan."""

from __future__ import annotations

import json

import pytest

from tests.adversarial.util import EVIDENCE_AT_PRE_PUSH, PY, check, commit, report, setup_gated
from tests.helpers import Repo

P1, P2 = "harness/plans/p1", "harness/plans/p2"
CI = ("--base", "main", "--stage", "ci")


def _twin_plans(repo: Repo) -> Repo:
    """main: adopted, plan p1 (`src/**`). Branch `work`: plan p2 made with the same
    arguments (its plan.md byte for byte p1's), approved, and code under it."""
    setup_gated(repo, config=EVIDENCE_AT_PRE_PUSH, verify=f"{PY} -c pass")
    repo.git("branch", "-M", "main")
    repo.git("checkout", "-qb", "work")
    res = repo.cli(
        "plan",
        "new",
        "p2",
        "--objective",
        "Do it",
        "--verify",
        f"tests={PY} -c pass",
        "--timeout",
        "60",
        "--boundary",
        "src/**",
    )
    assert res.exit_code == 0, res.output
    assert repo.read(f"{P2}/plan.md") == repo.read(f"{P1}/plan.md")
    repo.approve(plan="p2")
    commit(repo, "plan p2")
    assert repo.cli("plan", "use", "p2").exit_code == 0
    repo.write("src/a.py", "a = 2\n")
    return repo


def test_evidence_copied_between_plans_with_identical_plan_md(repo: Repo) -> None:
    """p1 verified the tree; its log copied as p2's. The records match p2's plan hash,
    policy, command and tree, but name p1: CI blocks (HG320), and `verify` for p2 clears it."""
    _twin_plans(repo)
    assert report(repo, "verify", "--plan", "p1")["exit_code"] == 0
    [line] = repo.read(f"{P1}/evidence.jsonl").splitlines(keepends=True)
    repo.write(f"{P2}/evidence.jsonl", line)
    (repo.path / P1 / "evidence.jsonl").unlink()  # p1 is main's, and authorised nothing here
    commit(repo, "code, with p1's evidence as p2's")
    assert check(repo, *CI) == (1, [("HG320", f"{P2}/evidence.jsonl")])
    assert json.loads(line)["plan"] == "p1"
    doc = report(repo, "check", *CI)
    [found] = doc["findings"]
    assert "recorded for plan `p1`" in found["message"], found
    # p2's own evidence for the same tree is fresh.
    assert report(repo, "verify", "--plan", "p2")["exit_code"] == 0
    commit(repo, "p2's own evidence")
    assert check(repo, *CI) == (0, [])


@pytest.mark.parametrize("stage", ["pre-push", "ci"])
def test_a_v1_record_that_names_no_plan_is_not_fresh(repo: Repo, stage: str) -> None:
    """A record in the v1 form (no `plan`), for the right bytes, tree and policy: a valid
    line (no HG307) that is fresh for no plan (HG320)."""
    _twin_plans(repo)
    assert report(repo, "verify", "--plan", "p2")["exit_code"] == 0
    [line] = repo.read(f"{P2}/evidence.jsonl").splitlines()
    rec = json.loads(line)
    rec.pop("plan", None)
    rec["schema"] = "harness-gate.evidence/v1"
    repo.write(f"{P2}/evidence.jsonl", json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n")
    commit(repo, "code, with a v1 record")
    args = CI if stage == "ci" else ("--stage", "pre-push", "--base", "main")
    code, found = check(repo, *args)
    assert (code, found) == (1, [("HG320", f"{P2}/evidence.jsonl")])
    assert report(repo, "lint")["exit_code"] == 0
