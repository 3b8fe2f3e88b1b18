"""`harness-gate check`: resolve the change set and read its states; ranges.py judges them.

Modes: the index (`--staged`, pre-commit), a commit range (`--range A..B`, pre-push),
and a pull request (`--base REF [--head REF]`, CI). The configuration always comes from
the trusted side: HEAD for the index, the range's base otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import artifacts_tree, cache, changesets, git, governance, lean_record, ranges
from harness_gate.errors import not_enough_history, usage
from harness_gate.findings import Finding
from harness_gate.ranges import Head
from harness_gate.report import INACTIVE, Report

ADOPTING = "harness-gate: a repository's first commit adopts harness-gate and is not judged"


class ChangeSet(enum.Enum):
    """Which change set a check judges; the value is the report's `mode`."""

    STAGED = "staged"  # the index against HEAD (pre-commit)
    RANGE = "range"  # a pushed commit range A..B (pre-push)
    BASE = "base"  # a pull request: the commits of its head that the base REF does not have (CI)
    PUSH_NEW = "push-new"  # a new branch: every commit the remote does not have yet


@dataclass(frozen=True)
class ChangeSetRequest:
    change_set: ChangeSet
    old: str = ""  # range start, base ref, or remote name for a new branch
    new: str = ""  # range end or head ref
    # Set when the environment named the change set (a GitLab pipeline): its stage, and
    # whether the commits are landing on the base branch (a merge train, a push there).
    stage: str | None = None
    landed: bool = False


def infer_mode(  # noqa: PLR0911  (one return per case, in the order they are judged)
    stage: str | None, staged: bool, range_: str | None, base: str | None, head: str | None
) -> ChangeSetRequest:
    """Pick the change set from the options, then pre-commit's environment; never guess."""
    given = [x for x in (staged, range_, base) if x]
    if len(given) > 1:
        raise usage("give only one of --staged, --range and --base")
    if head and not base:
        raise usage("--head goes with --base")
    if staged:
        return ChangeSetRequest(ChangeSet.STAGED)
    if range_:
        old, sep, new = range_.partition("..")
        if not sep or not old or not new or new.startswith("."):
            raise usage(f"--range {range_!r}: expected A..B")
        return ChangeSetRequest(ChangeSet.RANGE, old, new)
    if base:
        return ChangeSetRequest(ChangeSet.BASE, base, head or "HEAD")
    env = os.environ
    from_ref, to_ref = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")
    if from_ref and to_ref and stage in (None, "pre-push"):
        return ChangeSetRequest(ChangeSet.RANGE, from_ref, to_ref)
    if stage == "pre-push" and env.get("PRE_COMMIT_REMOTE_NAME"):
        # pre-commit sets no refs when the pushed branch starts at a root commit:
        # check every commit the remote does not have yet.
        return ChangeSetRequest(
            ChangeSet.PUSH_NEW, env["PRE_COMMIT_REMOTE_NAME"], env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD"
        )
    if stage in (None, "ci") and env.get("GITLAB_CI") == "true" and env.get("PRE_COMMIT") != "1":
        from harness_gate import gitlab  # noqa: PLC0415  (only in a GitLab job)

        found = gitlab.pipeline(env)
        if found is not None:
            return ChangeSetRequest(ChangeSet.BASE, found.base, found.head, stage="ci", landed=found.landed)
    if stage == "pre-commit" or (stage is None and env.get("PRE_COMMIT") == "1"):
        return ChangeSetRequest(ChangeSet.STAGED)
    raise usage(
        "cannot tell which changes to check",
        "Pass --staged (pre-commit), --range A..B (pre-push) or --base REF [--head REF] (CI).",
    )


def run_check(  # noqa: PLR0913  (one argument per command-line option)
    cwd: Path,
    *,
    stage: str | None,
    mode: ChangeSetRequest,
    plan_id: str | None,
    config_file: str | None,
    reverify: bool = False,
    landed: bool = False,
    location: git.Location | None = None,
    view: bool = True,
) -> Report:
    """`landed`: the range is (or is about to become) the base branch's own history, as
    after a merge to the default branch or in a merge queue's group: evidence recorded for
    the pull request's head is accepted with a warning when the merged tree differs, and a
    review may speak of each plan's change as it landed (docs/workflows.md). `view`: a
    check of commits adds the reviewer's view to its report (False where nothing shows it)."""
    location = location or git.locate(cwd)
    root = location.toplevel
    governance.checked_id(plan_id)
    stage = stage or mode.stage or ("pre-commit" if mode.change_set is ChangeSet.STAGED else "pre-push")
    landed = landed or mode.landed
    cache.configure(location.cache_dir)
    runs: list[Callable[[], list[Finding]]] = []
    try:
        with contextlib.ExitStack() as stack:
            lean: Callable[[], None] | None = None
            if mode.change_set is ChangeSet.STAGED:
                findings, data, head, lean = _check_index(location, plan_id, config_file, stack)
            else:
                findings, data, head = _check_commits(root, mode, plan_id, config_file, stack)
            if head is not None:
                head = dataclasses.replace(head, landed=landed)
                findings.extend(ranges.requirements(root, stage, head, plan_id, reverify=runs if reverify else None))
    finally:
        cache.configure(None)
        git.discard_started()
    data = {"stage": stage, "mode": mode.change_set.value, **data}
    if view and head is not None and head.commit is not None and data.get("active", True) and not data.get("adopting"):
        # The reviewer's view of the range (prview.py): never on the pre-commit path. Read
        # before the commands run, as every other fact is (a re-run's verdict is the head's,
        # never a commit's).
        data.update(_view(root, head, plan_id, findings))
    # `--reverify` runs the plans' commands, which run the change's own code: only now,
    # when every other fact (history, signatures, reviews, the head's fingerprint, the
    # reviewer's view) is established, so nothing they write (in .git, say) can change any.
    for run in runs:
        findings.extend(run())
    if runs and data.get("plans"):
        from harness_gate import prview  # noqa: PLC0415  (not on the pre-commit path)

        data["plans"] = [prview.reverified(v, findings) for v in data["plans"]]
    if data.get("adopting"):
        return Report("check", data=data, lines=(ADOPTING,))
    if not data.get("active", True):
        return Report("check", data=data, lines=(INACTIVE,))
    # Report-only as the trusted configuration says it (the one every state was judged
    # under: HEAD for the index, the range's base), never the change's own.
    report_only = head is not None and head.artifacts_tree.config.report_only
    if report_only:
        data["report_only"] = True
    if lean is not None and not findings and stage == lean_record.STAGE and not (plan_id or config_file or reverify):
        lean()  # the next ordinary commit is answered from it (lean.py)
    # One problem reached by two rules (a plan folder's log, read for its artifacts and for
    # its authority) is reported once.
    return Report("check", tuple(dict.fromkeys(findings)), data, report_only=report_only)


