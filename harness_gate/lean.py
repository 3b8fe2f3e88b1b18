"""The staged check's lean path: the pre-commit hook's answer for an ordinary commit, read
from a record the full check left in the git directory, with almost nothing imported.

It decides nothing new. The full check writes the record when it passes an ordinary staged
change (lean_record.py): the key of everything its verdict stood on but the staged paths,
the prefix index of the boundary of the plan that allowed them (exact paths and `DIR/**`
directories), and the words that make a path uncommon (the protected names, the artifacts
root, the harness formats' names). Here the key is computed again and the staged diff read:
when every change is ordinary (a regular file on both sides, a path of printable ASCII that
holds none of the words) and inside the index, the check passes, as the full check would.
Anything else (another key, no record, a merge in progress, a symlink or a submodule, a
path outside the index, a git failure, a corrupt index, an error of any kind) is not an
answer: `run` returns None and the full check judges the commit.

The key, so that no state of the repository but the staged paths can differ from the one
the record was written in (never a time: a record is right for its key or not used):
harness-gate's own source, the HEAD commit (its tree holds the configuration, the plans
and their approvals; its history, where each plan came from) and the branch HEAD names,
every ref's name and object (`for-each-ref`, loose or packed: the base branch, under a
usual name or `base_branch`, decides which plans are the branch's own, and the base side's
files are read from it; a ref deleted is a line gone), the shallow and graft files (they
cut the history that walk reads), the repository's own configuration file (the branch's
`plan use` choice is in it), the work tree's and git directory's paths, and the
environment git and the check read. The check reads no clock.
"""

from __future__ import annotations

import os
import sys

from harness_gate.plumbing import DIFF_FLAGS, HARDENING, hardened_env, index_checksum_matches, new_hash

TYPE_CHECKING = False  # typing itself is not imported: a few milliseconds of this path
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

RECORD = "lean-staged"  # the record's file name in the cache folder
MAGIC = b"harness-gate lean record 1"
PASSED = "harness-gate check: passed (0 blocking findings)\n"
# What the key holds of the environment: where git finds the repository and its
# configuration, and what the check reads (CI, a merge in git's own hook).
KEY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "CI",
    "GITLAB_CI",
    "PRE_COMMIT",
    "GIT_REFLOG_ACTION",
    "GIT_SHALLOW_FILE",
    "GIT_GRAFT_FILE",
    "GIT_REPLACE_REF_BASE",
)
LOCATE = (
    "rev-parse",
    "--show-toplevel",
    "--git-path",
    "harness-gate",
    "--git-path",
    "MERGE_HEAD",
    "--git-path",
    "index",
    "--absolute-git-dir",
    "--git-common-dir",
    "HEAD^{commit}",
    "--symbolic-full-name",
    "HEAD",
)
# Every ref, sorted by name: what the base branch and the walk of the branch's own history
# read (provenance.base_refs, default_base, a configured base_branch of any name).
REFS = ("for-each-ref", "--format=%(refname)%00%(objectname)")
# Files of the common directory the history walk reads besides the objects and refs.
HISTORY_FILES = ("shallow", os.path.join("info", "grafts"))
DIFF = ("diff-index", "--cached", *DIFF_FLAGS, "HEAD", "--")  # the full check's staged diff
# The modes of an ordinary change's sides: a regular file, or none (added or deleted).
ORDINARY_MODES = frozenset({"100644", "100755", "000000"})
# Bytes an ordinary path never holds: controls, DEL and every non-ASCII byte (NUL, which
# no path holds, joins them).
UNCOMMON_BYTES = bytes([*range(1, 0x20), *range(0x7F, 0x100)])
_BLOCK = 1 << 18  # the staged diff is read a block at a time


class Declined(Exception):
    """The lean path cannot answer: the full check judges the commit."""


def run() -> int | None:
    """The staged check's exit code when the lean path can answer (it has then written
    the full check's own line), else None."""
    try:
        passed = _passes()
    except KeyboardInterrupt:
        raise
    except BaseException:  # any doubt is the full check's to settle
        return None
    if not passed:
        return None
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    sys.stdout.write(PASSED.replace("passed", "\x1b[32mpassed\x1b[0m") if color else PASSED)
    return 0


