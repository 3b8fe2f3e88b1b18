"""Replay a plan folder's artifacts through the Harness v9 state machine (docs/lifecycle.md).

The replay is pure: it reads a PlanFolder and returns the state, the effective
policy and findings for every illegal step. Nothing is trusted from anywhere
but the committed artifacts and approval records.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness_gate import approvals as approvals_mod
from harness_gate import artifacts_root, boundary
from harness_gate.artifacts.artifact import Artifact
from harness_gate.artifacts.kinds import AMENDMENT, BY_SLUG, COMPLETION, PAUSE, REPAIR, REPAIR_PLAN, RESUME, REVIEW
from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.errors import Refused
from harness_gate.findings import Finding, finding
from harness_gate.plans import NumberedArtifact, PlanFolder

DEFAULT_BUDGET = 3
_ROLLED_BACK = "these bytes were approved once, but a newer approval of this artifact replaced them (a rollback)"


class PlanState(str, enum.Enum):
    PLANNING = "planning"  # plan written, not approved at its current bytes
    EXECUTING = "executing"
    VERIFYING = "verifying"  # after a Repair Record: verification must be redone
    REVIEWING = "reviewing"  # a PASS/PASS_WITH_NOTES review exists
    AUTO_REPAIRING = "auto_repairing"
    AWAITING_AMENDMENT = "awaiting_amendment_approval"
    AWAITING_RESUME = "awaiting_resume_approval"
    PAUSED_NO_PROGRESS = "paused_no_progress"
    PAUSED_BLOCKED = "paused_blocked"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    INVALID = "invalid"  # the plan itself does not parse


# docs/lifecycle.md: a completed or paused plan grants no write authority; neither does an
# unapproved one, nor a paused one whose Repair Resume waits for its approval (it is still
# paused). The v9 "reviewing" revocation is enforced through the review's tree binding
# instead: any change after it makes the review stale. A plan awaiting an amendment's
# approval keeps the authority of the state the amendment was written in (`Lifecycle.before`).
NO_AUTHORITY = frozenset(
    {
        PlanState.PLANNING,
        PlanState.AWAITING_RESUME,
        PlanState.PAUSED_NO_PROGRESS,
        PlanState.PAUSED_BLOCKED,
        PlanState.COMPLETED,
        PlanState.CANCELLED,
        PlanState.INVALID,
    }
)
PAUSED = frozenset({PlanState.PAUSED_NO_PROGRESS, PlanState.PAUSED_BLOCKED})
ENDED = frozenset({PlanState.COMPLETED, PlanState.CANCELLED})


@dataclass(frozen=True)
class Policy:
    """The effective write boundary and verification policy."""

    boundary: tuple[str, ...]
    unmodeled_commands: tuple[str, ...]
    verification: dict[str, Any]
    source: str  # the artifact it comes from


@dataclass(frozen=True)
class Lifecycle:
    state: PlanState
    plan_sha256: str | None
    plan_approval: approvals_mod.Status
    amendment_sha256: str | None
    policy: Policy | None
    repairs_used: int
    repair_budget: int
    next_step: str
    findings: tuple[Finding, ...]
    # While an artifact awaits its approval: the state it was written in (an amendment of a
    # paused plan does not lift the pause before its approval).
    before: PlanState | None = None
    # What `harness-gate pause` and `resume` bind (commands/pause.py): the rule that paused
    # the plan ("HG401" for a BLOCKED review), whether its Pause Report is written, the
    # latest review and the latest Pause Report (file names in the folder).
    pause_reason: str = ""
    pause_reported: bool = False
    last_review: str | None = None
    last_pause: str | None = None
    # Every policy that was in force, oldest first (the plan's, then each accepted
    # amendment's): code written under any of them answers to its boundary (approvers).
    policies: tuple[Policy, ...] = ()

    @property
    def grants_writes(self) -> bool:
        state = self.before if self.state is PlanState.AWAITING_AMENDMENT and self.before is not None else self.state
        return state not in NO_AUTHORITY and self.policy is not None and not any(f.blocks for f in self.findings)


# The next step of each state whose advice needs nothing but the state (`next_step`).
_NEXT_STEPS = {
    PlanState.PLANNING: "approve the plan: harness-gate approve",
    PlanState.REVIEWING: "complete it: harness-gate complete",
    PlanState.AUTO_REPAIRING: (
        "repair the review's findings inside the write boundary and commit; then harness-gate verify and "
        "harness-gate review new"
    ),
    **dict.fromkeys(ENDED, "none for this plan (new work needs a new plan: harness-gate plan new)"),
}
_WORKING = "do the work inside the write boundary, harness-gate verify, then harness-gate review new"
_PAUSED_UNREPORTED = "write the Pause Report and commit it: harness-gate pause"
_PAUSED_REPORTED = (
    "resume with more repair rounds (harness-gate resume, then harness-gate approve), amend the "
    "plan (harness-gate plan amend, then harness-gate approve), or cancel it (harness-gate complete "
    "--cancel)"
)


class _Replay:
    def __init__(self, folder: PlanFolder, plan: Artifact) -> None:
        self.folder = folder
        self.findings: list[Finding] = []
        self.amendment_sha: str | None = None
        self.repairs = 0
        self.budget = DEFAULT_BUDGET
        self.no_progress = 0
        self.last_review: NumberedArtifact | None = None
        self.prior_findings: set[str] = set()  # finding ids of the previous review in this cycle
        self.last_pause: NumberedArtifact | None = None
        self.pause_reason = ""  # rule code of the circuit breaker that demands a pause
        self.pause_reported = False
        self.pending: NumberedArtifact | None = None  # an amendment or resume awaiting approval
        self.before: PlanState | None = None  # the state the pending artifact was written in
        self.plan = plan
        self.policy = Policy(
            plan.value("Write Boundary"),
            plan.value("Unmodeled Commands"),
            plan.value("Verification Strategy"),
            plan.path,
        )
        self.policies = [self.policy]
        self.plan_status = approvals_mod.status(folder.approvals, "plan", artifacts_root.PLAN, plan.sha256)
        self.state = PlanState.EXECUTING if self.plan_status is approvals_mod.Status.APPROVED else PlanState.PLANNING
        if self.plan_status is approvals_mod.Status.STALE:
            self.findings.append(
                finding(
                    "HG203",
                    plan.path,
                    "plan.md changed after it was approved; its approval no longer counts",
                )
            )
        elif self.plan_status is approvals_mod.Status.ROLLED_BACK:
            self.findings.append(finding("HG216", plan.path, _ROLLED_BACK))

    # -- helpers ---------------------------------------------------------------------
    def add(self, code: str, entry: NumberedArtifact, message: str, line: int | None = None) -> None:
        self.findings.append(finding(code, entry.path, message, line=line))

    def approval(self, entry: NumberedArtifact, art: Artifact) -> approvals_mod.Status:
        status = approvals_mod.status(self.folder.approvals, art.kind.approval_gate, entry.name, art.sha256)
        if status is approvals_mod.Status.STALE:
            self.add("HG203", entry, "changed after it was approved")
        elif status is approvals_mod.Status.ROLLED_BACK:
            self.add("HG216", entry, _ROLLED_BACK)
        return status

    def check_binding(self, entry: NumberedArtifact, binding: Mapping[str, Any], line: int) -> None:
        if binding["plan_sha256"] != self.plan.sha256:
            self.add("HG410", entry, "bound to another plan hash than plan.md's", line)
        elif binding.get("amendment_sha256", self.amendment_sha) != self.amendment_sha:
            self.add("HG410", entry, "bound to another amendment than the current accepted one", line)

    def wait_for(self, entry: NumberedArtifact, state: PlanState) -> None:
        """`entry` awaits its approval; the state before the first such artifact is kept
        (an amendment written while a resume waits is judged from the pause)."""
        if self.before is None:
            self.before = self.state
        self.pending = entry
        self.state = state

    def pause_needed(self, code: str, state: PlanState) -> None:
        self.pause_reason = code
        self.pause_reported = False
        self.state = state

    # -- the replay ------------------------------------------------------------------
    def run(self) -> None:
        for entry in self.folder.entries:
            art = entry.artifact
            if art is None:
                continue  # its syntax findings are already reported
            if self.state is PlanState.COMPLETED and entry.slug == "review":
                # A completed branch updated from its base may need its change reviewed
                # again (docs/workflows.md); the plan stays completed and grants nothing.
                self.check_binding(entry, art.values["Binding"], art.lines["Binding"])
                self.last_review = entry
                continue
            if self.state in ENDED:
                self.add("HG411", entry, f"the plan is already {self.state.value}")
                continue
            if self.state is PlanState.PLANNING:
                self.add("HG407", entry, "plan.md is not approved at its current bytes")
                continue
            if self.pending is not None and entry.slug not in ("amendment", "completion", "pause"):
                self.add("HG407", entry, f"{self.pending.name} is not approved yet")
                continue
            self.pending = None
            HANDLERS[entry.slug](self, entry, art)
            if self.pending is None:
                self.before = None

    def blocked_by_pause(self, entry: NumberedArtifact) -> bool:
        if self.state in PAUSED:
            code = self.pause_reason or "HG401"
            self.add(
                code,
                entry,
                f"the plan is {self.state.value}: write a Pause Report (harness-gate pause), then a Repair Resume "
                "(harness-gate resume) or a Plan Amendment (harness-gate plan amend)",
            )
            return True
        return False

    def on_review(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        self.check_binding(entry, v["Binding"], lines["Binding"])
        if self.blocked_by_pause(entry):
            return
        verdict = v["Verdict"]
        ids = {f["id"] for f in v["Findings"]}
        if self.state is PlanState.AUTO_REPAIRING:
            # A review right after a REPAIR_REQUIRED one (no Repair Record between: it is
            # optional, docs/lifecycle.md) ends the repair round the first one started.
            self.repairs += 1
        self.last_review = entry
        if verdict in ("PASS", "PASS_WITH_NOTES"):
            self.state = PlanState.REVIEWING
        elif verdict == "BLOCKED":
            self.pause_needed("HG401", PlanState.PAUSED_BLOCKED)
        elif ids & self.prior_findings:
            self.pause_needed("HG403", PlanState.PAUSED_NO_PROGRESS)
        elif self.repairs >= self.budget:
            self.pause_needed("HG402", PlanState.PAUSED_NO_PROGRESS)
        else:
            self.state = PlanState.AUTO_REPAIRING
        self.prior_findings = ids if verdict == "REPAIR_REQUIRED" else set()

    def on_repair(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        binding = v["Binding"]
        self.check_binding(entry, binding, lines["Binding"])
        if self.blocked_by_pause(entry):
            return
        review = self.last_review
        if self.state is not PlanState.AUTO_REPAIRING or review is None:
            self.add("HG401", entry, "a Repair Record follows a REPAIR_REQUIRED review (or an approved Repair Resume)")
            return
        if binding["review"] != review.name:
            self.add(
                "HG410", entry, f"bound to review {binding['review']}, the latest is {review.name}", lines["Binding"]
            )
        addressed = (
            set(v["Findings Addressed"]) - {f["id"] for f in review.artifact.value("Findings")}
            if review.artifact
            else set()
        )
        if addressed:
            self.add(
                "HG410",
                entry,
                f"addresses findings {sorted(addressed)} that {review.name} does not raise",
                lines["Findings Addressed"],
            )
        if binding["round"] != self.repairs + 1:
            self.add("HG410", entry, f"round {binding['round']} should be {self.repairs + 1}", lines["Binding"])
        self.repairs += 1
        self.check_subset(entry, v, lines)
        p = v["Progress"]
        stuck = p["diff_before"] == p["diff_after"] and p["verification_before"] == p["verification_after"]
        self.no_progress = self.no_progress + 1 if stuck else 0
        if self.no_progress >= 2:
            self.pause_needed("HG404", PlanState.PAUSED_NO_PROGRESS)
        else:
            self.state = PlanState.VERIFYING

    def check_subset(self, entry: NumberedArtifact, v: Mapping[str, Any], lines: Mapping[str, int]) -> None:
        for pattern in v["Write Boundary"]:
            if not boundary.inside(pattern, self.policy.boundary):
                self.add(
                    "HG408", entry, f"`{pattern}` is not inside the effective write boundary", lines["Write Boundary"]
                )
        # Every changed file stays inside both the effective and the repair's boundary.
        effective = boundary.Boundary.compile(self.policy.boundary)
        own = boundary.Boundary.compile(v["Write Boundary"])
        for path in v["Changed Files"]:
            raw = path.encode("utf-8", "surrogateescape")
            if not (effective.matches(raw) and own.matches(raw)):
                self.add("HG408", entry, f"changed file `{path}` is outside the write boundary", lines["Changed Files"])
        want = self.policy.verification
        got = v["Verification Strategy"]
        have = {c["id"]: c for c in got["required_commands"]}
        if got["kind"] != want["kind"]:
            self.add(
                "HG409",
                entry,
                f"verification kind changed from {want['kind']} to {got['kind']}",
                lines["Verification Strategy"],
            )
        for cmd in want["required_commands"]:
            mine = have.get(cmd["id"])
            if mine is None or mine["command"] != cmd["command"] or mine.get("shell", False) != cmd.get("shell", False):
                self.add(
                    "HG409",
                    entry,
                    f"required command `{cmd['id']}` is missing or changed",
                    lines["Verification Strategy"],
                )

    def on_pause(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        self.check_binding(entry, v["Binding"], lines["Binding"])
        self.state = PlanState(v["Pause"]["state"])
        self.pause_reported = True
        self.last_pause = entry
        self.no_progress = 0
        self.prior_findings = set()

    def on_resume(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        binding = v["Binding"]
        self.check_binding(entry, binding, lines["Binding"])
        pause = self.last_pause
        if self.state not in PAUSED or pause is None or not self.pause_reported or pause.artifact is None:
            self.add("HG401", entry, "a Repair Resume follows a Pause Report")
            return
        if binding["pause"] != pause.name or binding["pause_sha256"] != pause.artifact.sha256:
            self.add("HG410", entry, f"bound to another pause than {pause.name} at its current bytes", lines["Binding"])
            return
        paused = pause.artifact.value("Pause")
        if binding["latest_diff"] != paused["latest_diff"]:
            self.add("HG410", entry, "bound to another diff revision than the pause", lines["Binding"])
            return
        if binding["latest_verification"] != paused["latest_verification"]:
            self.add("HG410", entry, "bound to another verification fingerprint than the pause", lines["Binding"])
            return
        status = self.approval(entry, art)
        if status is not approvals_mod.Status.APPROVED:
            self.wait_for(entry, PlanState.AWAITING_RESUME)
            return
        self.budget += v["Additional Budget"]["rounds"]
        self.pause_reason = ""
        self.state = PlanState.AUTO_REPAIRING if self.last_review is not None else PlanState.EXECUTING

    def on_amendment(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        self.check_binding(entry, v["Binding"], lines["Binding"])
        if not any(d["material"] for d in v["Deltas"].values()):
            self.add("HG406", entry, "no declared delta is material", lines["Deltas"])
        status = self.approval(entry, art)
        if status is not approvals_mod.Status.APPROVED:
            self.wait_for(entry, PlanState.AWAITING_AMENDMENT)
            return
        self.amendment_sha = art.sha256
        self.policy = Policy(v["Write Boundary"], v["Unmodeled Commands"], v["Verification Strategy"], entry.path)
        self.policies.append(self.policy)
        # An accepted amendment is a new policy: counters and breakers start over.
        self.repairs, self.budget, self.no_progress = 0, DEFAULT_BUDGET, 0
        self.prior_findings, self.pause_reason, self.last_review = set(), "", None
        self.state = PlanState.EXECUTING

    def on_completion(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        binding = v["Binding"]
        self.check_binding(entry, binding, lines["Binding"])
        if v["Outcome"] == "cancelled":
            self.state = PlanState.CANCELLED
            return
        review = self.last_review
        ok = (
            self.state is PlanState.REVIEWING
            and review is not None
            and review.artifact is not None
            and binding["review"] == review.name
            and binding["review_sha256"] == review.artifact.sha256
        )
        if not ok:
            self.add(
                "HG405",
                entry,
                "no PASS/PASS_WITH_NOTES review of the current plan precedes it, or the binding names another",
                lines["Binding"],
            )
            return
        self.state = PlanState.COMPLETED

    def on_repair_plan(self, entry: NumberedArtifact, art: Artifact) -> None:
        v, lines = art.values, art.lines
        # Strict/manual compatibility: validated, never grants, never moves state.
        if v["Repair Context"]["plan_sha256"] != self.plan.sha256:
            self.add("HG410", entry, "bound to another plan hash than plan.md's", lines["Repair Context"])

    def next_step(self) -> str:
        s = self.state
        if s in (PlanState.AWAITING_AMENDMENT, PlanState.AWAITING_RESUME):
            return f"approve {self.pending.name if self.pending else 'it'}: harness-gate approve"
        if s in PAUSED:
            return _PAUSED_REPORTED if self.pause_reported else _PAUSED_UNREPORTED
        return _NEXT_STEPS.get(s, _WORKING)


# Each numbered artifact kind's step of the replay, by slug: every kind of artifacts/kinds.py
# but the plan itself (a test keeps the two in step). plans.load lists no file of another
# slug (HG515), so a slug missing here is the program's error, reported as one (exit 2).
HANDLERS: Mapping[str, Callable[[_Replay, NumberedArtifact, Artifact], None]] = {
    REVIEW.slug: _Replay.on_review,
    REPAIR.slug: _Replay.on_repair,
    PAUSE.slug: _Replay.on_pause,
    RESUME.slug: _Replay.on_resume,
    AMENDMENT.slug: _Replay.on_amendment,
    COMPLETION.slug: _Replay.on_completion,
    REPAIR_PLAN.slug: _Replay.on_repair_plan,
}


def replay(folder: PlanFolder) -> Lifecycle:
    """The folder's lifecycle; replayed once per folder (a pure function of it)."""
    life: Lifecycle | None = folder.memo.get("replay")
    if life is None:
        life = folder.memo["replay"] = _replay(folder)
    return life


