"""`harness-gate approve`: a human's `y` to a plan, an amendment or a repair resume,
appended to the plan's approvals.jsonl."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from harness_gate import approvals as approvals_mod
from harness_gate import artifacts_root, artifacts_tree, fsutil, git, governance, lifecycle, plans
from harness_gate import report as report_mod
from harness_gate.artifacts.artifact import Artifact
from harness_gate.artifacts.parse import parse_artifact
from harness_gate.errors import HarnessGateError, Refused, not_enough_history, usage
from harness_gate.report import Report
from harness_gate.state_facts import GitFacts


def approve(cwd: Path, plan_id: str | None, artifact: str | None, stdin: BinaryIO, out: TextIO, *, tty: bool) -> Report:  # noqa: PLR0913  (one argument per command-line option, and the terminal's streams)
    # Before anything is read: an agent that ran `plan amend` must not answer its own `y`.
    approvals_mod.refuse_inside_agent(os.environ)
    root = git.toplevel(cwd)
    snap = artifacts_tree.from_worktree(root)
    if not snap.active:
        return report_mod.inactive("approve")
    plan_id = governance.plan_id_for(snap, plan_id, GitFacts(snap.root))
    folder = plans.load(snap, plan_id)
    target = _approval_target(folder, artifact, cwd, root)
    if artifact is None and snap.config.approvers:
        target = _in_force(folder, target)
    path = f"{folder.path}/{target}"
    if path not in snap.files:
        raise usage(f"{path} does not exist")
    art, found = parse_artifact(
        path, snap.files[path], artifacts_dir=snap.artifacts_dir, max_bytes=snap.config.max_artifact_bytes
    )
    if art is None:
        raise Refused.by(found, "not approvable: fix the artifact first")
    unapprovable = approvals_mod.not_approvable(art)
    if unapprovable is not None:
        raise Refused.by([unapprovable])
    approval_gate = art.kind.approval_gate
    log_problems = [f for f in folder.findings if f.path.endswith("/" + artifacts_root.APPROVALS) and f.blocks]
    if log_problems:
        raise Refused.by(log_problems, "approvals.jsonl is invalid; nothing appended")
    approver = git.ident(root)
    if not approvals_mod.valid_approver(approver):
        raise usage(
            f"the git identity {approver!r} holds characters an approval record cannot carry",
            "Set a plain `git config user.name` and `user.email`.",
        )
    if approvals_mod.status(folder.approvals, approval_gate, target, art.sha256) is approvals_mod.Status.APPROVED:
        wanted = _wanted_from(snap, folder, path, approver)
        if wanted is None:
            return Report("approve", lines=(f"{path} is already approved at sha256 {art.sha256}",))
        out.write(f"{path} is approved; {wanted}\n")
    refused = lifecycle.approval_blockers(folder, path)
    if refused:
        raise Refused.by(refused, "not approvable: fix the artifact first")
    out.write("".join(f"{line}\n" for line in _what_is_approved(art)))
    out.write(f"artifact: {path}\nsha256:   {art.sha256}\napprover: {approver}\n{art.kind.gate_line} ")
    out.flush()
    approvals_mod.require_yes(_answer(stdin, out, tty=tty), path)
    repository = _repository(root)
    line = approvals_mod.next_record(
        artifacts_root.approvals_log(folder.path), folder.approvals, approval_gate, target, art.sha256,
        approver=approver, plan=plan_id, repository=repository,
    )  # fmt: skip
    log = root / artifacts_root.approvals_log(folder.path)
    fsutil.append_record(log, line)
    return Report(
        "approve",
        data={"artifact": path, "sha256": art.sha256, "gate": approval_gate},
        lines=(
            f"Approval activated: {approval_gate} {path} sha256 {art.sha256}",
            f"recorded in {artifacts_root.approvals_log(folder.path)}",
            # A new artifact is untracked: `git commit -a` would leave it out, and the
            # approval would then name bytes the commit does not hold.
            f"next: commit both: git add {path} {artifacts_root.approvals_log(folder.path)} && git commit",
            *_sandbox_line(root),
        ),
    )


def _in_force(folder: plans.PlanFolder, target: str) -> str:
    """Nothing awaits a first approval: a bare `approve` by a further approver means the
    artifact that put the boundary in force (an accepted amendment, say)."""
    life = lifecycle.replay(folder)
    settled = target == artifacts_root.PLAN and life.plan_approval is approvals_mod.Status.APPROVED
    if settled and life.policy is not None and life.policy.source.startswith(folder.path + "/"):
        return life.policy.source.rsplit("/", 1)[1]
    return target


def _answer(stdin: BinaryIO, out: TextIO, *, tty: bool) -> bytes:
    """The approver's answer to the prompt, bounded."""
    if tty:
        raw = stdin.readline(approvals_mod.MAX_ANSWER_BYTES)
        return raw + _pending(stdin)  # a pasted second line is part of the answer, and refused
    raw = stdin.read(approvals_mod.MAX_ANSWER_BYTES + 1)
    out.write("\n")  # the piped answer is not echoed; end the prompt line
    return raw


