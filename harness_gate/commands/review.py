"""`review new`, `complete`, and the review requirement of the gate.

A review speaks of one exact tree (its fingerprint) and of the branch's own change
(`changes`), under one exact plan (and amendment): a change to the plan, or to the branch's
own change, leaves the plan without a fresh review; an update from the base does not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from harness_gate import changes, fsutil, git, lifecycle, plans, snapshot, templates, verification
from harness_gate.artifacts.artifact import Artifact
from harness_gate.config import Config
from harness_gate.errors import Refused
from harness_gate.findings import Finding, finding
from harness_gate.report import Report, inactive

VERDICT_PLACEHOLDER = "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED"
# Who reviews is the reviewer's to say: the author's own identity would be a claim the
# author makes about a review they did not write (the review does not lint until filled in).
IDENTITY_PLACEHOLDER = "FILL_IN: the reviewer's name (not the author's)"
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
        raise Refused(
            "HG301", f"{folder.path}/evidence.jsonl", f"evidence is not fresh for this tree ({why})",
            "Run `harness-gate verify` first.",
        )  # fmt: skip
    return [{"command_id": f.command_id, "record_sha256": f.record.sha256} for f in fresh if f.record is not None]


def branch_change(root: Path, cfg: Config, tree: str) -> dict[str, str] | None:
    """The branch's own change up to the work tree's fingerprint `tree`: from where HEAD
    left the base branch (`git.default_base`), as CI will measure it from the pull
    request's base. None before the first commit."""
    head = git.head(root)
    if head is None:
        return None
    base = git.default_base(root, cfg.base_branch)
    fork = (git.merge_base(root, base, head) if base else None) or head
    old = verification.fingerprint_commit(root, fork, cfg)
    return {"base": fork, "patch_sha256": changes.change_id(root, old, tree)}


def review_new(cwd: Path, plan_id: str | None, reviewer: str | None) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return inactive("review new")
    folder, life = verification.plan_for(snap, plan_id)
    if life.state is lifecycle.State.CANCELLED:
        raise Refused("HG411", f"{folder.path}/plan.md", f"plan `{folder.plan_id}` is cancelled")
    tree = verification.fingerprint_worktree(root, snap.config)
    refs = _fresh_evidence(root, snap, folder, life, tree)
    assert life.plan_sha256 is not None  # noqa: S101  (_plan checked it)
    text = templates.review(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, "tree": tree,
                 "change": branch_change(root, snap.config, tree), "evidence": refs},
        identity=reviewer or IDENTITY_PLACEHOLDER,
        scope="FILL IN: what the reviewer read (the diff, the plan, the evidence).",
        findings=[],
        verdict=VERDICT_PLACEHOLDER,
    )  # fmt: skip
    rel = _next_path(folder, "review")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    again = " (a re-review: the plan stays completed)" if life.state is lifecycle.State.COMPLETED else ""
    return Report("review new", data={"path": rel, "tree": tree}, lines=(
        f"wrote {rel} bound to tree {tree[:12]}, the branch's change and {len(refs)} evidence record(s){again}",
        "next: a reviewer who did not write the change fills in Reviewer identity, Scope Reviewed, Findings and "
        "Verdict "
        "(it does not lint until the verdict is one of PASS, PASS_WITH_NOTES, REPAIR_REQUIRED, BLOCKED)",
    ))  # fmt: skip


def latest_review(folder: plans.PlanFolder) -> tuple[str, Artifact] | None:
    for entry in reversed(folder.entries):
        if entry.slug == "review":
            return (entry.name, entry.artifact) if entry.artifact is not None else None
    return None


def complete(cwd: Path, plan_id: str | None, summary: str | None, *, cancel: bool = False) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return inactive("complete")
    folder, life = verification.plan_for(snap, plan_id)
    if life.state in lifecycle.ENDED:
        raise Refused("HG411", f"{folder.path}/plan.md", f"plan `{folder.plan_id}` is already {life.state.value}")
    if cancel:
        return _cancel(root, snap, folder, life, summary)
    if life.findings or folder.findings:
        first = (*folder.findings, *life.findings)[0]
        raise Refused(
            first.code, first.path, f"the plan folder has findings: {first.message}", "Run `harness-gate lint`."
        )
    latest = latest_review(folder)
    if life.state is not lifecycle.State.REVIEWING or latest is None:
        raise Refused(
            "HG405", f"{folder.path}/plan.md",
            f"plan `{folder.plan_id}` is {life.state.value}: completion needs a PASS or PASS_WITH_NOTES review",
            "Ask for a review first: `harness-gate review new`, and have the reviewer fill it in.",
        )  # fmt: skip
    name, review = latest
    tree = verification.fingerprint_worktree(root, snap.config)
    if review.value("Binding")["tree"] != tree:
        raise Refused(
            "HG413", f"{folder.path}/{name}",
            f"{name} reviewed tree {review.value('Binding')['tree'][:12]}, the work tree is {tree[:12]}",
            "The files changed after the review: `harness-gate verify`, then `harness-gate review new`.",
        )  # fmt: skip
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


