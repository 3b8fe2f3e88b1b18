"""Trees of commits: their listings, and a tree rebuilt with one entry left out."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_gate.git.process import run, start, terminated


@dataclass(frozen=True)
class TreeEntry:
    path: str  # repository-relative, decoded with surrogateescape
    mode: str
    oid: str


def parse_entries(raw: bytes, *, staged: bool) -> list[TreeEntry]:
    """`ls-files --stage -z` (staged) or `ls-tree -z` output, entry by entry."""
    out = []
    for rec in terminated(raw, "ls-files/ls-tree").split(b"\0"):
        if not rec:
            continue
        meta, _, name = rec.partition(b"\t")
        fields = meta.split(b" ")
        if staged:  # `<mode> <oid> <stage>`
            mode, oid = fields[0], fields[1]
        else:  # ls-tree: `<mode> <type> <oid>`
            mode, oid = fields[0], fields[2]
        out.append(TreeEntry(os.fsdecode(name), mode.decode(), oid.decode()))
    return out


def _tree_entries_args(rev: str, prefixes: Sequence[str], recursive: bool) -> list[str]:
    pathspec = [f":(literal){p}" for p in prefixes]
    return ["ls-tree", *(["-r"] if recursive else []), "-z", "--full-tree", rev, "--", *pathspec]


def tree_entries(root: Path, rev: str, *prefixes: str, recursive: bool = True) -> list[TreeEntry]:
    """Entries of commit `rev` below the given prefixes; with `recursive=False`, only the
    top-level entries named (a recursive listing walks every tree the pathspec may reach)."""
    raw = run(_tree_entries_args(rev, prefixes, recursive), cwd=root)
    return parse_entries(raw, staged=False)


def prefetch_tree_entries(root: Path, rev: str, *prefixes: str, recursive: bool = True) -> None:
    """Start `tree_entries(root, rev, *prefixes, recursive=...)`'s listing now."""
    start(_tree_entries_args(rev, prefixes, recursive), cwd=root)


def tree_without(root: Path, tree: str, parts: Sequence[str]) -> str:
    """`tree` with the entry at `parts` (a path split at `/`) removed, built with mktree."""
    if not parts:
        return tree
    listing = run(["ls-tree", "-z", "--full-tree", tree], cwd=root)
    entries = [e for e in terminated(listing, "ls-tree").split(b"\0") if e]
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
