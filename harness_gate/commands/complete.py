"""`harness-gate complete [--cancel]`: the Completion that ends a plan (docs/lifecycle.md)."""

from __future__ import annotations

from pathlib import Path

from harness_gate import artifacts_tree, fingerprints, freshness, fsutil, git, governance, lifecycle, plans, templates
from harness_gate.report import Report, inactive
from harness_gate.state_facts import GitFacts


def complete(cwd: Path, plan_id: str | None, summary: str | None, *, cancel: bool = False) -> Report:
    """A Completion: `completed` after a passing review of this tree and fresh evidence, or
    with `cancel`, `cancelled` without a review (the plan grants no more write authority,
    and code it authorised still needs its evidence; docs/lifecycle.md)."""
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return inactive("complete")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    lifecycle.require_open(folder, life)
    assert life.plan_sha256 is not None  # noqa: S101  (plan_for checked it)
    if cancel:
        tree = fingerprints.fingerprint_worktree(root, artifacts.config)
        review: dict[str, str | None] = {"review": None, "review_sha256": None}
        outcome, refs, default = "cancelled", [], "Cancelled."
    else:
        name, art = freshness.completing_review(folder, life)
        tree = fingerprints.fingerprint_worktree(root, artifacts.config)
        freshness.require_reviewed_tree(folder, name, art, tree)
        refs = freshness.require_fresh_evidence(artifacts, folder, life, tree)
        review = {"review": name, "review_sha256": art.sha256}
        outcome, default = "completed", f"Completed with {name} ({art.value('Verdict')}) on tree {tree}."
    text = templates.completion(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, **review, "tree": tree},
        summary=summary or default,
        evidence=refs,
        outcome=outcome,
    )
    rel = plans.next_path(folder, "completion")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    data = {"path": rel, "tree": tree, **({"outcome": outcome} if cancel else {})}
    return Report(
        "complete",
        data=data,
        lines=(f"wrote {rel}: plan `{folder.plan_id}` is {outcome} (it grants no more write authority)",),
    )
