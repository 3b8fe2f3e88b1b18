"""Every git question harness-gate asks goes through this module.

git runs as a subprocess on hardened plumbing: replace refs and grafts off, optional
locks off (the index lock is never taken), NUL-separated output, and any
non-zero exit is an error rather than an empty answer. GitPython is not used:
its import alone costs ~90 ms on the hook's start-up path (docs/design.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, NamedTuple

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
    # Side files that answer for the commit objects: a crafted commit-graph gives commits
    # other parents than they have (as grafts would), so a range skips a commit; a
    # multi-pack index names where objects are. Git then reads the objects themselves.
    "-c",
    "core.commitGraph=false",
    "-c",
    "core.multiPackIndex=false",
)


# Variables that change what plumbing answers: pathspec magic (`:(literal)` ignored or
# globbing turned on), extra configuration, an external diff driver.
_UNTRUSTED_ENV = (
    "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS",
    "GIT_CONFIG",  # points `git config` at another file than the repository's own
)  # fmt: skip


NO_GRAFTS = str(Path(os.devnull) / "harness-gate-no-grafts")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    for name in _UNTRUSTED_ENV:
        env.pop(name, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    # `.git/info/grafts` rewrites parents like a replace ref, but `--no-replace-objects`
    # does not turn it off: a graft making the base a child of the tip empties a range.
    # A graft file that cannot exist (ENOTDIR: git reads it silently as none) disables it.
    env["GIT_GRAFT_FILE"] = NO_GRAFTS
    env["LC_ALL"] = "C"
    return env


class GitNotRunnable(GitError):
    """git itself could not be started (not installed, not on PATH)."""

    def __init__(self, exc: OSError) -> None:
        super().__init__(f"cannot run git: {exc}", "Install git and make sure it is on PATH.")


def run(
    args: Sequence[str], *, cwd: Path | str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> bytes:
    """Run `git ARGS` and return stdout; raise GitError on any failure."""
    if _STARTED and env is None:
        started = _STARTED.pop(_started_key(args, cwd, stdin), None)
        if started is not None:
            return started.result()
    argv = ["git", *_HARDENING, *args]
    try:
        proc = subprocess.run(
            argv, cwd=cwd, input=stdin, capture_output=True, env={**_env(), **(env or {})}, check=False
        )
    except OSError as exc:
        raise GitNotRunnable(exc) from None
    _check_exit(args, proc.returncode, proc.stderr)
    return proc.stdout


def _check_exit(args: Sequence[str], code: int, stderr: bytes) -> None:
    if code != 0:
        err = stderr.decode("utf-8", "replace").strip().splitlines()
        detail = err[-1] if err else f"exit code {code}"
        raise GitError(f"`git {' '.join(args[:3])}` failed: {detail}")


class _Started:
    """A git command started ahead of need, its output going to a temporary file (a pipe
    would stall git once full, with nobody reading it yet)."""

    def __init__(self, args: Sequence[str], cwd: Path, stdin: bytes | None) -> None:
        self.args = list(args)
        self.out = _scratch_file()
        try:
            self.proc = subprocess.Popen(
                ["git", *_HARDENING, *args], cwd=cwd, env=_env(),
                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE, stdout=self.out,
                stderr=subprocess.PIPE,  # a few lines at most: never fills its pipe
            )  # fmt: skip
        except OSError as exc:
            self.out.close()
            raise GitNotRunnable(exc) from None
        if stdin is not None and self.proc.stdin is not None:
            # git's answer goes to a file, never blocks: it reads all of its input.
            with contextlib.suppress(OSError), self.proc.stdin as pipe:
                pipe.write(stdin)
            self.proc.stdin = None  # closed: communicate() has nothing to send

    def result(self) -> bytes:
        try:
            _, stderr = self.proc.communicate()
            _check_exit(self.args, self.proc.returncode, stderr)
            self.out.seek(0)
            return self.out.read()
        finally:
            self.out.close()

    def discard(self) -> None:
        try:
            with contextlib.suppress(OSError):
                self.proc.kill()
            self.proc.communicate()
        finally:
            self.out.close()


def _scratch_file() -> IO[bytes]:
    """An anonymous file for a started command's output, closed by its reader."""
    if hasattr(os, "memfd_create"):  # Linux: in memory, and no tempfile import (~3 ms)
        return open(os.memfd_create("harness-gate"), "w+b")  # noqa: PTH123
    import tempfile  # noqa: PLC0415

    return tempfile.TemporaryFile()


# Commands started ahead of need, by (directory, arguments, GIT_INDEX_FILE): `run` with
# the same arguments takes the started command's answer instead of starting another.
_StartedKey = tuple[str, tuple[str, ...], bytes | None, str | None]
_STARTED: dict[_StartedKey, _Started] = {}


def _started_key(args: Sequence[str], cwd: Path | str, stdin: bytes | None) -> _StartedKey:
    return (str(cwd), tuple(args), stdin, os.environ.get("GIT_INDEX_FILE"))


def start(args: Sequence[str], *, cwd: Path, stdin: bytes | None = None) -> None:
    """Start `git ARGS` now; `run(ARGS)` with the same input later reads its answer
    (exit code and all) instead of starting another."""
    key = _started_key(args, cwd, stdin)
    if key not in _STARTED:
        _STARTED[key] = _Started(args, cwd, stdin)


def discard_started() -> None:
    """Stop and forget whatever was started and never asked for (a check that ended early).
    Never raises: what a discarded command or checksum found was not asked for (an inactive
    repository's index is not judged), and the check's own error, if any, is the one shown."""
    while _STARTED:
        with contextlib.suppress(Exception):
            _STARTED.popitem()[1].discard()
    while _VERIFYING:
        _VERIFYING.popitem()[1].thread.join()


