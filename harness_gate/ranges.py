"""Judging a change set: each commit of a range on its own (what the stage asks of the
head state, ended plans, fresh evidence, a fresh passing review, is head_requirements.py's).

In a range every commit is judged on its own, with the plans its own state holds and
where each came from (docs/lifecycle.md, "Which plan governs"), so a commit made with
`--no-verify` is still caught.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_gate import (
    artifacts_tree,
    changesets,
    fingerprints,
    git,
    governance,
    history,
    origins,
    plans,
    rules,
    trust,
)
from harness_gate import config as config_mod
from harness_gate.artifacts_root import EVIDENCE, plan_folder, plans_prefix, signers_file
from harness_gate.findings import Finding, finding
from harness_gate.head_requirements import Head, IndexHead, plans_brought, requirements
from harness_gate.origins import BASE_ONLY, Origins

# What the stage asks of the head state is head_requirements.py's; callers read it here too.
__all__ = [
    "Head",
    "IndexHead",
    "RangeHead",
    "RangeTrust",
    "adopting",
    "behind_base",
    "judge",
    "judges_every_pushed",
    "merge_own",
    "plans_brought",
    "range_trust",
    "requirements",
]

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, kw_only=True)
class RangeHead(Head):
    """A range's head commit, with the range it was judged with."""

    judgement: _Range

    def origins(self) -> Origins:
        return self.judgement.origins.get(self.judgement.head_oid, BASE_ONLY)

    def brought(self) -> frozenset[str] | None:
        return self.judgement.brought()

    def fork(self) -> str | None:
        return self.judgement.fork()

    def span(self, plan_id: str) -> tuple[str, str] | None:
        return self.judgement.line.span(plan_id)

    def plan_trees(self, plan_id: str) -> frozenset[str]:
        return self.judgement.line.plan_trees(plan_id)


def adopting(head: str | None) -> bool:
    """Whether a commit on `head` is the repository's first: it has nothing to trust (no
    configuration, no hooks before it), so it adopts harness-gate and is not judged by the
    rules it brings."""
    return head is None


@dataclass(frozen=True)
class RangeTrust:
    """Under what a commit range A..B is judged, from its trusted side."""

    cfg: config_mod.Config
    states: history.RangeStates
    every: bool  # every commit judged; False: only those made with the gate on
    fork_from: str | None  # the commit the branch's change is measured from


def range_trust(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path, config_file: str | None, listing: Sequence[git.Commit], old: str, new: str, *, pushed: bool
) -> RangeTrust:
    """The configuration comes from the range's base `old` and every commit is judged;
    when the base predates adoption, the commits made with the gate on are judged, under
    the configuration the head `new` carries (there is no older one to trust).

    `pushed`: a pushed range (pre-push), whose old side is the branch's own earlier tip,
    not where it left its base: its change is measured from the base branch, as its pull
    request's will be."""
    trusted = artifacts_tree.trusted_config(root, config_file, old, from_rev=True)
    states = history.RangeStates(root, trusted, listing, extra=(old, new))
    fork_from = (git.default_base(root, trusted.base_branch) or old) if pushed else old
    if rules.active(trusted, states.artifacts_tree(old)):
        return RangeTrust(trusted, states, True, fork_from)
    head_cfg = artifacts_tree.trusted_config(root, config_file, new, from_rev=True)
    return RangeTrust(head_cfg, states, False, fork_from)


def judges_every_pushed(root: Path, remote: str) -> bool:
    """Whether a new branch's push (no usable old tip) is judged whole. A repository's
    first push may carry history from before it adopted harness-gate: only the commits
    made with the gate on are judged. A branch pushed to a remote that already has
    branches (an orphan, say) is judged whole."""
    return git.remote_has_branches(root, remote)


def _first_parent_line(listing: Sequence[git.Commit], head: str) -> list[git.Commit]:
    """The head's first-parent line within the listing, oldest first: the commits the
    branch made itself (on a base branch: its own history since the base)."""
    by_oid = {c.oid: c for c in listing}
    line = []
    oid: str | None = head
    while oid is not None and oid in by_oid:
        line.append(by_oid[oid])
        oid = by_oid[oid].parents[0] if by_oid[oid].parents else None
    return line[::-1]


