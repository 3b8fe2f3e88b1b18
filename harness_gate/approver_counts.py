"""The approvers rules counted as CI will count them, for `status` and `approve`: on the
HEAD commit, its records' signatures verified against the base branch's
allowed_signers, the rules and the CODEOWNERS file read from the base. Records not yet
committed count for nothing there (no commit of theirs is signed yet): they are named
apart."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import approvers, artifacts_root, artifacts_tree, git, lifecycle, plans, trust
from harness_gate.errors import HarnessGateError


@dataclass(frozen=True)
class Counted:
    views: tuple[dict[str, Any], ...]  # approvers.view of the HEAD state
    uncommitted: tuple[str, ...]  # principals named by records the work tree holds and HEAD does not


def counted(root: Path, artifacts: artifacts_tree.ArtifactsTree, plan_id: str) -> Counted:
    if not artifacts.config.approvers:
        return Counted((), ())
    try:
        base = git.default_base(root, artifacts.config.base_branch)
    except HarnessGateError:
        base = None  # no base branch here: HEAD's records are counted by name
    cfg = artifacts_tree.read_config(root, base) if base is not None else artifacts.config
    with trust.head_state(root, cfg, base) as head:
        if head is None or artifacts_root.plan_file(artifacts.artifacts_dir, plan_id) not in head.files:
            folder = plans.load(artifacts, plan_id)  # nothing committed yet: the work tree, by name
            return Counted(tuple(approvers.view(artifacts, folder, lifecycle.replay(folder))), ())
        folder = plans.load(head, plan_id)
        views = tuple(approvers.view(head, folder, lifecycle.replay(folder)))
        committed = {(a.seq, a.sha256) for a in folder.approvals}
    here = plans.load(artifacts, plan_id)
    fresh = [a for a in here.approvals if (a.seq, a.sha256) not in committed]
    return Counted(views, tuple(dict.fromkeys(approvers.principal_of(a.approver) for a in fresh)))
