"""Where a write lands, read from the disk before it happens: the repository the hook
guards, the linked worktree a path lies in, the repository-relative names a path comes to
(through symbolic links too), a repository nested on the way, a file with other names."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path


def project() -> Path:
    """The repository the hook guards: the project's (Claude Code names it in
    CLAUDE_PROJECT_DIR; a runtime starts its hooks there), never the payload's `cwd`, which
    follows the agent's `cd` (into a repository of its own making, say) and only says
    where relative names start."""
    named = os.environ.get("CLAUDE_PROJECT_DIR")
    return Path(named) if named else Path.cwd()


def judged_in(project: Path, cwd: Path, paths: Sequence[tuple[str, str]]) -> Path:
    """Where a write is judged: the linked worktree of the project's repository it lands in
    (Claude Code's EnterWorktree, agent_worktrees.py), else the project."""
    from harness_gate import agent_worktrees  # noqa: PLC0415

    if paths:
        target = os.path.normpath(cwd / paths[0][0])
        found = agent_worktrees.worktree_of(project, target)
        if found is not None:
            return found
    return project


def resolve(
    root: Path, cwd: Path, raw: str, real_root: str | None = None, links: dict[str, bool] | None = None
) -> tuple[list[str], str | None]:
    """The repository-relative paths a write to `raw` lands on (as named, and where symbolic
    links lead, when that differs), or why it lands nowhere the gate allows. `real_root`
    (`root` with its links resolved) and `links` (what `_unlinked` found) are a caller's
    that resolves many paths (Stop): each folder is then looked at once, not once per path."""
    if not raw or "\0" in raw:
        return [], "not a file name"
    joined = str(cwd / raw)
    top = os.path.normpath(root)
    real_top = os.path.realpath(root) if real_root is None else real_root
    lexical = os.path.normpath(joined)
    rel = _inside(lexical, top)
    if rel is None:
        rel = _inside(lexical, real_top)
    real = (_unlinked(real_top, rel, links) if rel and links is not None else None) or os.path.realpath(joined)
    real_rel = _inside(real, real_top)
    if rel is None and real_rel is None:
        return [], f"outside the repository `{top}`"
    if real_rel is None:
        return [], f"leads through a symbolic link to `{real}`, outside the repository"
    named = [p for p in dict.fromkeys([rel, real_rel]) if p is not None]
    for p in named:
        if not p:
            return [], "the repository's top directory itself"
        first = p.split("/", 1)[0]
        if first.casefold() == ".git":
            return [], "inside `.git`: git's own files (hooks, config) are never an agent's to write"
    return named, None


def _unlinked(real_top: str, rel: str, links: dict[str, bool]) -> str | None:
    """`rel` below `real_top` when nothing on the way is a symbolic link, so that it is its
    own real path (what os.path.realpath says, which looks at every folder of every path
    again); None when one is (os.path.realpath then follows it). `links` remembers each
    folder looked at. As realpath, a name that cannot be looked at is no link."""
    here = real_top.rstrip("/")  # the file system's root, too
    for part in rel.split("/"):
        here = f"{here}/{part}"
        link = links.get(here)
        if link is None:
            try:
                link = stat.S_ISLNK(os.lstat(here).st_mode)
            except OSError:
                link = False
            links[here] = link
        if link:
            return None
    return here


def nested_repository(root: Path, rel: str, seen: dict[str, str | None]) -> str | None:
    """The directory on the way to `rel` that holds a `.git` of its own (another work tree,
    which this repository's gate does not judge), or None. `seen` remembers each directory
    already looked at (the answer for it and the ones above it), so that a Stop over many
    files in deep folders looks at each folder once, not once per file and level."""
    top = os.fspath(root)
    here = ""
    for part in rel.split("/")[:-1]:
        here = f"{here}/{part}" if here else part
        if here in seen:
            found = seen[here]
        else:
            found = here if part.casefold() == ".git" or os.path.lexists(f"{top}/{here}/.git") else None
            seen[here] = found
        if found is not None:
            return found
    return None


def hard_links(path: Path) -> int:
    """How many names the regular file at `path` has (1 when there is none yet)."""
    try:
        st = path.stat()
    except OSError:
        return 1
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 1


def _inside(path: str, top: str) -> str | None:
    if path == top:
        return ""
    prefix = top.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")
