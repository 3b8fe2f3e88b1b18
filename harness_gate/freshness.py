"""Freshness: whether a state's evidence and reviews speak of it.

Evidence is fresh for a tree when each required command's newest record passed on that
tree under the plan's current policy. A review speaks of one exact tree (its fingerprint)
and of the branch's own change (`changes`), under one exact plan (and amendment): a change
to the plan, or to the branch's own change, leaves the plan without a fresh review; an
update from the base does not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from harness_gate import artifacts_root, artifacts_tree, evidence, lifecycle, plans, runner
from harness_gate.artifacts.artifact import Artifact
from harness_gate.config import Config
from harness_gate.errors import Refused
from harness_gate.findings import Finding, Severity, finding

if TYPE_CHECKING:
    from harness_gate.state_facts import RepoFacts

SHOWN_PATHS = 10
# What CI blocks a branch on that the plan's own way to its end clears (`status` names the
# step for each): stale or missing evidence (`verify`), a review that does not count or
# does not pass, a plan still open.
EVIDENCE_CODES = frozenset(
    {"HG301", "HG302", "HG303", "HG304", "HG305", "HG306", "HG307", "HG308", "HG309", "HG310", "HG320"}
)
STALE_REVIEW, FAILED_REVIEW, OPEN_PLAN = "HG413", "HG414", "HG415"
# A cancelled plan whose code is still on the branch: nothing reviewed it, and the way out
# is to land the plan's folder alone (head_requirements.requirements).
CANCELLED_CODE = "HG419"
LIFECYCLE_CODES = EVIDENCE_CODES | {STALE_REVIEW, FAILED_REVIEW, OPEN_PLAN}
PASSING = ("PASS", "PASS_WITH_NOTES")


def required_commands(life: lifecycle.Lifecycle) -> list[Mapping[str, Any]]:
    assert life.policy is not None  # noqa: S101  (checked by plan_for)
    commands: list[Mapping[str, Any]] = life.policy.verification["required_commands"]
    return commands


def state_freshness(
    artifacts: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str
) -> tuple[list[evidence.Freshness], list[Finding]]:
    """Freshness of every required command for the state whose fingerprint is `tree`."""
    if life.policy is None or life.plan_sha256 is None:
        return [], []
    rel = artifacts_root.evidence_log(folder.path)
    commands = required_commands(life)
    ids = [c["id"] for c in commands]
    if rel in artifacts.logs:
        records, problems = evidence.newest_in_file(rel, artifacts.logs[rel], ids)
    else:
        records, problems = evidence.newest(rel, artifacts.files.get(rel, b""), ids)
    policy = evidence.policy_hash(life.policy.verification)
    fresh = evidence.freshness(
        records, commands, tree=tree, plan=folder.plan_id, plan_sha256=life.plan_sha256, policy=policy
    )
    return fresh, problems


def freshness_findings(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    facts: RepoFacts,
    artifacts: artifacts_tree.ArtifactsTree,
    folder: plans.PlanFolder,
    life: lifecycle.Lifecycle,
    tree: str,
    *,
    accept: Callable[[str], bool] | None = None,
) -> list[Finding]:
    """Why each required command's evidence is not fresh for `tree`. `accept` (a landed
    range): a PASS for another tree it accepts is a warning, not a block."""
    fresh, problems = state_freshness(artifacts, folder, life, tree)
    rel = artifacts_root.evidence_log(folder.path)
    out = list(problems)
    for f in fresh:
        if f.fresh:
            continue
        message = f"`{f.command_id}`: {f.reason}"
        severity = Severity.ERROR
        if f.reason == "tree-moved" and f.record is not None:
            message += f" ({_moved(facts, f.record.tree, tree)})"
            if accept is not None and f.record.status == "PASS" and accept(f.record.tree):
                severity = Severity.WARNING
                message += "; it passed on the pull request's tree, the merged tree was not verified"
        elif f.detail:
            message += f" ({f.detail})"
        # The newest record for the command is what is stale: its line, where it is known.
        line = f.record.line if f.record is not None and f.record.line > 0 else None
        out.append(finding(evidence.REASON_CODES[f.reason], rel, message, line=line, severity=severity))
    return out


def _moved(facts: RepoFacts, verified: str, tree: str) -> str:
    """What can be said of evidence for another tree. The verified tree exists only where
    `verify` ran (it is never committed): a fresh clone says so, with the same verdict."""
    if not facts.has_tree(verified):
        return f"verified tree {verified[:12]}, not in this clone; this tree {tree[:12]}"
    paths = facts.changed_paths(verified, tree, SHOWN_PATHS + 1)
    shown = ", ".join(paths[:SHOWN_PATHS]) + (" ..." if len(paths) > SHOWN_PATHS else "")
    return f"verified tree {verified[:12]}, this tree {tree[:12]}; differs in {shown or 'no file'}"


def reverify(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    facts: RepoFacts, cfg: Config, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str, *, cwd: Path
) -> list[Finding]:
    """CI runs the required commands itself, in the work tree at `cwd` (the checked-out
    head), and uses its own results instead of the recorded ones (nothing is appended);
    `facts` fingerprints the work tree before and after each command."""
    # Untracked outputs already there (an earlier step's) are inputs: no command wrote them.
    here = facts.fingerprint_worktree(cfg, outputs_are_inputs=True)
    rel = artifacts_root.evidence_log(folder.path)
    if here != tree:
        return [
            finding(
                "HG302",
                rel,
                f"--reverify needs the head checked out: the work tree is {here[:12]}, the head is {tree[:12]}",
            )
        ]
    out = []
    for cmd in required_commands(life):
        # What the runner reads when the step ends: a command found the files by their path
        # (its environment names none of them) and wrote there. Put back, and blocked.
        channels = runner.channels()
        outcome = runner.run(cmd["command"], shell=cmd.get("shell", False), timeout=cmd["timeout_seconds"], cwd=cwd)
        written = runner.restore_channels(channels)
        if written:
            files = f"{'file' if len(written) == 1 else 'files'} {', '.join(written)}"
            out.append(
                finding(
                    "HG340",
                    rel,
                    f"`{cmd['id']}` (re-run in CI) wrote the runner's {files}: put back as before the command",
                )
            )
        if facts.fingerprint_worktree(cfg) != tree:
            out.append(finding("HG305", rel, f"`{cmd['id']}` (re-run in CI) changed the work tree"))
        elif outcome.status != "PASS":
            code = evidence.failure_code(outcome.status)
            tail = " | ".join(evidence.clean_output(outcome.output).strip().splitlines()[-3:])[:300]
            out.append(finding(code, rel, f"`{cmd['id']}` (re-run in CI): {outcome.status}: {tail}"))
    return out


def require_fresh_evidence(
    artifacts: artifacts_tree.ArtifactsTree, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str
) -> list[dict[str, str]]:
    """The references to the fresh evidence a review or a completion binds; refused (HG301)
    when any required command's evidence is not fresh for `tree`."""
    fresh, problems = state_freshness(artifacts, folder, life, tree)
    stale = [f for f in fresh if not f.fresh]
    if problems or stale:
        why = problems[0].message if problems else ", ".join(f"`{f.command_id}`: {f.reason}" for f in stale)
        raise Refused(
            "HG301",
            artifacts_root.evidence_log(folder.path),
            f"evidence is not fresh for this tree ({why})",
            "Run `harness-gate verify` first.",
        )
    return [{"command_id": f.command_id, "record_sha256": f.record.sha256} for f in fresh if f.record is not None]