@dataclass(frozen=True)
class Location:
    toplevel: Path
    cache_dir: Path  # under the git directory: never tracked, never in the work tree
    merge_head: Path
    head: str | None  # the commit HEAD points at; None on an unborn branch


_LOCATE = (
    "--show-toplevel", "--git-path", "harness-gate", "--git-path", "MERGE_HEAD", "--git-path", "index",
    "--git-path", "shallow",
)  # fmt: skip


def locate(cwd: Path | str) -> Location:
    """The work tree's top level, harness-gate's paths in the git directory, the index
    and HEAD, in one process: the hook asks all of them on every commit."""
    argv = ["git", *_HARDENING, "rev-parse", *_LOCATE, "--verify", "--quiet", "--end-of-options", "HEAD^{commit}"]
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, env=_env(), check=False)
    except OSError as exc:
        raise GitNotRunnable(exc) from None
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    # Exit 1 with no message: everything but HEAD was answered, and HEAD names no commit.
    unborn = proc.returncode == 1 and not proc.stderr.strip()
    if proc.returncode != 0 and not unborn:
        raise HarnessGateError(
            "HG901", f"{Path(cwd).resolve()} is not inside a git work tree", "Run `git init` or cd into a repository."
        )
    if len(lines) < 6 or (not unborn and not _OID.fullmatch(lines[5])):
        raise GitError("unexpected `git rev-parse` output")
    top = Path(lines[0])

    def absolute(p: str) -> Path:
        path = Path(p)
        return path if path.is_absolute() else Path(cwd) / path

    if not os.environ.get("GIT_INDEX_FILE"):  # git-path answers with it when it is set
        _DEFAULT_INDEX[top] = absolute(lines[3])
    _SHALLOW_FILE[top] = absolute(lines[4])
    return Location(top, absolute(lines[1]) / "cache", absolute(lines[2]), None if unborn else lines[5])


_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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


def _terminated(out: bytes, what: str) -> bytes:
    """`-z` output ends with a NUL. Without it the last name was cut short (`src/x.pyc`
    read as `src/x.py`), even when git exited 0: an error, never a shorter path."""
    if out and not out.endswith(b"\0"):
        raise GitError(f"truncated {what} output (no final NUL)")
    return out


def _parse_entries(raw: bytes, *, staged: bool) -> list[Blob]:
    out = []
    for rec in _terminated(raw, "ls-files/ls-tree").split(b"\0"):
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


def _index_entries_args(prefixes: Sequence[str]) -> list[str]:
    return ["ls-files", "--stage", "-z", "--", *(f":(literal){p}" for p in prefixes)]


def index_entries(root: Path, *prefixes: str) -> list[Blob]:
    """Entries of the index (honouring GIT_INDEX_FILE) below the given prefixes."""
    verify_index(root)
    raw = run(_index_entries_args(prefixes), cwd=root)
    return _parse_entries(raw, staged=True)


def prefetch_tree_entries(root: Path, rev: str, *prefixes: str, recursive: bool = True) -> None:
    """Start `tree_entries(root, rev, *prefixes, recursive=...)`'s listing now."""
    start(_tree_entries_args(rev, prefixes, recursive), cwd=root)


def prefetch_index_entries(root: Path, *prefixes: str) -> None:
    """Start `index_entries(root, *prefixes)`'s listing now, to be read when asked for."""
    start(_index_entries_args(prefixes), cwd=root)


def _tree_entries_args(rev: str, prefixes: Sequence[str], recursive: bool) -> list[str]:
    pathspec = [f":(literal){p}" for p in prefixes]
    return ["ls-tree", *(["-r"] if recursive else []), "-z", "--full-tree", rev, "--", *pathspec]


def tree_entries(root: Path, rev: str, *prefixes: str, recursive: bool = True) -> list[Blob]:
    """Entries of commit `rev` below the given prefixes; with `recursive=False`, only the
    top-level entries named (a recursive listing walks every tree the pathspec may reach)."""
    raw = run(_tree_entries_args(rev, prefixes, recursive), cwd=root)
    return _parse_entries(raw, staged=False)


def has_path(root: Path, rev: str, path: str) -> bool:
    """Whether commit `rev` holds `path` (a file or a directory)."""
    return run_status(["rev-parse", "--verify", "--quiet", f"{rev}:{path}"], cwd=root) is not None


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
    request = ("\n".join(unique) + "\n").encode()
    errors = _scratch_file()  # git's message, read once it has exited: never a full pipe
    try:
        proc = subprocess.Popen(
            ["git", *_HARDENING, "cat-file", "--batch"],
            cwd=root, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
        )  # fmt: skip
    except OSError as exc:
        errors.close()
        raise GitNotRunnable(exc) from None
    if proc.stdin is None or proc.stdout is None:  # never: both are pipes (for the type checker)
        raise GitError("`git cat-file --batch` has no pipes")
    # Written from a thread: git answers while it reads, and a request larger than the
    # pipe would otherwise wait on an answer nobody reads yet.
    writer = threading.Thread(target=_feed, args=(proc.stdin, request), daemon=True)
    writer.start()
    contents: dict[str, bytes] = {}
    sizes: dict[str, int] = {}
    problem: GitError | None = None
    try:
        out = proc.stdout
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
    except GitError as exc:
        problem = exc
    finally:
        proc.stdout.close()
        code = proc.wait()
        writer.join()
        errors.seek(0)
        stderr = errors.read()
        errors.close()
    _check_exit(["cat-file", "--batch"], code, stderr)  # git's own reason says more
    if problem is not None:
        raise problem
    return contents, sizes


def _feed(pipe: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError), pipe:  # git stopped reading: its exit code tells why
        pipe.write(data)


