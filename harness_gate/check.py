"""`harness-gate check` and `explain`: resolve the change set, read every state, judge.

Modes: the index (`--staged`, pre-commit), a commit range (`--range A..B`, pre-push),
and a pull request (`--base REF [--head REF]`, CI). In a range every commit is
judged on its own, with the plan active at that commit, so a commit made with
`--no-verify` is still caught. The configuration always comes from the trusted side:
HEAD for the index, the range's base otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import approvals as approvals_mod
from harness_gate import boundary as boundary_mod
from harness_gate import cache, gate, git, history, lifecycle, plans, snapshot, trust
from harness_gate import config as config_mod
from harness_gate.errors import ConfigError, HarnessGateError
from harness_gate.findings import Finding, finding
from harness_gate.report import Report

INACTIVE = "harness-gate: inactive (no artifacts root and no configuration); nothing to check"


@dataclass(frozen=True)
class Head:
    """The state whose evidence and review count: the index, or the range's head commit."""

    snapshot: snapshot.Snapshot
    tree: Callable[[], str]  # its fingerprint, computed only when a requirement needs it
    code_changed: bool  # evidence and reviews speak of code: an artifacts-only change needs none
    used: frozenset[str] = frozenset()  # the plans that authorised the code changes
    commit: str | None = None  # the head commit; None for the index
    code_commits: tuple[str, ...] = ()  # the judged commits that changed code
    anchors: trust.Anchors | None = None


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


def _config(
    root: Path, config_file: str | None, trusted_rev: str | None, *, from_rev: bool = False
) -> config_mod.Config:
    """The configuration. `--config FILE` names a file on disk for the index check; for
    commit ranges it names a path in the trusted commit, never the change under test."""
    if config_file:
        path = Path(config_file)
        if from_rev and trusted_rev:
            try:
                rel = Path(os.path.normpath(Path.cwd() / path)).relative_to(root).as_posix()
            except ValueError:
                raise ConfigError(f"{config_file} is outside the repository") from None
            blobs = [b for b in git.tree_entries(root, trusted_rev, rel) if b.path == rel]
            if not blobs:
                raise ConfigError(f"{rel} does not exist in the trusted commit {trusted_rev[:12]}")
            data = git.read_blobs(root, [blobs[0].oid])[blobs[0].oid]
        else:
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise ConfigError(f"cannot read {config_file}: {exc.strerror}") from None
        if path.name == "pyproject.toml":
            return config_mod.parse(None, data)
        return config_mod.parse(data, None)
    return snapshot.read_config(root, trusted_rev)


def run_check(
    cwd: Path,
    *,
    stage: str | None,
    mode: Mode,
    plan_id: str | None,
    config_file: str | None,
    reverify: bool = False,
    evidence_head: str | None = None,
    location: git.Location | None = None,
) -> Report:
    location = location or git.locate(cwd)
    root = location.toplevel
    if plan_id is not None and not plans.PLAN_ID.match(plan_id):
        raise usage(f"--plan {plan_id!r} is not a valid plan id")
    stage = stage or ("pre-commit" if mode.kind == "staged" else "pre-push")
    cache.configure(location.cache_dir)
    try:
        with contextlib.ExitStack() as stack:
            if mode.kind == "staged":
                findings, data, head = _check_index(location, plan_id, config_file, stack)
            else:
                findings, data, head = _check_commits(root, mode, plan_id, config_file, stack)
            if head is not None and head.code_changed:
                if evidence_head is not None:
                    # A merge queue's group commit carries the base's newer work too: its
                    # evidence and review are those of the pull request's own head.
                    cfg = head.snapshot.config
                    snap = _vouched(snapshot.from_commit(root, evidence_head, cfg), head.anchors, evidence_head)
                    head = dataclasses.replace(
                        head, snapshot=snap, tree=lambda: _fingerprint(root, cfg, evidence_head), commit=evidence_head
                    )
                findings.extend(_requirements(root, stage, head, plan_id, reverify=reverify))
    finally:
        cache.configure(None)
        git.discard_started()
    data = {"stage": stage, "mode": mode.kind, **data}
    if not data.get("active", True):
        return Report("check", data=data, lines=(INACTIVE,))
    # One problem reached by two rules (a plan folder's log, read for its artifacts and for
    # its authority) is reported once.
    return Report("check", tuple(dict.fromkeys(findings)), data)