def branch_change(facts: RepoFacts, cfg: Config, tree: str) -> dict[str, str] | None:
    """The branch's own change up to the work tree's fingerprint `tree`: from where HEAD
    left the base branch (its fork point), as CI will measure it from the pull
    request's base. None before the first commit."""
    head = facts.head()
    if head is None:
        return None
    fork = facts.fork_point(cfg.base_branch, head) or head
    old = facts.fingerprint_commit(fork, cfg)
    return {"base": fork, "patch_sha256": facts.change_id(old, tree)}


def latest_review(folder: plans.PlanFolder) -> tuple[str, Artifact] | None:
    for entry in reversed(folder.entries):
        if entry.slug == "review":
            return (entry.name, entry.artifact) if entry.artifact is not None else None
    return None


class Counted(NamedTuple):
    """A review the requirement rests on: its path, its plan, the tree it names."""

    path: str
    plan_id: str
    tree: str


def review_requirement(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    facts: RepoFacts,
    cfg: Config,
    reviewed: Sequence[tuple[plans.PlanFolder, lifecycle.Lifecycle]],
    tree: str,
    *,
    fork: Callable[[], str | None],
    span: Callable[[str], tuple[str, str] | None],
) -> tuple[list[Finding], list[Counted]]:
    """The `ci` requirement: the branch's change is covered by a fresh passing review.

    A review is fresh when it is bound to its plan's current plan and amendment hashes and
    to this very tree, or to this branch's own change (`changes`: a merge or rebase from
    the base that leaves the change as it was keeps it). One such review covers the whole
    branch, every plan of it. On a base branch's line (`span`), a plan's review may instead
    speak of that plan's own change as it landed. A review that does not pass always
    blocks. Returns the findings and the reviews the requirement rests on."""

    # Each asked for once however many plans are reviewed (a commit's fingerprint never changes).
    forked = functools.cache(fork)

    @functools.cache
    def fingerprint(rev: str) -> str:
        return facts.fingerprint_commit(rev, cfg)

    @functools.cache
    def measured(start: str | None, end: str | None) -> str:
        old = fingerprint(start) if start else facts.empty_tree()
        new = fingerprint(end) if end else tree
        return facts.change_id(old, new)

    out: list[Finding] = []
    stale: list[Finding] = []
    counted: list[Counted] = []
    covers_branch = False
    for folder, life in reviewed:
        latest = latest_review(folder)
        cancelled = life.state is lifecycle.PlanState.CANCELLED
        if latest is None:
            # A cancelled plan needs no review of its own, but the code it authorised
            # does: another plan's review of the whole branch covers it, or nothing does.
            why = "was cancelled after authorising code, and no review covers it" if cancelled else "has no review"
            stale.append(finding("HG413", artifacts_root.plan_md(folder.path), f"plan `{folder.plan_id}` {why}"))
            continue
        name, art = latest
        path = f"{folder.path}/{name}"
        binding: dict[str, Any] = art.value("Binding")
        verdict = art.value("Verdict")
        if verdict not in PASSING:
            quoted = "; ".join(f"{f['id']}: {f['summary']}" for f in art.value("Findings"))[:500]
            out.append(finding("HG414", path, f"verdict {verdict}: {quoted or 'no findings listed'}"))
            continue
        if binding["plan_sha256"] != life.plan_sha256 or binding["amendment_sha256"] != life.amendment_sha256:
            out.append(finding("HG413", path, "the review is bound to another plan or amendment than the current one"))
            continue
        # The change stands in for the tree only where the base moved: from the same base,
        # the same change is the same tree, and the tree says it exactly.
        change = binding.get("change")
        fork_at = forked()  # asked of every passing review, as before: a git failure here still blocks
        if binding["tree"] == tree or (
            change is not None and change["base"] != fork_at and change["patch_sha256"] == measured(fork_at, None)
        ):
            covers_branch = True
            counted.append(Counted(path, folder.plan_id, binding["tree"]))
            continue
        landed = span(folder.plan_id)
        if landed is not None and (
            binding["tree"] == fingerprint(landed[1])
            or (change is not None and change["base"] != landed[0] and change["patch_sha256"] == measured(*landed))
        ):
            counted.append(Counted(path, folder.plan_id, binding["tree"]))
            continue
        moved = change is not None and change["base"] != fork_at
        stale.append(finding("HG413", path, _stale(binding, tree, measured(fork_at, None) if moved else None, life)))
    if not covers_branch:
        out.extend(stale)
    return out, counted