def resolve(root: Path, rev: str) -> str | None:
    """The commit `rev` names, or None when it names none (any other failure raises)."""
    out = run_status(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"], cwd=root)
    return out.decode().strip() if out is not None else None


def status_records(root: Path, *prefixes: str) -> list[tuple[str, str]]:
    """`git status` of the paths under `prefixes`: (XY, path) for every path not as HEAD has
    it (XY as in --porcelain=v1: X the index against HEAD, Y the work tree against the index)."""
    specs = [f":(literal){prefix}" for prefix in prefixes]
    raw = run(
        ["status", "--porcelain=v1", "-z", "--no-renames", "--untracked-files=all", "--", *specs],
        cwd=root,
        env=_filters_off(root),  # status compares racily clean files through their filter
    )
    return [
        (rec[:2].decode("ascii", "replace"), os.fsdecode(rec[3:]))
        for rec in _terminated(raw, "status").split(b"\0")
        if len(rec) > 3
    ]


def status_paths(root: Path, prefix: str) -> list[str]:
    """Paths under `prefix` whose work-tree state differs from the index (or untracked)."""
    return [path for xy, path in status_records(root, prefix) if xy == "??" or xy[1] != " "]


# -- change sets -----------------------------------------------------------------------

# Every diff harness-gate reads: raw, NUL-separated, both sides of a rename, submodules
# and their pointers, no external diff drivers or text conversion, full object ids.
DIFF_FLAGS = (
    "-r", "--raw", "-z", "--no-renames", "--ignore-submodules=none", "--no-ext-diff", "--no-textconv",
    "--no-abbrev",
)  # fmt: skip

ZERO_OIDS = frozenset({"0" * 40, "0" * 64})
NO_MODE = "000000"  # the side of a change where the path does not exist


class Change(NamedTuple):
    """One changed path. For a merge's combined diff there is one old side per parent.

    A named tuple, not a dataclass: a large change set makes tens of thousands of them,
    and a tuple is built in a fraction of the time (docs/design.md)."""

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
        return self.new_mode == NO_MODE

    @property
    def added(self) -> bool:
        return all(m == NO_MODE for m in self.old_modes)


def _parse_meta(meta: bytes, path: bytes) -> Change:
    if meta[1:2] != b":":  # one parent: the common case, parsed without the general loop
        fields = meta[1:].decode("ascii").split(" ")
        if len(fields) != 5:
            raise GitError(f"unexpected raw diff line {meta!r}")
        return Change(path, (fields[0],), fields[1], (fields[2],), fields[3], fields[4])
    text = meta.decode("ascii")
    colons = len(text) - len(text.lstrip(":"))
    fields = text[colons:].split(" ")
    n = colons + 1  # modes: one per parent, then the result
    if len(fields) != 2 * n + 1:
        raise GitError(f"unexpected raw diff line {text!r}")
    modes, oids, status = fields[:n], fields[n : 2 * n], fields[2 * n]
    return Change(path, tuple(modes[:-1]), modes[-1], tuple(oids[:-1]), oids[-1], status)


# What a one-parent raw diff's metadata may hold: modes, object ids, status letters.
_RAW_CHARS = b"0123456789abcdef: ABCDMTUX"


def parse_raw(out: bytes) -> list[Change]:
    """Parse `--raw -z` output of diff-index / diff-tree without commit headers."""
    tokens = _terminated(out, "raw diff").split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    if len(tokens) % 2:
        raise GitError("truncated raw diff output")
    one_parent = _one_parent_fields(tokens[0::2])
    if one_parent is not None:
        # The common case in bulk: no loop in Python over 10k records.
        fields = one_parent
        olds = [(m[1:],) for m in fields[0::5]]
        oids = [(o,) for o in fields[2::5]]
        rows = zip(tokens[1::2], olds, fields[1::5], oids, fields[3::5], fields[4::5], strict=True)
        return list(map(Change._make, rows))
    return [_parse_meta(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]


def _one_parent_fields(metas: list[bytes]) -> list[str] | None:
    """The fields of one-parent records (`:old new oid oid S`), validated all at once
    by their characters, counts and lengths; None for anything else (a merge's
    combined diff, or output to be parsed and refused record by record)."""
    # Each record alone has the one length of its five fields (40- or 64-hex object ids).
    if not metas or not set(map(len, metas)) <= {98, 146}:
        return None
    joined = b" ".join(metas)
    if joined.translate(None, _RAW_CHARS) or joined.count(b":") != len(metas):
        return None
    # Every colon starts a field: the first field of each record, by the lengths below.
    if not joined.startswith(b":") or joined.count(b" :") != len(metas) - 1:
        return None
    fields = joined.decode("ascii").split(" ")
    if len(fields) != 5 * len(metas):
        return None
    lengths = [set(map(len, fields[i::5])) for i in range(5)]
    ok = lengths[0] == {7} and lengths[1] == {6} and lengths[2] | lengths[3] <= {40, 64} and lengths[4] == {1}
    return fields if ok else None


def empty_tree(root: Path) -> str:
    return run(["hash-object", "-t", "tree", "--stdin"], cwd=root, stdin=b"").decode().strip()


def head(root: Path) -> str | None:
    """The commit HEAD points at, or None on an unborn branch."""
    return resolve(root, "HEAD")


def _staged_args(base: str) -> list[str]:
    return ["diff-index", "--cached", *DIFF_FLAGS, base, "--"]


def staged_changes(root: Path, base: str) -> list[Change]:
    """The index (GIT_INDEX_FILE honoured) against `base`: what the commit will record."""
    verify_index(root)
    return parse_raw(run(_staged_args(base), cwd=root))


def prefetch_staged(root: Path, base: str) -> None:
    """Start what `staged_changes(root, base)` needs: the diff, and the index's checksum
    in a thread. The hook starts both before importing the rest of harness-gate, so on a
    large index they run on other cores meanwhile (docs/performance.md)."""
    start(_staged_args(base), cwd=root)
    path = index_file(root)
    if path not in _VERIFYING:
        _VERIFYING[path] = _Verification(path)


def tree_changes(root: Path, old: str, new: str) -> list[Change]:
    return parse_raw(run(["diff-tree", *DIFF_FLAGS, old, new, "--"], cwd=root))


@dataclass(frozen=True)
class Commit:
    oid: str
    parents: tuple[str, ...]
    changes: tuple[Change, ...]


def _rev_list_args(
    includes: Sequence[str], exclude: Sequence[str], not_refs: Sequence[str], limit: int | None = None
) -> list[str]:
    args = ["rev-list", "--reverse", "--topo-order", "--parents"]
    if limit is not None:
        args.append(f"--max-count={limit}")  # the newest ones: applied before --reverse
    args += [*includes, *(f"^{e}" for e in exclude)]
    if not_refs:
        args += ["--not", *not_refs]  # one `--not`: a second would turn the rest back on
    return [*args, "--"]


def commits(
    root: Path,
    include: str | Sequence[str],
    exclude: Sequence[str],
    *,
    not_remote: str | None = None,
    not_refs: Sequence[str] = (),
    paths: Sequence[str] = (),
    limit: int | None = None,
) -> list[Commit]:
    """Commits reachable from `include` but not from `exclude` (nor from the branches of
    remote `not_remote`, nor from the refs `not_refs` select: `--remotes=...` and the
    like), oldest first, each with its own changes: against its parent, against the empty
    tree for a root commit, and for a merge the combined diff (paths that differ from
    every parent). With `paths` (directory prefixes), only the changes below them are
    listed. With `limit`, only the newest that many (older parents count as outside)."""
    includes = [include] if isinstance(include, str) else list(include)
    if not_remote is not None:
        not_refs = [*not_refs, f"--remotes={not_remote}"]
    listing = run(_rev_list_args(includes, exclude, not_refs, limit), cwd=root).decode()
    order: list[tuple[str, tuple[str, ...]]] = []
    for line in listing.splitlines():
        oid, *parents = line.split()
        order.append((oid, tuple(parents)))
    if not order:
        return []
    for oid, parent_ids in order:
        if not parent_ids:
            _refuse_cut_history(root, oid)
    out = run(
        ["diff-tree", "--stdin", "--always", "--root", "-c", *DIFF_FLAGS, "--", *(f":(literal){p}" for p in paths)],
        cwd=root,
        stdin=("\n".join(oid for oid, _ in order) + "\n").encode(),
    )
    tokens = _terminated(out, "diff-tree").split(b"\0")
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


def _refuse_cut_history(root: Path, oid: str) -> None:
    """A commit that looks like a root but whose object names parents: a shallow clone
    cut its history. Judged as a root commit it would be compared with the empty tree,
    and whatever it deleted or rewrote (an approved plan, a log) would vanish."""
    raw = run(["cat-file", "commit", oid], cwd=root)
    header = raw.split(b"\n\n", 1)[0]
    if any(line.startswith(b"parent ") for line in header.split(b"\n")):
        raise HarnessGateError("HG905", f"the parents of commit {oid[:12]} are not in this shallow clone")


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
        raise GitNotRunnable(exc) from None
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


# -- trees and the fingerprint ---------------------------------------------------------


def index_file(root: Path) -> Path:
    """The index git uses now: GIT_INDEX_FILE (a hook's temporary index) or the default."""
    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        path = Path(named)
        return path if path.is_absolute() else root / path
    return _default_index(root)


# The index path of each work tree, as `locate` (or the fallback below) was told it.
_DEFAULT_INDEX: dict[Path, Path] = {}


def _default_index(root: Path) -> Path:
    if root not in _DEFAULT_INDEX:
        out = Path(os.fsdecode(run(["rev-parse", "--git-path", "index"], cwd=root).rstrip(b"\n")))
        _DEFAULT_INDEX[root] = out if out.is_absolute() else root / out
    return _DEFAULT_INDEX[root]


_VERIFIED: set[tuple[str, int, int, int]] = set()


class _Verification:
    """`_verify_index_file` in a thread: reading and hashing a large index releases the
    interpreter lock, so it runs while the main thread imports and parses."""

    def __init__(self, path: Path) -> None:
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, args=(path,), daemon=True)
        self.thread.start()

    def _work(self, path: Path) -> None:
        try:
            _verify_index_file(path)
        except BaseException as exc:
            self.error = exc

    def join(self) -> None:
        self.thread.join()
        if self.error is not None:
            raise self.error


_VERIFYING: dict[Path, _Verification] = {}


def verify_index(root: Path) -> None:
    """Refuse an index whose trailing checksum does not match its content.

    git does not check it when it reads the index (only `git fsck` does): a damaged
    byte in a name makes git report another path, and a truncated index is read past
    its end as entries with empty names. A missing index is an empty one; a zero
    trailer is `index.skipHash`. Checked once per index file state and process."""
    path = index_file(root)
    started = _VERIFYING.pop(path, None)
    if started is not None:
        started.join()
    _verify_index_file(path)  # answered from _VERIFIED when the thread saw this same file


def _verify_index_file(path: Path) -> None:
    try:
        st = path.stat()
        if (str(path), st.st_size, st.st_mtime_ns, st.st_ino) in _VERIFIED:
            return
        data = path.read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise GitError(f"cannot read the index {path}: {exc.strerror or exc}") from None
    view = memoryview(data)  # slices of a view are not copies: the index may be 10 MB
    if data[:4] != b"DIRC" or not any(
        len(data) >= 12 + size
        and (data[-size:] == bytes(size) or hashlib.new(algo, view[:-size]).digest() == data[-size:])
        for algo, size in (("sha1", 20), ("sha256", 32))
    ):
        raise GitError(
            f"the index {path} is corrupt: its checksum does not match its content",
            "Rebuild it from HEAD (`git read-tree HEAD`; the files on disk stay as they are), then stage again.",
        )
    _VERIFIED.add((str(path), st.st_size, st.st_mtime_ns, st.st_ino))


def commit_tree(root: Path, rev: str) -> str:
    return run(["rev-parse", "--verify", "--end-of-options", f"{rev}^{{tree}}"], cwd=root).decode().strip()


def _with_index_copy(root: Path, work: Callable[[dict[str, str]], str]) -> str:
    """Run `work` against a private copy of the index: the real one is never written."""
    source = index_file(root)
    import shutil  # noqa: PLC0415  (tempfile and shutil: ~3 ms to import, off the hook's path)
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="harness-gate-index-") as tmp:
        copy = Path(tmp) / "index"
        if source.exists():
            # copy2 keeps the index's mtime: git's racy-entry check compares file mtimes with
            # it, and a fresh mtime would make git trust a stale entry for a same-second edit.
            shutil.copy2(source, copy)
        return work({"GIT_INDEX_FILE": str(copy)})


