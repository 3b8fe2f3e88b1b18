"""Lifecycle replay over real plan folders, checked through `harness-gate lint` and `status`."""

from __future__ import annotations

import json

import pytest

from harness_gate import lifecycle, templates
from harness_gate.artifacts.kinds import BY_SLUG, PLAN
from tests.helpers import TREE, Repo, amendment_md, completion_md, plan_sha, repair_md, review_md, sha


def lint_codes(repo: Repo) -> list[tuple[str, str]]:
    res = repo.cli("lint", "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == doc["exit_code"]
    return [(f["code"], f["path"].rsplit("/", 1)[-1]) for f in doc["findings"]]


def state(repo: Repo) -> dict:
    res = repo.cli("status", "--json")
    return json.loads(res.output)["data"]


@pytest.fixture
def approved(repo: Repo) -> tuple[Repo, str, str]:
    folder = repo.new_plan()
    repo.approve()
    return repo, folder, plan_sha(repo, folder)


def test_new_plan_is_planning_then_executing(repo: Repo) -> None:
    repo.new_plan()
    assert state(repo)["state"] == "planning"
    assert state(repo)["write_authority"] is False
    repo.approve()
    data = state(repo)
    assert data["state"] == "executing"
    assert data["write_authority"] is True
    assert data["boundary"] == ["src/**"]
    assert lint_codes(repo) == []


def test_full_repair_cycle_then_completion(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    assert state(repo)["state"] == "auto_repairing"
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1))
    assert state(repo)["state"] == "verifying"
    repo.write(f"{folder}/003-review.md", review_md(psha, "PASS"))
    assert state(repo)["state"] == "reviewing"
    repo.write(
        f"{folder}/004-completion.md",
        completion_md(repo, folder, psha, "003-review.md"),
    )
    assert lint_codes(repo) == []
    data = state(repo)
    assert data["state"] == "completed"
    assert data["write_authority"] is False


def _repair_rounds(repo: Repo, folder: str, psha: str, rounds: int) -> int:
    """Alternate REPAIR_REQUIRED reviews (fresh finding ids) and repairs; return the next number."""
    n = 1
    for r in range(1, rounds + 1):
        repo.write(f"{folder}/{n:03d}-review.md", review_md(psha, "REPAIR_REQUIRED", (f"F{r}",)))
        repo.write(f"{folder}/{n + 1:03d}-repair.md", repair_md(psha, f"{n:03d}-review.md", r, finding_ids=(f"F{r}",)))
        n += 2
    return n