def _passes() -> bool:
    if os.environ.get("GIT_REFLOG_ACTION") or os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False  # a merge inside git's own hook; CI, where an empty index is an error
    here = locate()
    if here is None:
        return False
    record = _read(os.path.join(here.cache, RECORD))
    if record is None:
        return False
    body, _, check = record.rpartition(b"\n")
    parts = body.split(b"\n")
    if len(parts) != 6 or parts[0] != MAGIC or parts[1] != here.key.encode() or check != digest(body):
        return False  # another form, another key, or not whole
    literal, dirs, words = (frozenset(p.split(b"\0")) - {b""} for p in parts[3:6])
    return _staged_inside(here.index_file, literal, dirs, words)


class Here:
    """Where the lean path stands: the record's key, HEAD, the cache folder, the index."""

    __slots__ = ("cache", "head", "index_file", "key")

    def __init__(self, key: str, head: str, cache: str, index_file: str) -> None:
        self.key = key
        self.head = head
        self.cache = cache  # harness-gate's cache folder in the git directory
        self.index_file = index_file  # the index git reads (GIT_INDEX_FILE, when set)


def locate() -> Here | None:
    """The record's key for the repository at the working directory, where the record is,
    and the index git reads; None when HEAD is unborn, a merge is in progress, or the git
    directory takes its objects from elsewhere (the full check's to judge)."""
    cwd = os.getcwd()
    lines = _git(LOCATE).decode("utf-8", "surrogateescape").split("\n")
    if len(lines) < 9 or len(lines[6]) not in (40, 64) or not lines[7]:
        return None
    top, harness, merge_head, index, git_dir, common = (_absolute(cwd, p) for p in lines[:6])
    if not _own_common_dir(git_dir, common) or os.path.lexists(merge_head):
        return None
    config = _read(os.path.join(common, "config")) or b""
    # The refs and history files: a missing file is empty, so that one made is another key.
    history = (_git(REFS), *(_read_present(os.path.join(common, n)) for n in HISTORY_FILES))
    found = key(top=top, git_dir=git_dir, common=common, head=lines[6], branch=lines[7], files=(config, *history))
    return Here(found, lines[6], os.path.join(harness, "cache"), index)


def key(*, top: str, git_dir: str, common: str, head: str, branch: str, files: tuple[bytes, ...]) -> str:  # noqa: PLR0913  (one keyword per field the key digests)
    """The record's key (the module's docstring says what it holds and why)."""
    digest = new_hash("sha256")
    digest.update(MAGIC + b"\0" + fingerprint().encode() + b"\0")
    for part in (top, git_dir, common, head, branch, *(f"{n}={os.environ.get(n, '')}" for n in KEY_ENV)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for content in files:  # each by its own digest: one file's bytes cannot pass for two
        file_digest = new_hash("sha256")
        file_digest.update(content)
        digest.update(file_digest.digest())
    return str(digest.hexdigest())


def digest(body: bytes) -> bytes:
    """The record's last line: its body's sha256, so that a record cut short is no record."""
    digest = new_hash("sha256")
    digest.update(body)
    return str(digest.hexdigest()).encode()


_FINGERPRINT: list[str] = []


def fingerprint() -> str:
    """harness-gate's own source and schemas, by each file's name and status: device, inode,
    size, and the modification and change times to the nanosecond. A file's bytes cannot
    change without its change time moving (no call sets it; `cp -p`, a reinstall or a
    reproducible build that keeps the modification time still makes a new one), so a stat
    that is the same is the same bytes, and reading ~100 files would cost as much as the
    rest of this path."""
    if _FINGERPRINT:
        return _FINGERPRINT[0]
    package = os.path.dirname(os.path.abspath(__file__))
    digest = new_hash("sha256")
    stack = [package]
    while stack:
        folder = stack.pop()
        with os.scandir(folder) as entries:
            found = sorted(entries, key=lambda e: e.name)
        for entry in found:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(entry.path)
            elif entry.name.endswith((".py", ".json")):
                st = entry.stat()
                stat = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)
                digest.update(f"{os.path.relpath(entry.path, package)}\0{stat}\0".encode("utf-8", "surrogateescape"))
    _FINGERPRINT.append(str(digest.hexdigest()))
    return _FINGERPRINT[0]


def ordinary_inside(diff: bytes, literal: frozenset[bytes], dirs: frozenset[bytes], words: frozenset[bytes]) -> bool:
    """Whether the raw staged diff (`diff-index --raw -z`, one parent) holds at least one
    change, and only ordinary ones inside the index: `literal` paths, or paths below `dirs`."""
    return scan([diff], literal, dirs, words)


