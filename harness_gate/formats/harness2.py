"""Seed 004: Harness² trees.

Placeholder: validates nothing yet (docs/formats/harness2.md).
"""

from __future__ import annotations

from harness_gate.findings import Finding
from harness_gate.formats import Context, Format


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    return []


FORMAT = Format("harness2", "004", "Harness² tree", lint)