def _replay(folder: PlanFolder) -> Lifecycle:
    if folder.plan is None:
        return Lifecycle(PlanState.INVALID, None, approvals_mod.Status.UNAPPROVED, None, None, 0, 0, "fix plan.md", ())
    r = _Replay(folder, folder.plan)
    r.run()
    return Lifecycle(
        r.state,
        r.plan.sha256,
        r.plan_status,
        r.amendment_sha,
        r.policy,
        r.repairs,
        r.budget,
        r.next_step(),
        tuple(r.findings),
        before=r.before if r.pending is not None else None,
        pause_reason=r.pause_reason,
        pause_reported=r.pause_reported,
        last_review=r.last_review.name if r.last_review else None,
        last_pause=r.last_pause.name if r.last_pause else None,
        policies=tuple(r.policies),
    )


def folder_findings(snap: ArtifactsTree, plan_id: str) -> list[Finding]:
    """What `lint` finds in one plan folder: its artifacts, its lifecycle and its evidence log."""
    from harness_gate import evidence, plans  # noqa: PLC0415  (lint only)

    folder = plans.load(snap, plan_id)
    life = replay(folder)
    log = artifacts_root.evidence_log(folder.path)
    problems = evidence.validate(log, snap.files[log]) if log in snap.files else []
    if log in snap.logs:
        problems = evidence.validate_file(log, snap.logs[log])
    return [*folder.findings, *life.findings, *problems]


