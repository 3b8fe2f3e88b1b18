"""`harness-gate pre-receive`: git's pre-receive hook in a (bare) server repository.

Each updated ref is judged as its pull request would be: a guarded branch's commits that
the default branch does not have, with the default branch's configuration (the trusted
side); a push to the default branch as what lands there (`ci`, landed). receive.py reads
the input and says which updates the `[pre_receive]` policy refuses outright. The pushed
objects are still in git's quarantine (GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES),
which every git process started here inherits; nothing is written into the repository
(the parse cache lives in a temporary directory), so a rejected push leaves nothing behind.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

from harness_gate import artifacts_tree, git, receive
from harness_gate.commands import check
from harness_gate.config import PreReceive
from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding
from harness_gate.receive import Kind, Update
from harness_gate.report import INACTIVE, Report
from harness_gate.state_facts import active_at


def pre_receive(cwd: Path, stdin: BinaryIO, config_file: str | None) -> Report:
    updates = receive.read_updates(stdin)
    with tempfile.TemporaryDirectory(prefix="harness-gate-receive-") as scratch:
        location = git.locate_git_dir(cwd, Path(scratch))
        return _judge(location, updates, config_file)


def _judge(location: git.Location, updates: list[Update], config_file: str | None) -> Report:
    root = location.toplevel
    branch = git.current_branch(root)
    if branch is None:
        raise receive.no_default("the repository's HEAD names no branch, so there is no default branch to judge by")
    default_ref = f"refs/heads/{branch}"
    tips = git.branch_tips(root)
    default_tip = tips.get(default_ref)
    if default_tip is None:
        if tips:
            raise receive.no_default(f"the default branch {default_ref} (HEAD) does not exist in this repository")
        return _first_push(updates, default_ref)
    cfg = artifacts_tree.trusted_config(root, config_file, default_tip, from_rev=True)
    active = active_at(root, default_tip, cfg)
    policy = cfg.pre_receive
    after = dict(tips)
    for u in updates:
        if u.ref.startswith("refs/heads/"):
            if u.new is None:
                after.pop(u.ref, None)
            else:
                after[u.ref] = u.new
    findings: list[Finding] = []
    lines: list[str] = []
    results: list[dict[str, Any]] = []
    for u in updates:
        kind = receive.kind_of(u.ref, default_ref, policy)
        found, note = _update(
            location,
            u,
            kind,
            default_tip=default_tip,
            after=after,
            config_file=config_file,
            policy=policy,
            active=active,
        )
        findings.extend(found)
        blocked = any(f.blocks for f in found)
        result = "blocked" if blocked else "allowed"
        results.append({"ref": u.ref, "kind": kind.value, "result": result})
        lines.append(f"{u.ref}: {result}{f' ({note})' if note else ''}")
    if not active:
        lines.insert(0, INACTIVE)
    data = {"active": active, "default_branch": default_ref, "refs": results}
    return Report("pre-receive", tuple(dict.fromkeys(findings)), data, lines=tuple(lines),
                  report_only=active and cfg.report_only)  # fmt: skip


def _first_push(updates: list[Update], default_ref: str) -> Report:
    """An empty repository: the push that creates the default branch adopts whatever it
    holds (there is nothing older to trust); any other ref waits for it."""
    findings = [receive.before_default(u, default_ref) for u in updates if u.ref != default_ref]
    lines = [f"{default_ref}: the repository's first push creates it; nothing older to judge it against"]
    data = {"active": False, "default_branch": default_ref, "refs": [{"ref": u.ref} for u in updates]}
    return Report("pre-receive", tuple(findings), data, lines=tuple(lines))


def _update(  # noqa: PLR0911, PLR0913  (one return per case, in the order they are judged; the facts it works from; a bundle of them would be a type used once)
    location: git.Location,
    u: Update,
    kind: Kind,
    *,
    default_tip: str,
    after: dict[str, str],
    config_file: str | None,
    policy: PreReceive,
    active: bool,
) -> tuple[list[Finding], str]:
    """One ref update's findings, and a note on how it was judged."""
    root = location.toplevel
    if active:
        refused = receive.refused(u, kind, policy)
        if refused is not None:
            return [refused], ""
    if u.new is None:
        return [], "deleted"
    if kind is Kind.TAG or kind is Kind.OTHER:
        if not active or kind is Kind.OTHER or policy.tags == "allow":
            return [], ""
        target = git.peeled_commit(root, u.new)
        if target is None or not git.reachable_from(root, target, sorted(set(after.values()))):
            return [receive.off_branch(u, target)], ""
        return [], "on a branch"
    if kind is Kind.DEFAULT:
        assert u.old is not None  # noqa: S101  (the default branch exists: git names its tip)
        if active and not git.is_ancestor(root, u.old, u.new):
            return [receive.rewrites(u)], ""
        mode, stage, landed = check.Mode(check.ChangeSet.BASE, u.old, u.new), "ci", True
    else:
        mode, stage, landed = check.Mode(check.ChangeSet.BASE, default_tip, u.new), policy.branch_stage, False
    report = check.run_check(root, stage=stage, mode=mode, plan_id=None, config_file=config_file, landed=landed,
                             location=dataclasses.replace(location, head=default_tip))  # fmt: skip
    if report.error is not None:
        raise HarnessGateError(report.error.code, f"{u.ref}: {report.error.message}", report.error.hint)
    prefix = f"{u.ref}: "
    found = [dataclasses.replace(f, message=prefix + f.message) for f in report.findings]
    commits = report.data.get("commits", 0)
    return found, f"{commits} commit{'s' * (commits != 1)} judged at {stage}"
