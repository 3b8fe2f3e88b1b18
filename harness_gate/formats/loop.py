"""Seed 003: the planner/generator/evaluator loop (`.harness/`).

Placeholder: validates nothing yet (docs/formats/loop.md).
"""

from __future__ import annotations

from harness_gate.findings import Finding
from harness_gate.formats import Context, Format


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    return []


FORMAT = Format("loop", "003", "planner/generator/evaluator loop", lint)
