"""What changed: raw diffs parsed into Change records, path lists, merges, and patches."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO

from harness_gate.change import Change
from harness_gate.errors import GitError
from harness_gate.git.index import prefetch_verify_index, verify_index
from harness_gate.git.objects import empty_tree
from harness_gate.git.process import answer, run, run_code, run_status, start, streamed, terminated
from harness_gate.git.repo import OID
from harness_gate.plumbing import DIFF_FLAGS

ZERO_OIDS = frozenset({"0" * 40, "0" * 64})


def parse_meta(meta: bytes, path: bytes) -> Change:
    """One raw diff record: its metadata (`:old new oid oid S`, one old side per parent)
    and its path."""
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
    tokens = terminated(out, "raw diff").split(b"\0")
    if tokens and tokens[-1] == b"":
        tokens.pop()
    if len(tokens) % 2:
        raise GitError("truncated raw diff output")
    changes: list[Change] = []
    _parse_records(tokens, changes)
    return changes


# The raw diff is read in blocks of this size: 100k staged paths are 15 MB of it, and the
# bytes, their pieces and their records all held at once were most of the peak memory.
_RAW_BLOCK = 1 << 18


def parse_raw_stream(out: IO[bytes]) -> list[Change]:
    """`parse_raw` of what `out` holds, read a block at a time: only the records are kept."""
    changes: list[Change] = []
    carry = b""
    while block := out.read(_RAW_BLOCK):
        tokens = (carry + block).split(b"\0") if carry else block.split(b"\0")
        # The last piece is cut short or empty; a path waits for its metadata's record.
        keep = 1 if len(tokens) % 2 else 2
        carry = b"\0".join(tokens[-keep:])
        del tokens[-keep:]
        _parse_records(tokens, changes)
    if carry:
        raise GitError("truncated raw diff output" + ("" if carry.endswith(b"\0") else " (no final NUL)"))
    return changes


def _parse_records(tokens: list[bytes], changes: list[Change]) -> None:
    """Append the records of `tokens` (metadata, path, metadata, path...) to `changes`."""
    if not tokens:
        return
    one_parent = _one_parent_fields(tokens[0::2])
    if one_parent is None:
        changes += [parse_meta(tokens[i], tokens[i + 1]) for i in range(0, len(tokens), 2)]
        return
    # The common case in bulk: no loop in Python over 10k records. The few distinct modes
    # and letters, and the zero id of an added or deleted side, are one object each.
    fields = one_parent
    modes = {m: (m[1:],) for m in set(fields[0::5])}
    news = {m: m for m in set(fields[1::5])}
    letters = {m: m for m in set(fields[4::5])}
    zero = {z: z for z in ZERO_OIDS}
    alone = {z: (z,) for z in ZERO_OIDS}
    olds = list(map(modes.__getitem__, fields[0::5]))
    old_oids = [alone.get(o) or (o,) for o in fields[2::5]]
    new_oids = [zero.get(o, o) for o in fields[3::5]]
    rows = zip(
        tokens[1::2],
        olds,
        map(news.__getitem__, fields[1::5]),
        old_oids,
        new_oids,
        map(letters.__getitem__, fields[4::5]),
        strict=True,
    )
    changes += map(Change._make, rows)


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


def _staged_args(base: str) -> list[str]:
    return ["diff-index", "--cached", *DIFF_FLAGS, base, "--"]


def staged_changes(root: Path, base: str) -> list[Change]:
    """The index (GIT_INDEX_FILE honoured) against `base`: what the commit will record."""
    verify_index(root)
    with answer(_staged_args(base), cwd=root) as out:
        return parse_raw_stream(out)


def prefetch_staged(root: Path, base: str) -> None:
    """Start what `staged_changes(root, base)` needs: the diff, and the index's checksum
    in a thread. The hook starts both before importing the rest of harness-gate, so on a
    large index they run on other cores meanwhile (docs/performance.md)."""
    start(_staged_args(base), cwd=root)
    prefetch_verify_index(root)


def tree_changes(root: Path, old: str, new: str) -> list[Change]:
    return parse_raw(run(["diff-tree", *DIFF_FLAGS, old, new, "--"], cwd=root))


def changes_between(root: Path, old_tree: str, new_tree: str) -> list[tuple[str, str]]:
    """(status letter, path) of every path that differs between two trees."""
    out = run(
        [
            "diff-tree",
            "-r",
            "-z",
            "--name-status",
            "--no-renames",
            "--ignore-submodules=none",
            old_tree,
            new_tree,
            "--",
        ],
        cwd=root,
    )
    tokens = [t for t in terminated(out, "diff-tree").split(b"\0") if t]
    return [(tokens[i].decode("ascii", "replace"), os.fsdecode(tokens[i + 1])) for i in range(0, len(tokens) - 1, 2)]


def changed_paths(root: Path, old_tree: str, new_tree: str, limit: int) -> list[str]:
    """Up to `limit` paths that differ between two trees."""
    out = run(
        ["diff-tree", "-r", "-z", "--name-only", "--no-renames", "--ignore-submodules=none", old_tree, new_tree],
        cwd=root,
    )
    return [os.fsdecode(p) for p in terminated(out, "diff-tree").split(b"\0") if p][:limit]


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
        touched = {p for p in terminated(theirs, "diff-tree").split(b"\0") if p}
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


# git older than 2.38 has no `merge-tree --write-tree`: usage error 129.
_NO_WRITE_TREE = 129


def merge_result(root: Path, first: str, second: str) -> str | None:
    """The tree git's own merge of two commits produces, conflicted files holding their
    markers; None when this git cannot say (older than 2.38)."""
    code, out = run_code(
        ["merge-tree", "--write-tree", "-z", "--no-messages", "--allow-unrelated-histories", first, second],
        cwd=root,
        codes=frozenset({0, 1, _NO_WRITE_TREE}),
    )
    if code == _NO_WRITE_TREE:
        return None
    tree = out.split(b"\0", 1)[0].decode("ascii", "replace")
    if not OID.fullmatch(tree):
        raise GitError("unexpected `git merge-tree` output")
    return tree


# Settings a developer may have that reshape `diff-tree -p` (checked in tests/test_git.py),
# each pinned to git's default: `-c` outranks every configuration file. Attributes (the
# user's core.attributesFile, the repository's info/attributes and .gitattributes) can
# only make a file binary or give it a driver: `--text` diffs every file as text, and the
# drivers' programs are off (`--no-ext-diff`, `--no-textconv`); their hunk headers are
# not hashed (`patch_id.patch_id`).
_PATCH_CONFIG = (
    "diff.suppressBlankEmpty=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.submodule=short",
    "color.ui=false",
    "color.diff=false",
    "core.bigFileThreshold=512m",
)
_CHUNK = 1 << 16


def tree_patch_chunks(root: Path, old_tree: str, new_tree: str) -> Iterator[bytes]:
    """The patch from one tree to another, with three lines of context, in pieces as git
    writes it: every changed line and mode, every file as text, in a form no user setting
    or attribute reshapes (order, prefixes, algorithm, context, colour, blank context
    lines, binary detection, external drivers). Never held whole, not even a line of it:
    a branch that adds a large file without newlines is read piece by piece. git's
    failure is raised once its output is read."""
    with streamed(_tree_patch_args(old_tree, new_tree), cwd=root) as out:
        while chunk := out.read(_CHUNK):
            yield chunk


def _tree_patch_args(old_tree: str, new_tree: str) -> list[str]:
    pinned = [arg for setting in _PATCH_CONFIG for arg in ("-c", setting)]
    return [
        *pinned,
        "diff-tree",
        "-p",
        "-r",
        "-U3",
        "--inter-hunk-context=0",
        "--no-renames",
        "--text",
        "--full-index",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
        "--submodule=short",
        "--no-relative",
        "--no-color",
        "--diff-algorithm=myers",
        "--indent-heuristic",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        f"-O{os.devnull}",
        old_tree,
        new_tree,
        "--",
    ]
