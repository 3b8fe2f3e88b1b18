"""Linked worktrees of the project's own repository, inside its work tree.

Claude Code's EnterWorktree makes a linked worktree under `.claude/worktrees/NAME` (`git
worktree add`) and moves the session there, while CLAUDE_PROJECT_DIR stays on the main
tree. A folder there holds a `.git` of its own, so it looks like a repository nested in the
project; it is the same repository, on another branch: a write there is judged in that
worktree, and Stop does not count the folder as a change of the main tree.

A folder is such a worktree when its `.git` is a file naming a git directory
(`gitdir: ...`) whose `commondir` leads to the project's own git directory, and whose
`gitdir` file leads back to this folder (what `git worktree add` writes both ways; git's own
files, which the agent hook never lets a tool write), and which lies where git keeps them,
`<common>/worktrees/<name>`. Read from the file system alone: no
git process on the hook's path. docs/agents.md, "Which repository".
"""

from __future__ import annotations

import os
from pathlib import Path

_MAX = 4096  # bytes read of one of git's pointer files
_DEPTH = 64  # folders looked at on the way up from a path


def _pointer(path: Path) -> str | None:
    """The first line of one of git's small pointer files, or None."""
    try:
        with path.open("rb") as fh:
            data = fh.read(_MAX + 1)
    except OSError:
        return None
    if len(data) > _MAX:
        return None
    line = data.decode("utf-8", "surrogateescape").split("\n", 1)[0].strip()
    return line or None


def common_dir(top: Path) -> str | None:
    """The real path of the git directory shared by every worktree of the repository whose
    work tree is `top`, or None when `top/.git` is neither a directory nor a worktree's file."""
    dot_git = top / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return os.path.realpath(dot_git)
    gitdir = _gitdir(top)
    if gitdir is None:
        return None
    common = _pointer(gitdir / "commondir")
    return os.path.realpath(gitdir / common) if common else os.path.realpath(gitdir)


def _gitdir(top: Path) -> Path | None:
    dot_git = top / ".git"
    if not dot_git.is_file() or dot_git.is_symlink():
        return None
    line = _pointer(dot_git)
    if line is None or not line.startswith("gitdir: "):
        return None
    named = Path(line[len("gitdir: ") :])
    return named if named.is_absolute() else top / named


def linked(project_common: str, folder: Path) -> bool:
    """Whether `folder` is the top of a linked worktree of the repository whose shared git
    directory is `project_common` (its `.git` file and git's back-link agree)."""
    gitdir = _gitdir(folder)
    if gitdir is None or common_dir(folder) != project_common:
        return False
    # Where git itself keeps a linked worktree's git directory (`<common>/worktrees/<name>`),
    # which no tool of the agent may write: one made elsewhere by hand, with the same three
    # pointer files, is a repository of its own.
    if Path(os.path.realpath(gitdir)).parent != Path(project_common) / "worktrees":
        return False
    back = _pointer(gitdir / "gitdir")
    return back is not None and os.path.realpath(back) == os.path.realpath(folder / ".git")


def worktree_of(project: Path, path: str) -> Path | None:
    """The linked worktree of the project's repository, nested in the project's work tree,
    that `path` (absolute, lexical) lies in; None when it lies in no such worktree."""
    top = os.path.normpath(project)
    here = os.path.normpath(path)
    if not here.startswith(top.rstrip(os.sep) + os.sep):
        return None
    project_common: str | None = None
    folder = Path(here).parent
    for _ in range(_DEPTH):
        if len(str(folder)) <= len(top):
            return None
        dot_git = folder / ".git"
        if dot_git.is_file():
            project_common = project_common or common_dir(Path(top))
            if project_common is not None and linked(project_common, folder):
                return folder
            return None  # the nearest `.git` decides: another repository's, judged as nested
        if dot_git.is_dir():
            return None
        folder = folder.parent
    return None