def approval_blockers(folder: PlanFolder, path: str) -> list[Finding]:
    """Why an artifact is not put before the approver: the lifecycle already rejects it
    (stale binding, no material delta, out of order), and a `y` to it would grant nothing.
    Stale, rolled back or awaiting approval (HG203, HG216, HG407) is exactly what a new
    `y` is for."""
    life = replay(folder)
    return [
        f for f in (*folder.findings, *life.findings) if f.path == path and f.code not in ("HG203", "HG216", "HG407")
    ]


def awaiting_approval(folder: PlanFolder) -> str:
    """The artifact a bare `approve` means: the plan until it is approved, then the newest
    gated artifact (an amendment, a resume) while it waits for its approval."""
    plan = folder.plan
    if (
        plan is None
        or approvals_mod.status(folder.approvals, "plan", artifacts_root.PLAN, plan.sha256)
        is not approvals_mod.Status.APPROVED
    ):
        return artifacts_root.PLAN
    for entry in reversed(folder.entries):
        approval_gate = BY_SLUG[entry.slug].approval_gate
        if approval_gate:
            sha = entry.artifact.sha256 if entry.artifact else ""
            if (
                approvals_mod.status(folder.approvals, approval_gate, entry.name, sha)
                is not approvals_mod.Status.APPROVED
            ):
                return entry.name
            break
    return artifacts_root.PLAN