def _requirements(root: Path, stage: str, head: Head, plan_id: str | None, *, reverify: bool) -> list[Finding]:
    """Fresh evidence and a fresh passing review for the head state, where the stage asks."""
    cfg = head.snapshot.config
    want_evidence, want_review = stage in cfg.evidence_stages, stage in cfg.review_stages
    if not (want_evidence or want_review):
        return []
    from harness_gate import review, verification  # noqa: PLC0415  (not on the pre-commit path)

    out: list[Finding] = []
    active = f"{cfg.artifacts_dir}/active"
    if plan_id is None:
        plan_id, _ = plans.active_plan_id(head.snapshot)
        if plan_id is None:
            # Code changed, but the head names no plan (`active` removed at the end):
            # there is nothing to hold the evidence and the review against.
            return [finding("HG301", active, "code changed, but no plan is active at the head to verify it")]
    # Every other plan that authorised code here must have ended with a Completion,
    # which binds its own tree, evidence and review.
    for other in sorted(head.used - {plan_id}):
        ended = lifecycle.replay(plans.load(head.snapshot, other)).state in lifecycle.ENDED
        if not ended:
            out.append(finding(
                "HG301", f"{cfg.artifacts_dir}/plans/{other}/plan.md",
                f"plan `{other}` authorised changes here but is neither active at the head nor completed",
            ))  # fmt: skip
    folder = plans.load(head.snapshot, plan_id)
    life = lifecycle.replay(folder)
    if folder.plan is None or life.policy is None:
        return [*out, finding("HG201", active, f"plan `{plan_id}` at the head does not parse; nothing to verify")]
    if life.plan_approval is not approvals_mod.Status.APPROVED:
        out.append(finding("HG202", f"{folder.path}/plan.md", f"plan `{plan_id}` at the head is not approved"))
    tree = head.tree()
    if want_evidence and reverify:
        out.extend(verification.reverify(root, cfg, folder, life, tree))
    elif want_evidence:
        out.extend(verification.freshness_findings(root, head.snapshot, folder, life, tree))
    if want_review:
        problems = review.review_findings(folder, life, tree)
        out.extend(problems)
        latest = review.latest_review(folder)
        if not problems and latest is not None and head.anchors is not None and head.commit is not None:
            path = f"{folder.path}/{latest[0]}"
            out.extend(head.anchors.review(head.commit, path, head.code_commits))
    return out


def _vouched(snap: snapshot.Snapshot, anchors: trust.Anchors | None, commit: str | None) -> snapshot.Snapshot:
    """The state with its approval records filtered by the check's trust anchors."""
    return snap if anchors is None else dataclasses.replace(snap, vouch=anchors.vouch(commit))


def _active(cfg: config_mod.Config, *states: snapshot.Snapshot) -> bool:
    """The trusted side decides whether the gate is on (config from the base, SPEC §6):
    the commit that adopts harness-gate is not judged by rules it introduces, and a
    change that deletes the gate's files is judged by the rules it deletes."""
    return cfg.source is not None or any(s.active for s in states)


