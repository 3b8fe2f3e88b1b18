"""Authority: the code a change touches needs one plan that allows all of it. The plan
is chosen as governance says; it must be approved and grant writes, and its boundary must
allow every path (protected paths and new submodules only by their exact name)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harness_gate import approvals as approvals_mod
from harness_gate import artifacts_root, governance, lifecycle, plans
from harness_gate import boundary as boundary_mod
from harness_gate.change import Change
from harness_gate.findings import Finding, finding
from harness_gate.rules.protected_paths import not_allowed, protected
from harness_gate.rules.symlinks import links_leaving
from harness_gate.rules.transition import GITLINK, Transition, decode, show


def plan_authority(
    transition: Transition, changes: Sequence[Change], plan_id: str | None, used: set[str] | None, suspects: set[bytes]
) -> list[Finding]:
    """The change needs one plan that allows all of it: `--plan`, or the first of the
    state's candidates (governance.candidates) that does. Plans are never combined."""
    new = transition.new
    sample = ", ".join(show(c.path) for c in changes[:3]) + (" ..." if len(changes) > 3 else "")
    tried, whole = _to_try(transition, plan_id)
    if not tried:
        code, path, why = governance.no_candidate(new, transition.origins)
        return [finding(code, path, f"{len(changes)} changed path(s) need an approved, open plan ({sample}): {why}")]
    first: list[Finding] | None = None
    for candidate in tried:
        found_here = _under_plan(transition, changes, candidate, suspects, whole_life=candidate in whole)
        if not any(f.blocks for f in found_here):
            if used is not None:
                used.add(candidate)
            return found_here
        if first is None:
            first = found_here
    # Only a squash holds several plans' whole lives: ending plans in an ordinary commit never
    # combines their boundaries.
    lives = sorted(whole & transition.origins.added)
    if len(lives) > 1 and _each_path_in_one_life(transition, changes, lives, suspects):
        if used is not None:
            used.update(lives)
        return []
    if used is not None:
        used.add(tried[0])
    assert first is not None  # noqa: S101  (tried is not empty)
    if len(tried) > 1:
        others = ", ".join(f"`{p}`" for p in tried[1:])
        first = [
            dataclasses.replace(f, message=f"{f.message} (nor does {others} allow the whole change)") if f.blocks else f
            for f in first
        ]
    return first


def _to_try(transition: Transition, plan_id: str | None) -> tuple[tuple[str, ...], frozenset[str]]:
    """The plans to try, in order, and those of them whose whole life the change holds."""
    if plan_id is not None:
        return (plan_id,), frozenset()
    ending = frozenset(
        p for p in _ending(transition.changes, transition.new.artifacts_dir) if _granted_before(transition, p)
    )
    found = governance.candidates(transition.new, transition.origins, ending=ending)
    if len(found.ids) > 1:
        found = governance.narrow(found, transition.selected)
    tried, whole = found.ids, found.whole_life
    if not tried and transition.merge:
        tried = _completed_on_first_side(transition)
    return tried, whole


def _completed_on_first_side(transition: Transition) -> tuple[str, ...]:
    """For a merge that no open plan governs: the completed plans that the first parent
    (the branch merging) holds and no other parent does, by the commit graph alone. Its
    own change (a conflict's resolution) is that branch's work (`_under_plan`); a plan
    both sides hold (the base's history) is never one of them."""
    olds = transition.olds
    others: set[str] = set()
    for other in olds[1:]:
        others |= set(plans.plan_ids(other))
    here = governance.present(transition.new)
    first = set(plans.plan_ids(olds[0])) - others - transition.origins.foreign
    return tuple(i for i in sorted(first & here) if governance.holds_completion(transition.new, i))


def _granted_before(transition: Transition, plan_id: str) -> bool:
    """Whether the plan granted writes in the state this change starts from (the first
    parent): ending a plan in the commit that holds its last work is allowed, regaining
    the authority of a paused plan by cancelling it with new code is not."""
    before = transition.olds[0]
    return plan_id in plans.plan_ids(before) and lifecycle.replay(plans.load(before, plan_id)).grants_writes


def _ending(changes: Sequence[Change], artifacts_dir: str) -> frozenset[str]:
    """The plans whose Completion this very change adds: it holds their end."""
    prefix = artifacts_root.encoded(artifacts_root.plans_prefix(artifacts_dir))
    ending = set()
    for c in changes:
        if c.path.startswith(prefix) and c.path.endswith(b"-completion.md") and c.added:
            plan_id, _, name = decode(c.path[len(prefix) :]).partition("/")
            if plans.NUMBERED.match(name):
                ending.add(plan_id)
    return frozenset(ending)


