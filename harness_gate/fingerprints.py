"""Tree fingerprints: what evidence and reviews speak of.

The fingerprint of a state is the git tree id of its content with the artifacts root
removed. Anyone can reproduce it with plumbing (docs/evidence.md):

    git rev-parse HEAD^{tree}                               # a commit's tree
    git ls-tree HEAD | grep -v "	harness$" | git mktree     # ... without the artifacts root
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_gate import git
from harness_gate.config import Config
from harness_gate.errors import GitError, Refused
from harness_gate.findings import Finding, Severity, finding

SHOWN_FILES = 8


def _strip(root: Path, tree: str, cfg: Config) -> str:
    return git.tree_without(root, tree, cfg.artifacts_dir.split("/"))


def fingerprint_worktree(
    root: Path, cfg: Config, kept: Sequence[str] = (), *, untracked: Sequence[str] | None = None
) -> str:
    """`kept`: untracked files matching `verify_outputs` that are inputs all the same (see
    `Inputs`): part of the fingerprint. `untracked`: the untracked files a `git status` of
    this moment listed (see `git.worktree_tree`)."""
    # The artifacts root is removed from the fingerprint anyway: not staging it keeps a
    # long evidence log from being read at all.
    try:
        tree = git.worktree_tree(root, cfg.artifacts_dir, cfg.verify_outputs, kept, untracked=untracked)
    except GitError:
        _refuse_unborn(root)
        raise
    return _strip(root, tree, cfg)


def _refuse_unborn(root: Path) -> None:
    """Refused (HG311) when a repository of its own without a commit sits untracked in the
    work tree: `git add -A` fails on it ("adding files failed"), so no fingerprint exists.
    Asked only once staging has failed: it says why, where git's own message does not."""
    for xy, path in git.status_records(root):
        if xy == "??" and path.endswith("/") and git.resolve(root / path, "HEAD") is None:
            raise Refused(
                "HG311",
                path.rstrip("/"),
                f"`{path}` is a repository of its own with no commit: git cannot add it, so the work tree has "
                "no fingerprint",
            )


def untracked_listed(records: Sequence[tuple[str, str]]) -> list[str] | None:
    """The untracked files of a work tree's listing (`git.status_records(...,
    ignore_files=True)`), for its fingerprint to take by name instead of walking every
    folder again; None where the listing says other than what `add -A` stages: a folder
    git does not enter (a repository of its own), or an ignore file, which the listing
    shows even when it ignores itself."""
    out = []
    for xy, path in records:
        if xy != "??":
            continue
        if path.endswith("/") or path.rsplit("/", 1)[-1] == ".gitignore":
            return None
        out.append(path)
    return out


def _stamp(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    # ctime moves with every write (and no command can set it back): "not written" is exact.
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class Inputs:
    """The untracked files matching `verify_outputs` that were there before `verify` ran.
    Only what a command itself creates or writes during the run is an output: such a file
    that no command has written since is an input like any other untracked file (part of
    the fingerprint, and of the HG310 warning), for the commands may read it."""

    root: Path
    stamps: tuple[tuple[str, tuple[int, ...] | None], ...]

    @classmethod
    def now(cls, root: Path, cfg: Config) -> Inputs:
        if not cfg.verify_outputs:
            return cls(root, ())
        every = set(git.untracked_files(root, cfg.artifacts_dir))
        outputs = sorted(every - set(git.untracked_files(root, cfg.artifacts_dir, cfg.verify_outputs)))
        return cls(root, tuple((p, _stamp(root / p)) for p in outputs))

    def unwritten(self) -> list[str]:
        """Those no command has created, written, or removed since."""
        return [p for p, stamp in self.stamps if stamp is not None and _stamp(self.root / p) == stamp]


def fingerprint_index(root: Path, cfg: Config) -> str:
    return _strip(root, git.index_tree(root), cfg)


def fingerprint_commit(root: Path, rev: str, cfg: Config) -> str:
    return _strip(root, git.commit_tree(root, rev), cfg)


def of(root: Path, cfg: Config, rev: str | None) -> str:
    """The fingerprint of a commit, or of the index (`rev` None)."""
    if rev is None:
        return fingerprint_index(root, cfg)
    return fingerprint_commit(root, rev, cfg)


def untracked_files(root: Path, cfg: Config) -> list[str]:
    """The untracked files that are not ignored nor outputs (those a tree can hold)."""
    found = git.untracked_files(root, cfg.artifacts_dir, cfg.verify_outputs)
    special = set(git.unstorable(root, found))
    return [p for p in found if p not in special]


def untracked_warning(found: Sequence[str], path: str) -> list[Finding]:
    """Untracked files that are not ignored are part of the work tree's fingerprint: the
    evidence speaks of them, and of a tree the commit will not have unless they are added."""
    if not found:
        return []
    shown = ", ".join(found[:SHOWN_FILES]) + (
        f" and {len(found) - SHOWN_FILES} more" if len(found) > SHOWN_FILES else ""
    )
    return [
        finding(
            "HG310",
            path,
            f"untracked files are part of the tree verify records: {shown}",
            severity=Severity.WARNING,
        )
    ]


def what_changed(root: Path, before: str, after: str) -> str:
    """The files a command created, changed or deleted, each with what git makes of it."""
    changed = git.changes_between(root, before, after)
    tracked = git.tracked_files(root, [path for _, path in changed])
    words = {"A": "created", "D": "deleted", "M": "changed", "T": "changed"}
    parts = [
        f"{words.get(status[:1], 'changed')} {path} ({'tracked' if path in tracked else 'untracked, not ignored'})"
        for status, path in changed[:SHOWN_FILES]
    ]
    more = f" and {len(changed) - SHOWN_FILES} more" if len(changed) > SHOWN_FILES else ""
    return "; ".join(parts) + more


def refuse_hidden(root: Path) -> None:
    """Refused (HG308) when the work tree's fingerprint would not speak of what is on disk."""
    dirty = git.dirty_submodules(root)
    if dirty:
        raise Refused(
            "HG308",
            dirty[0],
            f"submodule(s) with uncommitted changes: {', '.join(dirty[:3])}; the fingerprint records only their commit",
            "Commit (or discard) the changes inside the submodule first.",
        )
    hidden = git.hidden_edits(root)
    if hidden:
        raise Refused(
            "HG308",
            hidden[0],
            f"the index hides edits to {len(hidden)} path(s) ({', '.join(hidden[:3])}): "
            "evidence would speak of a tree that is not on disk",
        )
