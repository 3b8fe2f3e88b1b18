"""The artifacts root: no plan is needed there, but approved artifacts never change, the
logs only grow, committed lifecycle records stay as they were, and every artifact touched
must be valid in the new state."""

from __future__ import annotations

from collections.abc import Sequence

from harness_gate import approvals as approvals_mod
from harness_gate import artifacts_root, lifecycle, plans
from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.change import NO_MODE, Change
from harness_gate.findings import Finding, finding
from harness_gate.rules.transition import Transition, decode, show

APPEND_ONLY = artifacts_root.LOGS


def signers_file(changes: Sequence[Change], signers: bytes) -> list[Finding]:
    """The trust anchor is judged by a plan like a protected path, and is still an
    artifact: a regular, non-executable file like every other under the root."""
    return [
        finding("HG516", show(c.path), "only a regular, non-executable file can be the allowed signers")
        for c in changes
        if c.path == signers and c.new_mode not in ("100644", NO_MODE)
    ]


def artifact_rules(transition: Transition, changes: Sequence[Change]) -> list[Finding]:
    """Inside the artifacts root no plan is needed, but approved artifacts never change
    and the logs only grow; every artifact touched must be valid in the new state."""
    out: list[Finding] = []
    if not changes:
        return out
    new = transition.new
    folders: set[str] = set()
    others = False
    base = artifacts_root.plans_prefix(new.artifacts_dir)
    merge = len(transition.olds) > 1  # the parents' states: read only when the artifacts root changed
    for c in changes:
        path = decode(c.path)
        rel = path[len(base) :] if path.startswith(base) else None
        parts = rel.split("/") if rel is not None else []
        if len(parts) == 2:
            folders.add(parts[0])
            out.extend(_plan_file(transition, path, parts[0], parts[1], merge=merge))
        else:
            others = True
    for plan_id in sorted(folders):
        if plans.PLAN_ID.match(plan_id) and any(p.startswith(f"{base}{plan_id}/") for p in new.files):
            folder = plans.load(new, plan_id)
            out.extend(folder.findings)
            out.extend(lifecycle.replay(folder).findings)
    if others or folders:
        # Unknown files, symlinks, bad plan ids: only those this change touches.
        out.extend(f for f in plans.root_findings(new) if _touched(f.path, changes))
    return out


def _plan_file(transition: Transition, path: str, plan_id: str, name: str, *, merge: bool) -> list[Finding]:
    """One changed file of a plan's folder, against each parent state that held it."""
    from harness_gate import evidence  # noqa: PLC0415  (only when the artifacts root changed)

    out: list[Finding] = []
    after = transition.new.files.get(path)
    known = False
    for old in transition.olds:
        before = old.files.get(path)
        if before is None:
            continue
        known = True
        if name in APPEND_ONLY:
            if after is None or not grows(before, after, merge=merge):
                out.append(finding("HG211", path, f"{name} lost or changed lines (it may only grow)"))
            elif name == artifacts_root.EVIDENCE and not merge:
                # Only the appended records are new: validating them alone keeps a
                # long log cheap, and every record was validated when it arrived.
                out.extend(evidence.validate(path, after[len(before) :], first_line=before.count(b"\n") + 1))
            continue
        if after == before:
            continue
        what = "deleted" if after is None else "modified"
        if was_approved(old, plan_id, name, before):
            out.append(finding("HG210", path, f"this artifact was approved and is {what} here"))
        elif plans.NUMBERED.match(name) and not amendable(name):
            # Reviews, repairs, pauses and completions are records of what happened:
            # deleting a completion or a pause would hand authority back.
            out.append(finding("HG212", path, f"a committed lifecycle record is {what} here"))
    if not known and after is not None and name == artifacts_root.EVIDENCE:
        out.extend(evidence.validate(path, after))
    elif merge and after is not None and name == artifacts_root.EVIDENCE:
        out.extend(_validate_merged(path, after, [o.files.get(path, b"") for o in transition.olds]))
    return out


def _touched(path: str, changes: Sequence[Change]) -> bool:
    return any(decode(c.path) == path for c in changes)


def _validate_merged(path: str, after: bytes, befores: Sequence[bytes]) -> list[Finding]:
    """A merge's log: the lines no parent had are new, and validated like any append."""
    from collections import Counter  # noqa: PLC0415

    from harness_gate import evidence  # noqa: PLC0415

    known: Counter[bytes] = Counter()
    for before in befores:
        counts = Counter(before.splitlines(keepends=True))
        known |= counts  # a line both parents have counts once per copy either had
    fresh = Counter(after.splitlines(keepends=True)) - known
    return evidence.validate(path, b"".join(line for line in fresh.elements()))


def grows(before: bytes, after: bytes, *, merge: bool) -> bool:
    if not merge:
        return after.startswith(before) and (before == b"" or before.endswith(b"\n"))
    # A union merge interleaves both sides' appends: every old line must survive, in order.
    it = iter(after.splitlines(keepends=True))
    return all(any(line == x for x in it) for line in before.splitlines(keepends=True))


def amendable(name: str) -> bool:
    """A numbered artifact that takes an approval (amendment, resume) may still be edited
    until it is approved."""
    kind = plans.kind_of_file(name)
    return kind is not None and kind.slug != "plan" and bool(kind.approval_gate)


def was_approved(old: ArtifactsTree, plan_id: str, name: str, before: bytes) -> bool:
    kind = plans.kind_of_file(name)
    approval_gate = kind.approval_gate if kind is not None else ""
    if not approval_gate:
        return False
    log = old.files.get(artifacts_root.approvals_log(artifacts_root.plan_folder(old.artifacts_dir, plan_id)))
    if log is None:
        return False
    records, _ = approvals_mod.parse(artifacts_root.APPROVALS, log)
    from harness_gate.artifacts.artifact import sha256_hex  # noqa: PLC0415

    return approvals_mod.status(records, approval_gate, name, sha256_hex(before)) is approvals_mod.Status.APPROVED
