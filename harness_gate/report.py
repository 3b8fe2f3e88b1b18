"""Reporters: findings and command data as text or as one stable JSON document."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding, Severity

REPORT_SCHEMA = "harness-gate.report/v1"


@dataclass(frozen=True)
class Report:
    command: str
    findings: tuple[Finding, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    error: HarnessGateError | None = None
    lines: tuple[str, ...] = ()  # human-readable lines shown before findings (text only)

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return 2
        return 1 if any(f.blocks for f in self.findings) else 0

    @property
    def result(self) -> str:
        return {0: "pass", 1: "blocked", 2: "error"}[self.exit_code]


def _sorted(findings: tuple[Finding, ...]) -> list[Finding]:
    # Errors before warnings, then by file and line: the order a fixer works in.
    return sorted(findings, key=lambda f: (f.severity is not Severity.ERROR, f.path, f.line or 0, f.code))


def to_json(report: Report) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "command": report.command,
        "result": report.result,
        "exit_code": report.exit_code,
        "findings": [
            {
                "code": f.code,
                "severity": f.severity.value,
                "path": f.path,
                "line": f.line,
                "message": f.message,
                "hint": f.hint,
            }
            for f in _sorted(report.findings)
        ],
        "data": dict(report.data),
    }
    if report.error is not None:
        doc["error"] = {"code": report.error.code, "message": report.error.message, "hint": report.error.hint}
    return doc


def _color(enabled: bool) -> Callable[[str, str], str]:
    codes = {"red": "31", "yellow": "33", "green": "32", "bold": "1"}

    def paint(text: str, name: str) -> str:
        return f"\x1b[{codes[name]}m{text}\x1b[0m" if enabled else text

    return paint


def use_color(stream: TextIO) -> bool:
    # https://no-color.org: any non-empty NO_COLOR disables colour.
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def write_text(report: Report, stream: TextIO, *, color: bool) -> None:
    paint = _color(color)
    for line in report.lines:
        stream.write(line + "\n")
    for f in _sorted(report.findings):
        where = f"{f.path}:{f.line}" if f.line else f.path
        tag = paint(f.code, "red" if f.blocks else "yellow")
        stream.write(f"{safe(where)}: {tag} {safe(f.message)}\n    hint: {safe(f.hint)}\n")
    if report.error is not None:
        stream.write(f"{paint('error', 'red')} {report.error.code}: {safe(report.error.message)}\n")
        if report.error.hint:
            stream.write(f"    hint: {safe(report.error.hint)}\n")
    elif report.data.get("active") is not False and (report.findings or report.command in ("lint", "check")):
        n = sum(f.blocks for f in report.findings)
        verdict = paint("blocked", "red") if n else paint("passed", "green")
        stream.write(f"harness-gate {report.command}: {verdict} ({n} blocking finding{'s' * (n != 1)})\n")


def safe(text: str) -> str:
    """Make control characters in names visible instead of letting them act on the terminal."""
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in text)


def write_json(report: Report, stream: TextIO) -> None:
    stream.write(json.dumps(to_json(report), indent=2, ensure_ascii=False) + "\n")