def scan(blocks: Iterable[bytes], literal: frozenset[bytes], dirs: frozenset[bytes], words: frozenset[bytes]) -> bool:
    """`ordinary_inside` of the diff that `blocks` hold, cut anywhere: read a block at a time
    (100k staged paths are 15 MB of diff, and their pieces several times that)."""
    carry, seen = b"", False
    for block in blocks:
        tokens = (carry + block).split(b"\0") if carry else block.split(b"\0")
        keep = 1 if len(tokens) % 2 else 2  # the last piece is cut short or empty; a path waits for its record
        carry = b"\0".join(tokens[-keep:])
        del tokens[-keep:]
        if tokens:
            if not _records_inside(tokens, literal, dirs, words):
                return False
            seen = True
    return seen and not carry  # all of it read, to its final NUL


def _records_inside(  # noqa: PLR0911  (one return per case, in the order they are judged)
    tokens: list[bytes], literal: frozenset[bytes], dirs: frozenset[bytes], words: frozenset[bytes]
) -> bool:
    metas, paths = tokens[0::2], tokens[1::2]
    # `:old new oid oid S`: 98 bytes with SHA-1 ids, 146 with SHA-256 ones.
    if not set(map(len, metas)) <= {98, 146} or not all(paths):
        return False
    fields = b" ".join(metas).decode("ascii").split(" ")
    if len(fields) != 5 * len(metas):
        return False
    olds = {m[1:] for m in fields[0::5]}
    if {m[:1] for m in fields[0::5]} != {":"} or not (olds | set(fields[1::5])) <= ORDINARY_MODES:
        return False
    if not set(fields[4::5]) <= {"A", "M", "D"}:
        return False
    joined = b"\0".join(paths)
    if joined.translate(None, UNCOMMON_BYTES) != joined:
        return False
    lowered = joined.lower()
    if any(word in lowered for word in words):
        return False
    return all(path in literal or _below(path, dirs) for path in paths)


def _below(path: bytes, dirs: frozenset[bytes]) -> bool:
    at = path.find(b"/")
    while at > 0:
        if path[:at] in dirs:
            return True
        at = path.find(b"/", at + 1)
    return False


def _staged_inside(index: str, literal: frozenset[bytes], dirs: frozenset[bytes], words: frozenset[bytes]) -> bool:
    """`scan` of the staged diff, once the index's checksum holds (git does not check it: a
    damaged index makes it report other paths). git reads the index while it is hashed here,
    its answer going to a file in memory; without one (macOS), to a pipe read as it comes."""
    if not hasattr(os, "memfd_create"):
        inside = scan(_git_blocks(DIFF), literal, dirs, words)
        return inside and _index_intact(index)
    out = os.memfd_create("harness-gate-lean")
    try:
        pid = _spawn(DIFF, out)
        try:
            intact = _index_intact(index)
        finally:
            code = _wait(pid)
        if code != 0 or not intact:
            return False
        size = os.fstat(out).st_size
        blocks = (os.pread(out, _BLOCK, at) for at in range(0, size, _BLOCK))
        return scan(blocks, literal, dirs, words)
    finally:
        os.close(out)


def _index_intact(index: str) -> bool:
    fd = os.open(index, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        return index_checksum_matches(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _git(args: tuple[str, ...]) -> bytes:
    """`git ARGS`'s output (a few lines); Declined on any failure."""
    return b"".join(_git_blocks(args))


def _git_blocks(args: tuple[str, ...]) -> Iterator[bytes]:
    """`git ARGS`'s output as it comes; Declined, once read to its end, on any failure."""
    read, write = os.pipe()
    try:
        pid = _spawn(args, write)
    finally:
        os.close(write)
    try:
        while chunk := os.read(read, _BLOCK):
            yield chunk
    finally:
        os.close(read)
        code = _wait(pid)
    if code != 0:
        raise Declined


def _spawn(args: tuple[str, ...], out: int) -> int:
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    return os.posix_spawnp("git", ["git", *HARDENING, *args], hardened_env(), file_actions=actions)


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _absolute(cwd: str, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(cwd, path)


def _own_common_dir(git_dir: str, common: str) -> bool:
    """git/repo.py's `_own_common_dir`: the common directory is the git directory, or the
    repository whose `worktrees/<name>` it is (else the full check refuses, HG909)."""
    real_git, real_common = os.path.realpath(git_dir), os.path.realpath(common)
    parent = os.path.dirname(real_git)
    return real_common == real_git or (
        os.path.basename(parent) == "worktrees" and os.path.dirname(parent) == real_common
    )


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(1 << 26)
    except OSError:
        return None


def _read_present(path: str) -> bytes:
    """A file's bytes, empty when there is none; Declined when it is there but unread."""
    if not os.path.lexists(path):
        return b""
    found = _read(path)
    if found is None:
        raise Declined
    return found
