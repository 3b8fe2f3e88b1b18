"""The value the rules judge: one transition, from each parent state to a new one, and the
split of its changes between the artifact rules and a plan's authority."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness_gate import artifacts_root, links
from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.change import Change
from harness_gate.origins import BASE_ONLY, Origins

if TYPE_CHECKING:
    from harness_gate.state_facts import StateFacts

SYMLINK = "120000"
GITLINK = "160000"


def decode(path: bytes) -> str:
    return path.decode("utf-8", "surrogateescape")


show = links.show


@dataclass(frozen=True)
class Transition:
    """One state change to judge: from each parent state to a new one (a commit, the index
    or the work tree). Every fact beyond the states' artifacts comes from `facts`."""

    label: str  # "index" or "commit <oid>", prefixed to messages in ranges
    rev: str | None  # the commit, or None for the index
    changes: Sequence[Change]
    new: ArtifactsTree
    load_olds: Callable[[], Sequence[ArtifactsTree]]  # read only when the artifacts root changed
    facts: StateFacts
    merge: bool = False  # more than one parent: each side's files meet here for the first time
    first_parent: str | None = None  # with merge: the first parent (HEAD for the index)
    parent: str | None = None  # the state the change starts from (its first parent; HEAD for the index)
    # Where its plans came from (which of them may govern it), and the local selection
    # (`plan use`, the index only): asked only when code changed.
    load_origins: Callable[[], Origins] = lambda: BASE_ONLY
    load_selected: Callable[[], str | None] = lambda: None

    @functools.cached_property
    def olds(self) -> Sequence[ArtifactsTree]:
        """One state per parent; the empty state for a first commit."""
        return self.load_olds()

    @functools.cached_property
    def origins(self) -> Origins:
        return self.load_origins()

    @functools.cached_property
    def selected(self) -> str | None:
        return self.load_selected()

    @functools.cached_property
    def symlinks(self) -> tuple[dict[bytes, bytes], dict[bytes, links.Resolution]]:
        """Every symlink of the new state (path -> target) and where each leads. Read once
        per state: the escape rule and each plan tried for the change ask for them."""
        targets = self.facts.symlinks()
        return targets, links.resolve(targets)

    @functools.cached_property
    def moved_links(self) -> list[bytes]:
        """The links whose end this change moves without touching them: adding `src/y -> .`
        turns an old `src/x -> y/../.github/workflows/ci.yml` from a link inside `src` into
        a door to a workflow. Asked only when the change touches a symlink."""
        ends = self.symlinks[1]
        if self.parent is None:
            return list(ends)
        before = links.resolve(self.facts.parent_symlinks())
        return [
            path
            for path, end in ends.items()
            if not isinstance(end, links.Ends)
            or not isinstance(old := before.get(path), links.Ends)
            or end.at.path() != old.at.path()
        ]


def root_prefix(artifacts_dir: str) -> bytes:
    """What paths inside the artifacts root start with: governed by artifact rules, not
    by a plan's boundary."""
    return artifacts_root.encoded(artifacts_root.prefix(artifacts_dir))


def signers_path(artifacts_dir: str) -> bytes:
    return artifacts_root.encoded(artifacts_root.signers_file(artifacts_dir))


def _artifact(path: bytes, prefix: bytes, signers: bytes) -> bool:
    """Governed by the artifact rules: under the artifacts root, except the trust anchor,
    which a plan must name like any protected path."""
    return path.startswith(prefix) and path != signers


def split(changes: Sequence[Change], artifacts_dir: str) -> tuple[list[Change], list[Change]]:
    """(the changes the artifact rules judge, the changes a plan's authority judges)."""
    prefix, signers = root_prefix(artifacts_dir), signers_path(artifacts_dir)
    root_changes: list[Change] = []
    code_changes: list[Change] = []
    for c in changes:
        (root_changes if _artifact(c.path, prefix, signers) else code_changes).append(c)
    return root_changes, code_changes


def touches_code(changes: Sequence[Change], artifacts_dir: str) -> bool:
    """Whether any change lies outside the artifacts root (`split`'s test, stopping at the
    first such change: the hook asks this of every commit)."""
    prefix, signers = root_prefix(artifacts_dir), signers_path(artifacts_dir)
    return not all(_artifact(c.path, prefix, signers) for c in changes)


def added_plans(changes: Sequence[Change]) -> list[bytes]:
    """The added `plan.md` files among the changes (the name first: it is the cheap test)."""
    return [c.path for c in changes if c.path.endswith(b"/" + artifacts_root.PLAN.encode()) and c.added]
