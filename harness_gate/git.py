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


def toplevel(cwd: Path | str) -> Path:
    try:
        out = run(["rev-parse", "--show-toplevel"], cwd=cwd)
    except GitError:
        raise HarnessGateError(
            "HG901", f"{Path(cwd).resolve()} is not inside a git work tree", "Run `git init` or cd into a repository."
        ) from None
    return Path(os.fsdecode(out.rstrip(b"\n")))


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


def index_entries(root: Path, prefix: str) -> list[Blob]:
    """Entries of the index (honouring GIT_INDEX_FILE) below `prefix`."""
    raw = run(["ls-files", "--stage", "-z", "--", f":(literal){prefix}"], cwd=root)
    return _parse_entries(raw, staged=True)


def tree_entries(root: Path, rev: str, prefix: str) -> list[Blob]:
    raw = run(["ls-tree", "-r", "-z", "--full-tree", rev, "--", f":(literal){prefix}"], cwd=root)
    return _parse_entries(raw, staged=False)


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


def resolve(root: Path, rev: str) -> str | None:
    try:
        return (
            run(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd=root)
            .decode()
            .strip()
        )
    except GitError:
        return None


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
