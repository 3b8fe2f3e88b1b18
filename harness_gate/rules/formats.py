"""The other harness formats (docs/formats.md) a change touches: each file valid in the
new state, and each move from its old bytes allowed; a merge is judged on its whole result."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from harness_gate import formats
from harness_gate.change import Change
from harness_gate.findings import Finding
from harness_gate.rules.transition import Transition


def format_rules(transition: Transition, changes: Sequence[Change]) -> list[Finding]:
    """Files of the other harness formats (docs/formats.md) this change touches: valid in
    the new state, and each move allowed (docs/formats.md)."""
    new = transition.new
    facts = transition.facts
    match = formats.matcher(new.config)
    files = facts.files()
    merged: list[Finding] = []
    if transition.merge and transition.first_parent is not None:
        # A merge's own changes leave out files that come unchanged from one side, but
        # both sides meet here: a file the other side changed moves, for the first-parent
        # line, from its bytes there (a frozen spec edited on one side, the loop started on
        # the other), and a rule spanning files (a passed state from one side, a failing
        # newer verdict from the other) is judged on the whole result.
        changes = facts.changes_from(transition.first_parent)
    maybe = match.candidates([c.path for c in changes])
    mine = [c for c in changes if c.path in maybe and match.which(c.path) is not None]
    if transition.merge and transition.first_parent is not None:
        # The changed files are linted with their moves below; the rest here, once.
        skip = {c.path.decode("utf-8", "surrogateescape") for c in mine}
        merged = _formats_whole(transition, files, match, transition.first_parent, skip)
    if not mine:
        return merged
    # The first parent's bytes: what the change moved the file from.
    olds = {c.old_oids[0] for c in mine if not c.added and c.old_modes[0].startswith("100")}
    before = facts.blobs(sorted(olds))

    def old(change: Change) -> bytes | None:
        return before.get(change.old_oids[0]) if change.old_modes[0].startswith("100") else None

    @functools.cache
    def fingerprint() -> str:
        return facts.fingerprint(new.config)

    lookup = formats.evidence_lookup(new.files, fingerprint)
    found = formats.check_changes(new.config, mine, files, old, lookup)
    return list(dict.fromkeys([*merged, *found]))


def _formats_whole(
    transition: Transition, files: formats.Files, match: formats.Matcher, first_parent: str, skip: set[str]
) -> list[Finding]:
    """Every format file of a merge's result, less what the first parent already held:
    a problem older than the merge is not the merge's (and was judged where it arose)."""
    cfg = transition.new.config
    after = formats.lint_files(files, cfg, [(n, p) for n, p in formats.matched(files, match) if p not in skip])
    if not after:
        return []
    parent = transition.facts.files_at(first_parent)
    before = {(f.code, f.path) for f in formats.lint_files(parent, cfg, formats.matched(parent, match))}
    return [f for f in after if (f.code, f.path) not in before]
