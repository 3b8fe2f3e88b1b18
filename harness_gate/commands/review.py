"""`harness-gate review new`: a review bound to the work tree, the branch's change and the
fresh evidence, for a reviewer who did not write the change to fill in."""

from __future__ import annotations

from pathlib import Path

from harness_gate import artifacts_tree, fingerprints, freshness, fsutil, git, governance, lifecycle, plans, templates
from harness_gate.report import Report, inactive
from harness_gate.state_facts import GitFacts


def review_new(cwd: Path, plan_id: str | None, reviewer: str | None) -> Report:
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return inactive("review new")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    lifecycle.require_open(folder, life, rereview=True)
    tree = fingerprints.fingerprint_worktree(root, artifacts.config)
    refs = freshness.require_fresh_evidence(artifacts, folder, life, tree)
    assert life.plan_sha256 is not None  # noqa: S101  (_plan checked it)
    text = templates.review(
        binding={
            "plan_sha256": life.plan_sha256,
            "amendment_sha256": life.amendment_sha256,
            "tree": tree,
            "change": freshness.branch_change(GitFacts(root), artifacts.config, tree),
            "evidence": refs,
        },
        identity=reviewer or templates.IDENTITY_PLACEHOLDER,
        scope=templates.SCOPE_PLACEHOLDER,
        findings=[],
        verdict=templates.VERDICT_PLACEHOLDER,
    )
    rel = plans.next_path(folder, "review")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    again = " (a re-review: the plan stays completed)" if life.state is lifecycle.PlanState.COMPLETED else ""
    return Report(
        "review new",
        data={"path": rel, "tree": tree},
        lines=(
            f"wrote {rel} bound to tree {tree[:12]}, the branch's change and {len(refs)} evidence record(s){again}",
            "next: a reviewer who did not write the change fills in Reviewer identity, Scope Reviewed, Findings and "
            "Verdict (it does not lint until each FILL_IN is replaced and the verdict is one of PASS, "
            "PASS_WITH_NOTES, REPAIR_REQUIRED, BLOCKED)",
            'a finding: {"id": "F1", "severity": "blocking|major|minor|note", "path": "src/x.py" or null, '
            '"summary": "what is wrong"}',
        ),
    )