def _each_path_in_one_life(
    transition: Transition, changes: Sequence[Change], plan_ids: Sequence[str], suspects: set[bytes]
) -> bool:
    """A squash of a branch that worked under several plans holds each plan's whole life,
    and no longer says which commit each path came from: each path must be allowed by one
    of those plans (each approved, ended and valid), as each commit of the branch was."""
    changed = {show(c.path) for c in changes}
    refused: list[set[str]] = []
    for plan_id in plan_ids:
        found = [f for f in _under_plan(transition, changes, plan_id, suspects, whole_life=True) if f.blocks]
        if any(f.path not in changed for f in found):
            return False  # a plan that grants nothing at all (unapproved, invalid) spoils the squash
        refused.append({f.path for f in found})
    return not set.intersection(*refused)


# A merge's own change outside the boundary (docs/workflows.md, "A conflicted merge of the
# base"): keep the base's side of the path, commit the merge; for a change the resolution
# truly needs there, a plan that allows it.
MERGE_OUTSIDE = (
    "A merge may change only what its plan allows beyond git's own merge: keep the base's side, "
    "`git checkout MERGE_HEAD -- PATH` (in CI: redo the merge so), then `git commit --no-edit`; "
    "or, if the resolution needs the change, `harness-gate plan new` for it (docs/workflows.md)."
)


def _under_plan(
    transition: Transition, changes: Sequence[Change], plan_id: str, suspects: set[bytes], *, whole_life: bool
) -> list[Finding]:
    """Findings for the change judged under one plan."""
    new = transition.new
    cfg = new.config
    folder = plans.load(new, plan_id)
    life = lifecycle.replay(folder)
    out = [*folder.findings, *life.findings]
    plan_path = artifacts_root.plan_md(folder.path)
    if folder.plan is None or life.policy is None:
        if not out:
            out.append(finding("HG201", plan_path, f"plan `{plan_id}` does not exist"))
        return out
    # A plan's whole life in one commit (a squash merge) is judged by its final policy. A
    # merge's own change (a conflict's resolution: what differs from every parent) on a
    # branch whose plan completed is that branch's work: its final boundary holds it, and
    # CI asks for fresh evidence and a re-review of the changed change (docs/workflows.md).
    settled = life.plan_approval is approvals_mod.Status.APPROVED and not any(f.blocks for f in life.findings)
    grants = life.grants_writes or (
        settled
        and (
            (whole_life and life.state in lifecycle.ENDED)
            or (transition.merge and life.state is lifecycle.PlanState.COMPLETED)
        )
    )
    if not grants:
        if life.plan_approval is approvals_mod.Status.UNAPPROVED:
            out.append(finding("HG202", plan_path, f"plan `{plan_id}` is not approved; {len(changes)} path(s) changed"))
        elif life.state in lifecycle.NO_AUTHORITY and life.state is not lifecycle.PlanState.PLANNING:
            out.append(
                finding("HG209", plan_path, f"plan `{plan_id}` is {life.state.value}; {len(changes)} path(s) changed")
            )
        if not out:
            out.append(finding("HG209", plan_path, f"plan `{plan_id}` grants no write authority now"))
        return out
    patterns = life.policy.boundary
    allowed = boundary_mod.Boundary.cached(patterns)  # compiled once per pattern list (ranges)
    exact = allowed.exact
    shown = ", ".join(f"`{p}`" for p in patterns[:5]) + (" ..." if len(patterns) > 5 else "") or "None"
    # Only suspects can be protected: every other path is judged by the boundary alone.
    for c in changes:
        why = protected(decode(c.path), cfg.source, cfg.artifacts_dir) if c.path in suspects else None
        if why is not None:
            if decode(c.path) not in exact:
                out.append(not_allowed(c.path, why))
            continue
        if c.new_mode == GITLINK and not all(m == GITLINK for m in c.old_modes):
            if decode(c.path) not in exact:
                out.append(finding("HG105", show(c.path), "a new submodule must be named exactly in the boundary"))
            continue
        if not allowed.matches(c.path):
            what = {"A": "added", "D": "deleted"}.get(c.status[:1], "changed")
            path = show(c.path)
            # A non-ASCII path can look the same as a pattern and differ (NFD against NFC):
            # both shown as code points, so the difference can be seen.
            differs = (
                f"; as code points, the path `{code_points(path)}`, the boundary "
                + ", ".join(f"`{code_points(p)}`" for p in patterns[:5])
                if not path.isascii()
                else ""
            )
            out.append(
                finding(
                    "HG101",
                    path,
                    f"{what} outside the write boundary of `{plan_id}` (allowed: {shown}{differs})",
                    hint=MERGE_OUTSIDE if transition.merge else None,
                )
            )
    out.extend(links_leaving(transition, changes, plan_id, allowed, {f.path for f in out}))
    return out


def code_points(text: str) -> str:
    """`text` with every non-ASCII character written `\\uXXXX` (`\\UXXXXXXXX` past the BMP)."""
    return "".join(c if c.isascii() else f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in text)
