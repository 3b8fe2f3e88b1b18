"""What the rules ask of the repository, asked of git: the one place they meet.

The rules (harness_gate.rules), `freshness` and `governance` decide from values. Where a
decision needs a fact beyond a state's artifacts (where its symlinks lead, a merge's first
parent's files, the tree a review names, where the branch left its base), they ask one of
the protocols below, and `GitFacts` answers it from git's plumbing (harness_gate.git). A
test answers the same questions from memory (tests/test_rules.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from harness_gate import git, governance, origins
from harness_gate.artifacts_tree import plans_in
from harness_gate.rules.transition import added_plans, decode

if TYPE_CHECKING:
    from harness_gate.artifacts_tree import ArtifactsTree
    from harness_gate.change import Change
    from harness_gate.config import Config
    from harness_gate.formats import Files
    from harness_gate.origins import Origins


class StateFacts(Protocol):
    """The facts about one state (a commit, the index) and the commit it starts from that
    the rules for its transition ask for, each only when a rule needs it."""

    def symlinks(self) -> dict[bytes, bytes]:
        """Every symlink of the state: path -> target."""
        ...

    def parent_symlinks(self) -> dict[bytes, bytes]:
        """Every symlink of the commit the state starts from."""
        ...

    def is_directory(self, path: str) -> bool:
        """Whether the state holds files below `path`."""
        ...

    def changes_from(self, rev: str) -> Sequence[Change]:
        """The state against commit `rev` (a merge's first parent)."""
        ...

    def blobs(self, oids: Sequence[str]) -> Mapping[str, bytes]:
        """The bytes of the blobs named (the old sides of changed files)."""
        ...

    def files(self) -> Files:
        """The state's files, read on demand (the format rules')."""
        ...

    def files_at(self, rev: str) -> Files:
        """The files of commit `rev` (a merge's first parent)."""
        ...

    def fingerprint(self, cfg: Config) -> str:
        """The state's tree fingerprint (what evidence names)."""
        ...


class RepoFacts(Protocol):
    """The facts about the repository `freshness` and `governance` ask for: the head, where
    it left the base, trees and the changes between them, the work tree's fingerprint and
    plan origins."""

    def head(self) -> str | None: ...

    def fork_point(self, base_branch: str | None, head: str) -> str | None: ...

    def empty_tree(self) -> str: ...

    def has_tree(self, oid: str) -> bool: ...

    def changed_paths(self, old_tree: str, new_tree: str, limit: int) -> list[str]: ...

    def fingerprint_commit(self, rev: str, cfg: Config) -> str: ...

    def fingerprint_worktree(self, cfg: Config, *, outputs_are_inputs: bool = False) -> str:
        """The work tree's fingerprint. `outputs_are_inputs`: the untracked files matching
        `verify_outputs` already there (an earlier step's) count, as no command wrote them."""
        ...

    def change_id(self, old_tree: str, new_tree: str) -> str: ...

    def worktree_origins(self, artifacts: ArtifactsTree, present: frozenset[str]) -> Origins:
        """Where the work tree's plans came from: HEAD, and a merge's other heads."""
        ...

    def selected(self) -> str | None:
        """The plan this branch's local selection names (`plan use`)."""
        ...


@dataclass(frozen=True)
class GitFacts:
    """Both protocols answered by git for the repository at `root`: `rev` the state (None:
    the index), `parent` the commit it starts from."""

    root: Path
    rev: str | None = None
    parent: str | None = None

    def symlinks(self) -> dict[bytes, bytes]:
        return self._links(self.rev)

    def parent_symlinks(self) -> dict[bytes, bytes]:
        return self._links(self.parent) if self.parent is not None else {}

    def _links(self, rev: str | None) -> dict[bytes, bytes]:
        found = git.symlinks(self.root, rev)
        blobs = git.read_blobs(self.root, list(found.values()))
        return {path: blobs[oid] for path, oid in found.items()}

    def is_directory(self, path: str) -> bool:
        if self.rev is None:
            return bool(git.index_entries(self.root, f"{path}/"))
        return bool(git.tree_entries(self.root, self.rev, f"{path}/", recursive=False))

    def changes_from(self, rev: str) -> Sequence[Change]:
        if self.rev is None:
            return git.staged_changes(self.root, rev)
        return git.tree_changes(self.root, rev, self.rev)

    def blobs(self, oids: Sequence[str]) -> Mapping[str, bytes]:
        return git.read_blobs(self.root, list(oids))

    def files(self) -> Files:
        from harness_gate import formats  # noqa: PLC0415  (only when a format file changed)

        return formats.Files(self.root, self.rev)

    def files_at(self, rev: str) -> Files:
        from harness_gate import formats  # noqa: PLC0415

        return formats.Files(self.root, rev)

    def fingerprint(self, cfg: Config) -> str:
        from harness_gate import fingerprints  # noqa: PLC0415  (only when a format asks)

        return fingerprints.of(self.root, cfg, self.rev)

    def head(self) -> str | None:
        return git.head(self.root)

    def fork_point(self, base_branch: str | None, head: str) -> str | None:
        return git.fork_point(self.root, base_branch, head)

    def empty_tree(self) -> str:
        return git.empty_tree(self.root)

    def has_tree(self, oid: str) -> bool:
        return git.has_tree(self.root, oid)

    def changed_paths(self, old_tree: str, new_tree: str, limit: int) -> list[str]:
        return git.changed_paths(self.root, old_tree, new_tree, limit)

    def fingerprint_commit(self, rev: str, cfg: Config) -> str:
        from harness_gate import fingerprints  # noqa: PLC0415

        return fingerprints.fingerprint_commit(self.root, rev, cfg)

    def fingerprint_worktree(self, cfg: Config, *, outputs_are_inputs: bool = False) -> str:
        from harness_gate import fingerprints  # noqa: PLC0415

        kept = fingerprints.Inputs.now(self.root, cfg).unwritten() if outputs_are_inputs else ()
        return fingerprints.fingerprint_worktree(self.root, cfg, kept)

    def change_id(self, old_tree: str, new_tree: str) -> str:
        from harness_gate import patch_id  # noqa: PLC0415

        return patch_id.change_id(self.root, old_tree, new_tree)

    def worktree_origins(self, artifacts: ArtifactsTree, present: frozenset[str]) -> Origins:
        location = git.locate(self.root)
        # A merge in progress (a conflict being resolved): what the merged heads bring is
        # theirs, not a plan this branch started.
        parents = [location.head, *git.merge_heads(location)] if location.head else []
        return origins.locally(self.root, artifacts.config, parents, present)

    def selected(self) -> str | None:
        return origins.selected(self.root)


def active_at(root: Path, head: str, cfg: Config) -> bool:
    """Whether the gate is on for a change of the index: HEAD, the trusted side, has a
    configuration or an artifacts root (the agent hook asks the same)."""
    return cfg.source is not None or git.has_path(root, head, cfg.artifacts_dir)


def index_origins(
    root: Path, cfg: Config, parents: Sequence[str], new: ArtifactsTree, staged: Callable[[], Sequence[Change]]
) -> Origins:
    """Where the index's plans came from (`check --staged` and the agent hook alike). Without
    a merge, the diff against HEAD (`staged`, read only then) says which plans this commit
    starts; a merge's plans come by the commit graph alone."""
    added = None
    if len(parents) == 1:
        paths = map(decode, added_plans(staged()))
        added = frozenset(plans_in(paths, cfg.artifacts_dir))
    return origins.locally(root, cfg, parents, frozenset(governance.present(new)), added=added)