def _cancel(
    root: Path, snap: snapshot.Snapshot, folder: plans.PlanFolder, life: lifecycle.Lifecycle, summary: str | None
) -> Report:
    """A Completion with outcome `cancelled`: the plan ends without a review; it grants no
    more write authority, and code it authorised still needs its evidence (docs/lifecycle.md)."""
    assert life.plan_sha256 is not None  # noqa: S101  (plan_for checked it)
    tree = verification.fingerprint_worktree(root, snap.config)
    text = templates.completion(
        binding={"plan_sha256": life.plan_sha256, "amendment_sha256": life.amendment_sha256, "review": None,
                 "review_sha256": None, "tree": tree},
        summary=summary or "Cancelled.",
        evidence=[],
        outcome="cancelled",
    )  # fmt: skip
    rel = _next_path(folder, "completion")
    fsutil.write_atomic(root / rel, text.encode("utf-8"))
    return Report("complete", data={"path": rel, "tree": tree, "outcome": "cancelled"}, lines=(
        f"wrote {rel}: plan `{folder.plan_id}` is cancelled (it grants no more write authority)",
    ))  # fmt: skip


class Counted(NamedTuple):
    """A review the requirement rests on: its path, its plan, the tree it names."""

    path: str
    plan_id: str
    tree: str


def review_requirement(
    root: Path,
    cfg: Config,
    reviewed: Sequence[tuple[plans.PlanFolder, lifecycle.Lifecycle]],
    tree: str,
    *,
    fork: Callable[[], str | None],
    span: Callable[[str], tuple[str, str] | None],
) -> tuple[list[Finding], list[Counted]]:
    """The `ci` requirement: the branch's change is covered by a fresh passing review.

    A review is fresh when it is bound to its plan's current plan and amendment hashes and
    to this very tree, or to this branch's own change (`changes`: a merge or rebase from
    the base that leaves the change as it was keeps it). One such review covers the whole
    branch, every plan of it. On a base branch's line (`span`), a plan's review may instead
    speak of that plan's own change as it landed. A review that does not pass always
    blocks. Returns the findings and the reviews the requirement rests on."""

    @functools.cache
    def measured(start: str | None, end: str | None) -> str:
        old = verification.fingerprint_commit(root, start, cfg) if start else git.empty_tree(root)
        new = verification.fingerprint_commit(root, end, cfg) if end else tree
        return changes.change_id(root, old, new)

    out: list[Finding] = []
    stale: list[Finding] = []
    counted: list[Counted] = []
    covers_branch = False
    for folder, life in reviewed:
        latest = latest_review(folder)
        cancelled = life.state is lifecycle.State.CANCELLED
        if latest is None:
            # A cancelled plan needs no review of its own, but the code it authorised
            # does: another plan's review of the whole branch covers it, or nothing does.
            why = "was cancelled after authorising code, and no review covers it" if cancelled else "has no review"
            stale.append(finding("HG413", f"{folder.path}/plan.md", f"plan `{folder.plan_id}` {why}"))
            continue
        name, art = latest
        path = f"{folder.path}/{name}"
        binding: dict[str, Any] = art.value("Binding")
        verdict = art.value("Verdict")
        if verdict not in PASSING:
            quoted = "; ".join(f"{f['id']}: {f['summary']}" for f in art.value("Findings"))[:500]
            out.append(finding("HG414", path, f"verdict {verdict}: {quoted or 'no findings listed'}"))
            continue
        if binding["plan_sha256"] != life.plan_sha256 or binding["amendment_sha256"] != life.amendment_sha256:
            out.append(finding("HG413", path, "the review is bound to another plan or amendment than the current one"))
            continue
        # The change stands in for the tree only where the base moved: from the same base,
        # the same change is the same tree, and the tree says it exactly.
        change = binding.get("change")
        forked = fork()
        if binding["tree"] == tree or (
            change is not None and change["base"] != forked and change["patch_sha256"] == measured(forked, None)
        ):
            covers_branch = True
            counted.append(Counted(path, folder.plan_id, binding["tree"]))
            continue
        landed = span(folder.plan_id)
        if landed is not None and (
            binding["tree"] == verification.fingerprint_commit(root, landed[1], cfg)
            or (change is not None and change["base"] != landed[0] and change["patch_sha256"] == measured(*landed))
        ):
            counted.append(Counted(path, folder.plan_id, binding["tree"]))
            continue
        moved = change is not None and change["base"] != forked
        stale.append(finding("HG413", path, _stale(binding, tree, measured(forked, None) if moved else None, life)))
    if not covers_branch:
        out.extend(stale)
    return out, counted


def _stale(binding: dict[str, Any], tree: str, now: str | None, life: lifecycle.Lifecycle) -> str:
    """What a stale review is bound to, what the head is, and the way out. `now`: the
    branch's own change, where the base moved (from the same base only the tree counts)."""
    change = binding.get("change")
    what = f"the review is for tree {binding['tree'][:12]}"
    if change is not None:
        what += f" and change {change['patch_sha256'][:12]}"
    what += f"; this state is tree {tree[:12]}"
    if now is not None:
        what += f" and the branch's own change is {now[:12]}"
    if change is None:
        return what + " (the review names no change: only the same tree keeps it)"
    if life.state is lifecycle.State.COMPLETED:
        again = "a re-review (`harness-gate review new`; the plan stays completed)"
    else:
        again = "a review of it (`harness-gate review new`)"
    changed = "the change itself changed" if now is not None else "the files changed since the review"
    return f"{what}: {changed}; ask for {again}"