def _repository(root: Path) -> str | None:
    """The record binds the repository by its root commit (None before the first commit)."""
    head = git.head(root)
    if head is not None and git.is_shallow(root):
        # A shallow clone's cut looks like a root commit: the record would name a commit
        # that is no root of the real history, and grant nothing anywhere else.
        raise not_enough_history("cannot approve in a shallow clone: its root commit is not the repository's")
    return min(git.root_commits(root, head)) if head else None


def _wanted_from(snap: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder, path: str, approver: str) -> str | None:
    """What an `[[approvers]]` rule still wants of an approved artifact that this approver
    can give (docs/approvers.md), or None: then a second record would add nothing."""
    if not snap.config.approvers:
        return None
    from harness_gate import approver_counts, approvers  # noqa: PLC0415

    me = approvers.principal_of(approver)
    found = approver_counts.counted(snap.root, snap, folder.plan_id)
    if me in found.uncommitted:
        return None  # recorded already: it counts once committed, signed
    for v in found.views:
        if v["artifact"] == path and v["needed"] and me in v["waiting_for"]:
            return f"the `{v['rule']}` approvers rule wants {v['needed']} more approval(s): yours is recorded beside"
    return None


def _sandbox_line(root: Path) -> list[str]:
    """The agent's sandbox rules follow the approved boundary: the one that moved now
    leaves them behind until `agent-sandbox` writes them again (`status` says so too)."""
    from harness_gate.commands import agent_sandbox  # noqa: PLC0415

    try:
        stale = agent_sandbox.stale(root)
    except (OSError, HarnessGateError):
        stale = ["the agent sandbox rules"]  # not readable: not known to hold
    if not stale:
        return []
    return [
        f"then: run `harness-gate agent-sandbox` and restart the agent: {', '.join(stale)} still hold the boundary "
        "approved before"
    ]


def _what_is_approved(art: Artifact) -> list[str]:
    """What a `y` approves, said before the hash: a human approves an objective, a boundary
    and commands (or an amendment's changes, a resume's rounds), not a hash."""

    def commands(strategy: dict[str, Any]) -> list[str]:
        return [f"  {c['id']}: {c['command']}  (timeout {c['timeout_seconds']}s{', shell' if c.get('shell') else ''})"
                for c in strategy["required_commands"]]  # fmt: skip

    def patterns(items: Sequence[str]) -> list[str]:
        return [f"  {p}" for p in items] or ["  None (no path outside the artifacts root may change)"]

    title = art.kind.title
    if title == "Plan":
        return [
            f"objective: {art.value('Objective')}",
            "write boundary:", *patterns(art.value("Write Boundary")),
            "verification commands:", *commands(art.value("Verification Strategy")),
            *(["commands whose writes cannot be modeled:", *(f"  {c}" for c in art.value("Unmodeled Commands"))]
              if art.value("Unmodeled Commands") else []),
            "",
        ]  # fmt: skip
    if title == "Plan Amendment":
        changed = [f"  {name}: {d['summary']}" for name, d in art.value("Deltas").items() if d["material"]]
        return [
            "changes (material):", *changed,
            f"objective: {art.value('Objective')}",
            "write boundary (complete, as amended):", *patterns(art.value("Write Boundary")),
            "verification commands (as amended):", *commands(art.value("Verification Strategy")),
            "",
        ]  # fmt: skip
    if title == "Repair Resume":
        return [f"additional repair rounds: {art.value('Additional Budget')['rounds']}", ""]
    return []


def _pending(stdin: BinaryIO) -> bytes:
    """Whatever a terminal already holds after the first line (a paste), without waiting."""
    import select  # noqa: PLC0415

    try:
        fd = stdin.fileno()
        if select.select([fd], [], [], 0.2)[0]:
            return os.read(fd, 4096) or b""
    except (OSError, ValueError):
        return b""
    return b""


def _approval_target(folder: plans.PlanFolder, artifact: str | None, cwd: Path, root: Path) -> str:
    if artifact is not None:
        name = artifact
        candidate = (cwd / artifact).resolve()
        if candidate.exists():
            try:
                rel = candidate.relative_to(root.resolve()).as_posix()
            except ValueError:
                raise usage(f"{artifact} is outside the repository") from None
            if rel.rsplit("/", 1)[0] != folder.path:
                raise usage(f"{artifact} is not in {folder.path}/", "Use --plan to pick another plan.")
            name = rel.rsplit("/", 1)[1]
        return name
    return lifecycle.awaiting_approval(folder)


def stdin_is_tty() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
