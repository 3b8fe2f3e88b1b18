"""Property tests: parsers never raise, and never accept a mutated artifact silently."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness_gate import approvals, templates
from harness_gate.artifacts.parse import parse_artifact

PLAN = templates.plan(
    objective="Fix it",
    acceptance=["works"],
    scope="src",
    boundary=["src/**"],
    commands=[{"id": "tests", "command": "pytest -q", "timeout_seconds": 60}],
    kind="tdd",
).encode()


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    art, found = parse_artifact("x.md", data)
    assert (art is None) == bool(found)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2048))
def test_arbitrary_text_never_raises(text: str) -> None:
    parse_artifact("x.md", text.encode("utf-8", "surrogatepass"))
    approvals.parse("approvals.jsonl", text.encode("utf-8", "surrogatepass"))


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=len(PLAN) - 1), st.binary(min_size=1, max_size=3))
def test_single_splice_of_a_valid_plan(pos: int, insert: bytes) -> None:
    mutated = PLAN[:pos] + insert + PLAN[pos + 1 :]
    art, found = parse_artifact("plan.md", mutated)
    assert (art is None) == bool(found)
    if art is not None:
        # A splice that survives parsing never changes the exact auto_repair policy.
        assert art.value("Auto Repair") == templates.AUTO_REPAIR["auto_repair"]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_approval_lines_never_raise(data: bytes) -> None:
    recs, found = approvals.parse("approvals.jsonl", data)
    assert len(recs) + len(found) >= (1 if data.strip(b"\n") else 0)