def in_ci() -> bool:
    """`CI` set as CI services set it (GitHub Actions, pre-commit.ci, GitLab: `true`)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _view(root: Path, head: Head, plan_id: str | None, findings: Sequence[Finding]) -> dict[str, Any]:
    """What a reviewer reads (prview.py): `head`, `plans` (each plan the range used or
    brought, as its head commit holds it) and `commit_verdicts` (each judged commit's
    verdict; `commits` stays their count)."""
    from harness_gate import prview  # noqa: PLC0415  (not on the pre-commit path)

    assert head.commit is not None  # noqa: S101  (ranges only)
    artifacts = head.artifacts_tree
    here = set(governance.present(artifacts))
    wanted = sorted(({*head.used, *ranges.plans_brought(head, here)} if plan_id is None else {plan_id}) & here)
    tree = head.tree() if wanted else ""
    signed = bool(head.anchors is not None and head.anchors.signed)
    views = [
        prview.plan_view(root, artifacts, p, tree, commit=head.commit, signed=signed, findings=findings) for p in wanted
    ]
    return {
        "head": head.commit,
        "plans": views,
        "commit_verdicts": prview.commit_views(root, head.judged, findings),
    }


def _check_index(
    location: git.Location, plan_id: str | None, config_file: str | None, stack: contextlib.ExitStack[bool | None]
) -> tuple[list[Finding], dict[str, Any], Head | None, Callable[[], None] | None]:
    """The index's findings, the report's data, the head state, and what writes the lean
    path's record should the check pass (lean_record.py)."""
    started = lean_record.before() if plan_id is None and config_file is None else None
    built = changesets.index(location, config_file, stack, in_ci=in_ci())
    if isinstance(built, changesets.Skipped):
        return [], built.data, None, None
    found, data, head = ranges.judge_index(built, plan_id)
    transition = built.transition
    lean = None
    if started is not None:
        lean = functools.partial(lean_record.write, started, transition, set(head.used))
    return found, data, head, lean


def _check_commits(
    root: Path,
    mode: ChangeSetRequest,
    plan_id: str | None,
    config_file: str | None,
    stack: contextlib.ExitStack[bool | None],
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    new_ref = git.resolve(root, mode.new)
    if new_ref is None:
        raise usage(f"{mode.new!r} does not name a commit")
    if mode.change_set is ChangeSet.PUSH_NEW:
        return _push_new(root, new_ref, mode.old, plan_id, config_file, stack=stack)
    old_ref = git.resolve(root, mode.old) if set(mode.old) != {"0"} else None
    if old_ref is None:
        if git.is_shallow(root):
            raise not_enough_history(f"{mode.old!r} is not in this shallow clone")
        remote = os.environ.get("PRE_COMMIT_REMOTE_NAME")
        if mode.change_set is ChangeSet.RANGE and remote:
            # A force-push over a commit never fetched: the remote's branches bound it.
            return _push_new(root, new_ref, remote, plan_id, config_file, stack=stack)
        raise usage(f"{mode.old!r} does not name a commit")
    if mode.change_set is ChangeSet.BASE and git.merge_base(root, old_ref, new_ref) is None:
        if git.is_shallow(root):
            raise not_enough_history(f"no merge base of {mode.old} and {mode.new} in this shallow clone")
        raise usage(f"{mode.old} and {mode.new} share no history; nothing can be compared")
    pushed = mode.change_set is ChangeSet.RANGE
    return changesets.commit_range(root, config_file, old_ref, new_ref, stack, pushed=pushed).judge(plan_id)


def _push_new(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    root: Path,
    new_ref: str,
    remote: str,
    plan_id: str | None,
    config_file: str | None,
    *,
    stack: contextlib.ExitStack[bool | None],
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    """A push with no usable old tip: every commit the remote's branches do not have."""
    listing = git.commits(root, new_ref, [], not_remote=remote)
    cfg = artifacts_tree.trusted_config(root, config_file, new_ref, from_rev=True)
    # No commit here is trusted: signed approvals have no allowed_signers to check against.
    anchors = changesets.anchors(root, cfg, stack, base=None, head=new_ref)
    return ranges.judge(
        root,
        listing,
        cfg=cfg,
        head_oid=new_ref,
        plan_id=plan_id,
        every=ranges.judges_every_pushed(root, remote),
        anchors=anchors,
        fork_from=git.default_base(root, cfg.base_branch),
    )
