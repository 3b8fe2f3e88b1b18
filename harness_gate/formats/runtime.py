"""Seed 002: the agent runtime (evidence events, agent-team plans, requirements, checkpoints).

Placeholder: validates nothing yet (docs/formats/runtime.md).
"""

from __future__ import annotations

from harness_gate.findings import Finding
from harness_gate.formats import Context, Format


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    return []


FORMAT = Format("runtime", "002", "agent runtime", lint)
