"""`harness-gate status`: the plan's state, evidence and next step (it informs, never blocks)."""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_gate import (
    artifacts_root,
    artifacts_tree,
    evidence,
    fingerprints,
    freshness,
    git,
    governance,
    lifecycle,
    plans,
    templates,
)
from harness_gate import report as report_mod
from harness_gate.boundary import Boundary
from harness_gate.config import Config
from harness_gate.errors import HarnessGateError, usage
from harness_gate.findings import Finding, Severity
from harness_gate.report import Report
from harness_gate.state_facts import GitFacts


def status(cwd: Path, plan_id: str | None) -> Report:
    location = git.locate(cwd)
    root = location.toplevel
    snap = artifacts_tree.from_worktree(root)
    if not snap.active:
        return report_mod.inactive("status")
    found: list[Finding] = artifacts_tree.ignored_config(root)
    chosen = governance.plan_or_none(snap, plan_id, GitFacts(snap.root))
    if isinstance(chosen, HarnessGateError):
        line = f"plan:       none chosen: {chosen.message}"
        return Report("status", (), {"active": True, "plan": None}, lines=(line, f"next:       {chosen.hint}"))
    plan_id = chosen
    folder = plans.load(snap, plan_id)
    missing = artifacts_root.plan_folder(snap.artifacts_dir, plan_id)
    governance.require_plan(snap, plan_id, f"there is no plan `{plan_id}` here ({missing}/ is missing)")
    life = lifecycle.replay(folder)
    found.extend(folder.findings)
    found.extend(life.findings)
    records = git.status_records(root, artifacts_root.prefix(snap.artifacts_dir))
    unstaged = [path for xy, path in records if xy == "??" or xy[1] != " "]
    policy = life.policy
    tree, fresh, problems, untracked = _freshness(root, snap, folder, life)
    found.extend(problems)
    found.extend(untracked)
    work = _WorkTree(tuple(path for _, path in records), untracked[0].code if untracked else None)
    next_step = _next_step(snap, folder, life, fresh, work)
    reviews = freshness.review_states(GitFacts(root), snap.config, folder, life, tree) if policy is not None else []
    # A review to fill in comes first, whatever the review's freshness and CI say.
    filling = _unfilled_review(snap, folder) is not None
    if not filling:
        next_step = _review_next(next_step, life, fresh, reviews)
    approvers, uncommitted = _approvers(root, snap, plan_id)
    short = [v for v in approvers if v["needed"]]
    if short and life.grants_writes:
        v = short[0]
        next_step = (
            f"{v['needed']} more approval(s) for `{v['rule']}`, by {' or '.join(v['waiting_for'])}: each runs "
            f"harness-gate approve and commits it signed (git commit -S); docs/approvers.md"
        )
    ci = _ci_verdict(cwd, root, snap.config)
    if not filling or (short and life.grants_writes):
        next_step = _ci_next(next_step, life, ci, (fresh, reviews, [path for _, path in records]))
    if location.merge_head.is_file():
        next_step = _merge_next(root, policy.boundary if policy else ())
    # status informs, it never blocks: what it finds is what `lint` and `check` would say.
    found = [dataclasses.replace(f, severity=Severity.WARNING) for f in found]
    data: dict[str, Any] = {
        "active": True,
        "plan": plan_id,
        "state": life.state.value,
        "write_authority": life.grants_writes,
        "plan_sha256": life.plan_sha256,
        "plan_approval": life.plan_approval.value,
        "amendment_sha256": life.amendment_sha256,
        "boundary": list(policy.boundary) if policy else [],
        "unmodeled_commands": list(policy.unmodeled_commands) if policy else [],
        "required_commands": [
            {"id": c["id"], "command": c["command"], "timeout_seconds": c["timeout_seconds"]}
            for c in (policy.verification["required_commands"] if policy else [])
        ],
        "repairs": {"used": life.repairs_used, "budget": life.repair_budget},
        "next_step": next_step,
        "tree": tree,
        "evidence": [{"command_id": f.command_id, "freshness": f.reason} for f in fresh],
        "reviews": [r._asdict() for r in reviews],
        "approvers": approvers,
        "ci": ci,
        "not_in_index": unstaged,
    }
    lines = [
        f"plan:       {plan_id}  ({artifacts_root.plan_md(folder.path)})",
        f"state:      {life.state.value}  (write authority: {'yes' if life.grants_writes else 'no'})",
        f"approval:   {life.plan_approval.value}  sha256 {life.plan_sha256 or '-'}",
        f"boundary:   {', '.join(data['boundary']) or 'None'}",
        "commands:   " + (", ".join(f"{c['id']}={c['command']}" for c in data["required_commands"]) or "-"),
        f"repairs:    {life.repairs_used} of {life.repair_budget}",
        f"tree:       {tree or '-'}  (the work tree's fingerprint)",
        "evidence:   " + (", ".join(f"{f.command_id} {f.reason}" for f in fresh) or "-"),
        *_review_lines(reviews),
        *_approver_lines(approvers, uncommitted),
        _ci_line(ci) + ("; the merge in progress is not committed yet" if location.merge_head.is_file() else ""),
        f"next:       {next_step}",
    ]
    if unstaged:
        lines.append("not staged: " + ", ".join(unstaged) + "  (the gate reads the index: git add them)")
    from harness_gate.commands import agent_sandbox  # noqa: PLC0415

    data["agent_sandbox_stale"] = stale = agent_sandbox.stale(root)
    if stale:
        lines.append(
            f"sandbox:    the rules in {', '.join(stale)} are not what the approved boundary and the tree ask for now: "
            "run `harness-gate agent-sandbox` and restart the agent"
        )
    return Report("status", tuple(found), data, lines=tuple(lines))


