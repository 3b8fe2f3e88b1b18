"""The states of a commit range, read at once: each commit's artifacts root and config files.

A range is judged commit by commit, each against its own state. Listing and reading each
commit's state costs git processes per commit; here a commit's state is derived from its
parent's and the commit's own changes (`git.commits` lists them already), and every blob
any of the states holds is read in one `git cat-file --batch`. A commit that changes
nothing under the artifacts root (or in the config files) shares its parent's state
object, so work done per state (a plan folder's replay) is done once for all of them.

Only a state that cannot be derived is listed with `git ls-tree`: a merge (its combined
diff leaves out paths that come from one side), and a parent or other commit outside the
range. A change that does not fit the parent's state fails the check (an error, never a
guess).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from harness_gate import artifacts_root, artifacts_tree, git
from harness_gate import config as config_mod
from harness_gate.artifacts_tree import plans_in
from harness_gate.errors import GitError

Entries = dict[str, tuple[str, str]]  # path -> (mode, oid), as `git ls-tree -r` lists them
_CONFIG_RAW = {os.fsencode(p): p for p in artifacts_tree.CONFIG_PATHS}


class _Tree:
    """A commit's entries below the artifacts root and at the config paths. A commit that
    changes neither shares its parent's dictionaries (and so its states)."""

    __slots__ = ("config", "root")

    def __init__(self, root: Entries, config: Entries) -> None:
        self.root = root
        self.config = config


_EMPTY = _Tree({}, {})


