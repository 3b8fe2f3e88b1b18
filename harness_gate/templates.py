"""Render artifacts in their canonical shape (the shape `lint` accepts)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from harness_gate.artifacts.kinds import AMENDMENT_GATE, CHOICES, PLAN_GATE, REPAIR_PLAN_GATE, RESUME_GATE

AUTO_REPAIR: dict[str, Any] = {
    "auto_repair": {
        "enabled": True,
        "max_rounds": 3,
        "repeated_finding_limit": 2,
        "no_progress_limit": 2,
        "same_write_boundary_only": True,
        "verification_must_not_weaken": True,
        "material_delta_requires_approval": True,
    }
}


def json_block(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=2, ensure_ascii=False) + "\n```"


def code_list(items: Sequence[str]) -> str:
    if not items:
        return "None"
    return "\n".join(f"- {_code_span(i)}" for i in items)


def _code_span(text: str) -> str:
    # A code span's fence must be longer than any backtick run inside it.
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    # CommonMark drops one space from each end of a span that starts and ends with a
    # space (` x ` reads `x`): pad those too, so that the span reads back as `text`.
    spaced = text.startswith(" ") and text.endswith(" ") and text.strip(" ") != ""
    pad = " " if text.startswith("`") or text.endswith("`") or spaced else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(title: str, sections: Sequence[tuple[str, str]]) -> str:
    parts = [f"# {title}"]
    for heading, body in sections:
        parts.append(f"## {heading}\n\n{body.strip()}")
    return "\n\n".join(parts) + "\n"


def plan(  # noqa: PLR0913  (one keyword per field written)
    *,
    objective: str,
    acceptance: Sequence[str],
    scope: str,
    boundary: Sequence[str],
    commands: Sequence[dict[str, Any]],
    kind: str,
    execution_mode: str = "native",
    unmodeled: Sequence[str] = (),
    risks: Sequence[str] = (),
) -> str:
    return render(
        "Plan",
        [
            ("Objective", objective),
            ("Acceptance Criteria", "\n".join(f"- {a}" for a in acceptance)),
            ("Scope", scope),
            ("Write Boundary", code_list(boundary)),
            ("Unmodeled Commands", code_list(unmodeled)),
            (
                "Verification Strategy",
                json_block({"verification_strategy": {"kind": kind, "required_commands": list(commands)}}),
            ),
            ("Execution Strategy", json_block({"execution_strategy": {"execution_mode": execution_mode}})),
            ("Auto Repair", json_block(AUTO_REPAIR)),
            ("Risks", "\n".join(f"- {r}" for r in risks) if risks else "None identified."),
            ("Approval", PLAN_GATE),
        ],
    )


def amendment(  # noqa: PLR0913  (one keyword per field written)
    *,
    plan_sha256: str,
    amendment_sha256: str | None,
    deltas: dict[str, dict[str, Any]],
    objective: str,
    acceptance: Sequence[str],
    scope: str,
    boundary: Sequence[str],
    verification: dict[str, Any],
    unmodeled: Sequence[str] = (),
    risks: str = "None identified.",
) -> str:
    return render(
        "Plan Amendment",
        [
            ("Binding", json_block({"binding": {"plan_sha256": plan_sha256, "amendment_sha256": amendment_sha256}})),
            ("Deltas", json_block({"deltas": deltas})),
            ("Objective", objective),
            ("Acceptance Criteria", "\n".join(f"- {a}" for a in acceptance)),
            ("Scope", scope),
            ("Write Boundary", code_list(boundary)),
            ("Unmodeled Commands", code_list(unmodeled)),
            ("Verification Strategy", json_block({"verification_strategy": verification})),
            ("Risks", risks),
            ("Approval", AMENDMENT_GATE),
        ],
    )


VERDICT_PLACEHOLDER = "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED"
# Who reviews is the reviewer's to say: the author's own identity would be a claim the
# author makes about a review they did not write (the review does not lint until filled in).
IDENTITY_PLACEHOLDER = "FILL_IN: the reviewer's name (not the author's)"
# What the reviewer read is theirs to say too: a review still holding this does not lint.
SCOPE_PLACEHOLDER = "FILL_IN: what the reviewer read (the diff, the plan, the evidence)."


def review(
    *,
    binding: dict[str, Any],
    identity: str,
    scope: str,
    findings: Sequence[dict[str, Any]],
    verdict: str,
) -> str:
    return render(
        "Clean-context Review",
        [
            ("Binding", json_block({"binding": binding})),
            ("Reviewer", json_block({"reviewer": {"context": "clean", "access": "read-only", "identity": identity}})),
            ("Scope Reviewed", scope),
            ("Findings", json_block({"findings": list(findings)})),
            ("Verdict", json_block({"verdict": verdict})),
        ],
    )


def repair(  # noqa: PLR0913  (one keyword per field written)
    *,
    binding: dict[str, Any],
    finding_ids: Sequence[str],
    changed: Sequence[str],
    boundary: Sequence[str],
    verification: dict[str, Any],
    progress: dict[str, str],
) -> str:
    return render(
        "Repair Record",
        [
            ("Binding", json_block({"binding": binding})),
            ("Findings Addressed", json_block({"finding_ids": list(finding_ids)})),
            ("Changed Files", code_list(changed)),
            ("Write Boundary", code_list(boundary)),
            ("Verification Strategy", json_block({"verification_strategy": verification})),
            ("Progress", json_block({"progress": progress})),
        ],
    )


def pause(*, binding: dict[str, Any], pause: dict[str, Any]) -> str:
    return render(
        "Pause Report",
        [
            ("Binding", json_block({"binding": binding})),
            ("Pause", json_block({"pause": pause})),
            ("Choices", "\n".join(f"- {c}" for c in CHOICES)),
        ],
    )


def resume(*, binding: dict[str, Any], rounds: int) -> str:
    return render(
        "Repair Resume",
        [
            ("Binding", json_block({"binding": binding})),
            ("Additional Budget", json_block({"additional_budget": {"rounds": rounds}})),
            ("Approval", RESUME_GATE),
        ],
    )


def completion(*, binding: dict[str, Any], summary: str, evidence: Sequence[dict[str, str]], outcome: str) -> str:
    return render(
        "Completion",
        [
            ("Binding", json_block({"binding": binding})),
            ("Summary", summary),
            ("Evidence", json_block({"evidence": list(evidence)})),
            ("Outcome", json_block({"outcome": outcome})),
        ],
    )


def repair_plan(*, context: dict[str, Any], scope: Sequence[str]) -> str:
    return render(
        "Repair Plan",
        [
            ("Repair Context", json_block({"repair_context": context})),
            ("Repair Scope", code_list(scope)),
            ("Approval", REPAIR_PLAN_GATE),
        ],
    )