def index_tree(root: Path) -> str:
    """The tree the index would commit (GIT_INDEX_FILE honoured)."""
    # Writing an index re-reads racily clean files through their filter: none runs here.
    no_filters = _filters_off(root)
    return _with_index_copy(root, lambda env: run(["write-tree"], cwd=root, env={**env, **no_filters}).decode().strip())


# Git LFS's own driver, exactly as `git lfs install` configures it: its clean step turns
# a large file into the pointer git commits, and a repository that uses LFS has no other
# way to commit it. Any other command under the name `lfs` is just another filter.
LFS_STANDARD = {"clean": "git-lfs clean -- %f", "process": "git-lfs filter-process"}


def _filters_off(root: Path) -> dict[str, str]:
    """Configuration (as GIT_CONFIG_COUNT/KEY/VALUE) that switches off every configured
    filter driver but Git LFS's standard one.

    A `filter.<name>.clean` (or `.process`) program rewrites what `git add` stages: with it
    the fingerprint would describe bytes the verified commands never saw, and computing
    the fingerprint would run whatever program the configuration names. An empty command
    means "no filter" to git, and `required=false` keeps a missing one from being an error.
    """
    out = run_status(["config", "-z", "--get-regexp", r"^filter\."], cwd=root)
    drivers: dict[str, dict[str, str]] = {}
    for rec in (out or b"").split(b"\0"):
        if not rec:
            continue
        key, _, value = rec.partition(b"\n")
        # `filter.<name>.<var>`: the name may hold dots; git lower-cases only the var.
        name, _, var = os.fsdecode(key)[len("filter.") :].rpartition(".")
        drivers.setdefault(name, {})[var] = os.fsdecode(value)
    env: dict[str, str] = {}
    count = 0
    for name, settings in sorted(drivers.items()):
        commands = {k: v for k, v in settings.items() if k in ("clean", "process")}
        if name == "lfs" and all(LFS_STANDARD[k] == v for k, v in commands.items()):
            continue
        for var, off in (("clean", ""), ("process", ""), ("required", "false")):
            env[f"GIT_CONFIG_KEY_{count}"] = f"filter.{name}.{var}"
            env[f"GIT_CONFIG_VALUE_{count}"] = off
            count += 1
    if count:
        env["GIT_CONFIG_COUNT"] = str(count)
    return env


