"""GitLab CI: what a pipeline's predefined variables say to judge, and the Code Quality
report (docs/gitlab.md).

`pipeline` reads the variables GitLab sets for a merge request pipeline (detached, merged
results, merge train) or a push to the default branch, and names the base and head the
gate compares, as action.py does for GitHub's events. `code_quality` renders a report as
GitLab's Code Quality JSON (`artifacts:reports:codequality`), shown in the merge request
widget. Imported only in a GitLab job or for `--format gitlab`: never on the hook path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding, Severity
from harness_gate.git.diff import ZERO_OIDS
from harness_gate.git.repo import OID
from harness_gate.report import Report, bounded, clean, error_location, ordered


@dataclass(frozen=True)
class Pipeline:
    """What a GitLab pipeline judges: the commits of `head` that `base` does not have."""

    base: str
    head: str
    event: str  # detached | merged_result | merge_train | push
    landed: bool = False  # the commits are (or are about to be) the target branch's own


def _bad(message: str) -> HarnessGateError:
    return HarnessGateError(
        "HG918",
        message,
        'Run the job in merge request pipelines (`rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"`) '
        "or pushes to the default branch, or pass `--base` and `--head` (docs/gitlab.md).",
    )


def _sha(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "")
    if not OID.fullmatch(value):
        raise _bad(f"GitLab's {name} is {'not set' if not value else repr(value[:80])}: not a commit id")
    return value


def pipeline(env: Mapping[str, str]) -> Pipeline | None:
    """The base and head a GitLab pipeline judges; None outside GitLab CI, or for a
    pipeline that judges nothing by itself (a branch push: its merge request does)."""
    if env.get("GITLAB_CI") != "true":
        return None
    source = env.get("CI_PIPELINE_SOURCE", "")
    if source == "merge_request_event":
        event = env.get("CI_MERGE_REQUEST_EVENT_TYPE", "")
        if event == "detached":
            # CI_COMMIT_SHA is the source branch's head; the diff base is where it left
            # the target branch (their merge base when the merge request's diff was made).
            return Pipeline(_sha(env, "CI_MERGE_REQUEST_DIFF_BASE_SHA"), _sha(env, "CI_COMMIT_SHA"), event)
        if event == "merged_result":
            # CI_COMMIT_SHA is a merge GitLab made of the source into the target: the state
            # judged is the source branch's own head (its evidence and review are for it),
            # against the target branch's head, as a GitHub pull request is.
            return Pipeline(
                _sha(env, "CI_MERGE_REQUEST_TARGET_BRANCH_SHA"), _sha(env, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"), event
            )
        if event == "merge_train":
            # CI_COMMIT_SHA is the train's commit: the target branch's head with the merge
            # requests ahead and this one merged in, exactly what lands (a GitHub merge
            # queue's group commit).
            return Pipeline(
                _sha(env, "CI_MERGE_REQUEST_TARGET_BRANCH_SHA"), _sha(env, "CI_COMMIT_SHA"), event, landed=True
            )
        raise _bad(
            f"unknown CI_MERGE_REQUEST_EVENT_TYPE {event[:80]!r}: expected detached, merged_result or merge_train"
        )
    if source == "push" and env.get("CI_COMMIT_BRANCH") and env.get("CI_COMMIT_BRANCH") == env.get("CI_DEFAULT_BRANCH"):
        if env.get("CI_COMMIT_BEFORE_SHA", "") in ZERO_OIDS:
            raise _bad("the first push of the default branch has no earlier state to compare with")
        return Pipeline(_sha(env, "CI_COMMIT_BEFORE_SHA"), _sha(env, "CI_COMMIT_SHA"), "push", landed=True)
    return None


# -- the Code Quality report --------------------------------------------------------------

# GitLab's severities, least to most: info, minor, major, critical, blocker.
_SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.NOTE: "info"}
# GitLab parses the whole artifact to show the widget: a bound on the issues and the bytes
# keeps a runaway report (a range of thousands of bad commits) readable; the rest are counted.
MAX_ISSUES = 10_000
MAX_BYTES = 10_000_000


def _fingerprint(code: str, path: str, message: str, seen: dict[str, int]) -> str:
    """Stable across runs (sarif.fingerprint: the rule, the path, the message without ids
    and times) and unique within one report: GitLab shows one issue per fingerprint."""
    from harness_gate.sarif import fingerprint  # noqa: PLC0415

    key = fingerprint(code, path, message)
    seen[key] = seen.get(key, 0) + 1
    return hashlib.sha256(f"{key}:{seen[key]}".encode()).hexdigest()[:32]


def _issue(  # noqa: PLR0913  (one keyword per field written)
    code: str, path: str, line: int | None, text: str, *, severity: str, seen: dict[str, int], message: str
) -> dict[str, Any]:
    return {
        "description": bounded(text),
        "check_name": code,
        "fingerprint": _fingerprint(code, path, message, seen),
        "severity": severity,
        "location": {"path": path, "lines": {"begin": line if line is not None and line >= 1 else 1}},
    }


def code_quality(report: Report, *, root: Path | None = None) -> list[dict[str, Any]]:
    """The report as GitLab Code Quality issues: one per finding, in the report's order,
    and one `blocker` for an error (nothing was judged). A finding without a path is
    shown on the configuration file, as in SARIF."""
    from harness_gate.sarif import SECURITY_SEVERITY, fallback_path  # noqa: PLC0415

    fallback = fallback_path(root)
    seen: dict[str, int] = {}
    issues: list[dict[str, Any]] = []
    if report.error is not None:
        error = report.error
        path, line = error_location(error)
        text = f"{error.code}: {error.message}" + (f" — {error.hint}" if error.hint else "")
        issues.append(
            _issue(error.code, path or fallback, line, text, severity="blocker", seen=seen, message=error.message)
        )
    findings: list[Finding] = ordered(report.findings)
    size = 4096  # the frame, and the issue that counts what was left out
    kept = 0
    for f in findings:
        severity = _SEVERITY[f.severity]
        if f.blocks and f.code in SECURITY_SEVERITY:
            severity = "critical"
        text = f"{f.code}: {f.message}" + (f" — {f.hint}" if f.hint else "")
        if f.commit is not None and f.commit[:12] not in f.message:
            text += f" (commit {f.commit})"
        issue = _issue(f.code, f.path or fallback, f.line, text, severity=severity, seen=seen, message=f.message)
        # As `write` prints it: indented one level deeper (each line), with a separator.
        shown = json.dumps(clean(issue), indent=2, ensure_ascii=False)
        size += len(shown.encode("utf-8")) + 2 * (shown.count("\n") + 1) + 2
        if kept >= MAX_ISSUES or size > MAX_BYTES:
            break
        issues.append(issue)
        kept += 1
    left = len(findings) - kept
    if left:
        issues.append(
            _issue(
                findings[kept].code,
                fallback,
                None,
                f"{left} more finding{'s' * (left != 1)} left out of this report (at most {MAX_ISSUES} issues, "
                f"{MAX_BYTES // 1_000_000} MB); the job's log and `--format json` list every finding",
                severity="info",
                seen=seen,
                message="left out",
            )
        )
    result: list[dict[str, Any]] = clean(issues)
    return result


def write(report: Report, stream: TextIO, *, root: Path | None = None) -> None:
    stream.write(json.dumps(code_quality(report, root=root), indent=2, ensure_ascii=False) + "\n")
