"""Objects read by id or name: blobs in one `cat-file --batch`, commits and trees resolved."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from harness_gate.errors import GitError
from harness_gate.git.process import run, run_status, start, streamed
from harness_gate.git.repo import OID
from harness_gate.git.trees import tree_entries


def resolve(root: Path, rev: str) -> str | None:
    """The commit `rev` names, or None when it names none (any other failure raises)."""
    out = run_status(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd=root)
    return out.decode().strip() if out is not None else None


def peeled_commit(root: Path, oid: str) -> str | None:
    """The commit object `oid` is or (as a tag, through tags) points at; None when it
    points at a tree or a blob. A missing object is an error."""
    peeled = run(["rev-parse", "--verify", "--end-of-options", f"{oid}^{{}}"], cwd=root).decode().strip()
    kind = run(["cat-file", "-t", peeled], cwd=root).decode().strip()
    return peeled if kind == "commit" else None


def head(root: Path) -> str | None:
    """The commit HEAD points at, or None on an unborn branch."""
    return resolve(root, "HEAD")


def commit_exists(root: Path, oid: str) -> bool:
    return resolve(root, oid) is not None


def commit_tree(root: Path, rev: str) -> str:
    return run(["rev-parse", "--verify", "--end-of-options", f"{rev}^{{tree}}"], cwd=root).decode().strip()


def empty_tree(root: Path) -> str:
    return run(["hash-object", "-t", "tree", "--stdin"], cwd=root, stdin=b"").decode().strip()


def has_path(root: Path, rev: str, path: str) -> bool:
    """Whether commit `rev` holds `path` (a file or a directory)."""
    return run_status(["rev-parse", "--verify", "--quiet", f"{rev}:{path}"], cwd=root) is not None


def has_tree(root: Path, oid: str) -> bool:
    """Whether this clone holds tree `oid` (a tree written in another clone may be absent)."""
    if not OID.fullmatch(oid):
        return False
    out = run(["cat-file", "--batch-check"], cwd=root, stdin=f"{oid}\n".encode())
    return out.split(b" ")[1:2] == [b"tree"]


def read_blobs(root: Path, oids: Sequence[str]) -> dict[str, bytes]:
    """Contents of many blobs in one `git cat-file --batch` process."""
    # The capped reader with no cap: one parser of blob answers by id, and it checks
    # that each answer is for the id asked.
    contents, _ = read_blobs_capped(root, dict.fromkeys(oids, sys.maxsize))
    return contents


def _batch_answers(out: bytes, asked: Sequence[str]) -> Iterator[tuple[str, str, bytes, bytes | None]]:
    """`git cat-file --batch` output for names (`rev:path`), answer by answer: (what was asked, the object's id,
    its type, its bytes), or (asked, "", b"missing", None) for a name that names nothing.
    Every answer is framed exactly (its size, then a newline): a short one is an error."""
    pos = 0
    for name in asked:
        nl = out.find(b"\n", pos)
        if nl < 0:
            raise GitError(f"truncated output reading {name}")
        header = out[pos:nl].split(b" ")
        if header[-1] in (b"missing", b"ambiguous"):
            pos = nl + 1
            yield name, "", b"missing", None
            continue
        if len(header) != 3 or not header[2].isdigit():
            raise GitError(f"unexpected `git cat-file` header for {name}")
        end = nl + 1 + int(header[2])
        if len(out) < end + 1 or out[end : end + 1] != b"\n":
            raise GitError(f"truncated output reading {name}")
        pos = end + 1
        yield name, header[0].decode("ascii"), header[1], out[nl + 1 : end]


def _paths_request(rev: str, paths: Sequence[str]) -> bytes:
    if any("\n" in p for p in paths):
        raise GitError("a path read by name holds a newline")
    return "".join(f"{rev}:{p}\n" for p in paths).encode("utf-8", "surrogateescape")


def read_paths(root: Path, rev: str, paths: Sequence[str]) -> dict[str, tuple[str, bytes]]:
    """The blobs at `paths` in commit `rev`, asked by name in one `git cat-file --batch`
    (no listing first): path -> (object id, bytes). Absent paths and trees are left out;
    the caller checks modes and ids against a listing."""
    out = run(["cat-file", "--batch"], cwd=root, stdin=_paths_request(rev, paths))
    found: dict[str, tuple[str, bytes]] = {}
    for path, oid, kind, data in _batch_answers(out, paths):
        if kind == b"blob" and data is not None:
            found[path] = (oid, data)
    return found


def prefetch_paths(root: Path, rev: str, paths: Sequence[str]) -> None:
    """Start `read_paths(root, rev, paths)` now, to be read when asked for."""
    start(["cat-file", "--batch"], cwd=root, stdin=_paths_request(rev, paths))


def read_blobs_capped(root: Path, caps: Mapping[str, int]) -> tuple[dict[str, bytes], dict[str, int]]:
    """The size of each blob in `caps`, and the contents of those within their cap, in
    one `git cat-file --batch` process. A blob over its cap streams past in chunks and is
    dropped: a huge one costs time, never memory, and needs no `--batch-check` first."""
    if not caps:
        return {}, {}
    unique = list(caps)
    contents: dict[str, bytes] = {}
    sizes: dict[str, int] = {}
    with streamed(["cat-file", "--batch"], cwd=root, stdin=("\n".join(unique) + "\n").encode()) as out:
        for oid in unique:
            header = out.readline().rstrip(b"\n").split(b" ")
            if len(header) != 3 or header[0] != oid.encode() or header[1] != b"blob" or not header[2].isdigit():
                raise GitError(f"object {oid} is not a readable blob")
            size = sizes[oid] = int(header[2])
            if size <= caps[oid]:
                contents[oid] = out.read(size)
                got = len(contents[oid])
            else:
                got = 0
                while got < size and (chunk := out.read(min(1 << 20, size - got))):
                    got += len(chunk)
            if got != size or out.read(1) != b"\n":
                raise GitError(f"truncated output reading object {oid}")
    return contents, sizes


def regular_file(root: Path, rev: str, rel: str) -> bytes | None:
    """The bytes of the regular file at `rel` in commit `rev`, or None: absent, a folder,
    a submodule, or a symbolic link (never followed)."""
    blobs = [b for b in tree_entries(root, rev, rel) if b.path == rel]
    if not blobs or not blobs[0].mode.startswith("100"):
        return None
    return read_blobs(root, [blobs[0].oid])[blobs[0].oid]
