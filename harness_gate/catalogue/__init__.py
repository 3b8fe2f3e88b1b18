"""The rule catalogue, one module per family: the single place where rule codes are
defined. docs/rules.md is generated from it and checked against it by the test-suite
(tests/test_docs.py), so the two cannot drift apart."""

from __future__ import annotations

from harness_gate.catalogue import (
    hg1_boundary,
    hg2_plans,
    hg3_evidence,
    hg4_review,
    hg5_syntax,
    hg6_formats,
    hg9_environment,
)
from harness_gate.catalogue.rule import Rule

# The families' names: docs/rules.md's headings and SARIF's rule help.
FAMILIES = {
    "HG1": "Boundary (the gate, `check`)",
    "HG2": "Plans and approvals",
    "HG3": "Evidence",
    "HG4": "Review and lifecycle",
    "HG5": "Artifact syntax",
    "HG6": "Other harness formats",
    "HG9": "Environment and internal",
}
_FAMILY_MODULES = (hg1_boundary, hg2_plans, hg3_evidence, hg4_review, hg5_syntax, hg6_formats, hg9_environment)
RULES: dict[str, Rule] = {r.code: r for module in _FAMILY_MODULES for r in module.RULES}

__all__ = ["FAMILIES", "RULES", "Rule"]
