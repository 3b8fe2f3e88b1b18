"""`plan amend`'s policy arithmetic (harness_gate/amendments.py), without a repository:
the command only reads the policy in force and writes what this returns."""

from __future__ import annotations

import pytest

from harness_gate import amendments
from harness_gate.errors import HarnessGateError
from harness_gate.lifecycle import Policy

TESTS = {"id": "tests", "command": "pytest -q", "timeout_seconds": 600}
POLICY = Policy(("src/**",), (), {"kind": "commands", "required_commands": [TESTS]}, "harness/plans/p1/plan.md")


def test_patterns_and_commands_are_added_and_removed_in_order() -> None:
    add = ("lib/**", "lib/**", "src/**")
    change = amendments.Change(add_boundary=add, add_verify=("lint=ruff check",), remove_verify=("tests",), timeout=30)
    amended = amendments.amend(POLICY, "Ship it.", change)
    assert amended.boundary == ["src/**", "lib/**"]
    assert amended.commands == [{"id": "lint", "command": "ruff check", "timeout_seconds": 30}]
    assert amended.objective == "Ship it."
    assert amended.deltas["write_boundary"] == {"material": True, "summary": "adds lib/**, lib/**, src/**"}
    assert amended.deltas["verification"] == {"material": True, "summary": "adds lint; removes tests"}
    assert amended.deltas["objective"] == {"material": False, "summary": "Unchanged."}
    assert list(amended.deltas) == [
        "objective",
        "acceptance_criteria",
        "scope",
        "write_boundary",
        "verification",
        "risk",
    ]


def test_a_new_objective_keeps_the_old_one_in_its_summary() -> None:
    amended = amendments.amend(POLICY, "Ship it.", amendments.Change(objective="Ship less.", why="Scope cut."))
    assert amended.objective == "Ship less."
    assert amended.deltas["objective"] == {"material": True, "summary": "Scope cut. (was: Ship it.)"}
    assert amended.boundary == ["src/**"] and amended.commands == [TESTS]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (amendments.Change(remove_boundary=("docs/**",)), "--remove-boundary 'docs/**' is not in the boundary"),
        (amendments.Change(remove_verify=("lint",)), "--remove-verify 'lint' is not a required command"),
        (amendments.Change(add_verify=("tests=pytest",)), "`tests` is already required"),
        (amendments.Change(add_verify=("nonsense",)), "expected ID=COMMAND"),
        (amendments.Change(add_boundary=("src/**",)), "nothing to amend"),
        (amendments.Change(objective="Ship it."), "nothing to amend"),
    ],
)
def test_what_cannot_be_applied_is_a_usage_error(change: amendments.Change, said: str) -> None:
    with pytest.raises(HarnessGateError) as raised:
        amendments.amend(POLICY, "Ship it.", change)
    assert raised.value.code == "HG904"
    assert said in str(raised.value)