class _Line:
    """A range seen from its head's first-parent line (the base branch's own history, on a
    landed range): where each commit of the range landed on it, and each plan's stretch."""

    def __init__(
        self, root: Path, cfg: config_mod.Config, states: history.RangeStates, listing: Sequence[git.Commit], head: str
    ) -> None:
        self.root = root
        self.cfg = cfg
        self.states = states
        self.line = _first_parent_line(listing, head)
        self.position = {c.oid: i for i, c in enumerate(self.line)}
        by_oid = {c.oid: c for c in listing}
        # The first line commit each commit of the range is reachable from: where it landed.
        self.landed_at: dict[str, int] = {}
        for i, commit in enumerate(self.line):
            todo = [commit.oid]
            while todo:
                oid = todo.pop()
                if oid in self.landed_at or oid not in by_oid:
                    continue
                self.landed_at[oid] = i
                todo.extend(by_oid[oid].parents)
        self.touched: dict[str, list[str]] = {}  # plan -> commits that changed its folder
        self.users: dict[str, list[str]] = {}  # plan -> commits it authorised
        prefix = os.fsencode(plans_prefix(cfg.artifacts_dir))
        for commit in listing:
            for plan_id in {
                c.path[len(prefix) :].split(b"/", 1)[0] for c in commit.changes if c.path.startswith(prefix)
            }:
                self.touched.setdefault(os.fsdecode(plan_id), []).append(commit.oid)

    def used(self, plan_id: str, commit: str) -> None:
        self.users.setdefault(plan_id, []).append(commit)

    @functools.cache  # noqa: B019  (one per check: it lives as long as the check)
    def span(self, plan_id: str) -> tuple[str, str] | None:
        """The plan's own stretch of the line: from the parent of the line commit that brought
        its folder there (its first commit, a squash, or the merge of its pull request) to the
        line commit where the last commit that changed the folder or wrote under the plan
        landed. The change between them is the plan's change as it landed, whatever else
        landed in the same push."""
        mine = [*self.touched.get(plan_id, ()), *self.users.get(plan_id, ())]
        landed = [self.landed_at[c] for c in mine if c in self.landed_at]
        if not landed:
            return None
        first = self.line[min(landed)]
        prefix = plan_folder(self.cfg.artifacts_dir, plan_id) + "/"
        if not first.parents or self.states.entries_below(first.parents[0], prefix):
            return None  # the plan was on the line before this range: no stretch of its own here
        return first.parents[0], self.line[max(landed)].oid

    @functools.cache  # noqa: B019
    def plan_trees(self, plan_id: str) -> frozenset[str]:
        """The fingerprints of the range's commits that changed the plan's folder: the trees
        its evidence was committed with."""
        return frozenset(fingerprints.of(self.root, self.cfg, oid) for oid in self.touched.get(plan_id, ()))


def _before_the_plan(
    f: Finding, head_oid: str, base: str | None, state_of: Callable[[str], artifacts_tree.ArtifactsTree]
) -> Finding:
    """HG201 "no plan yet" on a commit whose branch holds a plan at its head: the commit came
    before the plan (a branch opened before the repository adopted the gate, rebased onto the
    adoption, say). Starting a plan does not clear it; putting the plan first does."""
    if f.code != "HG201" or not f.message.endswith(governance.NO_PLAN_YET) or f.commit == head_oid:
        return f
    if not plans.plan_ids(state_of(head_oid)):
        return f
    onto = base[:12] if base else "<base>"
    return dataclasses.replace(
        f,
        hint=(
            "This commit was made before the branch's plan was committed, and each commit is judged by the plans it "
            "holds. Put the plan first: squash the branch onto its base "
            f"(`git reset --soft {onto}`, then `git commit`), or `git rebase -i {onto}` "
            "with the plan's commit moved to the top; then push with `--force-with-lease`."
        ),
    )


