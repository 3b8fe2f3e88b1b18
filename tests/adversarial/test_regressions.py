"""Bugs the hypothesis fuzzers in this folder found, each pinned by its smallest example."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness_gate import approvals, boundary, config, evidence, jsonstrict, schema, templates
from harness_gate.artifacts.parse import parse_artifact
from harness_gate.errors import ConfigError

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
    # In an artifact it is refused anywhere, like every bidi control (HG510).
    assert _codes(PLAN.replace("make docs", f"make{alm} docs")) == ["HG510"]
    assert _codes(PLAN.replace("- `src/**`", f"- `src/{alm}**`")) == ["HG510"]


def _evidence(**overrides: Any) -> str:
    fields: dict[str, Any] = {
        "command_id": "tests",
        "command": "pytest -q",
        "exit_code": 0,
        "status": "PASS",
        "key_output": "ok",
        "duration_ms": 1,
        "tree": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "plan": "p1",
        "plan_sha256": "a" * 64,
        "policy": "b" * 64,
    }
    fields.update(overrides)
    return evidence.record_line(**fields)


@pytest.mark.parametrize(("field", "value"), [("command_id", "tests"), ("command", "pytest -q"), ("tree", "0" * 40)])
def test_schema_patterns_end_at_the_end_of_the_string(field: str, value: str) -> None:
    """JSON Schema's `$` is ECMA's: Python's also matched before a final newline, so
    `"tests\\n"` passed `^[a-z0-9][a-z0-9._-]{0,63}$` in evidence records (whose strings may
    hold newlines) and `artifacts_dir = "harness\\n"` passed the config schema."""
    line = _evidence(**{field: value})
    bad = line.replace(json.dumps(value), json.dumps(value + "\n"))
    assert bad != line
    rec, why = evidence.parse_line(bad.rstrip("\n").encode(), 1)
    assert rec is None
    assert "does not match" in why
    with pytest.raises(ValueError, match="does not match"):
        _evidence(**{field: value + "\n"})
    with pytest.raises(ConfigError, match="must be a relative path"):
        config.parse(b'artifacts_dir = "harness\\n"\n', None)
    assert schema.errors("config", {"artifacts_dir": "harness"}) == []


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"status": "FAIL", "exit_code": None}, "non-zero exit code"),
        ({"status": "FAIL", "exit_code": 0}, "non-zero exit code"),
    ],
)
def test_a_fail_record_carries_a_non_zero_exit_code(change: dict[str, Any], why: str) -> None:
    """docs/evidence.md: FAIL is "any other exit code" than 0; FAIL with null or 0 was accepted."""
    with pytest.raises(ValueError, match=why):
        _evidence(**change)
    line = _evidence(status="FAIL", exit_code=2).replace(
        '"exit_code":2', f'"exit_code":{json.dumps(change["exit_code"])}'
    )
    rec, found = evidence.parse_line(line.rstrip("\n").encode(), 1)
    assert rec is None
    assert why in found
    assert evidence.parse_line(_evidence(status="FAIL", exit_code=127).rstrip("\n").encode(), 1)[0] is not None


@pytest.mark.parametrize("stamp", ["2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z"])
def test_an_evidence_timestamp_is_a_real_time(stamp: str) -> None:
    """Approvals checked that approved_at is a real UTC time; evidence accepted any digits."""
    line = _evidence().rstrip("\n")
    bad = line.replace(json.loads(line)["timestamp"], stamp)
    rec, why = evidence.parse_line(bad.encode(), 1)
    assert rec is None
    assert "not a real UTC time" in why


PAUSE_CHOICES = "## Choices\n\n- Repair Resume\n- Plan Amendment\n- Cancel\n"


def _layout_code(text: str) -> str:
    return "HG510" if any(ord(c) < 0x20 and c not in "\t\n" for c in text) else "HG514"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('```json\n{\n  "verification', '```json\x1f\n{\n  "verification'),  # a control after the info
        ('```json\n{\n  "verification', '```\u00a0json\n{\n  "verification'),  # NBSP before it
        ("- `make docs`", "None\u00a0"),  # a Unicode space around `None`
        ("- `make docs`", "\u3000None"),
        ("- `make docs`", "None\x0b"),
        ("- `src/**`", "- `src/**`\u2028"),  # ... or around an item
        ("- `src/**`", "- \u3000`src/**`"),
        ("- `src/**`", "- \x0c`src/**`"),
        ("- `make docs`", "- `make\ndocs`"),  # a code span over a line break reads `make docs`
        ("- `src/**`", "- `src/\n**`"),  # ... and the pattern `src/ **`
    ],
)
def test_structure_lines_allow_only_spaces_and_tabs_as_layout(old: str, new: str) -> None:
    """markdown-it trims Unicode spaces (and Python's strip() controls such as U+001F) around
    paragraphs, items and info strings; the reader accepted those bytes as if absent."""
    assert old in PLAN
    # Control and invisible characters are refused anywhere in an artifact (HG510) before
    # the structure is read; the other Unicode spaces reach the layout rule (HG514).
    assert _codes(PLAN.replace(old, new, 1)) == [_layout_code(new)]


@pytest.mark.parametrize("new", ["- Cancel\u00a0", "- \u00a0Cancel", "- Cancel\x0b"])
def test_choices_allow_only_spaces_and_tabs_as_layout(new: str) -> None:
    pause = templates.pause(
        binding={"plan_sha256": "a" * 64, "amendment_sha256": None},
        pause={
            "state": "paused_blocked",
            "reason": "r",
            "completed_rounds": 0,
            "remaining_findings": [],
            "verification_trend": "unavailable",
            "latest_diff": "0" * 40,
            "latest_verification": "b" * 64,
        },
    )
    assert pause.endswith(PAUSE_CHOICES)
    art, found = parse_artifact("001-pause.md", pause.replace("- Cancel", new).encode())
    assert art is None
    assert [f.code for f in found] == [_layout_code(new)]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('```json\n{\n  "verification', '~~~~ json \n{\n  "verification'),
        ("- `make docs`", "  None\t"),
        ("- `src/**`", "  *\t`src/**`  "),
    ],
)
def test_spaces_and_tabs_stay_layout(old: str, new: str) -> None:
    if new.startswith("~~~~"):
        plan = PLAN.replace(old, new, 1)
        head, _, rest = plan.partition(new)
        plan = head + new + rest.replace("\n```\n", "\n~~~~\n", 1)
    else:
        plan = PLAN.replace(old, new, 1)
    assert _codes(plan) == []


@pytest.mark.parametrize("command", [" x ", " ` ", "  y  z ", "` x `"])
def test_templates_write_code_spans_that_read_back(command: str) -> None:
    """CommonMark strips one space from each end of `` ` x ` ``: the writer rendered the
    unmodeled command " x " as a span the reader reads as "x"."""
    plan = templates.plan(
        objective="o",
        acceptance=["a"],
        scope="s",
        boundary=["src/**"],
        commands=[{"id": "t", "command": "c", "timeout_seconds": 1}],
        kind="tdd",
        unmodeled=[command],
    )
    art, found = parse_artifact("plan.md", plan.encode())
    assert art is not None, found
    assert art.value("Unmodeled Commands") == (command,)


@pytest.mark.parametrize("pattern", ["a//", "src/x//", "src///"])
def test_a_pattern_ending_in_two_slashes_has_an_empty_segment(pattern: str) -> None:
    """Only one trailing `/` is allowed; `validate` stripped them all and accepted `a//`."""
    with pytest.raises(boundary.PatternError, match="empty path segment"):
        boundary.validate(pattern, "harness")
    boundary.validate(pattern.rstrip("/") + "/", "harness")


@pytest.mark.parametrize("pattern", ["[Z-a]", "[Z-a]/x", "[B-a]", "?**", "**a", "h**s", "*s**"])
def test_patterns_that_do_not_name_the_artifacts_root_stay_valid(pattern: str) -> None:
    """`[Z-a]` was rejected as the reversed range `z-a` (the root check case-folded the
    pattern), and `?**`, `**a`, `h**s` as naming the root, although their stars act as a
    single `*` in git and cover single top-level names only."""
    boundary.validate(pattern, "harness")
    assert not boundary.Boundary.compile([pattern]).matches(b"harness/active")


@pytest.mark.parametrize("pattern", ["harness**", "h**", "h**/x", "?**/x", "[Z-i]arness/x", "HARNESS/x", "[b-a]"])
def test_patterns_that_name_the_artifacts_root_stay_invalid(pattern: str) -> None:
    with pytest.raises(boundary.PatternError):
        boundary.validate(pattern, "harness")


def test_reading_evidence_from_the_end_meets_an_empty_first_line(tmp_path: Path) -> None:
    """`newest` and `newest_in_file` stopped before an empty first line, so a walk over the
    whole log (no wanted record found) did not report it, while `validate` did."""
    data = b"\n" + _evidence().encode()
    log = tmp_path / "evidence.jsonl"
    log.write_bytes(data)
    assert [f.line for f in evidence.validate("e", data)] == [1]
    for found, problems in (evidence.newest("e", data, ["lint"]), evidence.newest_in_file("e", log, ["lint"])):
        assert found == {}
        assert [f.message for f in problems] == ["invalid JSON: Expecting value at line 1 column 1"]
    log.write_bytes(b"\n")
    assert list(evidence.lines_from_file_end(log)) == [b""]
    assert list(evidence.lines_from_file_end(log, 1)) == [b""]


def test_minus_zero_is_not_an_integer_spelling() -> None:
    """Artifact JSON rejects 3.0 and 6e2 where an integer is meant, but accepted `-0`."""
    pause = templates.pause(
        binding={"plan_sha256": "a" * 64, "amendment_sha256": None},
        pause={
            "state": "paused_blocked",
            "reason": "r",
            "completed_rounds": 0,
            "remaining_findings": [],
            "verification_trend": "unavailable",
            "latest_diff": "0" * 40,
            "latest_verification": "b" * 64,
        },
    )
    assert parse_artifact("001-pause.md", pause.encode())[0] is not None
    art, found = parse_artifact(
        "001-pause.md", pause.replace('"completed_rounds": 0', '"completed_rounds": -0').encode()
    )
    assert art is None
    assert [(f.code, "-0" in f.message) for f in found] == [("HG507", True)]
    assert jsonstrict.loads('{"a": [0, -1, 10]}') == {"a": [0, -1, 10]}
