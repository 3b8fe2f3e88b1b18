"""The change a branch makes, named so that an update from its base keeps the name.

A review speaks of a change, not only of a tree: when the base branch moves and the branch
is brought up to date (a merge of the base, GitHub's "Update branch", a rebase), the
branch's tree is new but its own change is the same, and the review still holds. The
change is the patch from where the branch left its base to its state, with the artifacts
root left out on both sides: every changed line with three lines of context, every mode
and binary content, but no line numbers and no blob ids, which move when the base changes
elsewhere (as `git patch-id` sees a patch, whitespace kept). Its id is the sha256 of that
patch. The context pins each hunk to its place; a base change within three lines of the
branch's own lines makes it another change, to be reviewed again. Evidence is never bound
to a change: merged code is verified again, on its exact tree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from harness_gate import git

_HUNK = b"@@"
_INDEX = b"index "


def patch_id(lines: Iterable[bytes]) -> str:
    """sha256 of the patch's lines without what moves when the base changes around it:
    `index` lines (blob ids of whole files) and hunk headers (line numbers, function
    context)."""
    digest = hashlib.sha256()
    for raw in lines:
        line = raw.removesuffix(b"\n")
        if line.startswith(_INDEX):
            continue
        digest.update(_HUNK if line.startswith(_HUNK) else line)
        digest.update(b"\n")
    return digest.hexdigest()


def change_id(root: Path, old_tree: str, new_tree: str) -> str:
    """The id of the change from one fingerprint tree to another (both without the
    artifacts root, see `verification.fingerprint_*`), hashed as git writes the patch."""
    return patch_id(git.tree_patch_lines(root, old_tree, new_tree))