def status_view(cwd: Path, plan_id: str | None, base: str | None) -> Report:
    """The plan for a reviewer (`status --format markdown`), read from commits only: the
    plan `status` picks as the HEAD commit holds it, or with `base` every plan the
    commits since `base` used or brought and each commit's verdict, as `check` judges them
    at the `ci` stage. It informs, it never blocks (`check` does)."""
    from harness_gate import prview  # noqa: PLC0415
    from harness_gate.commands import check  # noqa: PLC0415  (`--base`: the check's own view)

    if base is not None:
        judged = check.run_check(
            cwd, stage="ci", mode=check.Mode(check.ChangeSet.BASE, base, "HEAD"), plan_id=plan_id, config_file=None
        )
        found = tuple(dataclasses.replace(f, severity=Severity.WARNING) for f in judged.findings)
        data = {**judged.data, "check_result": judged.result}
        return Report("status", found, data, lines=judged.lines)
    root = git.toplevel(cwd)
    head = git.head(root)
    if head is None:
        raise usage("there is no commit yet: the view is of the HEAD commit", "Commit the plan first.")
    cfg = artifacts_tree.read_config(root, head)
    snap = artifacts_tree.from_commit(root, head, cfg)
    if not snap.active:
        return report_mod.inactive("status")
    chosen = governance.plan_or_none(snap, plan_id, GitFacts(snap.root))
    if isinstance(chosen, HarnessGateError):
        return Report("status", (), {"active": True, "head": head, "plan": None, "plans": []},
                      lines=(f"plan: none chosen: {chosen.message}", f"next: {chosen.hint}"))  # fmt: skip
    plan_id = chosen
    missing = artifacts_root.plan_folder(snap.artifacts_dir, plan_id)
    governance.require_plan(snap, plan_id, f"the HEAD commit has no plan `{plan_id}` ({missing}/ is missing)")
    folder = plans.load(snap, plan_id)
    life = lifecycle.replay(folder)
    found = tuple(dataclasses.replace(f, severity=Severity.WARNING) for f in (*folder.findings, *life.findings))
    tree = fingerprints.fingerprint_commit(root, head, cfg)
    # status reads no signature: where they are required, `check` is what verifies them.
    signed = None if cfg.require_signed_approvals else False
    view = prview.plan_view(root, snap, plan_id, tree, commit=head, signed=signed)
    data = {"active": True, "head": head, "plan": plan_id, "plans": [view]}
    return Report("status", found, data, lines=(f"plan: {plan_id} ({view['state']}) at HEAD {head[:12]}",))


