"""The docs stay in step with the code they describe."""

from __future__ import annotations

import re
from pathlib import Path

from harness_gate.artifacts.kinds import KINDS
from harness_gate.findings import RULES

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_every_rule_code_is_documented_and_no_other() -> None:
    text = (DOCS / "rules.md").read_text()
    rows = dict(re.findall(r"^\| (HG\d{3}) \| ([^|]+) \|", text, re.MULTILINE))
    assert set(rows) == set(RULES)
    for code, rule in RULES.items():
        assert rows[code].strip() == rule.title


def test_artifact_reference_lists_every_kind_and_section() -> None:
    text = (DOCS / "artifacts.md").read_text()
    for kind in KINDS.values():
        assert f"# {kind.title}" in text
        for section in kind.sections:
            assert f"## {section.title}" in text, (kind.title, section.title)
        if kind.gate:
            assert kind.gate in text


def test_readme_quick_start_has_the_two_commands() -> None:
    readme = (DOCS.parent / "README.md").read_text()
    assert "pip install . && harness-gate demo" in readme
    assert "pip install -e '.[test]' && python -m pytest" in readme
    assert "python -m pytest" in (DOCS.parent / ".ci" / "run").read_text()
