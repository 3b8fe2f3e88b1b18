"""`harness-gate check` and `explain`: resolve the change set, read every state, judge.

Modes: the index (`--staged`, pre-commit), a commit range (`--range A..B`, pre-push),
and a pull request (`--base REF [--head REF]`, CI). In a range every commit is
judged on its own, with the plan active at that commit, so a commit made with
`--no-verify` is still caught. The configuration always comes from the trusted side:
HEAD for the index, the range's base otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import boundary as boundary_mod
from harness_gate import cache, gate, git, lifecycle, plans, review, snapshot, verification
from harness_gate import config as config_mod
from harness_gate.errors import ConfigError, HarnessGateError
from harness_gate.findings import Finding
from harness_gate.report import Report

STAGES = ("pre-commit", "pre-push", "ci")
INACTIVE = "harness-gate: inactive (no artifacts root and no configuration); nothing to check"


@dataclass(frozen=True)
class Head:
    """The state whose evidence and review count: the index, or the range's head commit."""

    snapshot: snapshot.Snapshot
    tree: Callable[[], str]  # its fingerprint, computed only when a requirement needs it
    code_changed: bool  # evidence and reviews speak of code: an artifacts-only change needs none


@dataclass(frozen=True)
class Mode:
    kind: str  # "staged", "range", "base", "push-new"
    old: str = ""  # range start, base ref, or remote name for a new branch
    new: str = ""  # range end or head ref


def usage(message: str, hint: str = "") -> HarnessGateError:
    return HarnessGateError("HG904", message, hint)