def _freshness(
    root: Path, snap: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder, life: lifecycle.Lifecycle
) -> tuple[str, list[evidence.Freshness], list[Finding], list[Finding]]:
    """The work tree's fingerprint, the evidence's freshness against it, the problems found
    on the way, and the warning about untracked files: all empty while no policy applies."""
    if life.policy is None:
        return "", [], [], []
    tree = fingerprints.fingerprint_worktree(root, snap.config)
    fresh, problems = freshness.state_freshness(snap, folder, life, tree)
    untracked: list[Finding] = []
    if life.state not in lifecycle.ENDED - {lifecycle.PlanState.COMPLETED}:
        untracked = fingerprints.untracked_warning(
            fingerprints.untracked_files(root, snap.config), artifacts_root.evidence_log(folder.path)
        )
    return tree, fresh, problems, untracked


@dataclasses.dataclass(frozen=True)
class _WorkTree:
    """What the work tree holds that the next step depends on."""

    uncommitted: tuple[str, ...]  # the artifacts root's paths git status lists
    untracked: str | None  # the code of the warning that names untracked files the tree would miss


def _next_step(
    snap: artifacts_tree.ArtifactsTree,
    folder: plans.PlanFolder,
    life: lifecycle.Lifecycle,
    fresh: Sequence[evidence.Freshness],
    work: _WorkTree,
) -> str:
    """What to do next, from the lifecycle and what the folder and the work tree hold now."""
    pending = _unfilled_review(snap, folder)
    if pending is not None:
        return (
            f"a reviewer who did not write the change fills in {pending}: Reviewer identity, Scope Reviewed, "
            "Findings and Verdict; then commit it"
        )
    state = life.state
    plan_files = {artifacts_root.plan_md(folder.path), artifacts_root.approvals_log(folder.path)}
    if state is lifecycle.PlanState.EXECUTING and plan_files & set(work.uncommitted):
        return (
            f"commit the plan and its approval: git add {snap.artifacts_dir} && git commit -m 'Plan: {folder.plan_id}'"
        )
    stale = [f for f in fresh if not f.fresh]
    if work.untracked and stale and state not in lifecycle.ENDED - {lifecycle.PlanState.COMPLETED}:
        # verify would record them as part of the tree, and a commit leaves them out (HG310).
        return f"commit, remove or ignore the untracked files {work.untracked} names; then harness-gate verify"
    if state is lifecycle.PlanState.COMPLETED and stale:
        # An update from the base (or any later change) left the completed plan's code unverified.
        return "harness-gate verify, then commit its evidence: the tree changed since the plan completed"
    if state is lifecycle.PlanState.EXECUTING:
        return _executing_step(snap.root, fresh, stale)
    # complete needs fresh evidence and a passing review of exactly this tree.
    return _REVIEW_STALE if state is lifecycle.PlanState.REVIEWING and stale else life.next_step


_REVIEW_STALE = "the tree changed since the review: harness-gate verify, then harness-gate review new"


def _executing_step(root: Path, fresh: Sequence[evidence.Freshness], stale: Sequence[evidence.Freshness]) -> str:
    """The next step while the plan executes, from its evidence's freshness."""
    if fresh and not stale:
        return "ask for a review by someone who did not write the change: harness-gate review new"
    if any(f.reason == "tree-moved" for f in stale):
        if not git.status_records(root):
            # Nothing left to commit: a commit since verify (a merge or a rebase onto the
            # base, say) moved the tree, and "finish the work, commit it" would lead nowhere.
            return "harness-gate verify again: the tree changed since verify (a commit since); then commit its evidence"
        # Verified once, changed since: more work, or a file that joined the tree.
        return "the work tree changed since verify: finish the work, commit it, then harness-gate verify again"
    return "do the work inside the write boundary and commit it; then harness-gate verify"


# -- reviews and what CI will say (status informs of both; `check --stage ci` decides) ------


def _approvers(root: Path, snap: artifacts_tree.ArtifactsTree, plan_id: str) -> tuple[list[Any], tuple[str, ...]]:
    """The approvers rules as CI counts them on HEAD, and who approved in the work tree only."""
    if not snap.config.approvers:
        return [], ()
    from harness_gate import approver_counts  # noqa: PLC0415

    found = approver_counts.counted(root, snap, plan_id)
    return list(found.views), found.uncommitted


