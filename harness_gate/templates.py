"""Render artifacts in their canonical shape (the shape `lint` accepts)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from harness_gate.artifacts.kinds import PLAN_GATE

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
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def render(title: str, sections: Sequence[tuple[str, str]]) -> str:
    parts = [f"# {title}"]
    for heading, body in sections:
        parts.append(f"## {heading}\n\n{body.strip()}")
    return "\n\n".join(parts) + "\n"


def plan(
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
