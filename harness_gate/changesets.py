"""Every change set's transitions, and the facts about its head state, built in one place.

A check judges transitions (harness_gate.rules): the index about to be committed, each
commit of a range, the writes a coding agent's tool is about to make, the work tree at
Stop. Each is built here from git (through state_facts and harness_gate.git): its changes,
its new state vouched for by the check's trust anchors, its parents' states read on demand,
where its plans came from and the branch's local selection. The callers judge what this
returns; none of them builds a `Transition` itself (tests/test_structure.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_gate import artifacts_tree, git, trust
from harness_gate import origins as origins_mod
from harness_gate.head_requirements import Head, IndexHead
from harness_gate.origins import BASE_ONLY, Origins
from harness_gate.rules import Transition, decode, touches_code
from harness_gate.state_facts import GitFacts, active_at, index_origins

if TYPE_CHECKING:
    from harness_gate.config import Config
    from harness_gate.findings import Finding
    from harness_gate.ranges import RangeTrust


@dataclass(frozen=True)
class Skipped:
    """A change set the gate does not judge: the repository's first commit (it adopts
    harness-gate), or a repository where the gate is off. `data` is the report's."""

    data: dict[str, Any]


@dataclass(frozen=True)
class Index:
    """The index about to be committed onto HEAD (and a merge's other heads), as one
    transition, with the facts about it as the head state of `check --staged`."""

    root: Path
    transition: Transition
    anchors: trust.Anchors
    head_commit: str

    @property
    def code_changed(self) -> bool:
        return touches_code(self.transition.changes, self.transition.new.config.artifacts_dir)

    def head(self, used: frozenset[str]) -> Head:
        """The index as the state whose evidence and review count; `used`: the plans that
        authorised its code."""
        new = self.transition.new
        return IndexHead(
            self.root,
            new,
            self.code_changed,
            used,
            anchors=self.anchors,
            parent=self.head_commit,
            transition=self.transition,
        )


def index(
    location: git.Location, config_file: str | None, stack: contextlib.ExitStack[bool | None], *, in_ci: bool
) -> Index | Skipped:
    """The index against HEAD, under HEAD's configuration (the trusted side). `in_ci`: an
    index that equals HEAD is refused there (HG950), not passed."""
    from harness_gate import ranges  # noqa: PLC0415  (ranges imports this module)
    from harness_gate.errors import nothing_to_judge_in_ci  # noqa: PLC0415

    root = location.toplevel
    head = location.head
    if ranges.adopting(head):
        return Skipped({"active": False, "adopting": True, "changes": 0, "commits": 0})
    assert head is not None  # noqa: S101  (ranges.adopting: a commit before this one)
    cfg = artifacts_tree.trusted_config(root, config_file, head)
    if not active_at(root, head, cfg):
        return Skipped({"active": False, "changes": 0, "commits": 0})
    artifacts_tree.prefetch_index(root, cfg)  # listed by git while the diff is parsed here
    changes = git.staged_changes(root, head)
    others = git.merge_heads(location)
    if others:
        changes = ranges.merge_own(root, changes, [git.staged_changes(root, o) for o in others], [head, *others], None)
    if not changes and not others and in_ci and "GIT_INDEX_FILE" not in os.environ:
        # A fresh clone in CI (pre-commit.ci, `pre-commit run --all-files` in a workflow):
        # the index equals HEAD, and "Passed" would say nothing about the branch's commits.
        # git sets GIT_INDEX_FILE for every commit hook, so a `git commit --allow-empty` made
        # where CI is set is an ordinary commit with nothing in it, not that case.
        raise nothing_to_judge_in_ci()
    new, anchors = _vouched(root, cfg, artifacts_tree.from_index(root, cfg), head, stack)
    parents = [head, *others]

    def olds() -> list[artifacts_tree.ArtifactsTree]:
        return [artifacts_tree.from_commit(root, r, cfg) for r in parents]

    transition = Transition(
        "index",
        None,
        changes,
        new,
        olds,
        GitFacts(root, None, head),
        merge=bool(others),
        first_parent=head,
        parent=head,
        load_origins=lambda: index_origins(root, cfg, parents, new, lambda: changes),
        load_selected=lambda: origins_mod.selected(root),
    )
    return Index(root, transition, anchors, head)


def _vouched(
    root: Path,
    cfg: Config,
    tree: artifacts_tree.ArtifactsTree,
    head: str,
    stack: contextlib.ExitStack[bool | None],
) -> tuple[artifacts_tree.ArtifactsTree, trust.Anchors]:
    """`tree` (the index, or the work tree, over HEAD) as HEAD's trust anchors vouch for
    it, and those anchors, held open until the check ends."""
    anchors = stack.enter_context(trust.anchors(root, cfg, base=head, head=None))
    return trust.vouched(tree, anchors, None), anchors


