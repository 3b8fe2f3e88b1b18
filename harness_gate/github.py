"""GitHub Actions output: workflow-command annotations, the step summary, step outputs.

Every value that reaches a workflow command is escaped (`%`, CR, LF in data; also `:`
and `,` in properties), so a file name can never inject a command of its own.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import TextIO

from harness_gate.findings import RULES, Finding, Severity
from harness_gate.report import REPORT_ONLY, Report, bounded, clean, error_location, ordered, repository_root, to_json

# GitHub shows 10 error, 10 warning and 10 notice annotations per step (50 per job) and
# drops the rest without a word: past that, one notice says how many more there are.
ANNOTATIONS_PER_LEVEL = 10
# GitHub refuses a step summary over 1 MiB (and shows none of it): the findings table is
# cut to what fits, with a row counting the rest; the JSON report keeps every finding.
SUMMARY_BYTES = 1024 * 1024
_SUMMARY_MARGIN = 4096  # for the closing lines and a summary another step in this job wrote
_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    # `##[` is the runner's legacy command form; break it so no text can start one.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace("##[", "#\u200b#[")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, path: str, line: int | None, title: str, text: str) -> str:
    """One workflow command (`::error file=...,line=...,title=...::text`), every part escaped."""
    props = [f"file={escape_property(bounded(clean(path)))}"] if path else []
    props += [f"line={line}"] if line else []
    props.append(f"title={escape_property(title)}")
    return f"::{kind} {','.join(props)}::{escape_data(bounded(clean(text)))}\n"


def _annotation(f: Finding) -> str:
    title = f.code + " " + RULES[f.code].title if f.code in RULES else f.code
    return _command(_COMMAND[f.severity], f.path, f.line, title, f.message + " — " + f.hint)


def write_annotations(report: Report, stream: TextIO) -> None:
    """One annotation per finding, most important first (the error that stopped the
    command, blocking findings, warnings, notes; each in the report's order: by rule),
    as many of each kind as GitHub shows, then one notice for the rest."""
    budget = dict.fromkeys(_COMMAND.values(), ANNOTATIONS_PER_LEVEL)
    if report.error is not None:
        budget["error"] -= 1
        error = report.error
        path, line = error_location(error)  # a configuration error's file and line
        hint = " — " + error.hint if error.hint else ""
        stream.write(_command("error", path or "", line, error.code, error.message + hint))
    findings = ordered(report.findings)
    kinds = [_COMMAND[f.severity] for f in findings]
    if any(kinds.count(kind) > budget[kind] for kind in budget):
        budget["notice"] -= 1  # the place of the notice that counts the rest
    hidden: dict[str, int] = dict.fromkeys(budget, 0)
    for f, kind in zip(findings, kinds, strict=True):
        if budget[kind] > 0:
            budget[kind] -= 1
            stream.write(_annotation(f))
        else:
            hidden[kind] += 1
    if any(hidden.values()):
        words = {"error": "blocking", "warning": "warning", "notice": "note"}
        parts = [f"{n} {words[kind]}" for kind, n in hidden.items() if n]
        total = sum(hidden.values())
        title = f"harness-gate: {total} more finding{'s' * (total != 1)} not annotated"
        stream.write(
            f"::notice title={escape_property(title)}::"
            + escape_data(
                f"{', '.join(parts)}: GitHub shows {ANNOTATIONS_PER_LEVEL} annotations of each kind per step. "
                "The step summary lists every finding that fits in its 1 MiB, the JSON report (the `report-path` "
                "output) every one."
            )
            + "\n"
        )


def summary(report: Report, room: int = SUMMARY_BYTES) -> str:
    """The report as Markdown for $GITHUB_STEP_SUMMARY: the reviewer's view (prview.py),
    headed by the result, with every finding that fits in `room` bytes (GitHub's cap) and a
    count of the rest. Past that, a summary that says only the verdict and where the report is."""
    from harness_gate import prview  # noqa: PLC0415  (only when writing the summary)

    room -= _SUMMARY_MARGIN

    def render(shown: int | None) -> str:
        return prview.render(report, title="harness-gate", shown=shown)

    whole = render(None)
    if len(whole.encode("utf-8")) <= room:
        return whole
    low, high = 0, len(report.findings)  # the most rows that fit: at most log2(n) renders
    best = render(0)
    if len(best.encode("utf-8")) > room:
        return (
            f"## harness-gate: {prview.text(report.result)}\n\n"
            "The report is too large for the step summary (GitHub shows at most 1 MiB): the JSON report "
            "(the `report-path` output) lists every finding.\n"
        )
    while low < high:
        mid = (low + high + 1) // 2
        text = render(mid)
        if len(text.encode("utf-8")) <= room:
            low, best = mid, text
        else:
            high = mid - 1
    return best


def _own_file(prefix: str, suffix: str, text: str) -> Path:
    # A file of its own per run, created new under RUNNER_TEMP: two gate steps in one job
    # never share a report, and no path the change under test holds (a symlink in the
    # workspace, say) is ever written through.
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=os.environ.get("RUNNER_TEMP") or None)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    return Path(name)


def write_outputs(report: Report, *, sarif: bool = False) -> None:
    """Annotations on stdout; summary, JSON report (and with `sarif`, a SARIF log) and step
    outputs where GitHub asks.

    Nothing else reaches stdout: the runner scans every line for workflow commands, and
    a file name printed as-is could carry one."""
    import sys  # noqa: PLC0415  (the stream the runner shows)

    write_annotations(report, sys.stdout)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        with Path(summary_path).open("a", encoding="utf-8") as fh:
            # What this step's summary already holds counts against the same cap.
            fh.write(summary(report, SUMMARY_BYTES - fh.tell()))
    report_path = _own_file(
        "harness-gate-report-", ".json", json.dumps(clean(to_json(report)), indent=2, ensure_ascii=False) + "\n"
    )
    sarif_path = None
    if sarif:
        from harness_gate import sarif as sarif_mod  # noqa: PLC0415  (only when asked)

        log = sarif_mod.to_sarif(report, root=repository_root(Path.cwd()))
        sarif_path = _own_file("harness-gate-sarif-", ".sarif", json.dumps(log, indent=2, ensure_ascii=False) + "\n")
    output = os.environ.get("GITHUB_OUTPUT")
    if output:
        violations = sum(1 for f in report.findings if f.blocks)
        with Path(output).open("a", encoding="utf-8") as fh:
            # Our own values only: no file name ever goes into an output.
            fh.write(f"result={report.result}\nviolations={violations}\nreport-path={report_path}\n")
            if sarif_path is not None:
                fh.write(f"sarif-path={sarif_path}\n")


def final_line(report: Report) -> str:
    n = sum(1 for f in report.findings if f.blocks)
    where = "; the step summary has the report" if os.environ.get("GITHUB_STEP_SUMMARY") else ""
    if report.would_block:
        return f"harness-gate: would block ({n} finding{'s' * (n != 1)} that would block; {REPORT_ONLY}{where})\n"
    return f"harness-gate: {report.result} ({n} blocking finding{'s' * (n != 1)}{where})\n"