def infer_mode(stage: str | None, staged: bool, range_: str | None, base: str | None, head: str | None) -> Mode:
    """Pick the change set from the options, then pre-commit's environment; never guess."""
    given = [x for x in (staged, range_, base) if x]
    if len(given) > 1:
        raise usage("give only one of --staged, --range and --base")
    if head and not base:
        raise usage("--head goes with --base")
    if staged:
        return Mode("staged")
    if range_:
        old, sep, new = range_.partition("..")
        if not sep or not old or not new or new.startswith("."):
            raise usage(f"--range {range_!r}: expected A..B")
        return Mode("range", old, new)
    if base:
        return Mode("base", base, head or "HEAD")
    env = os.environ
    from_ref, to_ref = env.get("PRE_COMMIT_FROM_REF"), env.get("PRE_COMMIT_TO_REF")
    if from_ref and to_ref and stage in (None, "pre-push"):
        return Mode("range", from_ref, to_ref)
    if stage == "pre-push" and env.get("PRE_COMMIT_REMOTE_NAME"):
        # pre-commit sets no refs when the pushed branch starts at a root commit:
        # check every commit the remote does not have yet.
        return Mode("push-new", env["PRE_COMMIT_REMOTE_NAME"], env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD")
    if stage == "pre-commit" or (stage is None and env.get("PRE_COMMIT") == "1"):
        return Mode("staged")
    raise usage(
        "cannot tell which changes to check",
        "Pass --staged (pre-commit), --range A..B (pre-push) or --base REF [--head REF] (CI).",
    )


def _config(root: Path, config_file: str | None, trusted_rev: str | None) -> config_mod.Config:
    if config_file:
        path = Path(config_file)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read {config_file}: {exc.strerror}") from None
        if path.name == "pyproject.toml":
            return config_mod.parse(None, data)
        return config_mod.parse(data, None)
    return snapshot.read_config(root, trusted_rev)


def run_check(cwd: Path, *, stage: str | None, mode: Mode, plan_id: str | None, config_file: str | None) -> Report:
    location = git.locate(cwd)
    root = location.toplevel
    if plan_id is not None and not plans.PLAN_ID.match(plan_id):
        raise usage(f"--plan {plan_id!r} is not a valid plan id")
    stage = stage or ("pre-commit" if mode.kind == "staged" else "pre-push")
    cache.configure(location.cache_dir)
    try:
        if mode.kind == "staged":
            findings, data, head = _check_index(location, plan_id, config_file)
        else:
            findings, data, head = _check_commits(root, mode, plan_id, config_file)
        if head is not None and head.code_changed:
            findings.extend(_requirements(root, stage, head, plan_id))
    finally:
        cache.configure(None)
    data = {"stage": stage, "mode": mode.kind, **data}
    if not data.get("active", True):
        return Report("check", data=data, lines=(INACTIVE,))
    return Report("check", tuple(findings), data)


def _requirements(root: Path, stage: str, head: Head, plan_id: str | None) -> list[Finding]:
    """Fresh evidence and a fresh passing review for the head state, where the stage asks."""
    cfg = head.snapshot.config
    want_evidence, want_review = stage in cfg.evidence_stages, stage in cfg.review_stages
    if not (want_evidence or want_review):
        return []
    if plan_id is None:
        plan_id, _ = plans.active_plan_id(head.snapshot)
        if plan_id is None:
            return []  # the boundary check already blocks: no plan, no authority
    folder = plans.load(head.snapshot, plan_id)
    life = lifecycle.replay(folder)
    if folder.plan is None or life.policy is None:
        return []  # already a finding of the boundary check
    tree = head.tree()
    out: list[Finding] = []
    if want_evidence:
        out.extend(verification.freshness_findings(root, head.snapshot, folder, life, tree))
    if want_review:
        out.extend(review.review_findings(folder, life, tree))
    return out


def _active(cfg: config_mod.Config, *states: snapshot.Snapshot) -> bool:
    """The trusted side decides whether the gate is on (config from the base, SPEC §6):
    the commit that adopts harness-gate is not judged by rules it introduces, and a
    change that deletes the gate's files is judged by the rules it deletes."""
    return cfg.source is not None or any(s.active for s in states)


def _check_index(
    location: git.Location, plan_id: str | None, config_file: str | None
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    root = location.toplevel
    head = git.head(root)
    cfg = _config(root, config_file, head)
    # HEAD (the trusted side) decides whether the gate is on; on a first commit, the index.
    if head is not None and cfg.source is None and not git.has_path(root, head, cfg.artifacts_dir):
        return [], {"active": False, "changes": 0, "commits": 0}, None
    changes = git.staged_changes(root, head or git.empty_tree(root))
    others = git.merge_heads(location) if head else []
    if others:
        # A merge being committed: judge only what it adds beyond every parent.
        keep = {c.path for c in changes}
        for other in others:
            keep &= {c.path for c in git.staged_changes(root, other)}
        changes = [c for c in changes if c.path in keep]
    new = snapshot.from_index(root, cfg)
    if head is None and not _active(cfg, new):
        return [], {"active": False, "changes": 0, "commits": 0}, None

    def olds() -> list[snapshot.Snapshot]:
        parents = [head, *others] if head else []
        return [snapshot.from_commit(root, r, cfg) for r in parents] or [snapshot.empty(root, cfg)]

    data: dict[str, Any] = {"active": True, "changes": len(changes), "commits": 0}
    prefix = cfg.artifacts_dir + "/"
    code = any(not gate.decode(c.path).startswith(prefix) for c in changes)
    state = Head(new, lambda: verification.fingerprint_index(root, cfg), code)
    return gate.check_state(gate.State("index", changes, new, olds), plan_id), data, state


def _check_commits(
    root: Path, mode: Mode, plan_id: str | None, config_file: str | None
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    new_ref = git.resolve(root, mode.new)
    if new_ref is None:
        raise usage(f"{mode.new!r} does not name a commit")
    exclude: list[str] = []
    trusted: str | None
    if mode.kind == "push-new":
        listing = git.commits(root, new_ref, [], not_remote=mode.old)
        trusted = listing[0].parents[0] if listing and listing[0].parents else None
    else:
        old_ref = git.resolve(root, mode.old) if set(mode.old) != {"0"} else None
        if old_ref is None:
            if git.is_shallow(root):
                raise HarnessGateError("HG905", f"{mode.old!r} is not in this shallow clone")
            if mode.kind == "range" and os.environ.get("PRE_COMMIT_REMOTE_NAME"):
                # A force-push over a commit never fetched: the remote's branches bound it.
                listing = git.commits(root, new_ref, [], not_remote=os.environ["PRE_COMMIT_REMOTE_NAME"])
                trusted = listing[0].parents[0] if listing and listing[0].parents else None
                return _judge(
                    root, listing, trusted=trusted, head_oid=new_ref, plan_id=plan_id, config_file=config_file
                )
            raise usage(f"{mode.old!r} does not name a commit")
        if mode.kind == "base" and git.merge_base(root, old_ref, new_ref) is None:
            if git.is_shallow(root):
                raise HarnessGateError("HG905", f"no merge base of {mode.old} and {mode.new} in this shallow clone")
            raise usage(f"{mode.old} and {mode.new} share no history; nothing can be compared")
        exclude = [old_ref]
        trusted = old_ref
        listing = git.commits(root, new_ref, exclude)
    return _judge(root, listing, trusted=trusted, head_oid=new_ref, plan_id=plan_id, config_file=config_file)


def _judge(
    root: Path,
    listing: Sequence[git.Commit],
    *,
    trusted: str | None,
    head_oid: str,
    plan_id: str | None,
    config_file: str | None,
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    cfg = _config(root, config_file, trusted or (listing[0].oid if listing else None))
    states: dict[str, snapshot.Snapshot] = {}

    def state_of(oid: str) -> snapshot.Snapshot:
        if oid not in states:
            states[oid] = snapshot.from_commit(root, oid, cfg)
        return states[oid]

    findings: list[Finding] = []
    changes = 0
    if trusted is not None and not _active(cfg, state_of(trusted)):
        return findings, {"active": False, "changes": 0, "commits": len(listing)}, None
    checked = 0
    code = False
    prefix = cfg.artifacts_dir + "/"
    for commit in listing:
        if trusted is None and not _gate_was_on(commit, state_of):
            # History from before the repository adopted harness-gate (a first push).
            continue
        checked += 1
        code = code or any(not gate.decode(c.path).startswith(prefix) for c in commit.changes)
        new = state_of(commit.oid)
        parents = commit.parents
        changes += len(commit.changes)
        state = gate.State(
            f"commit {commit.oid}",
            commit.changes,
            new,
            lambda parents=parents: [state_of(p) for p in parents] or [snapshot.empty(root, cfg)],  # type: ignore[misc]
        )
        findings.extend(gate.check_state(state, plan_id, prefix=f"commit {commit.oid[:12]}: "))
    active = trusted is not None or checked > 0
    head = Head(state_of(head_oid), lambda: verification.fingerprint_commit(root, head_oid, cfg), code)
    return findings, {"active": active, "changes": changes, "commits": checked}, head


def _gate_was_on(commit: git.Commit, state_of: Callable[[str], snapshot.Snapshot]) -> bool:
    """With no trusted base, a commit is judged when its parent had the gate on (a root
    commit: when it turns the gate on itself)."""
    if commit.parents:
        return any(state_of(p).active for p in commit.parents)
    return state_of(commit.oid).active


# -- explain ---------------------------------------------------------------------------


def run_explain(cwd: Path, paths: Sequence[str], plan_id: str | None) -> Report:
    """Which rule or pattern allows or blocks each path, judged on the index."""
    root = git.toplevel(cwd)
    head = git.head(root)
    cfg = snapshot.read_config(root, head)
    new = snapshot.from_index(root, cfg)
    if plan_id is None:
        plan_id, _ = plans.active_plan_id(new)
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    life = lifecycle.replay(plans.load(new, plan_id)) if plan_id else None
    policy = life.policy if life else None
    allowed = boundary_mod.Boundary.compile(policy.boundary) if policy else None
    exact = {p.rstrip("/") for p in policy.boundary if not boundary_mod.has_wildcard(p)} if policy else set()
    if life is None:
        lines.append("plan: none active (no write authority for paths outside the artifacts root)")
    else:
        lines.append(f"plan: {plan_id} ({life.state.value}, write authority: {'yes' if life.grants_writes else 'no'})")
    blocked_any = False
    for raw in paths:
        rel = _relative(root, cwd, raw)
        verdict, why = _explain_one(rel, cfg, allowed, exact, life)
        blocked_any = blocked_any or verdict == "blocked"
        rows.append({"path": rel, "verdict": verdict, "reason": why})
        lines.append(f"{verdict:8} {rel}: {why}")
    data = {"plan": plan_id, "paths": rows}
    return Report("explain", data=data, lines=tuple(lines), exit_override=1 if blocked_any else 0)


def _relative(root: Path, cwd: Path, raw: str) -> str:
    candidate = Path(os.path.normpath(cwd / raw))
    try:
        return candidate.relative_to(root).as_posix()
    except ValueError:
        raise usage(f"{raw} is outside the repository") from None


def _explain_one(
    rel: str,
    cfg: config_mod.Config,
    allowed: boundary_mod.Boundary | None,
    exact: set[str],
    life: lifecycle.Lifecycle | None,
) -> tuple[str, str]:
    raw = rel.encode("utf-8", "surrogateescape")
    if gate.CONTROL.search(raw):
        return "blocked", "HG103: control characters are never allowed"
    variant = gate.case_variant(rel, cfg.source, cfg.artifacts_dir)
    if variant:
        return "blocked", f"HG106: a case variant of the protected `{variant}`"
    if rel.startswith(cfg.artifacts_dir + "/"):
        return "allowed", "inside the artifacts root: governed by artifact rules, not by the plan"
    if life is None or allowed is None or not life.grants_writes:
        state = life.state.value if life else "no active plan"
        return "blocked", f"no write authority ({state})"
    why = gate.protected(rel, cfg.source)
    if why is not None:
        if rel in exact:
            return "allowed", f"protected ({why}), listed exactly in the boundary"
        return "blocked", f"HG102: protected ({why}); only an exact, wildcard-free pattern allows it"
    pattern = allowed.which(raw)
    if pattern is None:
        return "blocked", "HG101: outside the write boundary"
    return "allowed", f"by pattern `{pattern}`"