def _worktree_spec(exclude: str | None, outputs: Sequence[str]) -> list[str]:
    spec = [":/"]
    if exclude:
        spec.append(f":(top,exclude,literal){exclude}")
    return [*spec, *(f":(top,exclude,glob){pattern}" for pattern in outputs)]


def worktree_tree(root: Path, exclude: str | None = None, outputs: Sequence[str] = ()) -> str:
    """The tree of the work tree: tracked files as they are on disk, plus untracked files
    that are not ignored, as `git add -A` would stage them with every filter driver off
    (Git LFS's standard one aside, see `_filters_off`). `exclude` (a directory) is left as
    the index has it: its files are not even read. Untracked files matching `outputs`
    (boundary-dialect patterns) are left out like ignored ones; tracked ones never are."""
    no_filters = _filters_off(root)

    def work(env: dict[str, str]) -> str:
        env = {**env, **no_filters}
        spec = _worktree_spec(exclude, outputs)
        run(["add", "-A", "--", *spec], cwd=root, env=env)
        if outputs:
            # What the excluding pathspecs held back from tracked files comes in: only
            # untracked outputs are left out.
            run(["add", "-u", "--", *_worktree_spec(exclude, ())], cwd=root, env=env)
        if no_filters:
            # A file staged through its filter keeps the filtered blob while its stat data
            # matches the index entry: re-read every tracked file, with the filters off.
            run(["add", "--renormalize", "--", *spec], cwd=root, env=env)
        return run(["write-tree"], cwd=root, env=env).decode().strip()

    return _with_index_copy(root, work)


def untracked_files(root: Path, exclude: str | None = None, outputs: Sequence[str] = ()) -> list[str]:
    """Untracked files that are not ignored (nor outputs): the work tree's fingerprint holds
    them, though nobody may mean to commit them."""
    out = run(["ls-files", "--others", "--exclude-standard", "-z", "--", *_worktree_spec(exclude, outputs)], cwd=root)
    return [os.fsdecode(p) for p in _terminated(out, "ls-files").split(b"\0") if p]


def tracked_files(root: Path, paths: Sequence[str]) -> set[str]:
    """Which of `paths` the index tracks."""
    if not paths:
        return set()
    out = run(["ls-files", "-z", "--", *(f":(top,literal){p}" for p in paths)], cwd=root)
    return {os.fsdecode(p) for p in _terminated(out, "ls-files").split(b"\0") if p}


