"""`harness-gate complete [--cancel]`: the Completion that ends a plan (docs/lifecycle.md)."""

from __future__ import annotations

from pathlib import Path

from harness_gate import artifacts_tree, fingerprints, freshness, fsutil, git, governance, lifecycle, plans, templates
from harness_gate.report import Report, inactive


def complete(cwd: Path, plan_id: str | None, summary: str | None, *, cancel: bool = False) -> Report:
    root = git.toplevel(cwd)
    snap = artifacts_tree.from_worktree(root)
    if not snap.active:
        return inactive("complete")
    folder, life = governance.plan_for(snap, plan_id)
    lifecycle.require_open(folder, life)
    if cancel:
        return _cancel(root, snap, folder, life, summary)
    name, review = freshness.completing_review(folder, life)
    tree = fingerprints.fingerprint_worktree(root, snap.config)
    freshness.require_reviewed_tree(folder, name, review, tree)
    refs = freshness.require_fresh_evidence(snap, folder, life, tree)
    assert life.plan_sha256 is not None  # noqa: S101
    text = templates.completion(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, "review": name,
                 "review_sha256": review.sha256, "tree": tree},
        summary=summary or f"Completed with {name} ({review.value('Verdict')}) on tree {tree}.",
        evidence=refs,
        outcome="completed",
    )  # fmt: skip
    rel = plans.next_path(folder, "completion")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    return Report("complete", data={"path": rel, "tree": tree}, lines=(
        f"wrote {rel}: plan `{folder.plan_id}` is completed (it grants no more write authority)",
    ))  # fmt: skip


def _cancel(
    root: Path,
    snap: artifacts_tree.ArtifactsTree,
    folder: plans.PlanFolder,
    life: lifecycle.Lifecycle,
    summary: str | None,
) -> Report:
    """A Completion with outcome `cancelled`: the plan ends without a review; it grants no
    more write authority, and code it authorised still needs its evidence (docs/lifecycle.md)."""
    assert life.plan_sha256 is not None  # noqa: S101  (plan_for checked it)
    tree = fingerprints.fingerprint_worktree(root, snap.config)
    text = templates.completion(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, "review": None,
                 "review_sha256": None, "tree": tree},
        summary=summary or "Cancelled.",
        evidence=[],
        outcome="cancelled",
    )  # fmt: skip
    rel = plans.next_path(folder, "completion")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    return Report("complete", data={"path": rel, "tree": tree, "outcome": "cancelled"}, lines=(
        f"wrote {rel}: plan `{folder.plan_id}` is cancelled (it grants no more write authority)",
    ))  # fmt: skip
