"""GitHub Actions output: workflow-command annotations, the step summary, step outputs.

Every value that reaches a workflow command is escaped (`%`, CR, LF in data; also `:`
and `,` in properties), so a file name can never inject a command of its own.
"""

from __future__ import annotations

import html
import json
import os
import tempfile
from pathlib import Path
from typing import TextIO

from harness_gate.findings import RULES
from harness_gate.report import Report, clean, ordered, to_json


def escape_data(text: str) -> str:
    # `##[` is the runner's legacy command form; break it so no text can start one.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace("##[", "#\u200b#[")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def write_annotations(report: Report, stream: TextIO) -> None:
    """One `::error` per finding, most important first (GitHub shows the first 10)."""
    for f in ordered(report.findings):
        props = [f"file={escape_property(clean(f.path))}"]
        if f.line:
            props.append(f"line={f.line}")
        props.append(f"title={escape_property(f.code + ' ' + RULES[f.code].title if f.code in RULES else f.code)}")
        level = "error" if f.blocks else "warning"
        stream.write(f"::{level} {','.join(props)}::{escape_data(clean(f.message + ' — ' + f.hint))}\n")
    if report.error is not None:
        stream.write(f"::error title={escape_property(report.error.code)}::{escape_data(report.error.message)}"
                     f"{escape_data(' — ' + report.error.hint if report.error.hint else '')}\n")  # fmt: skip


def _cell(text: str) -> str:
    cleaned = str(clean(text)).replace("\r", " ").replace("\n", " ")
    return html.escape(cleaned, quote=False).replace("|", "&#124;").replace("[", "&#91;")


def summary(report: Report) -> str:
    """The full report as Markdown for $GITHUB_STEP_SUMMARY."""
    icon = {"pass": "✅", "blocked": "❌", "error": "⚠️"}[report.result]
    lines = [f"## {icon} harness-gate: {report.result}", ""]
    data = report.data
    if data:
        facts = ", ".join(
            f"{k}: <code>{_cell(str(v))}</code>" for k, v in data.items() if not isinstance(v, (dict, list))
        )
        lines += [facts, ""]
    if report.error is not None:
        lines += [f"**{report.error.code}**: {_cell(report.error.message)}", "", _cell(report.error.hint), ""]
    for line in report.lines:
        lines.append(_cell(line))
    if report.findings:
        lines += ["", "| code | path | line | message | how to fix |", "|---|---|---|---|---|"]
        for f in ordered(report.findings):
            lines.append(
                f"| {f.code} | <code>{_cell(f.path)}</code> | {f.line or ''} | {_cell(f.message)} | {_cell(f.hint)} |"
            )
    return "\n".join(lines) + "\n"


def write_outputs(report: Report) -> None:
    """Annotations on stdout; summary, JSON report and step outputs where GitHub asks.

    Nothing else reaches stdout: the runner scans every line for workflow commands, and
    a file name printed as-is could carry one."""
    import sys  # noqa: PLC0415  (the stream the runner shows)

    write_annotations(report, sys.stdout)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        with Path(summary_path).open("a", encoding="utf-8") as fh:
            fh.write(summary(report))
    # A file of its own per run: two gate steps in one job never share a report.
    fd, name = tempfile.mkstemp(
        prefix="harness-gate-report-", suffix=".json", dir=os.environ.get("RUNNER_TEMP") or None
    )
    report_path = Path(name)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(clean(to_json(report)), indent=2, ensure_ascii=False) + "\n")
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        violations = sum(1 for f in report.findings if f.blocks)
        with Path(output).open("a", encoding="utf-8") as fh:
            # Our own values only: no file name ever goes into an output.
            fh.write(f"result={report.result}\nviolations={violations}\nreport-path={report_path}\n")


def final_line(report: Report) -> str:
    n = sum(1 for f in report.findings if f.blocks)
    where = "; the step summary has the report" if os.environ.get("GITHUB_STEP_SUMMARY") else ""
    return f"harness-gate: {report.result} ({n} blocking finding{'s' * (n != 1)}{where})\n"