def judge(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path,
    listing: Sequence[git.Commit],
    *,
    cfg: config_mod.Config,
    head_oid: str,
    plan_id: str | None,
    every: bool,
    anchors: trust.Anchors,
    base: str | None = None,
    states: history.RangeStates | None = None,
    fork_from: str | None = None,
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    """Each commit of `listing` (parents first) on its own; with `every` False, only those
    made with the gate on. `fork_from`: the base branch the change is measured from (a
    review speaks of it); by default `base`."""
    if states is None or states.cfg != cfg:
        extra = (head_oid,) if base is None else (base, head_oid)
        states = history.RangeStates(root, cfg, listing, extra=extra)
    judgement = _Range(root, listing, cfg, states, anchors, head_oid=head_oid, base=base, fork_from=fork_from)
    for commit in listing:
        # With no trusted base, a commit is judged when its parent had the gate on. A root
        # commit has no parent to trust: at most it adopts harness-gate, and is not judged.
        if every or any(judgement.gate_on(p) for p in commit.parents):
            judgement.commit(commit, plan_id)
        # else: history from before the repository adopted harness-gate
    judged = len(judgement.judged)
    data: dict[str, Any] = {"active": every or judged > 0, "changes": judgement.changes, "commits": judged}
    if base is not None:
        data["base"] = base
    return judgement.findings, data, judgement.head()


class _Range:
    """A range being judged commit by commit, each against its own state, and what its
    head's requirements ask of the range afterwards (RangeHead)."""

    def __init__(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
        self,
        root: Path,
        listing: Sequence[git.Commit],
        cfg: config_mod.Config,
        states: history.RangeStates,
        anchors: trust.Anchors,
        *,
        head_oid: str,
        base: str | None,
        fork_from: str | None,
    ) -> None:
        self.root, self.cfg, self.states, self.anchors = root, cfg, states, anchors
        self.head_oid, self.base, self.fork_from = head_oid, base, fork_from or base
        # A one-parent commit that leaves the artifacts root as it was shares the state of
        # the first ancestor that does not: one vouched state for all of them (and the work
        # keyed by it). Its records' authenticity is that ancestor's (blame of an unchanged
        # file is its parent's), and without signatures it depends on no commit at all.
        self._shares: dict[str, str] = {}
        for c in listing:
            if states.shares_parent_state(c):
                self._shares[c.oid] = self._shares.get(c.parents[0], c.parents[0])
        self._vouched: dict[str, artifacts_tree.ArtifactsTree] = {}
        self._gate_on: dict[str, bool] = {}
        self._behind: dict[tuple[str, frozenset[str]], list[Finding]] = {}
        self._signers = signers_file(cfg.artifacts_dir).encode()
        self.origins = origins.walk(listing, states.plan_ids)
        self.line = _Line(root, cfg, states, listing, head_oid)
        self.findings: list[Finding] = []
        self.judged: list[str] = []
        self.code_commits: list[str] = []
        self.used: set[str] = set()
        self.changes = 0

    def state(self, oid: str) -> artifacts_tree.ArtifactsTree:
        """The commit's artifacts root, its records vouched for by the check's anchors."""
        at = self._shares.get(oid, oid)
        found = self._vouched.get(at)
        if found is None:
            found = self._vouched[at] = trust.vouched(self.states.artifacts_tree(at), self.anchors, at)
        return found

    def gate_on(self, oid: str) -> bool:
        """Whether the commit's own files turn the gate on: its configuration, or its artifacts root."""
        on = self._gate_on.get(oid)
        if on is None:
            on = self._gate_on[oid] = self.states.config(oid).source is not None or self.state(oid).has_root
        return on

    def commit(self, commit: git.Commit, plan_id: str | None) -> None:
        """Judge one commit: the rules on its own change, the base's newer records of the
        plans it used, and a change of the trust anchor."""
        self.judged.append(commit.oid)
        own = list(commit.changes)
        if len(commit.parents) > 1:
            own = merge_own(self.root, own, [], commit.parents, commit.oid)
        if rules.touches_code(own, self.cfg.artifacts_dir):
            self.code_commits.append(commit.oid)
        self.changes += len(own)
        prefix = f"commit {commit.oid[:12]}: "
        used: set[str] = set()
        # The message names the commit for a reader; `commit` carries its full id for tools.
        self.findings.extend(
            _before_the_plan(dataclasses.replace(f, commit=commit.oid), self.head_oid, self.base, self.state)
            for f in rules.check_transition(self._transition(commit, own), plan_id, prefix=prefix, used=used)
        )
        self.used |= used
        for p in used:
            self.line.used(p, commit.oid)
        found = self._behind_base(commit, used)
        if any(c.path == self._signers for c in own):
            found = [*found, *self.anchors.anchor_change(commit.oid, self._signers.decode())]
        self.findings.extend(dataclasses.replace(f, message=prefix + f.message, commit=commit.oid) for f in found)

    def _transition(self, commit: git.Commit, own: list[git.Change]) -> rules.Transition:
        return changesets.commit(
            self.root,
            commit.oid,
            commit.parents,
            own,
            state_of=self.state,
            empty=lambda: artifacts_tree.empty(self.root, self.cfg),
            origins=lambda: self.origins.get(commit.oid, BASE_ONLY),
        )

    def _behind_base(self, commit: git.Commit, used: set[str]) -> list[Finding]:
        """Only a plan this commit's branch shares with the base can be behind it: the base
        branch may have amended or ended it since. A plan the branch started has no newer
        records anywhere but on the branch (an old tip of the branch itself, force-pushed
        over, is no base to be behind)."""
        with_base = frozenset(used - self.origins.get(commit.oid, BASE_ONLY).own)
        if self.base is None or not with_base:
            return []
        key = (self._shares.get(commit.oid, commit.oid), with_base)
        if key not in self._behind:
            self._behind[key] = behind_base(self.state(commit.oid), self.state(self.base), set(with_base), "")
        return self._behind[key]

    def brought(self) -> frozenset[str] | None:
        if self.base is None:
            return None
        return frozenset(self.states.plan_ids(self.head_oid) - self.states.plan_ids(self.base))

    def fork(self) -> str | None:
        if self.fork_from is not None:
            return git.merge_base(self.root, self.fork_from, self.head_oid)
        # No base named (a new branch's push): where the head's own line leaves the range.
        own = self.line.line
        return own[0].parents[0] if own and own[0].parents else None

    def head(self) -> RangeHead:
        head = self.head_oid
        return RangeHead(
            self.root,
            self.state(head),
            bool(self.code_commits),
            frozenset(self.used),
            commit=head,
            code_commits=tuple(self.code_commits),
            anchors=self.anchors,
            judged=tuple(self.judged),
            judgement=self,
        )


def behind_base(
    state: artifacts_tree.ArtifactsTree, base: artifacts_tree.ArtifactsTree, plan_ids: set[str], prefix: str
) -> list[Finding]:
    """A commit judged under a plan as it stood before the base's newer records (an
    amendment that narrowed it, a completion, a newer approval) used authority the base
    has withdrawn: a branch cut before them must be rebased onto the base first."""
    out: list[Finding] = []
    for plan_id in sorted(plan_ids):
        folder = plan_folder(base.artifacts_dir, plan_id) + "/"
        for path in sorted(p for p in base.files if p.startswith(folder)):
            name = path[len(folder) :]
            before = base.files.get(path)
            if before is None or name == EVIDENCE:
                continue  # evidence grants nothing: a branch may lack the base's newer runs
            after = state.files.get(path)
            # approvals.jsonl may hold the base's lines interleaved with its own (a union merge).
            if after is None:
                kept = False
            elif name in rules.APPEND_ONLY:
                kept = rules.grows(before, after, merge=True)
            else:
                kept = after == before
            if not kept:
                out.append(
                    finding(
                        "HG216",
                        path,
                        f"{prefix}judged under plan `{plan_id}` without the base's version of"
                        f" {name}: the base has newer records of this plan; rebase onto the base",
                    )
                )
                break
    return out


def judge_index(index: changesets.Index, plan_id: str | None) -> tuple[list[Finding], dict[str, Any], Head]:
    """The index about to be committed (`check --staged`): its one transition judged, and
    its state as the head whose evidence and review the stage asks for."""
    used: set[str] = set()
    found = rules.check_transition(index.transition, plan_id, used=used)
    data: dict[str, Any] = {"active": True, "changes": len(index.transition.changes), "commits": 0}
    return found, data, index.head(frozenset(used))


def merge_own(
    root: Path,
    first: Sequence[git.Change],
    rest: Sequence[Sequence[git.Change]],
    parents: Sequence[str],
    result: str | None,
) -> list[git.Change]:
    """What a merge adds beyond its parents: where the result differs from git's own merge
    of them (a conflict resolved, a side dropped, an "evil" change). A file both sides
    changed and git merged cleanly is not the merge's own. `first` is the diff against the
    first parent; `result` the merge commit, or None for the index being committed."""
    merged = git.merge_result(root, parents[0], parents[1]) if len(parents) == 2 else None
    if merged is not None:
        if result is None:
            return git.staged_changes(root, merged)
        return git.tree_changes(root, merged, result)
    # An octopus, or a git without `merge-tree --write-tree`: the paths that differ from
    # every parent, plus a parent's change the result does not keep. Stricter than git's
    # merge (a file both sides changed is the merge's own), never looser.
    keep = {c.path for c in first}
    for other in rest:
        keep &= {c.path for c in other}
    own = [c for c in first if c.path in keep]
    seen = set(keep)
    for change in git.merge_dropped(root, parents, result):
        if change.path not in seen:
            seen.add(change.path)
            own.append(change)
    return own