SAME_TREE = "it reviewed this very tree"  # a review fresh by its tree, not by its change alone


class ReviewState(NamedTuple):
    """What `status` says of one review: whether `check --stage ci` would count it."""

    path: str
    verdict: str | None  # None: not filled in, or it does not parse
    fresh: bool
    why: str


def review_states(
    facts: RepoFacts, cfg: Config, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str
) -> list[ReviewState]:
    """Each review of the plan, oldest first, judged for the state whose fingerprint is
    `tree` as `review_requirement` judges the newest: a passing verdict bound to the
    current plan and amendment and to this tree, or to the branch's own change where the
    base moved (measured from where HEAD left the base branch, as CI measures it from the
    pull request's base). Only the newest review counts; the others are superseded."""
    head = facts.head()
    fork_at = facts.fork_point(cfg.base_branch, head) if head is not None else None

    @functools.cache
    def now() -> str:
        old = facts.fingerprint_commit(fork_at, cfg) if fork_at else facts.empty_tree()
        return facts.change_id(old, tree)

    entries = [e for e in folder.entries if e.slug == "review"]
    out = []
    for i, entry in enumerate(entries):
        path = f"{folder.path}/{entry.name}"
        art = entry.artifact
        if art is None:
            out.append(ReviewState(path, None, False, "not filled in, or it does not parse (`harness-gate lint`)"))
            continue
        verdict = art.value("Verdict")
        if i < len(entries) - 1:
            out.append(ReviewState(path, verdict, False, f"superseded by {entries[-1].name}"))
            continue
        binding: dict[str, Any] = art.value("Binding")
        change = binding.get("change")
        moved = change is not None and change["base"] != fork_at
        if verdict not in PASSING:
            out.append(ReviewState(path, verdict, False, f"the verdict is {verdict}: it blocks"))
        elif binding["plan_sha256"] != life.plan_sha256 or binding["amendment_sha256"] != life.amendment_sha256:
            out.append(ReviewState(path, verdict, False, "bound to another plan or amendment than the current one"))
        elif binding["tree"] == tree:
            out.append(ReviewState(path, verdict, True, SAME_TREE))
        elif moved and change is not None and change["patch_sha256"] == now():
            out.append(ReviewState(path, verdict, True, "the base moved; the branch's own change is the one reviewed"))
        else:
            out.append(ReviewState(path, verdict, False, _stale(binding, tree, now() if moved else None, life)))
    return out


