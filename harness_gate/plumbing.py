"""How every git process is hardened, and the index's checksum: with no imports.

The hook's lean path (lean.py) starts git and checks the index before anything else of
harness-gate is imported; git/process.py and git/index.py take the very same flags,
environment and checksum from here, so the two ways to run git cannot drift apart.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing itself is not imported: a few milliseconds of the lean path
if TYPE_CHECKING:
    from typing import Any

# Settings that would make git answer differently from the plain object model.
HARDENING = (
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

# Every diff harness-gate reads: raw, NUL-separated, both sides of a rename, submodules
# and their pointers, no external diff drivers or text conversion, full object ids.
DIFF_FLAGS = (
    "-r",
    "--raw",
    "-z",
    "--no-renames",
    "--ignore-submodules=none",
    "--no-ext-diff",
    "--no-textconv",
    "--no-abbrev",
)

# Variables that change what plumbing answers: pathspec magic (`:(literal)` ignored or
# globbing turned on), extra configuration, an external diff driver.
UNTRUSTED_ENV = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
    "GIT_DIFF_OPTS",
    "GIT_CONFIG",  # points `git config` at another file than the repository's own
)

NO_GRAFTS = os.path.join(os.devnull, "harness-gate-no-grafts")


def hardened_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of every git process: this one's, without what changes answers."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))}
    for name in UNTRUSTED_ENV:
        env.pop(name, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["GIT_TERMINAL_PROMPT"] = "0"
    # `.git/info/grafts` rewrites parents like a replace ref, but `--no-replace-objects`
    # does not turn it off: a graft making the base a child of the tip empties a range.
    # A graft file that cannot exist (ENOTDIR: git reads it silently as none) disables it.
    env["GIT_GRAFT_FILE"] = NO_GRAFTS
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


# The index is hashed in blocks of this size: a million files make an index of ~100 MB, and
# reading it whole would make it the largest thing in memory.
INDEX_BLOCK = 1 << 20


# Past this many bytes to hash, OpenSSL's (hashlib's) pays for its import: the interpreter's
# own SHA-1 hashes ~70 MB/s here, OpenSSL's ~600 MB/s (a 100k-file index: 95 ms against 12).
_OWN_HASH_LIMIT = 1 << 18


def new_hash(name: str, size: int = 0) -> Any:
    """A `hashlib` object of `sha1` or `sha256` for about `size` bytes: for a few, from the
    interpreter's own modules, since hashlib's import loads OpenSSL (several milliseconds of
    the lean path's start); for many, or where those modules are missing, hashlib's."""
    if size > _OWN_HASH_LIMIT:
        import hashlib  # noqa: PLC0415

        return hashlib.new(name)
    try:
        if name == "sha1":
            import _sha1  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

            return _sha1.sha1()
        try:
            import _sha2  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415  (3.12 on)

            return _sha2.sha256()
        except ImportError:
            import _sha256  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415

            return _sha256.sha256()
    except ImportError:
        import hashlib  # noqa: PLC0415

        return hashlib.new(name)


def index_checksum_matches(fd: int, size: int, block: int = INDEX_BLOCK) -> bool:
    """Whether the open index (`fd`, `size` bytes) starts with its signature and ends with
    the checksum of the rest, SHA-1 or SHA-256 (or with zeros, `index.skipHash`). It is
    read a block at a time, once per hash tried: SHA-256 only when SHA-1 does not match."""
    if size < 4 or os.pread(fd, 4, 0) != b"DIRC":
        return False
    for algo, width in (("sha1", 20), ("sha256", 32)):
        if size < 12 + width:
            continue
        trailer = os.pread(fd, width, size - width)
        if len(trailer) != width:
            return False  # shorter than it was a moment ago: not the index that was stated
        if trailer == bytes(width):
            return True
        digest = new_hash(algo, size)
        done, left = 0, size - width
        while left > 0:
            data = os.pread(fd, min(left, block), done)
            if not data:
                return False  # truncated while being read
            digest.update(data)  # both kinds release the interpreter lock for large blocks
            done += len(data)
            left -= len(data)
        if digest.digest() == trailer:
            return True
    return False
