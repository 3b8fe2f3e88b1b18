"""What the stage asks of the head state: the plans the change used or started completed
(or cancelled) where the stage says, fresh evidence for each, a fresh passing review of the
branch's change, and the `[[approvers]]` rules counted at every stage. The head is the
index (`IndexHead`) or a range's head commit (ranges.RangeHead)."""

from __future__ import annotations

import abc
import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness_gate import approvals as approvals_mod
from harness_gate import artifacts_tree, fingerprints, git, governance, lifecycle, plans, rules, trust
from harness_gate import config as config_mod
from harness_gate.artifacts_root import plan_file, plan_md
from harness_gate.findings import Finding, Severity, finding
from harness_gate.origins import Origins
from harness_gate.state_facts import GitFacts

if TYPE_CHECKING:
    from harness_gate.freshness import Counted


@dataclass(frozen=True)
class Head(abc.ABC):
    """The state whose evidence and review count: the index, or the range's head commit.
    What takes git work to know of it is a method, asked only when a requirement needs it."""

    root: Path
    artifacts_tree: artifacts_tree.ArtifactsTree
    code_changed: bool  # evidence and reviews speak of code: an artifacts-only change needs none
    used: frozenset[str] = frozenset()  # the plans that authorised the code changes
    commit: str | None = None  # the head commit; None for the index
    code_commits: tuple[str, ...] = ()  # the judged commits that changed code
    anchors: trust.Anchors | None = None
    landed: bool = False
    judged: tuple[str, ...] = ()  # the commits judged, oldest first (ranges only)

    def tree(self) -> str:
        """Its fingerprint."""
        return self._fingerprint

    @functools.cached_property
    def _fingerprint(self) -> str:
        return fingerprints.of(self.root, self.artifacts_tree.config, self.commit)

    @abc.abstractmethod
    def origins(self) -> Origins:
        """Where the plans of the head state came from."""

    def brought(self) -> frozenset[str] | None:
        """The plans the head holds that the base does not: what the change brings to the
        base (its own, and any it merged in from another branch). None: its own and
        foreign ones."""
        return None

    @abc.abstractmethod
    def fork(self) -> str | None:
        """The commit the branch's own change is measured from (a review speaks of that change)."""

    def span(self, plan_id: str) -> tuple[str, str] | None:
        """On a base branch's own line (a push there, a merge queue's group): the plan's own
        stretch of that line, (start, end) commits, for a review of the change as it landed."""
        return None

    def plan_trees(self, plan_id: str) -> frozenset[str]:
        """The fingerprints of the range's commits that changed a plan's folder (landed ranges)."""
        return frozenset()


@dataclass(frozen=True, kw_only=True)
class IndexHead(Head):
    """The index, committed onto `parent` (HEAD): its plans came from where its transition
    says (read once for both)."""

    parent: str
    transition: rules.Transition

    def origins(self) -> Origins:
        return self.transition.origins

    def fork(self) -> str | None:
        return git.fork_point(self.root, self.artifacts_tree.config.base_branch, self.parent)


def plans_brought(head: Head, here: set[str]) -> set[str]:
    """The plans the change brings along (its own, and any merged in), present at the head."""
    brought = head.brought()
    if brought is not None:
        return set(brought)
    origins = head.origins()
    return set((origins.own | origins.foreign) & here)


def requirements(
    root: Path, stage: str, head: Head, plan_id: str | None, *, reverify: list[Callable[[], list[Finding]]] | None
) -> list[Finding]:
    """What the stage asks of the head state, for every plan the change used or started:
    completed (or cancelled) plans, fresh evidence for each, and a fresh passing review of
    the branch's change. pre-push warns about evidence where it does not require it.
    With `reverify` (a list), the evidence is the commands' runs, appended to it for the
    caller to start last."""
    cfg = head.artifacts_tree.config
    want_evidence, want_review = stage in cfg.evidence_stages, stage in cfg.review_stages
    # pre-push warns about what CI will block, unless the configuration makes it strict.
    warn_evidence = stage == "pre-push" and not want_evidence and "ci" in cfg.evidence_stages
    want_end = stage in cfg.completion_stages
    artifacts = head.artifacts_tree
    out: list[Finding] = _approvers(head, plan_id)
    if not (want_evidence or warn_evidence or want_review or want_end):
        return out
    here = governance.present(artifacts)
    used = sorted(head.used) if plan_id is None else [plan_id]
    out.extend(
        finding(
            "HG223",
            plan_file(cfg.artifacts_dir, gone),
            f"plan `{gone}` authorised changes here, but its folder is not at the head",
        )
        for gone in used
        if gone not in here
    )
    alive = [p for p in used if p in here]
    if want_end:
        out.extend(_still_open(head, alive, here))
    if not head.code_changed or not alive:
        return out
    from harness_gate import freshness  # noqa: PLC0415  (not on the pre-commit path)

    tree = head.tree()
    problems, reviewed = _reviewed(artifacts, alive)
    out.extend(problems)
    counted: list[freshness.Counted] = []
    if want_review and reviewed:
        span = head.span if head.landed else _no_span
        problems, counted = freshness.review_requirement(GitFacts(root), cfg, reviewed, tree, fork=head.fork, span=span)
        out.extend(problems)
        if problems:
            out.extend(
                _cancelled(cfg, folder) for folder, life in reviewed if life.state is lifecycle.PlanState.CANCELLED
            )
        if not problems and head.anchors is not None and head.commit is not None:
            for c in counted:  # the reviews the requirement rests on must be signed where asked
                out.extend(head.anchors.review(head.commit, c.path, head.code_commits))
    # pre-push's warnings speak of the branch's own plans: a plan merged in (another line's,
    # main's included when the pushed range holds main's commits after "Update branch") is
    # judged where it lands, and CI, which names the base, asks nothing of a landed one.
    merged_in = head.origins().foreign if warn_evidence else frozenset()
    for folder, life in reviewed:
        if folder.plan_id in merged_in:
            continue
        if want_evidence and reverify is not None:
            reverify.append(functools.partial(freshness.reverify, GitFacts(root), cfg, folder, life, tree, cwd=root))
        elif want_evidence or warn_evidence:
            accept = _landed_trees(head, folder.plan_id, counted) if head.landed else None
            found = freshness.freshness_findings(GitFacts(root), artifacts, folder, life, tree, accept=accept)
            if warn_evidence:
                found = [dataclasses.replace(f, severity=Severity.WARNING) for f in found]
            out.extend(found)
    return out