def _stale(binding: dict[str, Any], tree: str, now: str | None, life: lifecycle.Lifecycle) -> str:
    """What a stale review is bound to, what the head is, and the way out. `now`: the
    branch's own change, where the base moved (from the same base only the tree counts)."""
    change = binding.get("change")
    what = f"the review is for tree {binding['tree'][:12]}"
    if change is not None:
        what += f" and change {change['patch_sha256'][:12]}"
    what += f"; this state is tree {tree[:12]}"
    if now is not None:
        what += f" and the branch's own change is {now[:12]}"
    if change is None:
        return what + " (the review names no change: only the same tree keeps it)"
    if life.state is lifecycle.PlanState.COMPLETED:
        again = "a re-review (`harness-gate review new`; the plan stays completed)"
    else:
        again = "a review of it (`harness-gate review new`)"
    changed = "the change itself changed" if now is not None else "the files changed since the review"
    return f"{what}: {changed}; ask for {again}"


def completing_review(folder: plans.PlanFolder, life: lifecycle.Lifecycle) -> tuple[str, Artifact]:
    """The review a completion binds: the newest, passing, of a plan under review whose
    folder has no findings (refused otherwise, with the first finding or HG405)."""
    if life.findings or folder.findings:
        first = (*folder.findings, *life.findings)[0]
        raise Refused(
            first.code, first.path, f"the plan folder has findings: {first.message}", "Run `harness-gate lint`."
        )
    latest = latest_review(folder)
    if life.state is not lifecycle.PlanState.REVIEWING or latest is None:
        raise Refused(
            "HG405",
            artifacts_root.plan_md(folder.path),
            f"plan `{folder.plan_id}` is {life.state.value}: completion needs a PASS or PASS_WITH_NOTES review",
            "Ask for a review first: `harness-gate review new`, and have the reviewer fill it in.",
        )
    return latest


def require_reviewed_tree(folder: plans.PlanFolder, name: str, review: Artifact, tree: str) -> None:
    """Refused (HG413) when the review is of another tree than `tree`."""
    if review.value("Binding")["tree"] != tree:
        raise Refused(
            "HG413",
            f"{folder.path}/{name}",
            f"{name} reviewed tree {review.value('Binding')['tree'][:12]}, the work tree is {tree[:12]}",
            "The files changed after the review: `harness-gate verify`, then `harness-gate review new`.",
        )
