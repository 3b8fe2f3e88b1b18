"""Reporters: findings and command data as text or as one stable JSON document."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from harness_gate import rule_links
from harness_gate.errors import HarnessGateError
from harness_gate.findings import RULES, Finding, Severity

if TYPE_CHECKING:
    from pathlib import Path

# v2 added `commit`, `title` and `rule_url` to findings and `path`, `line`, `rule_url` to
# the error: harness_gate/schemas/report.schema.json, docs/report.md.
REPORT_SCHEMA = "harness-gate.report/v2"
INACTIVE = "harness-gate: inactive (no artifacts root and no configuration); nothing to check"


@dataclass(frozen=True)
class Report:
    command: str
    findings: tuple[Finding, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    error: HarnessGateError | None = None
    lines: tuple[str, ...] = ()  # human-readable lines shown before findings (text only)
    exit_override: int | None = None  # for commands whose verdict is not a finding (explain)
    # Roll-out (`report_only` in the trusted configuration): blocking findings are reported
    # as "would block" and exit 0. An error still exits 2: nothing was judged.
    report_only: bool = False

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return 2
        if any(f.blocks for f in self.findings):
            return 0 if self.report_only else 1
        return self.exit_override or 0

    @property
    def result(self) -> str:
        if self.would_block:
            return WOULD_BLOCK
        return {0: "pass", 1: "blocked", 2: "error"}[self.exit_code]

    @property
    def would_block(self) -> bool:
        """Blocking findings let through by report-only mode."""
        return self.report_only and self.error is None and any(f.blocks for f in self.findings)


WOULD_BLOCK = "would-block"
REPORT_ONLY = 'report-only mode: nothing is blocked (docs/config.md, "Report-only mode")'


def inactive(command: str) -> Report:
    """What every command answers in a repository that has not adopted harness-gate: exit 0."""
    return Report(command, data={"active": False}, lines=(INACTIVE,))


# The order a fixer works in: paths that can never pass, then missing authority, then
# the boundary itself, then the artifacts; HG9xx last.
_FAMILY_ORDER = {"HG1": 2, "HG2": 1, "HG3": 3, "HG4": 4, "HG5": 5, "HG6": 6, "HG9": 9}
_ALWAYS = frozenset({"HG103", "HG104", "HG105", "HG106"})


_SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTE: 2}


def _priority(f: Finding) -> tuple[int, int]:
    return (_SEVERITY_ORDER[f.severity], 0 if f.code in _ALWAYS else _FAMILY_ORDER.get(f.code[:3], 8))


def ordered(findings: tuple[Finding, ...]) -> list[Finding]:
    return sorted(findings, key=lambda f: (*_priority(f), f.code, f.path, f.line or 0))


# A configuration error names its file first, and the line where it knows it
# (config.py: "pyproject.toml, line 3, column 5: not valid TOML: ...").
_CONFIG_AT = re.compile(r"(\.harness-gate\.toml|pyproject\.toml)(?:, line ([1-9][0-9]*))?(?:, column [0-9]+)?: ")


def error_location(error: HarnessGateError) -> tuple[str | None, int | None]:
    """The file (and line) an error is about, where its message says so: configuration
    errors only; every other error is about the repository or the command line."""
    found = _CONFIG_AT.match(error.message) if error.code == "HG902" else None
    if found is None:
        return None, None
    return found.group(1), int(found.group(2)) if found.group(2) else None


def finding_json(f: Finding, links: rule_links.RuleLinks) -> dict[str, Any]:
    return {
        "code": f.code,
        "title": RULES[f.code].title if f.code in RULES else None,
        "severity": f.severity.value,
        "path": f.path,
        "line": f.line,
        "commit": f.commit,
        "message": f.message,
        "hint": f.hint,
        "rule_url": links.rule_url(f.code),  # null when this run knows no page (rule_links)
    }


def to_json(report: Report) -> dict[str, Any]:
    links = rule_links.resolve()
    doc: dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "command": report.command,
        "result": report.result,
        "exit_code": report.exit_code,
        "findings": [finding_json(f, links) for f in ordered(report.findings)],
        "data": dict(report.data),
    }
    if report.error is not None:
        path, line = error_location(report.error)
        doc["error"] = {
            "code": report.error.code,
            "message": report.error.message,
            "hint": report.error.hint,
            "path": path,
            "line": line,
            "rule_url": links.rule_url(report.error.code),
        }
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


# Bounds on what one finding puts before a reader (docs/report.md, "Output size"): a
# message or hint past MESSAGE_CHARS is cut with a count of what was cut; the text report
# shows TEXT_SHOWN findings of each rule, then how many more (the JSON report has them all).
MESSAGE_CHARS = 2000
TEXT_SHOWN = 20


def bounded(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` cut to `limit` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def write_text(report: Report, stream: TextIO, *, color: bool) -> None:
    paint = _color(color)
    for line in report.lines:
        stream.write(safe(line, keep_newlines=True) + "\n")
    counts: dict[str, int] = {}
    for f in report.findings:
        counts[f.code] = counts.get(f.code, 0) + 1
    group, shown = "", 0
    for f in ordered(report.findings):
        if f.code != group:
            group, shown = f.code, 0
            title = RULES[f.code].title if f.code in RULES else ""
            stream.write(paint(f"{f.code} {title} ({counts[f.code]})", "bold") + "\n")
            stream.write(f"    hint: {safe(bounded(f.hint))}\n")
        shown += 1
        if shown > TEXT_SHOWN:
            if shown == TEXT_SHOWN + 1:
                more = counts[f.code] - TEXT_SHOWN
                stream.write(f"  ... and {more} more {f.code} (--format json lists every finding)\n")
            continue
        where = f"{f.path}:{f.line}" if f.line else f.path
        tag = paint(f.code, "red" if f.blocks else "yellow")
        stream.write(f"  {safe(bounded(where))}: {tag} {safe(bounded(f.message))}\n")
    if report.error is not None:
        stream.write(f"{paint('error', 'red')} {report.error.code}: {safe(report.error.message)}\n")
        if report.error.hint:
            stream.write(f"    hint: {safe(report.error.hint)}\n")
    elif report.data.get("active") is not False and (
        report.command in ("lint", "check", "pre-receive") or any(f.blocks for f in report.findings)
    ):
        n = sum(f.blocks for f in report.findings)
        if report.would_block:
            verdict = paint("would block", "yellow")
            what = f"{n} finding{'s' * (n != 1)} that would block; {REPORT_ONLY}"
        else:
            verdict = paint("blocked", "red") if n else paint("passed", "green")
            what = f"{n} blocking finding{'s' * (n != 1)}"
        stream.write(f"harness-gate {report.command}: {verdict} ({what})\n")


def safe(text: str, *, keep_newlines: bool = False) -> str:
    """Make control characters in names visible instead of letting them act on the terminal."""
    return "".join(
        ch if ch.isprintable() or ch == " " or (keep_newlines and ch == "\n") else repr(ch)[1:-1] for ch in text
    )


def write_json(report: Report, stream: TextIO) -> None:
    # Names that are not UTF-8 travel as surrogate escapes; show their bytes as \xNN
    # so the document is always valid UTF-8.
    stream.write(json.dumps(clean(to_json(report)), indent=2, ensure_ascii=False) + "\n")


def clean(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a lone surrogate that did not come from a file name
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def repository_root(start: Path) -> Path | None:
    """The work tree holding `start`, found without running git: a report is being written,
    perhaps because git failed."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None