def _still_open(head: Head, alive: Sequence[str], here: set[str]) -> list[Finding]:
    """Every plan the change brings along must have ended, whoever started it: a plan
    merged in from another branch and left open would govern the base from then on."""
    artifacts = head.artifacts_tree
    out: list[Finding] = []
    for p in sorted({*alive, *plans_brought(head, here)}):
        life = lifecycle.replay(plans.load(artifacts, p))
        if life.state not in lifecycle.ENDED:
            out.append(
                finding(
                    "HG415",
                    plan_file(artifacts.config.artifacts_dir, p),
                    f"plan `{p}` is still open ({life.state.value}): complete or cancel it before it merges",
                )
            )
    return out


def _reviewed(
    artifacts: artifacts_tree.ArtifactsTree, alive: Sequence[str]
) -> tuple[list[Finding], list[tuple[plans.PlanFolder, lifecycle.Lifecycle]]]:
    """The findings of the plans at the head that do not parse or are not approved, and the
    plans whose evidence and review count (each with its lifecycle): all but the unparsed."""
    out: list[Finding] = []
    reviewed: list[tuple[plans.PlanFolder, lifecycle.Lifecycle]] = []
    for p in alive:
        folder = plans.load(artifacts, p)
        life = lifecycle.replay(folder)
        if folder.plan is None or life.policy is None:
            out.append(finding("HG201", plan_md(folder.path), f"plan `{p}` at the head does not parse"))
            continue
        if life.plan_approval is not approvals_mod.Status.APPROVED:
            out.append(finding("HG202", plan_md(folder.path), f"plan `{p}` at the head is not approved"))
        reviewed.append((folder, life))
    return out, reviewed


def _approvers(head: Head, plan_id: str | None) -> list[Finding]:
    """The `[[approvers]]` rules, at every stage, of each approved plan that authorised
    code: counted on the head state, so the approvals may come after the first commits
    (docs/approvers.md)."""
    artifacts = head.artifacts_tree
    if not artifacts.config.approvers or not head.code_changed:
        return []
    from harness_gate import approvers  # noqa: PLC0415  (only with `[[approvers]]` rules)

    here = governance.present(artifacts)
    out: list[Finding] = []
    for p in sorted(head.used) if plan_id is None else [plan_id]:
        path = plan_file(artifacts.artifacts_dir, p)
        if p not in here:
            # Its boundary cannot be read, so no rule can be said not to apply: fail closed.
            out.append(finding("HG224", path, f"plan `{p}` authorised code but is not at the head: no approvers count"))
            continue
        folder = plans.load(artifacts, p)
        # Unapproved or rolled back at the head: its records of other bytes count for nobody.
        out.extend(approvers.findings(artifacts, folder, lifecycle.replay(folder)))
    return out


def _cancelled(cfg: config_mod.Config, folder: plans.PlanFolder) -> Finding:
    """A cancelled plan's code with no review that passes: the way out, spelled out. Only
    added where the branch is blocked already, so it never blocks what passed before."""
    from harness_gate.freshness import CANCELLED_CODE  # noqa: PLC0415  (not on the pre-commit path)

    base = cfg.base_branch or "origin/main"
    return finding(
        CANCELLED_CODE,
        plan_md(folder.path),
        f"plan `{folder.plan_id}` is cancelled, but the branch still changes code it authorised, and no passing "
        "review covers it",
        hint=f"rebuild the branch with the plan's folder alone: `git reset --hard {base}`, "
        f"`git checkout ORIG_HEAD -- {folder.path}`, `git commit -m 'Cancelled: {folder.plan_id}'`, "
        "`git push --force-with-lease`; or close the pull request (docs/workflows.md)",
    )


def _landed_trees(head: Head, plan_id: str, counted: Sequence[Counted]) -> Callable[[str], bool]:
    """On a landed range, evidence for another tree than the head's is a warning only when
    that tree is one the plan's own pull request holds: a commit of the range that changed
    the plan's folder (where its evidence was committed), or the tree its counted review
    names. Evidence for any other tree is stale, as anywhere."""
    reviewed = {c.tree for c in counted if c.plan_id == plan_id}

    def accept(verified: str) -> bool:
        return verified in reviewed or verified in head.plan_trees(plan_id)

    return accept


def _no_span(plan_id: str) -> None:
    """Off a base branch's own line, a plan has no landed stretch: the branch's change counts."""
    return