class RangeStates:
    """The artifacts trees and configurations of a range's commits (`commits`,
    parents first, as `git.commits` lists them), and of a few more commits (`extra`: the
    base, the head) read alongside."""

    def __init__(
        self, root: Path, cfg: config_mod.Config, commits: Sequence[git.Commit], extra: Iterable[str] = ()
    ) -> None:
        self.root = root
        self.cfg = cfg
        self._prefix = artifacts_root.prefix(cfg.artifacts_dir)
        self._raw_prefix = os.fsencode(self._prefix)
        self._trees: dict[str, _Tree] = {}
        self._blobs: set[str] = set()  # every oid a state holds at a regular file's path
        self._cap: dict[str, int] = {}  # oid -> the largest cap of a root path holding it
        self._config_blobs: set[str] = set()  # read whole, as read_config does
        self._sizes: dict[str, int] | None = None
        self._data: dict[str, bytes] = {}
        self._snaps: dict[int, artifacts_tree.ArtifactsTree] = {}  # by id() of a kept _Tree.root
        self._configs: dict[int, config_mod.Config] = {}  # by id() of a kept _Tree.config
        self._others: dict[str, artifacts_tree.ArtifactsTree] = {}  # commits read on their own
        self._plan_ids: dict[int, frozenset[str]] = {}  # by id() of a kept _Tree.root
        self._listed: dict[str, _Tree] = {}  # commits outside the range, listed for their names only
        inside = {c.oid for c in commits}
        listed: list[str] = []
        for c in commits:
            if len(c.parents) > 1:
                listed.append(c.oid)
            listed.extend(p for p in c.parents if p not in inside)
        listed.extend(r for r in extra if r not in inside)
        for rev in dict.fromkeys(listed):
            self._trees[rev] = self._list(rev)
        for c in commits:
            if c.oid in self._trees:
                continue  # a merge: listed whole
            if c.parents and c.parents[0] not in self._trees:
                raise GitError(f"commit {c.oid[:12]} is listed before its parent {c.parents[0][:12]}")
            parent = self._trees[c.parents[0]] if c.parents else _EMPTY
            self._trees[c.oid] = self._apply(parent, c)

    # -- building the states -------------------------------------------------------------
    def _note(self, path: str, mode: str, oid: str) -> None:
        if not mode.startswith("100"):
            return
        self._blobs.add(oid)
        if path.startswith(self._prefix):
            self._cap[oid] = max(self._cap.get(oid, 0), artifacts_tree.cap_for(path, self.cfg))
        else:
            self._config_blobs.add(oid)

    def _list(self, rev: str) -> _Tree:
        """A commit's state as git lists it (one ls-tree for the root and the config files)."""
        root: Entries = {}
        config: Entries = {}
        for b in git.tree_entries(self.root, rev, self._prefix, *artifacts_tree.CONFIG_PATHS):
            if b.path.startswith(self._prefix):
                root[b.path] = (b.mode, b.oid)
            elif b.path in artifacts_tree.CONFIG_PATHS:
                config[b.path] = (b.mode, b.oid)
            else:
                continue
            self._note(b.path, b.mode, b.oid)
        return _Tree(root, config)

    def _apply(self, parent: _Tree, commit: git.Commit) -> _Tree:
        """The parent's state with the commit's own changes (one parent, or none)."""
        in_root = [c for c in commit.changes if c.path.startswith(self._raw_prefix)]
        in_config = [c for c in commit.changes if c.path in _CONFIG_RAW]
        if not in_root and not in_config:
            return parent
        root = self._changed(parent.root, in_root, commit.oid) if in_root else parent.root
        config = self._changed(parent.config, in_config, commit.oid) if in_config else parent.config
        return _Tree(root, config)

    def _changed(self, entries: Entries, changes: Sequence[git.Change], oid: str) -> Entries:
        out = dict(entries)
        added = False
        for c in changes:
            path = os.fsdecode(c.path)
            before = out.get(path)
            expected = None if c.added else (c.old_modes[0], c.old_oids[0])
            if len(c.old_modes) != 1 or before != expected:
                raise GitError(f"commit {oid[:12]}: the change of {c.display} does not fit its parent's state")
            if c.deleted:
                del out[path]
            else:
                added = added or before is None
                out[path] = (c.new_mode, c.new_oid)
                self._note(path, c.new_mode, c.new_oid)
        if not added:
            return out  # changed in place and deleted: still in git's order
        # In git's order (byte order of the paths), as `git ls-tree -r` lists them.
        return dict(sorted(out.items(), key=lambda item: os.fsencode(item[0])))

    def _read(self) -> dict[str, int]:
        """Sizes of every blob of every state, and the bytes of those within a cap (the
        config files whole): one git process for the whole range."""
        if self._sizes is None:
            caps = {o: sys.maxsize if o in self._config_blobs else self._cap[o] for o in sorted(self._blobs)}
            self._data, self._sizes = git.read_blobs_capped(self.root, caps)
        return self._sizes

    # -- the answers ---------------------------------------------------------------------
    def artifacts_tree(self, oid: str) -> artifacts_tree.ArtifactsTree:
        """The commit's artifacts root, as `artifacts_tree.from_commit(root, oid, cfg)` reads it;
        one object for every commit with the same entries."""
        tree = self._trees.get(oid)
        if tree is None:  # not read with the range: read on its own, once
            if oid not in self._others:
                self._others[oid] = artifacts_tree.from_commit(self.root, oid, self.cfg)
            return self._others[oid]
        artifacts = self._snaps.get(id(tree.root))
        if artifacts is None:
            sizes = self._read()
            listed = [git.TreeEntry(path, mode, blob) for path, (mode, blob) in tree.root.items()]
            artifacts = artifacts_tree.assemble(
                self.root, f"commit {oid}", self.cfg, listed, sizes=sizes, data=self._data
            )
            self._snaps[id(tree.root)] = artifacts
        return artifacts

    def config(self, oid: str) -> config_mod.Config:
        """The commit's own configuration, as `artifacts_tree.read_config(root, oid)` reads it."""
        tree = self._trees.get(oid)
        if tree is None:
            return artifacts_tree.read_config(self.root, oid)
        cfg = self._configs.get(id(tree.config))
        if cfg is None:
            self._read()
            files = {path: self._data[blob] for path, (mode, blob) in tree.config.items() if mode.startswith("100")}
            cfg = self._configs[id(tree.config)] = artifacts_tree.config_of(files)
        return cfg

    def _tree(self, oid: str) -> _Tree:
        tree = self._trees.get(oid) or self._listed.get(oid)
        if tree is None:  # not read with the range: listed on its own, once (no blob read)
            tree = self._listed[oid] = self._list(oid)
        return tree

    def plan_ids(self, oid: str) -> frozenset[str]:
        """The plans whose `plan.md` commit `oid` holds, from its listing alone (no blob is read)."""
        tree = self._tree(oid)
        key = id(tree.root)
        found = self._plan_ids.get(key)
        if found is None:
            found = self._plan_ids[key] = frozenset(plans_in(tree.root, self.cfg.artifacts_dir))
        return found

    def entries_below(self, oid: str, prefix: str) -> dict[str, tuple[str, str]]:
        """The listing (path -> (mode, object id)) of commit `oid` below `prefix` of the
        artifacts root: enough to tell whether a plan folder changed, no blob read."""
        return {path: entry for path, entry in self._tree(oid).root.items() if path.startswith(prefix)}

    def shares_parent_state(self, commit: git.Commit) -> bool:
        """Whether a one-parent commit leaves the artifacts root as its parent had it."""
        if len(commit.parents) != 1:
            return False
        mine, parent = self._trees.get(commit.oid), self._trees.get(commit.parents[0])
        return mine is not None and parent is not None and mine.root is parent.root