def _approver_lines(views: Sequence[Any], uncommitted: Sequence[str]) -> list[str]:
    from harness_gate import approvers  # noqa: PLC0415

    lines = [f"{'approvers:' if i == 0 else '':<12}{approvers.line(v)}" for i, v in enumerate(views)]
    if views and uncommitted:
        lines.append(f"{'':<12}not committed yet, so not counted: {', '.join(uncommitted)} (commit it signed)")
    return lines


def _review_lines(reviews: Sequence[freshness.ReviewState]) -> list[str]:
    if not reviews:
        return ["reviews:    none"]
    lines = []
    for i, r in enumerate(reviews):
        state = "fresh" if r.fresh else "stale"
        lines.append(f"{'reviews:' if i == 0 else '':<12}{r.path} {r.verdict or 'unfilled'}, {state}: {r.why}")
    return lines


def _ci_verdict(cwd: Path, root: Path, cfg: Config) -> dict[str, Any] | None:
    """What `check --stage ci` says of the commits since the base branch, as CI will judge
    them once pushed: the same check, not an estimate. None where there is nothing to
    judge (no commit, no base branch here); a check that fails counts as blocked."""
    from harness_gate.commands import check  # noqa: PLC0415  (the check's own judgement)

    head = git.head(root)
    try:
        base = git.default_base(root, cfg.base_branch) if head is not None else None
    except HarnessGateError as exc:
        return {"base": None, "command": None, "result": "error", "blocking": [], "message": exc.message}
    if base is None or head is None:
        return None
    command = f"harness-gate check --stage ci --base {base[:12]}"
    try:
        judged = check.run_check(
            cwd, stage="ci", mode=check.Mode(check.ChangeSet.BASE, base, "HEAD"), plan_id=None, config_file=None
        )
    except HarnessGateError as exc:
        return {"base": base, "command": command, "result": "error", "blocking": [], "message": exc.message}
    blocking = [
        {"code": f.code, "path": f.path, "message": f.message, "hint": f.hint}
        for f in judged.findings
        if f.severity is Severity.ERROR
    ]
    return {"base": base, "command": command, "result": "blocked" if blocking else "pass", "blocking": blocking}


def _ci_line(ci: dict[str, Any] | None) -> str:
    if ci is None:
        return "ci:         nothing to judge (no commit, or no base branch here)"
    if ci["result"] == "error":
        return f"ci:         error: {ci['message']}"
    if ci["result"] == "pass":
        return f"ci:         pass  (`{ci['command']}`, on the commits; push them)"
    codes = ", ".join(dict.fromkeys(b["code"] for b in ci["blocking"]))
    return f"ci:         blocked: {codes}  (`{ci['command']}` says why)"


def _review_next(
    step: str, life: lifecycle.Lifecycle, fresh: Sequence[evidence.Freshness], reviews: Sequence[freshness.ReviewState]
) -> str:
    """A plan under review whose evidence is fresh but whose review no longer counts (the
    branch's own change changed, in a rebase or a conflict's resolution): `complete` would
    be refused, CI blocks on the stale review; a review of it is the way on."""
    latest = reviews[-1] if reviews else None
    stale_evidence = any(not f.fresh for f in fresh)
    if life.state is not lifecycle.PlanState.REVIEWING or latest is None or stale_evidence:
        return step
    if not latest.fresh:
        return f"the review no longer counts ({latest.why}): ask for a review of it: harness-gate review new"
    if latest.why != freshness.SAME_TREE:
        # CI counts a review of the same change on a moved base; `complete` binds this very
        # tree (docs/lifecycle.md) and refuses it (HG413).
        return (
            f"the base moved since {latest.path} ({latest.why}), and completing needs a review of this very tree: "
            "harness-gate review new, filled in by a reviewer; then harness-gate complete"
        )
    return step


