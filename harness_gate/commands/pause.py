"""`harness-gate pause` and `harness-gate resume`: the Pause Report and the Repair Resume of
a paused plan, their bindings filled in (docs/lifecycle.md, "Pausing and resuming").

A plan pauses by itself (a BLOCKED review, a finding seen twice, the repair budget spent,
no progress): these write what the lifecycle asks for next, so that no hash is copied by
hand. A resume still needs its `y` (`harness-gate approve`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness_gate import artifacts_tree, fingerprints, freshness, fsutil, git, governance, lifecycle, plans, templates
from harness_gate.artifacts.parse import parse_artifact
from harness_gate.errors import usage
from harness_gate.report import Report, inactive
from harness_gate.state_facts import GitFacts


def verification_fingerprint(
    artifacts: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str
) -> tuple[str, str]:
    """The verification at the pause, as one sha256: each required command's id, its
    freshness for `tree` and the sha256 of its newest record; and the trend it shows
    ("unavailable" when no command has a record yet)."""
    fresh, _ = freshness.state_freshness(artifacts, folder, life, tree)
    facts = sorted((f.command_id, f.reason, f.record.sha256 if f.record else None) for f in fresh)
    digest = hashlib.sha256(json.dumps(facts, separators=(",", ":")).encode()).hexdigest()
    trend = "unchanged" if any(f.record is not None for f in fresh) else "unavailable"
    return digest, trend


def _write(root: Path, artifacts: artifacts_tree.ArtifactsTree, rel: str, text: str) -> str:
    art, problems = parse_artifact(rel, text.encode(), artifacts_dir=artifacts.artifacts_dir)
    if art is None:  # the program's error: what it renders must parse
        raise usage(f"the {rel} rendered does not validate: {problems[0].message if problems else '?'}")
    fsutil.write_atomic(root / rel, text.encode())
    return art.sha256


def pause(cwd: Path, plan_id: str | None, reason: str | None) -> Report:
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return inactive("pause")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    lifecycle.require_paused(folder, life, reported=False)
    assert life.plan_sha256 is not None  # noqa: S101  (plan_for checked it)
    review = next((e for e in folder.entries if e.name == life.last_review), None)
    found = sorted({f["id"] for f in review.artifact.value("Findings")}) if review and review.artifact else []
    tree = fingerprints.fingerprint_worktree(root, artifacts.config)
    digest, trend = verification_fingerprint(artifacts, folder, life, tree)
    said = lifecycle.PAUSE_REASONS.get(life.pause_reason, "the plan is {state}").format(
        review=life.last_review,
        rounds=life.repair_budget,
        findings=", ".join(found) or "a finding",
        state=life.state.value,
    )
    text = templates.pause(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256},
        pause={
            "state": life.state.value,
            "reason": reason or said[:1].upper() + said[1:] + ".",
            "completed_rounds": min(life.repairs_used, 99),
            "remaining_findings": found,
            "verification_trend": trend,
            "latest_diff": tree,
            "latest_verification": digest,
        },
    )
    rel = plans.next_path(folder, "pause")
    _write(root, artifacts, rel, text)
    return Report(
        "pause",
        data={"plan": folder.plan_id, "path": rel, "tree": tree},
        lines=(
            f"wrote {rel}: plan `{folder.plan_id}` is {life.state.value} at tree {tree[:12]}",
            "next: commit it; then resume with more repair rounds (harness-gate resume, then harness-gate approve), "
            "amend the plan (harness-gate plan amend), or cancel it (harness-gate complete --cancel)",
        ),
    )


def resume(cwd: Path, plan_id: str | None, rounds: int) -> Report:
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return inactive("resume")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    lifecycle.require_paused(folder, life, reported=True)
    assert life.plan_sha256 is not None  # noqa: S101  (plan_for checked it)
    entry = next((e for e in folder.entries if e.name == life.last_pause), None)
    if entry is None or entry.artifact is None:  # the replay found it: cannot happen
        raise usage(f"the Pause Report {life.last_pause} does not parse", "harness-gate lint says why.")
    paused = entry.artifact.value("Pause")
    text = templates.resume(
        binding={
            "plan_sha256": life.plan_sha256,
            "amendment_sha256": life.amendment_sha256,
            "pause": entry.name,
            "pause_sha256": entry.artifact.sha256,
            "latest_diff": paused["latest_diff"],
            "latest_verification": paused["latest_verification"],
        },
        rounds=rounds,
    )
    rel = plans.next_path(folder, "resume")
    sha = _write(root, artifacts, rel, text)
    return Report(
        "resume",
        data={"plan": folder.plan_id, "path": rel, "sha256": sha},
        lines=(
            f"wrote {rel} (sha256 {sha}): {rounds} more repair round(s) after {entry.name}",
            "next: review it, then `harness-gate approve` (the plan stays paused until then); commit both",
        ),
    )