def require_open(folder: PlanFolder, life: Lifecycle, *, rereview: bool = False) -> None:
    """Refuse (HG411) a new artifact for a plan that has ended: the rule `lint` applies to
    a folder (an artifact after the Completion), checked before one is written.

    `rereview`: a review of a completed plan is the one exception. An update from the base
    can leave a completed plan's code unverified (`status` says so), and a new review of
    it, with fresh evidence, is how that code is passed again; the plan stays completed. A
    cancelled plan was never reviewed to an end, so nothing re-reviews it."""
    ended = ENDED - {PlanState.COMPLETED} if rereview else ENDED
    if life.state in ended:
        raise Refused(
            "HG411",
            artifacts_root.plan_md(folder.path),
            f"plan `{folder.plan_id}` is already {life.state.value}: start a new plan instead",
        )


def require_no_pending_amendment(folder: PlanFolder, life: Lifecycle) -> None:
    """Refuse (HG407) a second amendment while one waits for its approval: the next one
    binds the amendment in force, and the waiting one is not in force yet."""
    if life.state is PlanState.AWAITING_AMENDMENT:
        raise Refused(
            "HG407",
            artifacts_root.plan_md(folder.path),
            "an amendment is waiting for its approval",
            "Approve it first: harness-gate approve",
        )


def require_paused(folder: PlanFolder, life: Lifecycle, *, reported: bool) -> None:
    """Refuse (HG401) a Pause Report (`reported` False) or a Repair Resume (`reported`
    True) the lifecycle would reject: the plan is not paused, or its Pause Report is
    written already or not yet."""
    rel = artifacts_root.plan_md(folder.path)
    if life.state not in PAUSED:
        raise Refused(
            "HG401", rel, f"plan `{folder.plan_id}` is {life.state.value}, not paused", f"Next: {life.next_step}."
        )
    if life.pause_reported != reported:
        raise Refused(
            "HG401",
            rel,
            f"plan `{folder.plan_id}` has its Pause Report already ({life.last_pause})"
            if life.pause_reported
            else f"plan `{folder.plan_id}` is paused without a Pause Report",
            f"Next: {life.next_step}.",
        )


# Why a plan paused, by the rule that paused it (_Replay.pause_needed): a Pause Report's reason.
PAUSE_REASONS = {
    "HG401": "{review} is BLOCKED",
    "HG402": "the repair budget is spent ({rounds} rounds)",
    "HG403": "{findings} reported by two consecutive reviews",
    "HG404": "two Repair Records in a row without progress",
}