@dataclass(frozen=True)
class CommitRange:
    """A commit range old..new set up to be judged: its commits (parents first), the
    configuration and states it is judged under, and the trust anchors its states are
    vouched for by, held open until the check ends."""

    root: Path
    listing: Sequence[git.Commit]
    trusted: RangeTrust
    anchors: trust.Anchors
    base: str
    head: str

    def judge(self, plan_id: str | None) -> tuple[list[Finding], dict[str, Any], Head | None]:
        """Each commit of the range on its own (ranges.judge)."""
        from harness_gate import ranges  # noqa: PLC0415  (ranges imports this module)

        return ranges.judge(
            self.root,
            self.listing,
            cfg=self.trusted.cfg,
            head_oid=self.head,
            plan_id=plan_id,
            every=self.trusted.every,
            anchors=self.anchors,
            base=self.base,
            states=self.trusted.states,
            fork_from=self.trusted.fork_from,
        )


def commit_range(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path,
    config_file: str | None,
    old: str,
    new: str,
    stack: contextlib.ExitStack[bool | None],
    *,
    pushed: bool,
) -> CommitRange:
    """The commits of old..new under the range's trusted side (ranges.range_trust), with
    the anchors opened on `stack`. `pushed`: a pushed range, measured from the base branch."""
    from harness_gate import ranges  # noqa: PLC0415  (ranges imports this module)

    listing = git.commits(root, new, [old])
    trusted = ranges.range_trust(root, config_file, listing, old, new, pushed=pushed)
    opened = anchors(root, trusted.cfg, stack, base=old, head=new)
    return CommitRange(root, listing, trusted, opened, old, new)


def anchors(
    root: Path, cfg: Config, stack: contextlib.ExitStack[bool | None], *, base: str | None, head: str | None
) -> trust.Anchors:
    """The check's trust anchors (trust.py), held open until the check ends: what a
    range's states are vouched for by."""
    return stack.enter_context(trust.anchors(root, cfg, base=base, head=head))


def commit(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path,
    oid: str,
    parents: Sequence[str],
    changes: Sequence[git.Change],
    *,
    state_of: Callable[[str], artifacts_tree.ArtifactsTree],
    empty: Callable[[], artifacts_tree.ArtifactsTree],
    origins: Callable[[], Origins] = lambda: BASE_ONLY,
) -> Transition:
    """One commit of a range: `changes` its own (a merge's, beyond git's merge of its
    parents), `state_of` a commit's vouched state, `empty` the state before a root commit."""

    def olds() -> list[artifacts_tree.ArtifactsTree]:
        return [state_of(p) for p in parents] or [empty()]

    merge = len(parents) > 1
    parent = parents[0] if parents else None
    return Transition(
        f"commit {oid}",
        oid,
        changes,
        state_of(oid),
        olds,
        GitFacts(root, oid, parent),
        merge=merge,
        first_parent=parent if merge else None,
        parent=parent,
        load_origins=origins,
    )


def writes(
    location: git.Location, cfg: Config, changes: Sequence[git.Change], stack: contextlib.ExitStack[bool | None]
) -> Transition:
    """The index as it would be with a coding agent's writes in it (docs/agents.md): its
    plans chosen as `check --staged` chooses them, the writes judged as its changes."""
    root, head = location.toplevel, location.head
    assert head is not None  # noqa: S101  (the hook judges no unborn branch)
    new, _ = _vouched(root, cfg, artifacts_tree.from_index(root, cfg), head, stack)
    parents = [head, *git.merge_heads(location)]

    def origins() -> Origins:
        return index_origins(root, cfg, parents, new, lambda: git.staged_changes(root, head))

    return Transition(
        "work tree",
        None,
        changes,
        new,
        lambda: [artifacts_tree.from_commit(root, r, cfg) for r in parents],
        GitFacts(root, None, head),
        first_parent=head,
        parent=head,
        load_origins=origins,
        load_selected=lambda: origins_mod.selected(root),
    )


def work_tree(
    root: Path, cfg: Config, head: str, changes: Sequence[git.Change], stack: contextlib.ExitStack[bool | None]
) -> Transition:
    """HEAD against the work tree, for the artifact rules at Stop: the artifacts root as
    the work tree holds it at the changed paths, HEAD's elsewhere."""
    old = artifacts_tree.from_commit(root, head, cfg)
    new, _ = _vouched(root, cfg, artifacts_tree.worktree_over(old, [decode(c.path) for c in changes]), head, stack)
    facts = GitFacts(root, None, head)
    return Transition("work tree", None, changes, new, lambda: [old], facts, first_parent=head, parent=head)
