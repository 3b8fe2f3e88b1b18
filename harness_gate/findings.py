"""Findings: every per-file problem is a value, never an exception.

A finding carries a stable rule code (its family: docs/rules.md), the repository
relative path, an optional 1-based line, a one-line message and a fix hint; in a
commit range, also the commit whose own change it is about.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from harness_gate.catalogue import FAMILIES, RULES, Rule

# The catalogue's names as every reporter reads them, beside the findings.
__all__ = ["FAMILIES", "RULES", "Finding", "Rule", "Severity", "blocking", "finding", "rule_anchor"]


class Severity(str, enum.Enum):
    ERROR = "error"  # blocks: exit 1
    WARNING = "warning"
    NOTE = "note"  # informs; no command raises one yet, but every reporter maps it


@dataclass(frozen=True, order=True)
class Finding:
    code: str
    path: str
    line: int | None
    message: str
    hint: str
    severity: Severity = Severity.ERROR
    # The commit of a range whose own change the finding is about; None for the index and
    # for what the head state must hold (evidence, review). The message names it too, for
    # a reader; this field is for tools (its full id, never abbreviated).
    commit: str | None = None

    @property
    def blocks(self) -> bool:
        return self.severity is Severity.ERROR


def finding(  # noqa: PLR0913  (one keyword per field written)
    code: str,
    path: str,
    message: str,
    *,
    line: int | None = None,
    hint: str | None = None,
    severity: Severity = Severity.ERROR,
) -> Finding:
    """Build a finding for a catalogued rule (an unknown code is a bug)."""
    rule = RULES[code]
    return Finding(code, path, line, message, hint or rule.hint, severity)


def blocking(findings: list[Finding] | tuple[Finding, ...]) -> bool:
    return any(f.blocks for f in findings)


def rule_anchor(code: str) -> str:
    """The fragment of the rule's row in docs/rules.md (tests/test_docs.py renders it)."""
    return code.lower()
