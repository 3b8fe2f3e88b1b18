"""The eight artifact kinds: their H1, exact ordered H2 sections and gate lines.

This table is the single source of the artifact formats; docs/artifacts.md
documents it and a test keeps the two in step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Content(enum.Enum):
    PROSE = "prose"  # any non-empty Markdown
    BOUNDARY = "boundary"  # `None`, or a list of one code span per item: boundary patterns
    COMMANDS = "commands"  # `None`, or a list of one code span per item: exact commands
    PATHS = "paths"  # `None`, or a list of one code span per item: repository paths
    JSON = "json"  # exactly one ```json block holding {"<key>": ...}
    GATE = "gate"  # exactly the gate line of the kind, nothing else
    CHOICES = "choices"  # exactly the list: Repair Resume, Plan Amendment, Cancel


@dataclass(frozen=True)
class SectionSpec:
    title: str
    content: Content
    schema: str = ""  # JSON schema name (harness_gate/schemas/<schema>.schema.json)
    key: str = ""  # the single top-level key of the JSON block


@dataclass(frozen=True)
class KindSpec:
    title: str
    slug: str  # file name: plan.md, or NNN-<slug>.md
    sections: tuple[SectionSpec, ...]
    gate_line: str = ""  # the approval prompt, the last line of a kind that takes an approval
    approval_gate: str = ""  # the approval gate it answers: the `gate` value of its approval records

    def section(self, title: str) -> SectionSpec:
        return next(s for s in self.sections if s.title == title)


def _json(title: str, schema: str, key: str) -> SectionSpec:
    return SectionSpec(title, Content.JSON, schema, key)


P = Content.PROSE
# Every placeholder a template writes starts with this (templates.py): prose that still
# does is unfilled, and does not parse (HG514).
PLACEHOLDER_PREFIX = "FILL_IN:"
PLAN_GATE = "Proceed with this Plan? [y/N]"
AMENDMENT_GATE = "Proceed with this Plan Amendment? [y/N]"
RESUME_GATE = "Proceed with this Repair Resume? [y/N]"
REPAIR_PLAN_GATE = "Proceed with this Repair Plan? [y/N]"
CHOICES = ("Repair Resume", "Plan Amendment", "Cancel")

PLAN = KindSpec(
    "Plan",
    "plan",
    (
        SectionSpec("Objective", P),
        SectionSpec("Acceptance Criteria", P),
        SectionSpec("Scope", P),
        SectionSpec("Write Boundary", Content.BOUNDARY),
        SectionSpec("Unmodeled Commands", Content.COMMANDS),
        _json("Verification Strategy", "verification_strategy", "verification_strategy"),
        _json("Execution Strategy", "execution_strategy", "execution_strategy"),
        _json("Auto Repair", "auto_repair", "auto_repair"),
        SectionSpec("Risks", P),
        SectionSpec("Approval", Content.GATE),
    ),
    PLAN_GATE,
    "plan",
)

AMENDMENT = KindSpec(
    "Plan Amendment",
    "amendment",
    (
        _json("Binding", "amendment_binding", "binding"),
        _json("Deltas", "deltas", "deltas"),
        SectionSpec("Objective", P),
        SectionSpec("Acceptance Criteria", P),
        SectionSpec("Scope", P),
        SectionSpec("Write Boundary", Content.BOUNDARY),
        SectionSpec("Unmodeled Commands", Content.COMMANDS),
        _json("Verification Strategy", "verification_strategy", "verification_strategy"),
        SectionSpec("Risks", P),
        SectionSpec("Approval", Content.GATE),
    ),
    AMENDMENT_GATE,
    "amendment",
)

REVIEW = KindSpec(
    "Clean-context Review",
    "review",
    (
        _json("Binding", "review_binding", "binding"),
        _json("Reviewer", "reviewer", "reviewer"),
        SectionSpec("Scope Reviewed", P),
        _json("Findings", "findings", "findings"),
        _json("Verdict", "verdict", "verdict"),
    ),
)

REPAIR = KindSpec(
    "Repair Record",
    "repair",
    (
        _json("Binding", "repair_binding", "binding"),
        _json("Findings Addressed", "finding_ids", "finding_ids"),
        SectionSpec("Changed Files", Content.PATHS),
        SectionSpec("Write Boundary", Content.BOUNDARY),
        _json("Verification Strategy", "verification_strategy", "verification_strategy"),
        _json("Progress", "progress", "progress"),
    ),
)

PAUSE = KindSpec(
    "Pause Report",
    "pause",
    (
        _json("Binding", "pause_binding", "binding"),
        _json("Pause", "pause", "pause"),
        SectionSpec("Choices", Content.CHOICES),
    ),
)

RESUME = KindSpec(
    "Repair Resume",
    "resume",
    (
        _json("Binding", "resume_binding", "binding"),
        _json("Additional Budget", "additional_budget", "additional_budget"),
        SectionSpec("Approval", Content.GATE),
    ),
    RESUME_GATE,
    "repair_resume",
)

COMPLETION = KindSpec(
    "Completion",
    "completion",
    (
        _json("Binding", "completion_binding", "binding"),
        SectionSpec("Summary", P),
        _json("Evidence", "evidence_refs", "evidence"),
        _json("Outcome", "outcome", "outcome"),
    ),
)

REPAIR_PLAN = KindSpec(
    "Repair Plan",
    "repair-plan",
    (
        _json("Repair Context", "repair_context", "repair_context"),
        SectionSpec("Repair Scope", Content.BOUNDARY),
        SectionSpec("Approval", Content.GATE),
    ),
    REPAIR_PLAN_GATE,
    "",
)

KINDS: dict[str, KindSpec] = {
    k.title: k for k in (PLAN, AMENDMENT, REVIEW, REPAIR, PAUSE, RESUME, COMPLETION, REPAIR_PLAN)
}
BY_SLUG: dict[str, KindSpec] = {k.slug: k for k in KINDS.values()}
