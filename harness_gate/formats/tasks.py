"""Seed 001: the long-running task harness (`harness-tasks.json`, `harness-progress.txt`).

Placeholder: validates nothing yet (docs/formats/tasks.md).
"""

from __future__ import annotations

from harness_gate.findings import Finding
from harness_gate.formats import Context, Format


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    return []


FORMAT = Format("tasks", "001", "long-running task harness", lint)