def changes_between(root: Path, old_tree: str, new_tree: str) -> list[tuple[str, str]]:
    """(status letter, path) of every path that differs between two trees."""
    out = run(["diff-tree", "-r", "-z", "--name-status", "--no-renames", "--ignore-submodules=none", old_tree,
               new_tree, "--"], cwd=root)  # fmt: skip
    tokens = [t for t in _terminated(out, "diff-tree").split(b"\0") if t]
    return [(tokens[i].decode("ascii", "replace"), os.fsdecode(tokens[i + 1])) for i in range(0, len(tokens) - 1, 2)]


def hidden_edits(root: Path) -> list[str]:
    """Index entries git is told not to look at (assume-unchanged, skip-worktree)."""
    out = run(["ls-files", "-v", "-z"], cwd=root)
    hidden = []
    for rec in _terminated(out, "ls-files").split(b"\0"):
        if len(rec) > 2 and (rec[:1].islower() or rec[:1] == b"S"):
            hidden.append(os.fsdecode(rec[2:]))
    return hidden


def tree_without(root: Path, tree: str, parts: Sequence[str]) -> str:
    """`tree` with the entry at `parts` (a path split at `/`) removed, built with mktree."""
    if not parts:
        return tree
    listing = run(["ls-tree", "-z", "--full-tree", tree], cwd=root)
    entries = [e for e in _terminated(listing, "ls-tree").split(b"\0") if e]
    name = os.fsencode(parts[0])
    out = []
    for entry in entries:
        meta, _, entry_name = entry.partition(b"\t")
        if entry_name != name:
            out.append(entry)
            continue
        if len(parts) == 1:
            continue  # drop it
        mode, kind, oid = meta.split(b" ")
        if kind != b"tree":
            out.append(entry)
            continue
        inner = tree_without(root, oid.decode(), parts[1:])
        out.append(mode + b" tree " + inner.encode() + b"\t" + entry_name)
    return run(["mktree", "-z"], cwd=root, stdin=b"".join(e + b"\0" for e in out)).decode().strip()


def changed_paths(root: Path, old_tree: str, new_tree: str, limit: int) -> list[str]:
    """Up to `limit` paths that differ between two trees."""
    out = run(
        ["diff-tree", "-r", "-z", "--name-only", "--no-renames", "--ignore-submodules=none", old_tree, new_tree],
        cwd=root,
    )
    return [os.fsdecode(p) for p in _terminated(out, "diff-tree").split(b"\0") if p][:limit]


def symlinks(root: Path, rev: str | None) -> dict[bytes, str]:
    """Every symlink of a state (the index when rev is None): path -> blob id."""
    if rev is None:
        verify_index(root)
        raw = run(["ls-files", "--stage", "-z"], cwd=root)
        entries = _parse_entries(raw, staged=True)
    else:
        raw = run(["ls-tree", "-r", "-z", "--full-tree", rev], cwd=root)
        entries = _parse_entries(raw, staged=False)
    return {os.fsencode(e.path): e.oid for e in entries if e.mode == "120000"}


def merge_dropped(root: Path, parents: Sequence[str], result: str | None) -> list[Change]:
    """Changes a merge makes to what some parent changed: a parent's change that the
    result does not keep (`-s ours`, a conflict resolved by discarding one side).
    `result` is the merge commit, or None for the index being committed."""
    out = run_status(["merge-base", "--octopus", *parents], cwd=root)
    base = out.decode().strip() if out else empty_tree(root)
    dropped: dict[bytes, Change] = {}
    for parent in parents:
        theirs = run(
            ["diff-tree", "-r", "-z", "--name-only", "--no-renames", "--ignore-submodules=none", base, parent, "--"],
            cwd=root,
        )
        touched = {p for p in _terminated(theirs, "diff-tree").split(b"\0") if p}
        if not touched:
            continue
        if result is None:
            diff = parse_raw(run(["diff-index", "--cached", *DIFF_FLAGS, parent, "--"], cwd=root))
        else:
            diff = tree_changes(root, parent, result)
        for change in diff:
            if change.path in touched:
                dropped.setdefault(change.path, change)
    return list(dropped.values())


def remote_has_branches(root: Path, remote: str) -> bool:
    out = run(["for-each-ref", "--count=1", "--format=%(refname)", f"refs/remotes/{remote}/"], cwd=root)
    return bool(out.strip())


def dirty_submodules(root: Path) -> list[str]:
    """Submodules whose work tree holds changes their recorded commit does not."""
    out = run(
        ["status", "--porcelain=v2", "-z", "--ignore-submodules=none", "--untracked-files=all"],
        cwd=root,
        env=_filters_off(root),  # status compares racily clean files through their filter
    )
    dirty = []
    for rec in _terminated(out, "status").split(b"\0"):
        fields = rec.split(b" ")
        # `1 XY S<c><m><u> ...`: m = tracked changes inside, u = untracked files inside
        if len(fields) > 8 and fields[0] in (b"1", b"2") and fields[2][:1] == b"S" and fields[2][2:4] != b"..":
            dirty.append(os.fsdecode(b" ".join(fields[8:] if fields[0] == b"1" else fields[9:])))
    return dirty


def parents(root: Path, rev: str) -> list[str]:
    out = run(["rev-list", "--parents", "-n", "1", "--end-of-options", rev, "--"], cwd=root).decode().split()
    return out[1:]


# -- provenance: root commits, who added a line, signatures -----------------------------


def root_commits(root: Path, rev: str) -> frozenset[str]:
    """The root commits of `rev`'s history (more than one after merging unrelated histories)."""
    out = run(["rev-list", "--max-parents=0", "--end-of-options", rev, "--"], cwd=root)
    return frozenset(out.decode().split())