def _ci_next(
    step: str,
    life: lifecycle.Lifecycle,
    ci: dict[str, Any] | None,
    local: tuple[Sequence[evidence.Freshness], Sequence[freshness.ReviewState], Sequence[str]],
) -> str:
    """The next step, checked against what CI would block: an open plan's own lifecycle
    clears its evidence, review and end (`step`), and what it does not clear comes first;
    an ended plan (`step` is none) gets the steps that clear each blocking finding, less
    those the work tree has already taken (`local`: its evidence, reviews and the files of
    the artifacts root not committed): CI judges the commits, so those are committed."""
    if ci is None or ci["result"] == "pass":
        return step
    if ci["result"] == "error":
        return f"`{ci['command'] or 'harness-gate check --stage ci --base BASE'}` fails: {ci['message']}"
    codes = [b["code"] for b in ci["blocking"]]
    cancelled = [b for b in ci["blocking"] if b["code"] == freshness.CANCELLED_CODE]
    if cancelled:
        # Nothing the plan's lifecycle does clears it: the branch lands the folder alone.
        hint: str = cancelled[0]["hint"]
        return hint
    other = [b for b in ci["blocking"] if b["code"] not in freshness.LIFECYCLE_CODES]
    first = ""
    if other:
        b = other[0]
        first = f"first clear {b['code']} ({b['path']}: {b['message']}){': ' + b['hint'] if b['hint'] else ''}; "
    if life.state not in lifecycle.ENDED:
        return first + step
    fresh, reviews, uncommitted = local
    steps = []
    if any(c in freshness.EVIDENCE_CODES for c in codes) and not (fresh and all(f.fresh for f in fresh)):
        steps.append("harness-gate verify (it records evidence for this tree)")
    if freshness.STALE_REVIEW in codes and not (reviews and reviews[-1].fresh):
        again = "a re-review" if life.state is lifecycle.PlanState.COMPLETED else "a review"
        steps.append(
            f"ask for {again}: harness-gate review new (the plan stays {life.state.value}), filled in by a reviewer"
        )
    if freshness.FAILED_REVIEW in codes:
        steps.append("a review does not pass: the plan's repair or pause path (docs/lifecycle.md)")
    if steps:
        steps.append("commit and push")
    elif uncommitted:
        steps.append(f"commit what the work tree has and the commits lack ({', '.join(uncommitted)}), and push")
    elif not first:
        return f"CI blocks ({', '.join(codes)}): `{ci['command']}` says why"
    return first + ", then ".join(steps)


def _merge_next(root: Path, boundary: Sequence[str]) -> str:
    """A merge stopped (on a conflict, or by `--no-commit`): finishing it comes first, as
    the merge commit. `verify` before it would record a tree no commit has, and committing
    its evidence with the merge is a change to a plan that may no longer grant writes
    (refused: no write authority). A conflicted file outside the boundary keeps the merged side (what the commit
    hook's refusal names too)."""
    unmerged = git.unmerged_paths(root)
    ours = Boundary.cached(boundary)
    inside = [p for p in unmerged if not boundary or ours.matches(os.fsencode(p))]
    outside = [p for p in unmerged if p not in inside]
    steps = []
    if inside:
        names = " ".join(shlex.quote(p) for p in inside)
        steps.append(f"resolve the conflicts in {', '.join(inside)}, then `git add {names}`")
    if outside:
        names = " ".join(shlex.quote(p) for p in outside)
        steps.append(f"keep the merged side of {', '.join(outside)} (outside the write boundary): "
                     f"`git checkout MERGE_HEAD -- {names}`")  # fmt: skip
    steps.append("`git commit --no-edit` (the merge commit: its hook judges the resolution)")
    return "finish the merge first: " + "; then ".join(steps) + "; then harness-gate status again"


def _unfilled_review(snap: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder) -> str | None:
    """The newest review still holding a placeholder `review new` wrote (verdict, identity), if any."""
    latest = folder.entries[-1] if folder.entries else None
    if latest is None or latest.slug != "review" or latest.artifact is not None:
        return None
    data = snap.files.get(latest.path, b"")
    placeholders = (templates.VERDICT_PLACEHOLDER.encode(), templates.IDENTITY_PLACEHOLDER.encode())
    return latest.path if any(p in data for p in placeholders) else None
