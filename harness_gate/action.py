"""The GitHub Action's entry point: `python -m harness_gate.action`.

Reads the event from `GITHUB_EVENT_PATH` (never from a shell), picks the commits to
judge for `pull_request`, `push`, `merge_group` and `workflow_dispatch`, runs the gate
at the `ci` stage (by default) and writes annotations, the step summary and outputs
(and, with the `sarif` input, a SARIF log for code scanning).
Inputs arrive as environment variables set by action.yml (`INPUT_*`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import git
from harness_gate.commands import check
from harness_gate.errors import HarnessGateError, usage
from harness_gate.report import Report
from harness_gate.runs import STAGES, report_of

ZERO = re.compile(r"0+\Z")


@dataclass(frozen=True)
class Plan:
    """What to judge: commits of `head` not in `base`; or nothing, with the reason."""

    base: str | None
    head: str | None
    why: str
    landed: bool = False  # the commits are (or are about to be) the base branch's own history


def _input(name: str, default: str = "") -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip()


def _payload() -> dict[str, Any]:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessGateError("HG902", f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(data, dict):
        raise HarnessGateError("HG902", "the event payload is not a JSON object")
    return data


def _sha(value: Any, what: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", value):
        raise HarnessGateError("HG902", f"the event payload has no valid {what}")
    return value


def resolve(root: Path, event: str, payload: dict[str, Any]) -> Plan:  # noqa: PLR0911  (one return per case, in the order they are judged)
    base, head = _input("base"), _input("head")
    if base:
        return Plan(base, head or "HEAD", "the `base` input")
    if event in ("pull_request", "pull_request_target"):
        pr = payload.get("pull_request") or {}
        # The PR's own head commit, not the synthetic merge commit actions/checkout leaves.
        return Plan(
            _sha(pr.get("base", {}).get("sha"), "pull_request.base.sha"),
            _sha(pr.get("head", {}).get("sha"), "pull_request.head.sha"),
            event,
        )
    if event == "merge_group":
        group = payload.get("merge_group") or {}
        return Plan(
            _sha(group.get("base_sha"), "merge_group.base_sha"),
            _sha(group.get("head_sha"), "merge_group.head_sha"),
            event,
            landed=True,
        )
    if event == "push":
        after = payload.get("after") or ""
        if payload.get("deleted") or ZERO.match(str(after)):
            return Plan(None, None, "the push deleted a branch: nothing to check")
        after = _sha(after, "after")
        before = str(payload.get("before") or "")
        default = (payload.get("repository") or {}).get("default_branch") or "main"
        to_default = payload.get("ref") == f"refs/heads/{default}"
        if to_default and not ZERO.match(before) and git.commit_exists(root, before):
            # What landed on the default branch (a forced push too): the commits of `after`
            # that `before` did not have.
            return Plan(_sha(before, "before"), after, event, landed=True)
        if not to_default and not ZERO.match(before):
            # Any other branch is judged as its pull request will be: against the default
            # branch, never against its own previous tip (a weakening pushed first would
            # otherwise become the base of the next push).
            return _against_default(root, default, after)
        if not ZERO.match(before) and (git.is_shallow(root) or to_default):
            # The old tip is not here: too little history, or a rewritten default branch.
            raise HarnessGateError(
                "HG905",
                f"the previous tip {before[:12]} is not in this clone, so what the push changed is unknown",
                "Fetch the full history: `fetch-depth: 0` in actions/checkout.",
            )
        if to_default:
            # The default branch's first push: there is nothing older to compare with.
            raise HarnessGateError(
                "HG905",
                "the first push of the default branch has no earlier state to compare with",
                "Check it once with `harness-gate check --base <first commit>`; protect the branch with pull requests.",
            )
        # A new branch: its own commits are those the default branch does not have.
        return _against_default(root, default, after)
    if event == "workflow_dispatch":
        raise usage("workflow_dispatch needs the `base` input (and optionally `head`)")
    raise usage(f"unsupported event `{event}`: use pull_request, push or merge_group")


def _against_default(root: Path, default: str, after: str) -> Plan:
    """A push to a branch other than the default one, judged like its pull request: every
    commit the default branch does not have, with the default branch's configuration."""
    for ref in (f"refs/remotes/origin/{default}", f"refs/heads/{default}"):
        found = git.resolve(root, ref)
        if found:
            return Plan(found, after, f"push (compared with {default})")
    raise HarnessGateError(
        "HG905",
        f"cannot find the default branch `{default}` to compare this push with",
        "Fetch the full history: `fetch-depth: 0` in actions/checkout.",
    )


def run() -> Report:
    event = os.environ.get("GITHUB_EVENT_NAME", "")
    stage = _input("stage", "ci") or "ci"
    if stage not in STAGES:
        raise usage(f"stage {stage!r} is not one of {', '.join(STAGES)}")
    reverify = _input("reverify", "false").lower() == "true"
    if reverify and event not in ("pull_request", "push"):
        # pull_request_target, workflow_run and the like run with the base's secrets and
        # token: never execute the change's code there.
        raise usage(f"reverify runs only under pull_request and push, not {event or 'this event'}")
    workdir = Path(_input("working-directory", ".") or ".")
    root = git.toplevel(workdir)
    plan = resolve(root, event, _payload())
    if plan.base is None or plan.head is None:
        return Report("check", data={"event": event, "skipped": plan.why}, lines=(plan.why,))
    mode = check.Mode(check.ChangeSet.BASE, plan.base, plan.head)
    report = check.run_check(
        root,
        stage=stage,
        mode=mode,
        plan_id=None,
        config_file=_input("config") or None,
        reverify=reverify,
        landed=plan.landed,
    )
    return Report(report.command, report.findings, {"event": event, **report.data}, report.error, report.lines)


def main() -> int:
    # Every module that writes the outputs is loaded before a `--reverify` command runs: the
    # commands run as the same user, and the gate's venv is under RUNNER_TEMP.
    from harness_gate import github, prview  # noqa: PLC0415, F401
    from harness_gate import sarif as _sarif  # noqa: PLC0415, F401

    # The one fail-closed wrapper of every entry point: a refusal is its findings, any
    # other error or bug a reason, never a traceback.
    report = report_of("check", run)
    # Written whatever the outcome: an error too is a valid log (executionSuccessful false),
    # so the job that uploads it never finds the file missing.
    sarif = _input("sarif", "false").lower() == "true"
    try:
        github.write_outputs(report, sarif=sarif)
    except Exception as exc:  # a writer that fails: the step fails closed, with a reason
        report = Report(
            "check", error=HarnessGateError("HG999", f"cannot write the outputs: {type(exc).__name__}: {exc}")
        )
        with contextlib.suppress(Exception):
            github.write_outputs(report, sarif=sarif)
    sys.stdout.write(github.final_line(report))
    return report.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