def _check_index(
    location: git.Location, plan_id: str | None, config_file: str | None, stack: contextlib.ExitStack[bool | None]
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    root = location.toplevel
    head = location.head
    cfg = _config(root, config_file, head)
    # HEAD (the trusted side) decides whether the gate is on; on a first commit, the index.
    if head is not None and cfg.source is None and not git.has_path(root, head, cfg.artifacts_dir):
        return [], {"active": False, "changes": 0, "commits": 0}, None
    snapshot.prefetch_index(root, cfg)  # listed by git while the diff is parsed here
    changes = git.staged_changes(root, head or git.empty_tree(root))
    others = git.merge_heads(location) if head else []
    if others and head is not None:
        changes = _merge_own(root, changes, [git.staged_changes(root, o) for o in others], [head, *others], None)
    new = snapshot.from_index(root, cfg)
    if head is None and not _active(cfg, new):
        return [], {"active": False, "changes": 0, "commits": 0}, None
    anchors = stack.enter_context(trust.anchors(root, cfg, base=head, head=None))
    new = _vouched(new, anchors, None)

    def olds() -> list[snapshot.Snapshot]:
        parents = [head, *others] if head else []
        return [snapshot.from_commit(root, r, cfg) for r in parents] or [snapshot.empty(root, cfg)]

    data: dict[str, Any] = {"active": True, "changes": len(changes), "commits": 0}
    code = gate.touches_code(changes, cfg.artifacts_dir)
    used: set[str] = set()
    state = gate.State("index", None, changes, new, olds, merge=bool(others), first_parent=head)
    found = gate.check_state(state, plan_id, used=used)
    return found, data, Head(new, lambda: _fingerprint(root, cfg, None), code, frozenset(used), anchors=anchors)


def _fingerprint(root: Path, cfg: config_mod.Config, rev: str | None) -> str:
    from harness_gate import verification  # noqa: PLC0415  (not on the pre-commit path)

    if rev is None:
        return verification.fingerprint_index(root, cfg)
    return verification.fingerprint_commit(root, rev, cfg)


def _merge_own(
    root: Path,
    first: Sequence[git.Change],
    rest: Sequence[Sequence[git.Change]],
    parents: Sequence[str],
    result: str | None,
) -> list[git.Change]:
    """What a merge adds beyond its parents: the paths that differ from every parent,
    plus a parent's change that the result does not keep (`-s ours`, a conflict resolved
    by dropping one side). `first` is the diff against the first parent."""
    keep = {c.path for c in first}
    for other in rest:
        keep &= {c.path for c in other}
    own = [c for c in first if c.path in keep]
    seen = set(keep)
    for change in git.merge_dropped(root, parents, result):
        if change.path not in seen:
            seen.add(change.path)
            own.append(change)
    return own


def _check_commits(
    root: Path, mode: Mode, plan_id: str | None, config_file: str | None, stack: contextlib.ExitStack[bool | None]
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    new_ref = git.resolve(root, mode.new)
    if new_ref is None:
        raise usage(f"{mode.new!r} does not name a commit")
    if mode.kind == "push-new":
        return _push_new(root, new_ref, mode.old, plan_id, config_file, stack=stack)
    old_ref = git.resolve(root, mode.old) if set(mode.old) != {"0"} else None
    if old_ref is None:
        if git.is_shallow(root):
            raise HarnessGateError("HG905", f"{mode.old!r} is not in this shallow clone")
        remote = os.environ.get("PRE_COMMIT_REMOTE_NAME")
        if mode.kind == "range" and remote:
            # A force-push over a commit never fetched: the remote's branches bound it.
            return _push_new(root, new_ref, remote, plan_id, config_file, stack=stack)
        raise usage(f"{mode.old!r} does not name a commit")
    if mode.kind == "base" and git.merge_base(root, old_ref, new_ref) is None:
        if git.is_shallow(root):
            raise HarnessGateError("HG905", f"no merge base of {mode.old} and {mode.new} in this shallow clone")
        raise usage(f"{mode.old} and {mode.new} share no history; nothing can be compared")
    listing = git.commits(root, new_ref, [old_ref])
    trusted_cfg = _config(root, config_file, old_ref, from_rev=True)
    states = history.History(root, trusted_cfg, listing, extra=(old_ref, new_ref))
    if _active(trusted_cfg, states.snapshot(old_ref)):
        anchors = stack.enter_context(trust.anchors(root, trusted_cfg, base=old_ref, head=new_ref))
        return _judge(
            root, listing, cfg=trusted_cfg, head_oid=new_ref, plan_id=plan_id, every=True, anchors=anchors,
            base=old_ref, states=states,
        )  # fmt: skip
    # The base predates adoption: judge every commit made with the gate on, under the
    # configuration the pushed head carries (there is no older one to trust).
    cfg = _config(root, config_file, new_ref, from_rev=True)
    anchors = stack.enter_context(trust.anchors(root, cfg, base=old_ref, head=new_ref))
    return _judge(
        root, listing, cfg=cfg, head_oid=new_ref, plan_id=plan_id, every=False, anchors=anchors, base=old_ref,
        states=states,
    )  # fmt: skip


def _push_new(
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
    cfg = _config(root, config_file, new_ref, from_rev=True)
    # A repository's first push may carry history from before it adopted harness-gate;
    # a branch pushed to a remote that already has branches (an orphan, say) is judged whole.
    first_push = not git.remote_has_branches(root, remote)
    # No commit here is trusted: signed approvals have no allowed_signers to check against.
    anchors = stack.enter_context(trust.anchors(root, cfg, base=None, head=new_ref))
    return _judge(root, listing, cfg=cfg, head_oid=new_ref, plan_id=plan_id, every=not first_push, anchors=anchors)


def _judge(
    root: Path,
    listing: Sequence[git.Commit],
    *,
    cfg: config_mod.Config,
    head_oid: str,
    plan_id: str | None,
    every: bool,
    anchors: trust.Anchors,
    base: str | None = None,
    states: history.History | None = None,
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    if states is None or states.cfg != cfg:
        extra = (head_oid,) if base is None else (base, head_oid)
        states = history.History(root, cfg, listing, extra=extra)
    # Without signatures a record's authenticity does not depend on the commit it is read
    # at: commits with the same artifacts root share one vouched state (and the work keyed
    # by it). With signatures, a one-parent commit that leaves the root as it was shares its
    # parent's (blame of an unchanged file is its parent's).
    shared: dict[int, tuple[snapshot.Snapshot, snapshot.Snapshot]] = {}  # id -> (state, vouched): kept alive
    vouched: dict[str, snapshot.Snapshot] = {}
    parent_of = {c.oid: c.parents[0] for c in listing if states.shares_parent_state(c)} if anchors.signed else {}

    def state_of(oid: str) -> snapshot.Snapshot:
        chain = []  # commits that share the state of the first ancestor found below
        while oid not in vouched and oid in parent_of:
            chain.append(oid)
            oid = parent_of[oid]
        if oid not in vouched:
            snap = states.snapshot(oid)
            if anchors.signed:
                vouched[oid] = _vouched(snap, anchors, oid)
            else:
                if id(snap) not in shared:
                    shared[id(snap)] = (snap, _vouched(snap, anchors, oid))
                vouched[oid] = shared[id(snap)][1]
        for child in chain:
            vouched[child] = vouched[oid]
        return vouched[oid]

    @functools.cache
    def on_at(oid: str) -> bool:
        # That commit's own files: its configuration, or its artifacts root.
        return states.config(oid).source is not None or state_of(oid).has_root

    behind: dict[tuple[int, frozenset[str]], tuple[snapshot.Snapshot, list[Finding]]] = {}
    findings: list[Finding] = []
    changes = 0
    checked = 0
    code_commits: list[str] = []
    used: set[str] = set()
    for commit in listing:
        if not every and not _gate_was_on(commit, on_at):
            continue  # history from before the repository adopted harness-gate
        checked += 1
        own = list(commit.changes)
        if len(commit.parents) > 1:
            own = _merge_own(root, own, [], commit.parents, commit.oid)
        if gate.touches_code(own, cfg.artifacts_dir):
            code_commits.append(commit.oid)
        changes += len(own)
        parents = commit.parents

        def olds(parents: tuple[str, ...] = parents) -> list[snapshot.Snapshot]:
            return [state_of(p) for p in parents] or [snapshot.empty(root, cfg)]

        merge = len(commit.parents) > 1
        first = commit.parents[0] if merge else None
        state = gate.State(
            f"commit {commit.oid}", commit.oid, own, state_of(commit.oid), olds, merge=merge, first_parent=first
        )
        prefix = f"commit {commit.oid[:12]}: "
        used_here: set[str] = set()
        findings.extend(gate.check_state(state, plan_id, prefix=prefix, used=used_here))
        used |= used_here
        if base is not None:
            key = (id(state.new), frozenset(used_here))
            if key not in behind:
                behind[key] = (state.new, _behind_base(state.new, state_of(base), used_here, ""))
            findings.extend(dataclasses.replace(f, message=prefix + f.message) for f in behind[key][1])
        signers = f"{cfg.artifacts_dir}/{trust.SIGNERS_FILE}".encode()
        if any(c.path == signers for c in own):
            for f in anchors.anchor_change(commit.oid, signers.decode()):
                findings.append(dataclasses.replace(f, message=prefix + f.message))
    active = every or checked > 0
    head = Head(
        state_of(head_oid), lambda: _fingerprint(root, cfg, head_oid), bool(code_commits), frozenset(used),
        commit=head_oid, code_commits=tuple(code_commits), anchors=anchors,
    )  # fmt: skip
    return findings, {"active": active, "changes": changes, "commits": checked}, head


def _behind_base(state: snapshot.Snapshot, base: snapshot.Snapshot, plan_ids: set[str], prefix: str) -> list[Finding]:
    """A commit judged under a plan as it stood before the base's newer records (an
    amendment that narrowed it, a completion, a newer approval) used authority the base
    has withdrawn: a branch cut before them must be rebased onto the base first."""
    out: list[Finding] = []
    for plan_id in sorted(plan_ids):
        folder = f"{base.artifacts_dir}/plans/{plan_id}/"
        for path, before in sorted(base.files.items()):
            name = path[len(folder) :]
            if not path.startswith(folder) or name == "evidence.jsonl":
                continue  # evidence grants nothing: a branch may lack the base's newer runs
            after = state.files.get(path)
            # approvals.jsonl may hold the base's lines interleaved with its own (a union merge).
            if after is None:
                kept = False
            elif name in gate.APPEND_ONLY:
                kept = gate.grows(before, after, merge=True)
            else:
                kept = after == before
            if not kept:
                out.append(finding(
                    "HG216", path, f"{prefix}judged under plan `{plan_id}` without the base's version of"
                    f" {name}: the base has newer records of this plan; rebase onto the base",
                ))  # fmt: skip
                break
    return out


def _gate_was_on(commit: git.Commit, on_at: Callable[[str], bool]) -> bool:
    """With no trusted base, a commit is judged when its parent had the gate on (a root
    commit: when it turns the gate on itself)."""
    if commit.parents:
        return any(on_at(p) for p in commit.parents)
    return on_at(commit.oid)


# -- explain ---------------------------------------------------------------------------


def run_explain(cwd: Path, paths: Sequence[str], plan_id: str | None) -> Report:
    """Which rule or pattern allows or blocks each path, judged on the index."""
    root = git.toplevel(cwd)
    if plan_id is not None and not plans.PLAN_ID.match(plan_id):
        raise usage(f"--plan {plan_id!r} is not a valid plan id")
    head = git.head(root)
    cfg = snapshot.read_config(root, head)
    new = snapshot.from_index(root, cfg)
    trusted = snapshot.from_commit(root, head, cfg) if head else new
    if not _active(cfg, trusted):
        return Report("explain", data={"active": False}, lines=(INACTIVE,))
    if plan_id is None:
        plan_id, _ = plans.active_plan_id(new)
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    life = lifecycle.replay(plans.load(new, plan_id)) if plan_id else None
    policy = life.policy if life else None
    allowed = boundary_mod.Boundary.compile(policy.boundary) if policy else None
    exact = allowed.exact if allowed else frozenset()
    if life is None:
        lines.append("plan: none active (no write authority for paths outside the artifacts root)")
    else:
        lines.append(f"plan: {plan_id} ({life.state.value}, write authority: {'yes' if life.grants_writes else 'no'})")
    blocked_any = False
    for raw in paths:
        rel = _relative(root, cwd, raw)
        verdict, why = _explain_one(rel, cfg, allowed, exact, life, trusted=trusted)
        blocked_any = blocked_any or verdict == "blocked"
        rows.append({"path": rel, "verdict": verdict, "reason": why})
        lines.append(f"{verdict:8} {rel}: {why}")
    data = {"plan": plan_id, "paths": rows}
    return Report("explain", data=data, lines=tuple(lines), exit_override=1 if blocked_any else 0)


def _explain_artifact(rel: str, cfg: config_mod.Config, trusted: snapshot.Snapshot) -> tuple[str, str]:
    """The artifact rules, as the gate applies them to a change of `rel`."""
    parts = rel[len(cfg.artifacts_dir) + 1 :].split("/")
    committed = rel in trusted.files
    if len(parts) == 3 and parts[0] == "plans" and committed:
        name = parts[2]
        if name in gate.APPEND_ONLY:
            return "allowed", "an append-only log: lines may be added, never changed or removed (HG211)"
        if gate.was_approved(trusted, parts[1], name, trusted.files[rel]):
            return "blocked", "HG210: an approved artifact never changes; write a Plan Amendment"
        if plans.NUMBERED.match(name) and not gate.amendable(name):
            return "blocked", "HG212: a committed lifecycle record never changes"
    return "allowed", "inside the artifacts root: no plan needed, but it must be a valid artifact"


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
    exact: frozenset[str],
    life: lifecycle.Lifecycle | None,
    *,
    trusted: snapshot.Snapshot,
) -> tuple[str, str]:
    raw = rel.encode("utf-8", "surrogateescape")
    if gate.CONTROL.search(raw):
        return "blocked", "HG103: control characters are never allowed"
    variant = gate.case_variant(rel, cfg.source, cfg.artifacts_dir)
    if variant:
        return "blocked", f"HG106: a case variant of the protected `{variant}`"
    if rel.startswith(cfg.artifacts_dir + "/"):
        return _explain_artifact(rel, cfg, trusted)
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
