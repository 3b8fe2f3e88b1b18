"""Every git question harness-gate asks goes through this module.

git runs as a subprocess on hardened plumbing: replace refs off, optional
locks off (the index lock is never taken), NUL-separated output, and any
non-zero exit is an error rather than an empty answer. GitPython is not used:
its import alone costs ~90 ms on the hook's start-up path (docs/design.md).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_gate.errors import GitError, HarnessGateError

# Settings that would make git answer differently from the plain object model.
_HARDENING = (
    "--no-replace-objects",
    "-c",
    "core.quotePath=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "diff.external=",
)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    env.pop("GIT_EXTERNAL_DIFF", None)
    return env


def run(args: Sequence[str], *, cwd: Path | str, stdin: bytes | None = None) -> bytes:
    """Run `git ARGS` and return stdout; raise GitError on any failure."""
    argv = ["git", *_HARDENING, *args]
    try:
        proc = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, env=_env(), check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}", "Install git and make sure it is on PATH.") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {proc.returncode}"
        raise GitError(f"`git {' '.join(args[:3])}` failed: {detail}")
    return proc.stdout


@dataclass(frozen=True)
class Location:
    toplevel: Path
    cache_dir: Path  # under the git directory: never tracked, never in the work tree
    merge_head: Path


def locate(cwd: Path | str) -> Location:
    """The work tree's top level and harness-gate's paths in the git directory, at once."""
    try:
        out = run(["rev-parse", "--show-toplevel", "--git-path", "harness-gate", "--git-path", "MERGE_HEAD"], cwd=cwd)
    except GitError:
        raise HarnessGateError(
            "HG901", f"{Path(cwd).resolve()} is not inside a git work tree", "Run `git init` or cd into a repository."
        ) from None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 3:
        raise GitError("unexpected `git rev-parse` output")
    top = Path(lines[0])

    def absolute(p: str) -> Path:
        path = Path(p)
        return path if path.is_absolute() else Path(cwd) / path

    return Location(top, absolute(lines[1]) / "cache", absolute(lines[2]))


def toplevel(cwd: Path | str) -> Path:
    return locate(cwd).toplevel


def ident(cwd: Path) -> str:
    """The committer identity, `Name <email>`, as git would record it."""
    out = run(["var", "GIT_COMMITTER_IDENT"], cwd=cwd).decode("utf-8", "replace").strip()
    # `Name <email> 1700000000 +0000`: drop the timestamp and zone.
    return out.rsplit(" ", 2)[0]


@dataclass(frozen=True)
class Blob:
    path: str  # repository-relative, decoded with surrogateescape
    mode: str
    oid: str


def _parse_entries(raw: bytes, *, staged: bool) -> list[Blob]:
    out = []
    for rec in raw.split(b"\0"):
        if not rec:
            continue
        meta, _, name = rec.partition(b"\t")
        fields = meta.split(b" ")
        if staged:  # `<mode> <oid> <stage>`
            mode, oid = fields[0], fields[1]
        else:  # ls-tree: `<mode> <type> <oid>`
            mode, oid = fields[0], fields[2]
        out.append(Blob(os.fsdecode(name), mode.decode(), oid.decode()))
    return out


def index_entries(root: Path, *prefixes: str) -> list[Blob]:
    """Entries of the index (honouring GIT_INDEX_FILE) below the given prefixes."""
    raw = run(["ls-files", "--stage", "-z", "--", *(f":(literal){p}" for p in prefixes)], cwd=root)
    return _parse_entries(raw, staged=True)


def tree_entries(root: Path, rev: str, *prefixes: str) -> list[Blob]:
    raw = run(["ls-tree", "-r", "-z", "--full-tree", rev, "--", *(f":(literal){p}" for p in prefixes)], cwd=root)
    return _parse_entries(raw, staged=False)


def has_path(root: Path, rev: str, path: str) -> bool:
    """Whether commit `rev` holds `path` (a file or a directory)."""
    return run_status(["rev-parse", "--verify", "--quiet", f"{rev}:{path}"], cwd=root) is not None


def read_blobs(root: Path, oids: Sequence[str]) -> dict[str, bytes]:
    """Contents of many blobs in one `git cat-file --batch` process."""
    if not oids:
        return {}
    unique = list(dict.fromkeys(oids))
    out = run(["cat-file", "--batch"], cwd=root, stdin=("\n".join(unique) + "\n").encode())
    blobs: dict[str, bytes] = {}
    pos = 0
    for oid in unique:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split(b" ")
        if len(header) != 3 or header[1] != b"blob":
            raise GitError(f"object {oid} is not a readable blob")
        size = int(header[2])
        start = nl + 1
        blobs[oid] = out[start : start + size]
        if len(blobs[oid]) != size:
            raise GitError(f"truncated output reading object {oid}")
        pos = start + size + 1
    return blobs


def blob_sizes(root: Path, oids: Sequence[str]) -> dict[str, int]:
    """Sizes of many objects in one `git cat-file --batch-check`, before reading any."""
    if not oids:
        return {}
    unique = list(dict.fromkeys(oids))
    out = run(["cat-file", "--batch-check"], cwd=root, stdin=("\n".join(unique) + "\n").encode()).decode()
    sizes: dict[str, int] = {}
    for oid, line in zip(unique, out.splitlines(), strict=True):
        parts = line.split()
        if len(parts) != 3 or parts[0] != oid or parts[1] != "blob":
            raise GitError(f"object {oid} is not a readable blob")
        sizes[oid] = int(parts[2])
    return sizes


def resolve(root: Path, rev: str) -> str | None:
    """The commit `rev` names, or None when it names none (any other failure raises)."""
    out = run_status(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd=root)
    return out.decode().strip() if out is not None else None


def status_paths(root: Path, prefix: str) -> list[str]:
    """Paths under `prefix` whose work-tree state differs from the index (or untracked)."""
    raw = run(
        ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", "--", f":(literal){prefix}"],
        cwd=root,
    )
    out = []
    for rec in raw.split(b"\0"):
        if rec[:2] == b"??" or (len(rec) > 3 and rec[1:2] != b" "):
            out.append(os.fsdecode(rec[3:]))
    return out


# -- change sets -----------------------------------------------------------------------

# Every diff harness-gate reads: raw, NUL-separated, both sides of a rename, submodules
# and their pointers, no external diff drivers or text conversion, full object ids.
DIFF_FLAGS = (
    "-r", "--raw", "-z", "--no-renames", "--ignore-submodules=none", "--no-ext-diff", "--no-textconv",
    "--no-abbrev",
)  # fmt: skip

ZERO_OIDS = frozenset({"0" * 40, "0" * 64})


@dataclass(frozen=True)
class Change:
    """One changed path. For a merge's combined diff there is one old side per parent."""

    path: bytes
    old_modes: tuple[str, ...]
    new_mode: str
    old_oids: tuple[str, ...]
    new_oid: str
    status: str  # A, D, M, T (one letter per parent for merges)

    @property
    def display(self) -> str:
        return self.path.decode("utf-8", "backslashreplace")

    @property
    def deleted(self) -> bool:
        return self.new_mode == "000000"

    @property
    def added(self) -> bool:
        return all(m == "000000" for m in self.old_modes)


