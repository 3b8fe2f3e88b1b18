"""The repository: its top level, harness-gate's paths in the git directory, HEAD, merge heads,
the committer identity."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness_gate.errors import GitError, HarnessGateError
from harness_gate.git.process import run, run_raw, scratch_objects

OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(frozen=True)
class Location:
    toplevel: Path
    cache_dir: Path  # under the git directory: never tracked, never in the work tree
    merge_head: Path
    head: str | None  # the commit HEAD points at; None on an unborn branch


_LOCATE = (
    "--show-toplevel",
    "--git-path",
    "harness-gate",
    "--git-path",
    "MERGE_HEAD",
    "--git-path",
    "index",
    "--git-path",
    "shallow",
    "--absolute-git-dir",
    "--git-common-dir",
)


# Paths in the git directory of each work tree (`index`, `shallow`), as `locate` or
# `git_path` was told them: one git process fewer each time they are asked again.
_GIT_PATHS: dict[tuple[Path, str], Path] = {}


def locate(cwd: Path | str) -> Location:
    """The work tree's top level, harness-gate's paths in the git directory, the index
    and HEAD, in one process: the hook asks all of them on every commit."""
    code, stdout, stderr = run_raw(
        ["rev-parse", *_LOCATE, "--verify", "--quiet", "--end-of-options", "HEAD^{commit}"], cwd=cwd
    )
    lines = stdout.decode("utf-8", "surrogateescape").split("\n")
    # Exit 1 with no message: everything but HEAD was answered, and HEAD names no commit.
    unborn = code == 1 and not stderr.strip()
    if code != 0 and not unborn:
        raise HarnessGateError(
            "HG901", f"{Path(cwd).resolve()} is not inside a git work tree", "Run `git init` or cd into a repository."
        )
    if len(lines) < 8 or (not unborn and not OID.fullmatch(lines[7])):
        raise GitError("unexpected `git rev-parse` output")
    top = Path(lines[0])

    def absolute(p: str) -> Path:
        path = Path(p)
        return path if path.is_absolute() else Path(cwd) / path

    _own_common_dir(Path(lines[5]), absolute(lines[6]))
    scratch_objects(absolute(lines[6]) / "objects")

    if not os.environ.get("GIT_INDEX_FILE"):  # git-path answers with it when it is set
        _GIT_PATHS[top, "index"] = absolute(lines[3])
    _GIT_PATHS[top, "shallow"] = absolute(lines[4])
    return Location(top, absolute(lines[1]) / "cache", absolute(lines[2]), None if unborn else lines[7])


def _own_common_dir(git_dir: Path, common: Path) -> None:
    """HG909 unless the common directory is the git directory itself or, for a linked work
    tree, the repository whose `worktrees/<name>` the git directory is. A `commondir` file
    written into `.git` (by an agent's shell, say) makes git read the configuration, hooks,
    refs and objects of another folder: answers the gate cannot stand on."""
    real_git, real_common = git_dir.resolve(), common.resolve()
    linked = real_git.parent.name == "worktrees" and real_git.parent.parent == real_common
    if real_common == real_git or linked:
        return
    raise HarnessGateError(
        "HG909",
        f"the git directory {git_dir} takes its configuration, hooks and objects from {common} (its `commondir`), "
        "which is not the repository of a linked work tree",
    )


def locate_git_dir(cwd: Path | str, cache_dir: Path) -> Location:
    """The repository a server-side hook runs in (bare, or a work tree's git directory): its
    git directory stands for the top level, since every read is of objects and refs, never
    of a work tree. `cache_dir` is the caller's: a hook leaves nothing in the repository."""
    code, stdout, _ = run_raw(["rev-parse", "--absolute-git-dir"], cwd=cwd)
    lines = stdout.decode("utf-8", "surrogateescape").split("\n")
    if code != 0 or not lines[0]:
        raise HarnessGateError("HG901", f"{Path(cwd).resolve()} is not a git repository", "Run it as a git hook.")
    top = Path(lines[0])
    return Location(top, cache_dir, top / "MERGE_HEAD", None)


def git_path(root: Path, name: str) -> Path:
    """`name` in the git directory of the work tree at `root` (`index`: the default index,
    only asked when GIT_INDEX_FILE is not set, since git-path answers with it)."""
    if (root, name) not in _GIT_PATHS:
        out = Path(os.fsdecode(run(["rev-parse", "--git-path", name], cwd=root).rstrip(b"\n")))
        _GIT_PATHS[root, name] = out if out.is_absolute() else root / out
    return _GIT_PATHS[root, name]


def toplevel(cwd: Path | str) -> Path:
    return locate(cwd).toplevel


def ident(cwd: Path) -> str:
    """The committer identity, `Name <email>`, as git would record it."""
    out = run(["var", "GIT_COMMITTER_IDENT"], cwd=cwd).decode("utf-8", "replace").strip()
    # `Name <email> 1700000000 +0000`: drop the timestamp and zone.
    return out.rsplit(" ", 2)[0]


def merge_heads(location: Location) -> list[str]:
    """The other parents of a merge in progress (MERGE_HEAD), if any; inside git's own
    `pre-merge-commit` hook, which runs before git writes MERGE_HEAD, the commits that
    `git merge` or `git pull` is merging (`_merging_in_hook`)."""
    path = location.merge_head
    if not path.is_file():
        return _merging_in_hook(location)
    return [line.strip() for line in path.read_text("ascii").splitlines() if line.strip()]


# The commit names a merge was given, as `git merge` tells its hooks (after its options):
# `merge NAME...` (`git merge` alone names the upstream it resolved); `git pull` sets its
# own (`pull [OPTIONS] [REMOTE [REFSPEC...]]`) and merges what it fetched (FETCH_HEAD).
_REFLOG_ACTION = "GIT_REFLOG_ACTION"
_MAX_MERGED = 16  # an octopus larger than this is judged as an ordinary commit


def _merging_in_hook(location: Location) -> list[str]:
    """The commits being merged, while git's pre-merge-commit hook runs: git has not yet
    written MERGE_HEAD, but names what it merges in GIT_REFLOG_ACTION. Only commits that
    are not already in HEAD's history count (a rebase or an ordinary commit under a
    leftover variable names none). Anything unclear answers no merge: the commit is then
    judged as an ordinary one, every change its own, which is stricter, never laxer."""
    action = os.environ.get(_REFLOG_ACTION, "")
    head = location.head
    words = action.split(" ")
    if head is None or len(words) > _MAX_MERGED + 8:
        return []
    if words[0] == "merge" and "FETCH_HEAD" not in words[1:]:
        names = [w for w in words[1:] if w]
        found = [_commit(location.toplevel, name) for name in names]
        if not names or None in found:
            return []
        oids = [oid for oid in found if oid is not None]
    elif words[0] in ("merge", "pull"):
        oids = _fetched_for_merge(location)
    else:
        return []
    merging = [oid for oid in dict.fromkeys(oids) if oid != head and not _contains(location.toplevel, head, oid)]
    return merging if 0 < len(merging) <= _MAX_MERGED else []


def _commit(root: Path, name: str) -> str | None:
    code, out, _ = run_raw(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{name}^{{commit}}"], cwd=root)
    oid = out.decode("ascii", "replace").strip()
    return oid if code == 0 and OID.fullmatch(oid) else None


def _fetched_for_merge(location: Location) -> list[str]:
    """FETCH_HEAD's heads to merge (`OID<TAB><TAB>what`; `not-for-merge` ones are not)."""
    path = git_path(location.toplevel, "FETCH_HEAD")
    try:
        lines = path.read_bytes()[: 1 << 20].decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    oids = []
    for line in lines:
        fields = line.split("\t")
        if len(fields) >= 2 and fields[1] == "" and OID.fullmatch(fields[0]):
            commit = _commit(location.toplevel, fields[0])
            if commit is None:
                return []
            oids.append(commit)
    return oids


def _contains(root: Path, head: str, oid: str) -> bool:
    """Whether `oid` is already in `head`'s history (no merge of it is made); an error
    answers yes (no merge)."""
    code, _, _ = run_raw(["merge-base", "--is-ancestor", oid, head], cwd=root)
    return code != 1