def test_fourth_repair_without_resume_is_blocked(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    n = _repair_rounds(repo, folder, psha, 3)
    assert lint_codes(repo) == []
    repo.write(f"{folder}/{n:03d}-review.md", review_md(psha, "REPAIR_REQUIRED", ("F9",)))
    assert state(repo)["state"] == "paused_no_progress"
    repo.write(f"{folder}/{n + 1:03d}-repair.md", repair_md(psha, f"{n:03d}-review.md", 4, finding_ids=("F9",)))
    assert ("HG402", f"{n + 1:03d}-repair.md") in lint_codes(repo)


def test_pause_then_approved_resume_allows_another_repair(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    n = _repair_rounds(repo, folder, psha, 3)
    repo.write(f"{folder}/{n:03d}-review.md", review_md(psha, "REPAIR_REQUIRED", ("F9",)))
    pause = templates.pause(
        binding={"plan_sha256": psha, "amendment_sha256": None},
        pause={
            "state": "paused_no_progress",
            "reason": "budget",
            "completed_rounds": 3,
            "remaining_findings": ["F9"],
            "verification_trend": "improving",
            "latest_diff": TREE,
            "latest_verification": "a" * 64,
        },
    )
    repo.write(f"{folder}/{n + 1:03d}-pause.md", pause)
    resume_name = f"{n + 2:03d}-resume.md"
    repo.write(
        f"{folder}/{resume_name}",
        templates.resume(
            binding={
                "plan_sha256": psha,
                "amendment_sha256": None,
                "pause": f"{n + 1:03d}-pause.md",
                "pause_sha256": sha(repo, f"{folder}/{n + 1:03d}-pause.md"),
                "latest_diff": TREE,
                "latest_verification": "a" * 64,
            },
            rounds=1,
        ),
    )
    assert state(repo)["state"] == "awaiting_resume_approval"
    repo.write(f"{folder}/{n + 3:03d}-repair.md", repair_md(psha, f"{n:03d}-review.md", 4, finding_ids=("F9",)))
    assert ("HG407", f"{n + 3:03d}-repair.md") in lint_codes(repo)
    repo.approve()  # approves the pending resume
    assert lint_codes(repo) == []
    assert state(repo)["repairs"] == {"used": 4, "budget": 4}


def test_same_finding_twice_requires_pause(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1))
    repo.write(f"{folder}/003-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    assert state(repo)["state"] == "paused_no_progress"
    repo.write(f"{folder}/004-repair.md", repair_md(psha, "003-review.md", 2))
    assert ("HG403", "004-repair.md") in lint_codes(repo)


def test_two_repairs_without_progress_require_pause(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1, progress=False))
    repo.write(f"{folder}/003-review.md", review_md(psha, "REPAIR_REQUIRED", ("F2",)))
    repo.write(f"{folder}/004-repair.md", repair_md(psha, "003-review.md", 2, progress=False, finding_ids=("F2",)))
    assert state(repo)["state"] == "paused_no_progress"
    repo.write(f"{folder}/005-review.md", review_md(psha, "PASS"))
    assert ("HG404", "005-review.md") in lint_codes(repo)


def test_completion_without_passing_review(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(
        f"{folder}/002-completion.md",
        completion_md(repo, folder, psha, "001-review.md"),
    )
    assert lint_codes(repo) == [("HG405", "002-completion.md")]


def test_completion_bound_to_edited_review(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "PASS"))
    repo.write(
        f"{folder}/002-completion.md",
        templates.completion(
            binding={
                "plan_sha256": psha,
                "amendment_sha256": None,
                "review": "001-review.md",
                "review_sha256": "0" * 64,
                "tree": TREE,
            },
            summary="Done.",
            evidence=[],
            outcome="completed",
        ),
    )
    assert lint_codes(repo) == [("HG405", "002-completion.md")]


def test_cancel_needs_no_review_and_ends_the_plan(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(
        f"{folder}/001-completion.md",
        templates.completion(
            binding={
                "plan_sha256": psha,
                "amendment_sha256": None,
                "review": None,
                "review_sha256": None,
                "tree": TREE,
            },
            summary="Abandoned.",
            evidence=[],
            outcome="cancelled",
        ),
    )
    assert state(repo)["state"] == "cancelled"
    repo.write(f"{folder}/002-review.md", review_md(psha, "PASS"))
    assert lint_codes(repo) == [("HG411", "002-review.md")]


def test_amendment_without_material_delta(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-amendment.md", amendment_md(psha, material=False))
    assert ("HG406", "001-amendment.md") in lint_codes(repo)


def test_approved_amendment_replaces_the_policy(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-amendment.md", amendment_md(psha, material=True))
    assert state(repo)["state"] == "awaiting_amendment_approval"
    assert state(repo)["boundary"] == ["src/**"]
    repo.write(f"{folder}/002-review.md", review_md(psha, "PASS"))
    assert ("HG407", "002-review.md") in lint_codes(repo)
    repo.approve()
    data = state(repo)
    assert data["boundary"] == ["src/**", "docs/**"]
    assert data["amendment_sha256"] == sha(repo, f"{folder}/001-amendment.md")
    # The review was written against the plan alone: after the amendment it is stale.
    assert lint_codes(repo) == [("HG410", "002-review.md")]


def test_repair_that_widens_the_boundary(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1, boundary=("src/**", "lib/**")))
    assert lint_codes(repo) == [("HG408", "002-repair.md")]


def test_repair_may_narrow_the_boundary(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1, boundary=("src/a.py",)))
    assert lint_codes(repo) == []


def test_repair_that_weakens_verification(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    weaker = {"kind": "tdd", "required_commands": [{"id": "tests", "command": "true", "timeout_seconds": 60}]}
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1, verification=weaker))
    assert lint_codes(repo) == [("HG409", "002-repair.md")]


def test_stale_binding_to_an_old_plan_hash(approved: tuple[Repo, str, str]) -> None:
    repo, folder, _ = approved
    repo.write(f"{folder}/001-review.md", review_md("c" * 64, "PASS"))
    assert lint_codes(repo) == [("HG410", "001-review.md")]


def test_edited_plan_loses_its_approval(approved: tuple[Repo, str, str]) -> None:
    repo, folder, _ = approved
    p = repo.path / folder / "plan.md"
    p.write_bytes(p.read_bytes().replace(b"Do it", b"Do more"))
    assert lint_codes(repo) == [("HG203", "plan.md")]
    data = state(repo)
    assert data["plan_approval"] == "stale"
    assert data["write_authority"] is False


def test_numbering_gap_and_wrong_kind_in_name(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/002-review.md", review_md(psha, "PASS"))
    assert lint_codes(repo) == [("HG412", "002-review.md")]
    (repo.path / folder / "002-review.md").rename(repo.path / folder / "001-pause.md")
    assert ("HG515", "001-pause.md") in lint_codes(repo)


def test_repair_plan_is_inert(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(
        f"{folder}/001-repair-plan.md",
        templates.repair_plan(
            context={
                "plan_sha256": psha,
                "finding_id": "F1",
                "classification": "IN_PLAN_REPAIR",
                "no_delta_evidence": ["same files"],
                "verification": "unchanged",
                "topology": "root_only",
                "approach_retained": True,
            },
            scope=["src/a.py"],
        ),
    )
    assert lint_codes(repo) == []
    assert state(repo)["state"] == "executing"
    res = repo.cli("approve", f"{folder}/001-repair-plan.md", input="y\n")
    assert res.exit_code == 1
    assert "HG208" in res.output
    assert not any(b"repair-plan" in line for line in repo.read(f"{folder}/approvals.jsonl").splitlines())


def test_blocked_review_pauses(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "BLOCKED", ("F1",)))
    assert state(repo)["state"] == "paused_blocked"
    assert state(repo)["write_authority"] is False


def test_repair_changed_files_must_stay_inside(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(
        f"{folder}/002-repair.md",
        repair_md(psha, "001-review.md", 1, changed=("src/a.py", "etc/passwd.txt", ".github/workflows/x.yml")),
    )
    codes = lint_codes(repo)
    assert codes == [("HG408", "002-repair.md"), ("HG408", "002-repair.md")]


def test_literal_repair_pattern_must_not_cover_more_than_a_wildcard(repo: Repo) -> None:
    folder = repo.new_plan("p1", ("src/*.py",))
    repo.approve()
    psha = plan_sha(repo, folder)
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    # `src/x.py` as a pattern also covers `src/x.py/evil.sh`, which `src/*.py` does not.
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1, boundary=("src/x.py",), changed=()))
    assert lint_codes(repo) == [("HG408", "002-repair.md")]


def test_repair_addresses_findings_of_its_review(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1, finding_ids=("F7",)))
    assert lint_codes(repo) == [("HG410", "002-repair.md")]