def _parse_meta(meta: bytes, path: bytes) -> Change:
    text = meta.decode("ascii")
    colons = len(text) - len(text.lstrip(":"))
    fields = text[colons:].split(" ")
    n = colons + 1  # modes: one per parent, then the result
    if len(fields) != 2 * n + 1:
        raise GitError(f"unexpected raw diff line {text!r}")
    modes, oids, status = fields[:n], fields[n : 2 * n], fields[2 * n]
    return Change(path, tuple(modes[:-1]), modes[-1], tuple(oids[:-1]), oids[-1], status)


def parse_raw(out: bytes) -> list[Change]:
    """Parse `--raw -z` output of diff-index / diff-tree without commit headers."""
    tokens = out.split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    if len(tokens) % 2:
        raise GitError("truncated raw diff output")
    return [_parse_meta(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]


def empty_tree(root: Path) -> str:
    return run(["hash-object", "-t", "tree", "--stdin"], cwd=root, stdin=b"").decode().strip()


def head(root: Path) -> str | None:
    """The commit HEAD points at, or None on an unborn branch."""
    return resolve(root, "HEAD")


def staged_changes(root: Path, base: str) -> list[Change]:
    """The index (GIT_INDEX_FILE honoured) against `base`: what the commit will record."""
    return parse_raw(run(["diff-index", "--cached", *DIFF_FLAGS, base, "--"], cwd=root))


def tree_changes(root: Path, old: str, new: str) -> list[Change]:
    return parse_raw(run(["diff-tree", *DIFF_FLAGS, old, new, "--"], cwd=root))


@dataclass(frozen=True)
class Commit:
    oid: str
    parents: tuple[str, ...]
    changes: tuple[Change, ...]


def commits(root: Path, include: str, exclude: Sequence[str], *, not_remote: str | None = None) -> list[Commit]:
    """Commits reachable from `include` but not from `exclude` (nor from the branches of
    remote `not_remote`), oldest first, each with its own changes: against its parent,
    against the empty tree for a root commit, and for a merge the combined diff (paths
    that differ from every parent)."""
    args = ["rev-list", "--reverse", "--topo-order", "--parents", include, *(f"^{e}" for e in exclude)]
    if not_remote is not None:
        args += ["--not", f"--remotes={not_remote}"]
    listing = run([*args, "--"], cwd=root).decode()
    order: list[tuple[str, tuple[str, ...]]] = []
    for line in listing.splitlines():
        oid, *parents = line.split()
        order.append((oid, tuple(parents)))
    if not order:
        return []
    out = run(
        ["diff-tree", "--stdin", "--always", "--root", "-c", *DIFF_FLAGS],
        cwd=root,
        stdin=("\n".join(oid for oid, _ in order) + "\n").encode(),
    )
    tokens = out.split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    found: dict[str, list[Change]] = {}
    current: list[Change] | None = None
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.startswith(b":"):
            if current is None or i + 1 >= len(tokens):
                raise GitError("truncated diff-tree output")
            current.append(_parse_meta(tok, tokens[i + 1]))
            i += 2
        else:
            current = found.setdefault(tok.decode("ascii"), [])
            i += 1
    missing = [oid for oid, _ in order if oid not in found]
    if missing:
        raise GitError(f"diff-tree gave no answer for commit {missing[0]}")
    return [Commit(oid, parents, tuple(found[oid])) for oid, parents in order]


def merge_base(root: Path, a: str, b: str) -> str | None:
    proc_out = run_status(["merge-base", a, b], cwd=root)
    if proc_out is None:
        return None
    return proc_out.decode().strip() or None


def run_status(args: Sequence[str], *, cwd: Path) -> bytes | None:
    """Like run(), but exit code 1 (git's "no such thing") is None instead of an error."""
    argv = ["git", *_HARDENING, *args]
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, env=_env(), check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from None
    if proc.returncode == 1 and not proc.stderr.strip():
        return None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"`git {' '.join(args[:3])}` failed: {err[-1] if err else proc.returncode}")
    return proc.stdout


def is_shallow(root: Path) -> bool:
    return run(["rev-parse", "--is-shallow-repository"], cwd=root).strip() == b"true"


def merge_heads(location: Location) -> list[str]:
    """The other parents of a merge in progress (MERGE_HEAD), if any."""
    path = location.merge_head
    if not path.is_file():
        return []
    return [line.strip() for line in path.read_text("ascii").splitlines() if line.strip()]


def commit_exists(root: Path, oid: str) -> bool:
    return resolve(root, oid) is not None
