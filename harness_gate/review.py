"""`review new`, `complete`, and the review requirement of the gate.

A review speaks of one exact tree (its fingerprint) under one exact plan (and
amendment): a later change to either leaves the plan without a fresh review.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness_gate import fsutil, git, lifecycle, plans, snapshot, templates, verification
from harness_gate.artifacts.artifact import Artifact
from harness_gate.errors import HarnessGateError
from harness_gate.findings import Finding, finding
from harness_gate.report import Report

VERDICT_PLACEHOLDER = "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED"
PASSING = ("PASS", "PASS_WITH_NOTES")


def _next_path(folder: plans.PlanFolder, slug: str) -> str:
    return f"{folder.path}/{len(folder.entries) + 1:03d}-{slug}.md"


def _fresh_evidence(
    root: Path, snap: snapshot.Snapshot, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str
) -> list[dict[str, str]]:
    fresh, problems = verification.state_freshness(snap, folder, life, tree)
    stale = [f for f in fresh if not f.fresh]
    if problems or stale:
        why = problems[0].message if problems else ", ".join(f"`{f.command_id}`: {f.reason}" for f in stale)
        raise HarnessGateError(
            "HG301", f"evidence is not fresh for this tree ({why})", "Run `harness-gate verify` first."
        )
    return [{"command_id": f.command_id, "record_sha256": f.record.sha256} for f in fresh if f.record is not None]


def review_new(cwd: Path, plan_id: str | None, reviewer: str | None) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    folder, life = verification.plan_for(snap, plan_id)
    if life.state in lifecycle.ENDED:
        raise HarnessGateError("HG411", f"plan `{folder.plan_id}` is {life.state.value}")
    tree = verification.fingerprint_worktree(root, snap.config)
    refs = _fresh_evidence(root, snap, folder, life, tree)
    assert life.plan_sha256 is not None  # noqa: S101  (_plan checked it)
    text = templates.review(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, "tree": tree,
                 "evidence": refs},
        identity=reviewer or git.ident(root),
        scope="FILL IN: what the clean-context reviewer read (the diff, the plan, the evidence).",
        findings=[],
        verdict=VERDICT_PLACEHOLDER,
    )  # fmt: skip
    rel = _next_path(folder, "review")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    return Report("review new", data={"path": rel, "tree": tree}, lines=(
        f"wrote {rel} bound to tree {tree[:12]} and {len(refs)} evidence record(s)",
        "next: a clean-context reviewer fills in Scope Reviewed, Findings and Verdict "
        "(it does not lint until the verdict is one of PASS, PASS_WITH_NOTES, REPAIR_REQUIRED, BLOCKED)",
    ))  # fmt: skip


def latest_review(folder: plans.PlanFolder) -> tuple[str, Artifact] | None:
    for entry in reversed(folder.entries):
        if entry.slug == "review":
            return (entry.name, entry.artifact) if entry.artifact is not None else None
    return None


def complete(cwd: Path, plan_id: str | None, summary: str | None) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    folder, life = verification.plan_for(snap, plan_id)
    if life.findings or folder.findings:
        first = (*folder.findings, *life.findings)[0]
        raise HarnessGateError(first.code, f"the plan folder has findings: {first.message}", "Run `harness-gate lint`.")
    latest = latest_review(folder)
    if life.state is not lifecycle.State.REVIEWING or latest is None:
        raise HarnessGateError(
            "HG405", f"plan `{folder.plan_id}` is {life.state.value}: completion needs a PASS or PASS_WITH_NOTES review"
        )
    name, review = latest
    tree = verification.fingerprint_worktree(root, snap.config)
    if review.value("Binding")["tree"] != tree:
        raise HarnessGateError(
            "HG413", f"{name} reviewed tree {review.value('Binding')['tree'][:12]}, the work tree is {tree[:12]}"
        )
    refs = _fresh_evidence(root, snap, folder, life, tree)
    assert life.plan_sha256 is not None  # noqa: S101
    text = templates.completion(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, "review": name,
                 "review_sha256": review.sha256, "tree": tree},
        summary=summary or f"Completed with {name} ({review.value('Verdict')}) on tree {tree}.",
        evidence=refs,
        outcome="completed",
    )  # fmt: skip
    rel = _next_path(folder, "completion")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    return Report("complete", data={"path": rel, "tree": tree}, lines=(
        f"wrote {rel}: plan `{folder.plan_id}` is completed (it grants no more write authority)",
    ))  # fmt: skip


def review_findings(folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str) -> list[Finding]:
    """The `ci` requirement: a fresh PASS/PASS_WITH_NOTES review of exactly this tree."""
    plan_md = f"{folder.path}/plan.md"
    latest = latest_review(folder)
    if latest is None:
        return [finding("HG413", plan_md, f"plan `{folder.plan_id}` has no review")]
    name, review = latest
    path = f"{folder.path}/{name}"
    binding: dict[str, Any] = review.value("Binding")
    verdict = review.value("Verdict")
    if verdict not in PASSING:
        quoted = "; ".join(f"{f['id']}: {f['summary']}" for f in review.value("Findings"))[:500]
        return [finding("HG414", path, f"verdict {verdict}: {quoted or 'no findings listed'}")]
    if binding["plan_sha256"] != life.plan_sha256 or binding["amendment_sha256"] != life.amendment_sha256:
        return [finding("HG413", path, "the review is bound to another plan or amendment than the current one")]
    if binding["tree"] != tree:
        return [finding("HG413", path, f"the review is for tree {binding['tree'][:12]}, this state is {tree[:12]}")]
    return []
