"""The change a branch makes, named so that an update from its base keeps the name.

A review speaks of a change, not only of a tree: when the base branch moves and the branch
is brought up to date (a merge of the base, GitHub's "Update branch", a rebase), the
branch's tree is new but its own change is the same, and the review still holds. The
change is the patch from where the branch left its base to its state, with the artifacts
root left out on both sides: every changed line with three lines of context, every mode,
every file diffed as text, but no line numbers and no blob ids, which move when the base
changes elsewhere (as `git patch-id` sees a patch, whitespace kept). Its id is the sha256
of that patch, written with fixed options: no setting or attribute of the developer's
(diff.suppressBlankEmpty, core.attributesFile, a prefix, colour) changes it. The context
pins each hunk to its place; a base change within three lines of the branch's own lines
makes it another change, to be reviewed again. Evidence is never bound
to a change: merged code is verified again, on its exact tree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from harness_gate import git

_HUNK = b"@@"
_INDEX = b"index "
_DECIDE = len(_INDEX)  # the bytes a line's start needs to be told apart

# What becomes of a line, told by its start: hashed as it is, hashed as `@@` (a hunk
# header), or left out (an `index` line, newline and all).
_KEEP, _HEADER, _SKIP = 1, 2, 3


def _kind(start: bytes) -> int:
    return _SKIP if start.startswith(_INDEX) else _HEADER if start.startswith(_HUNK) else _KEEP


def patch_id(chunks: Iterable[bytes]) -> str:
    """sha256 of the patch without what moves when the base changes around it: `index`
    lines (blob ids of whole files) and hunk headers (line numbers, function context),
    each header hashed as `@@`. Every line is hashed as ending in a newline. The patch
    comes in pieces cut anywhere (`git.tree_patch_chunks`): a line is hashed as it comes,
    never held whole."""
    digest = hashlib.sha256()
    pending = b""  # the start of a line, too short yet to tell what it is
    kind = 0  # the current line's kind; 0 at a line's start
    for chunk in chunks:
        data = pending + chunk if pending else chunk
        pending = b""
        pos = 0
        while pos < len(data):
            if not kind:
                start = data[pos : pos + _DECIDE]
                if len(start) < _DECIDE and b"\n" not in start:
                    pending = data[pos:]
                    break
                kind = _kind(start)
                if kind == _HEADER:
                    digest.update(_HUNK)
            end = data.find(b"\n", pos)
            if kind == _KEEP:
                digest.update(data[pos:] if end < 0 else data[pos:end])
            if end < 0:
                break
            if kind != _SKIP:
                digest.update(b"\n")
            kind = 0
            pos = end + 1
    if pending:  # a last line shorter than a line's start
        kind = _kind(pending)
        if kind == _HEADER:
            digest.update(_HUNK)
        elif kind == _KEEP:
            digest.update(pending)
    if kind and kind != _SKIP:
        digest.update(b"\n")
    return digest.hexdigest()


def change_id(root: Path, old_tree: str, new_tree: str) -> str:
    """The id of the change from one fingerprint tree to another (both without the
    artifacts root, see `verification.fingerprint_*`), hashed as git writes the patch."""
    return patch_id(git.tree_patch_chunks(root, old_tree, new_tree))