def test_resume_adds_to_the_budget(approved: tuple[Repo, str, str]) -> None:
    repo, folder, psha = approved
    repo.write(f"{folder}/001-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))
    repo.write(f"{folder}/002-repair.md", repair_md(psha, "001-review.md", 1))
    repo.write(f"{folder}/003-review.md", review_md(psha, "REPAIR_REQUIRED", ("F1",)))  # repeated: pause
    repo.write(
        f"{folder}/004-pause.md",
        templates.pause(
            binding={"plan_sha256": psha, "amendment_sha256": None},
            pause={
                "state": "paused_no_progress",
                "reason": "repeated F1",
                "completed_rounds": 1,
                "remaining_findings": ["F1"],
                "verification_trend": "unchanged",
                "latest_diff": TREE,
                "latest_verification": "a" * 64,
            },
        ),
    )
    repo.write(
        f"{folder}/005-resume.md",
        templates.resume(
            binding={
                "plan_sha256": psha,
                "amendment_sha256": None,
                "pause": "004-pause.md",
                "pause_sha256": sha(repo, f"{folder}/004-pause.md"),
                "latest_diff": TREE,
                "latest_verification": "a" * 64,
            },
            rounds=1,
        ),
    )
    repo.approve()
    data = state(repo)
    assert data["state"] == "auto_repairing"
    assert data["repairs"] == {"used": 1, "budget": 4}


def test_the_replay_has_one_handler_per_numbered_artifact_kind() -> None:
    """The dispatch table names every kind a plan folder may number (artifacts/kinds.py:
    all but the plan), no other slug, and every step the replay has."""
    assert set(lifecycle.HANDLERS) == set(BY_SLUG) - {PLAN.slug}
    steps = {name for name in vars(lifecycle._Replay) if name.startswith("on_")}
    assert {handler.__name__ for handler in lifecycle.HANDLERS.values()} == steps
    for slug, handler in lifecycle.HANDLERS.items():
        assert handler.__name__ == "on_" + slug.replace("-", "_"), slug
