"""Bugs the hypothesis fuzzers in this folder found, each pinned by its smallest example."""

from __future__ import annotations

import pytest

from harness_gate import approvals, boundary, jsonstrict, templates
from harness_gate.artifacts.parse import parse_artifact

PLAN = templates.plan(
    objective="Fix it",
    acceptance=["works"],
    scope="src",
    boundary=["src/**"],
    commands=[{"id": "tests", "command": "pytest -q", "timeout_seconds": 60}],
    kind="tdd",
    unmodeled=["make docs"],
)


def _codes(text: str) -> list[str]:
    art, found = parse_artifact("plan.md", text.encode())
    assert (art is None) == bool(found)
    return [f.code for f in found]


def test_arabic_letter_mark_is_a_bidi_control_everywhere() -> None:
    """U+061C is in Unicode's Bidi_Control set like U+200E/U+200F, but was accepted."""
    alm = "\u061c"
    with pytest.raises(jsonstrict.StrictJSONError):
        jsonstrict.loads(f'{{"a": "x{alm}y"}}')
    with pytest.raises(boundary.PatternError):
        boundary.validate(f"src/{alm}x", "harness")
    assert not approvals.valid_approver(f"{alm}Ada")
    assert _codes(PLAN.replace("make docs", f"make{alm} docs")) == ["HG514"]
    assert _codes(PLAN.replace("- `src/**`", f"- `src/{alm}**`")) == ["HG205"]