def is_root_commit(root: Path, oid: str) -> bool:
    """Whether `oid` is a commit of this object store that has no parents."""
    out = run(["cat-file", "--batch"], cwd=root, stdin=f"{oid}\n".encode())
    first, _, body = out.partition(b"\n")
    if first.split(b" ")[1:2] != [b"commit"]:
        return False  # "<oid> missing", or not a commit
    header = body.split(b"\n\n", 1)[0]
    return not any(line.startswith(b"parent ") for line in header.split(b"\n"))


@dataclass(frozen=True)
class Blame:
    commits: tuple[str, ...]  # the commit that added each line, in line order
    boundary: frozenset[str]  # commits blame stopped at (shallow history): attribution unknown


_BLAME_HEADER = re.compile(rb"([0-9a-f]{40}|[0-9a-f]{64}) [0-9]+ ([0-9]+)(?: [0-9]+)?\Z")


def blame(root: Path, rev: str, path: str) -> Blame:
    """Which commit added each line of `path` at `rev`. Repository settings that make
    blame attribute a line to another commit than the one that wrote it (ignored
    revisions) are overridden."""
    # `--ignore-revs-file ""` clears the files blame.ignoreRevsFile names (an empty
    # value in `-c` would not: that setting only ever adds files).
    out = run(["blame", "--porcelain", "--root", "--ignore-revs-file", "", rev, "--", path], cwd=root)
    by_line: dict[int, str] = {}
    boundary: set[str] = set()
    current = ""
    for line in out.split(b"\n"):
        m = _BLAME_HEADER.match(line)
        if m:
            current = m.group(1).decode()
            by_line[int(m.group(2))] = current
        elif line == b"boundary":
            boundary.add(current)
    if sorted(by_line) != list(range(1, len(by_line) + 1)):
        # A gap would shift every later line onto another commit.
        raise GitError(f"`git blame` of {path} did not attribute every line")
    return Blame(tuple(by_line[n] for n in sorted(by_line)), frozenset(boundary))


@dataclass(frozen=True)
class Signature:
    status: str  # git's %G?: G good, B bad, U unknown validity, X/Y expired, R revoked, E cannot check, N none
    key: str  # the key's fingerprint (%GF), "" when unsigned
    signer: str  # the principal the allowed-signers file names (%GS)


_NO_PROGRAM = "/nonexistent/harness-gate-refuses-this-signature-format"


def signatures(root: Path, oids: Sequence[str], allowed_signers: Path) -> dict[str, Signature]:
    """Verify the commits' signatures against `allowed_signers` (SSH format) only.

    The verifying program is ssh-keygen from PATH, never one named by repository
    configuration; GPG and X.509 programs point nowhere, so a signature in those
    formats can never count as good.
    """
    if not oids:
        return {}
    import shutil  # noqa: PLC0415

    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        raise HarnessGateError("HG906", "ssh-keygen is not on PATH; signed approvals cannot be verified")
    settings = {
        "gpg.ssh.allowedSignersFile": str(allowed_signers),
        "gpg.ssh.program": ssh_keygen,
        "gpg.ssh.revocationFile": "",
        "gpg.program": _NO_PROGRAM,
        "gpg.openpgp.program": _NO_PROGRAM,
        "gpg.x509.program": _NO_PROGRAM,
        "log.showSignature": "false",
    }
    args: list[str] = []
    for key, value in settings.items():
        args += ["-c", f"{key}={value}"]
    out = run(
        [*args, "log", "--no-walk=unsorted", "--stdin", "-z", "--format=%H%x01%G?%x01%GF%x01%GS"],
        cwd=root,
        stdin="".join(f"{oid}\n" for oid in oids).encode(),
    )
    found: dict[str, Signature] = {}
    for rec in out.split(b"\0"):
        fields = rec.strip(b"\n").split(b"\x01")
        if len(fields) == 4:
            oid, status, key, signer = (f.decode("utf-8", "replace") for f in fields)
            found[oid] = Signature(status, key, signer)
    missing = [o for o in oids if o not in found]
    if missing:
        raise GitError(f"`git log` gave no signature status for {missing[0]}")
    return found


def is_ancestor(root: Path, ancestor: str, descendant: str) -> bool:
    return run_status(["merge-base", "--is-ancestor", ancestor, descendant], cwd=root) is not None


# The shallow file of each work tree, as `locate` was told it (one git process fewer).
_SHALLOW_FILE: dict[Path, Path] = {}


def shallow_commits(root: Path) -> frozenset[str]:
    """The commits a shallow clone cut the history at: they look like roots, but are not."""
    path = _SHALLOW_FILE.get(root)
    if path is None:
        path = Path(os.fsdecode(run(["rev-parse", "--git-path", "shallow"], cwd=root).rstrip(b"\n")))
        path = path if path.is_absolute() else root / path
    try:
        return frozenset(path.read_bytes().decode("ascii").split())
    except FileNotFoundError:
        return frozenset()
    except (OSError, UnicodeDecodeError) as exc:
        raise GitError(f"cannot read the shallow file {path}: {exc}") from None


# -- branches, merges and the change a branch makes ---------------------------------------


def _run_code(args: Sequence[str], *, cwd: Path, codes: frozenset[int]) -> tuple[int, bytes]:
    """Run `git ARGS`; an exit code in `codes` is an answer, any other an error."""
    argv = ["git", *_HARDENING, *args]
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, env=_env(), check=False)
    except OSError as exc:
        raise GitNotRunnable(exc) from None
    if proc.returncode not in codes:
        _check_exit(args, proc.returncode or 1, proc.stderr)
    return proc.returncode, proc.stdout


def has_tree(root: Path, oid: str) -> bool:
    """Whether this clone holds tree `oid` (a tree written in another clone may be absent)."""
    if not _OID.fullmatch(oid):
        return False
    out = run(["cat-file", "--batch-check"], cwd=root, stdin=f"{oid}\n".encode())
    return out.split(b" ")[1:2] == [b"tree"]


# git older than 2.38 has no `merge-tree --write-tree`: usage error 129.
_NO_WRITE_TREE = 129


def merge_result(root: Path, first: str, second: str) -> str | None:
    """The tree git's own merge of two commits produces, conflicted files holding their
    markers; None when this git cannot say (older than 2.38)."""
    code, out = _run_code(
        ["merge-tree", "--write-tree", "-z", "--no-messages", "--allow-unrelated-histories", first, second],
        cwd=root,
        codes=frozenset({0, 1, _NO_WRITE_TREE}),
    )
    if code == _NO_WRITE_TREE:
        return None
    tree = out.split(b"\0", 1)[0].decode("ascii", "replace")
    if not _OID.fullmatch(tree):
        raise GitError("unexpected `git merge-tree` output")
    return tree


def tree_patch_lines(root: Path, old_tree: str, new_tree: str) -> Iterator[bytes]:
    """The lines of the patch from one tree to another, with three lines of context: every
    changed line, mode and binary content, in a form no user setting reshapes (order,
    prefixes, algorithm, context, colour, external drivers). Read as git writes it: a branch
    that adds a large binary file is never held in memory. git's failure is raised once its
    output is read."""
    argv = ["git", *_HARDENING, *_tree_patch_args(old_tree, new_tree)]
    errors = _scratch_file()
    try:
        proc = subprocess.Popen(argv, cwd=root, env=_env(), stdout=subprocess.PIPE, stderr=errors)
    except OSError as exc:
        errors.close()
        raise GitNotRunnable(exc) from None
    if proc.stdout is None:  # never: a pipe (for the type checker)
        raise GitError("`git diff-tree` has no output pipe")
    try:
        yield from proc.stdout
    finally:
        proc.stdout.close()
        code = proc.wait()
        errors.seek(0)
        stderr = errors.read()
        errors.close()
    _check_exit(["diff-tree", "-p"], code, stderr)


def _tree_patch_args(old_tree: str, new_tree: str) -> list[str]:
    return (
        [
            "diff-tree", "-p", "-r", "-U3", "--inter-hunk-context=0", "--no-renames", "--binary", "--full-index",
            "--no-ext-diff", "--no-textconv", "--ignore-submodules=none", "--no-color", "--diff-algorithm=myers",
            "--indent-heuristic", "--src-prefix=a/", "--dst-prefix=b/", f"-O{os.devnull}", old_tree, new_tree, "--",
        ]
    )  # fmt: skip


# Where a branch usually comes from, in the order they are tried when the configuration
# names no base branch: the remote's default branch, then the common names.
_BASE_REFS = (
    "refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master",
    "refs/heads/main", "refs/heads/master",
)  # fmt: skip


def base_refs(configured: str | None) -> list[str]:
    """What `rev-list --not` takes to leave out the base branch's history: the configured
    `base_branch` (which must name a commit here), else every usual name of it (a missing
    one selects nothing)."""
    if configured:
        return [f"{configured}^{{commit}}"]
    return [f"--glob={_exactly(ref)}" for ref in _BASE_REFS]


def configured_base(root: Path, configured: str) -> str:
    """The commit `base_branch` names; a configuration error when it names none here."""
    found = resolve(root, configured)
    if found is None:
        raise HarnessGateError(
            "HG902",
            f"base_branch `{configured}` names no commit in this clone",
            "Name a ref that exists here, as git spells it: `origin/develop` (a remote branch) or `develop` (a local "
            "one); or fetch it (docs/config.md).",
        )
    return found


def _exactly(ref: str) -> str:
    """A `--glob` pattern for exactly one ref: a pattern without `?`, `*` or `[` means
    everything below it (`refs/heads/main/*`), so one letter goes in brackets."""
    cut = ref.rindex("/") + 1
    return f"{ref[:cut]}[{ref[cut]}]{ref[cut + 1 :]}"


# At most this many of a branch's own commits are walked locally (a repository with no base
# branch under any usual name would otherwise walk its whole history on every commit).
BRANCH_COMMITS_LIMIT = 2000


def prefetch_branch_commits(root: Path, head: str, configured: str | None = None) -> None:
    """Start `branches.locally`'s listing of the branch's own commits now."""
    start(_rev_list_args([head], [], base_refs(configured), BRANCH_COMMITS_LIMIT), cwd=root)


def default_base(root: Path, configured: str | None = None) -> str | None:
    """The commit of the branch work is merged into (`base_branch` in the configuration,
    else the remote's default branch, else `main`/`master`), or None when there is none."""
    if configured:
        return configured_base(root, configured)
    out = run(["for-each-ref", "--format=%(refname)%00%(objectname)", *_BASE_REFS], cwd=root)
    found = dict(line.split("\0", 1) for line in out.decode("utf-8", "replace").splitlines() if "\0" in line)
    for ref in _BASE_REFS:
        if ref in found:
            return resolve(root, found[ref])  # a tag or a symbolic ref: peeled to its commit
    return None


def current_branch(root: Path) -> str | None:
    """The branch HEAD is on (`main`), or None when HEAD is detached."""
    out = run_status(["symbolic-ref", "-q", "HEAD"], cwd=root)
    ref = out.decode("utf-8", "surrogateescape").strip() if out else ""
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None


def branch_setting(root: Path, branch: str, name: str) -> str | None:
    """`branch.<branch>.<name>` from the repository's own configuration file."""
    out = run_status(["config", "--local", "--get", f"branch.{branch}.{name}"], cwd=root)
    return out.decode("utf-8", "surrogateescape").strip() if out is not None else None


def set_branch_setting(root: Path, branch: str, name: str, value: str) -> None:
    run(["config", "--local", f"branch.{branch}.{name}", value], cwd=root)
