"""`harness-gate check` and `explain`: resolve the change set, read every state, judge.

Modes: the index (`--staged`, pre-commit), a commit range (`--range A..B`, pre-push),
and a pull request (`--base REF [--head REF]`, CI). In a range every commit is
judged on its own, with the plans its own state holds and where each came from
(docs/lifecycle.md, "Which plan governs"), so a commit made with `--no-verify` is still
caught. The configuration always comes from the trusted side: HEAD for the index, the
range's base otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_gate import approvals as approvals_mod
from harness_gate import boundary as boundary_mod
from harness_gate import branches, cache, gate, git, governance, history, lifecycle, plans, snapshot, trust
from harness_gate import config as config_mod
from harness_gate import report as report_mod
from harness_gate.branches import BASE_ONLY, Origins
from harness_gate.errors import ConfigError, HarnessGateError
from harness_gate.findings import Finding, Severity, finding
from harness_gate.report import INACTIVE, Report

if TYPE_CHECKING:
    from harness_gate.review import Counted

ADOPTING = "harness-gate: a repository's first commit adopts harness-gate and is not judged"


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
    origins: Callable[[], Origins] = lambda: BASE_ONLY  # of the head state: where its plans came from
    # The plans the head holds that the base does not: what the change brings to the base
    # (its own, and any it merged in from another branch). None: its own and foreign ones.
    brought: Callable[[], frozenset[str]] | None = None
    # The commit the branch's own change is measured from (a review speaks of that change).
    fork: Callable[[], str | None] = lambda: None
    # On a base branch's own line (a push there, a merge queue's group): each plan's own
    # stretch of that line, (start, end) commits, for a review of the change as it landed.
    span: Callable[[str], tuple[str, str] | None] = lambda plan_id: None
    # The fingerprints of the range's commits that changed a plan's folder (landed ranges).
    plan_trees: Callable[[str], frozenset[str]] = lambda plan_id: frozenset()
    landed: bool = False
    judged: tuple[str, ...] = ()  # the commits judged, oldest first (ranges only)


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
        try:
            # resolve(), not normpath: an absolute path through a symlink to the repository
            # names the same protected file.
            rel: str | None = (Path.cwd() / path).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = None
        if from_rev and trusted_rev:
            if rel is None:
                raise ConfigError(f"{config_file} is outside the repository")
            blobs = [b for b in git.tree_entries(root, trusted_rev, rel) if b.path == rel]
            if not blobs:
                raise ConfigError(f"{rel} does not exist in the trusted commit {trusted_rev[:12]}")
            data = git.read_blobs(root, [blobs[0].oid])[blobs[0].oid]
        else:
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise ConfigError(f"cannot read {config_file}: {exc.strerror}") from None
        cfg = config_mod.parse(None, data) if path.name == "pyproject.toml" else config_mod.parse(data, None)
        # The file is protected where it lives in the repository (gate.protected), so a
        # change cannot weaken the configuration the next change is judged by.
        return dataclasses.replace(cfg, source=rel or str(path))
    return snapshot.read_config(root, trusted_rev)


def run_check(
    cwd: Path,
    *,
    stage: str | None,
    mode: Mode,
    plan_id: str | None,
    config_file: str | None,
    reverify: bool = False,
    landed: bool = False,
    location: git.Location | None = None,
) -> Report:
    """`landed`: the range is (or is about to become) the base branch's own history, as
    after a merge to the default branch or in a merge queue's group: evidence recorded for
    the pull request's head is accepted with a warning when the merged tree differs, and a
    review may speak of each plan's change as it landed (docs/workflows.md)."""
    location = location or git.locate(cwd)
    root = location.toplevel
    if plan_id is not None and not plans.PLAN_ID.match(plan_id):
        raise usage(f"--plan {plan_id!r} is not a valid plan id")
    stage = stage or ("pre-commit" if mode.kind == "staged" else "pre-push")
    cache.configure(location.cache_dir)
    runs: list[Callable[[], list[Finding]]] = []
    try:
        with contextlib.ExitStack() as stack:
            if mode.kind == "staged":
                findings, data, head = _check_index(location, plan_id, config_file, stack)
            else:
                findings, data, head = _check_commits(root, mode, plan_id, config_file, stack)
            if head is not None:
                head = dataclasses.replace(head, landed=landed)
                findings.extend(_requirements(root, stage, head, plan_id, reverify=runs if reverify else None))
    finally:
        cache.configure(None)
        git.discard_started()
    data = {"stage": stage, "mode": mode.kind, **data}
    if head is not None and head.commit is not None and data.get("active", True) and not data.get("adopting"):
        # The reviewer's view of the range (prview.py): never on the pre-commit path. Read
        # before the commands run, as every other fact is (a re-run's verdict is the head's,
        # never a commit's).
        data.update(_view(root, head, plan_id, findings))
    # `--reverify` runs the plans' commands, which run the change's own code: only now,
    # when every other fact (history, signatures, reviews, the head's fingerprint, the
    # reviewer's view) is established, so nothing they write (in .git, say) can change any.
    for run in runs:
        findings.extend(run())
    if data.get("adopting"):
        return Report("check", data=data, lines=(ADOPTING,))
    if not data.get("active", True):
        return Report("check", data=data, lines=(INACTIVE,))
    # One problem reached by two rules (a plan folder's log, read for its artifacts and for
    # its authority) is reported once.
    return Report("check", tuple(dict.fromkeys(findings)), data)


def _brought(head: Head, here: set[str]) -> set[str]:
    """The plans the change brings along (its own, and any merged in), present at the head."""
    if head.brought is not None:
        return set(head.brought())
    origins = head.origins()
    return set((origins.own | origins.foreign) & here)


def _view(root: Path, head: Head, plan_id: str | None, findings: Sequence[Finding]) -> dict[str, Any]:
    """What a reviewer reads (prview.py): `head`, `plans` (each plan the range used or
    brought, as its head commit holds it) and `commit_verdicts` (each judged commit's
    verdict; `commits` stays their count)."""
    from harness_gate import prview  # noqa: PLC0415  (not on the pre-commit path)

    assert head.commit is not None  # noqa: S101  (ranges only)
    snap = head.snapshot
    here = set(governance.present(snap))
    wanted = sorted(({*head.used, *_brought(head, here)} if plan_id is None else {plan_id}) & here)
    tree = head.tree() if wanted else ""
    signed = bool(head.anchors is not None and head.anchors.signed)
    views = [prview.plan_view(root, snap, p, tree, commit=head.commit, signed=signed) for p in wanted]
    return {
        "head": head.commit,
        "plans": views,
        "commit_verdicts": prview.commit_views(root, head.judged, findings),
    }


def _requirements(
    root: Path, stage: str, head: Head, plan_id: str | None, *, reverify: list[Callable[[], list[Finding]]] | None
) -> list[Finding]:
    """What the stage asks of the head state, for every plan the change used or started:
    completed (or cancelled) plans, fresh evidence for each, and a fresh passing review of
    the branch's change. pre-push warns about evidence where it does not require it.
    With `reverify` (a list), the evidence is the commands' runs, appended to it for the
    caller to start last."""
    cfg = head.snapshot.config
    want_evidence, want_review = stage in cfg.evidence_stages, stage in cfg.review_stages
    # pre-push warns about what CI will block, unless the configuration makes it strict.
    warn_evidence = stage == "pre-push" and not want_evidence and "ci" in cfg.evidence_stages
    want_end = stage in cfg.completion_stages
    if not (want_evidence or warn_evidence or want_review or want_end):
        return []
    snap = head.snapshot
    here = governance.present(snap)
    used = sorted(head.used) if plan_id is None else [plan_id]
    out: list[Finding] = []
    for gone in (p for p in used if p not in here):
        out.append(finding(
            "HG223", f"{cfg.artifacts_dir}/plans/{gone}/plan.md",
            f"plan `{gone}` authorised changes here, but its folder is not at the head",
        ))  # fmt: skip
    alive = [p for p in used if p in here]
    if want_end:
        # Every plan the change brings along must have ended, whoever started it: a plan
        # merged in from another branch and left open would govern the base from then on.
        brought = _brought(head, here)
        for p in sorted({*alive, *brought}):
            life = lifecycle.replay(plans.load(snap, p))
            if life.state not in lifecycle.ENDED:
                out.append(finding(
                    "HG415", f"{cfg.artifacts_dir}/plans/{p}/plan.md",
                    f"plan `{p}` is still open ({life.state.value}): complete or cancel it before it merges",
                ))  # fmt: skip
    if not head.code_changed or not alive:
        return out
    from harness_gate import review, verification  # noqa: PLC0415  (not on the pre-commit path)

    tree = head.tree()
    reviewed: list[tuple[plans.PlanFolder, lifecycle.Lifecycle]] = []
    for p in alive:
        folder = plans.load(snap, p)
        life = lifecycle.replay(folder)
        if folder.plan is None or life.policy is None:
            out.append(finding("HG201", f"{folder.path}/plan.md", f"plan `{p}` at the head does not parse"))
            continue
        if life.plan_approval is not approvals_mod.Status.APPROVED:
            out.append(finding("HG202", f"{folder.path}/plan.md", f"plan `{p}` at the head is not approved"))
        reviewed.append((folder, life))
    counted: list[review.Counted] = []
    if want_review and reviewed:
        span = head.span if head.landed else _no_span
        problems, counted = review.review_requirement(root, cfg, reviewed, tree, fork=head.fork, span=span)
        out.extend(problems)
        if not problems and head.anchors is not None and head.commit is not None:
            for c in counted:  # the reviews the requirement rests on must be signed where asked
                out.extend(head.anchors.review(head.commit, c.path, head.code_commits))
    for folder, life in reviewed:
        if want_evidence and reverify is not None:
            reverify.append(functools.partial(verification.reverify, root, cfg, folder, life, tree))
        elif want_evidence or warn_evidence:
            accept = _landed_trees(head, folder.plan_id, counted) if head.landed else None
            found = verification.freshness_findings(root, snap, folder, life, tree, accept=accept)
            if warn_evidence:
                found = [dataclasses.replace(f, severity=Severity.WARNING) for f in found]
            out.extend(found)
    return out


def _landed_trees(head: Head, plan_id: str, counted: Sequence[Counted]) -> Callable[[str], bool]:
    """On a landed range, evidence for another tree than the head's is a warning only when
    that tree is one the plan's own pull request holds: a commit of the range that changed
    the plan's folder (where its evidence was committed), or the tree its counted review
    names. Evidence for any other tree is stale, as anywhere."""
    reviewed = {c.tree for c in counted if c.plan_id == plan_id}

    def accept(verified: str) -> bool:
        return verified in reviewed or verified in head.plan_trees(plan_id)

    return accept


def _no_span(plan_id: str) -> None:
    """Off a base branch's own line, a plan has no landed stretch: the branch's change counts."""
    return


def _vouched(snap: snapshot.Snapshot, anchors: trust.Anchors | None, commit: str | None) -> snapshot.Snapshot:
    """The state with its approval records filtered by the check's trust anchors."""
    return snap if anchors is None else dataclasses.replace(snap, vouch=anchors.vouch(commit))


def _active(cfg: config_mod.Config, *states: snapshot.Snapshot) -> bool:
    """The trusted side decides whether the gate is on (config from the base, docs/threat-model.md):
    the commit that adopts harness-gate is not judged by rules it introduces, and a
    change that deletes the gate's files is judged by the rules it deletes."""
    return cfg.source is not None or any(s.active for s in states)


def active_at(root: Path, head: str, cfg: config_mod.Config) -> bool:
    """Whether the gate is on for a change of the index: HEAD, the trusted side, has a
    configuration or an artifacts root (the agent hook asks the same)."""
    return cfg.source is not None or git.has_path(root, head, cfg.artifacts_dir)


def _check_index(
    location: git.Location, plan_id: str | None, config_file: str | None, stack: contextlib.ExitStack[bool | None]
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    root = location.toplevel
    head = location.head
    if head is None:
        # A repository's first commit has nothing to trust: it is the commit that adopts
        # harness-gate (its configuration, its hooks), not judged by the rules it brings.
        return [], {"active": False, "adopting": True, "changes": 0, "commits": 0}, None
    cfg = _config(root, config_file, head)
    if not active_at(root, head, cfg):
        return [], {"active": False, "changes": 0, "commits": 0}, None
    snapshot.prefetch_index(root, cfg)  # listed by git while the diff is parsed here
    changes = git.staged_changes(root, head)
    others = git.merge_heads(location)
    if others:
        changes = _merge_own(root, changes, [git.staged_changes(root, o) for o in others], [head, *others], None)
    new = snapshot.from_index(root, cfg)
    anchors = stack.enter_context(trust.anchors(root, cfg, base=head, head=None))
    new = _vouched(new, anchors, None)
    parents = [head, *others]

    def olds() -> list[snapshot.Snapshot]:
        return [snapshot.from_commit(root, r, cfg) for r in parents]

    @functools.cache
    def origins() -> Origins:
        # Without a merge, the diff against HEAD says which plans this commit starts.
        added = None if others else frozenset(snapshot.plans_in(map(gate.decode, _added(changes)), cfg.artifacts_dir))
        return branches.locally(root, cfg, parents, frozenset(governance.present(new)), added=added)

    def fork() -> str | None:
        base = git.default_base(root, cfg.base_branch)
        return git.merge_base(root, base, head) if base else head

    data: dict[str, Any] = {"active": True, "changes": len(changes), "commits": 0}
    code = gate.touches_code(changes, cfg.artifacts_dir)
    used: set[str] = set()
    state = gate.State(
        "index", None, changes, new, olds, merge=bool(others), first_parent=head, parent=head, load_origins=origins,
        load_selected=lambda: branches.selected(root),
    )  # fmt: skip
    found = gate.check_state(state, plan_id, used=used)
    return found, data, Head(
        new, lambda: _fingerprint(root, cfg, None), code, frozenset(used), anchors=anchors, origins=origins,
        fork=fork,
    )  # fmt: skip


def _added(changes: Sequence[git.Change]) -> list[bytes]:
    """The added `plan.md` files among the changes (the name first: it is the cheap test)."""
    return [c.path for c in changes if c.path.endswith(b"/plan.md") and c.added]


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
    """What a merge adds beyond its parents: where the result differs from git's own merge
    of them (a conflict resolved, a side dropped, an "evil" change). A file both sides
    changed and git merged cleanly is not the merge's own. `first` is the diff against the
    first parent; `result` the merge commit, or None for the index being committed."""
    merged = git.merge_result(root, parents[0], parents[1]) if len(parents) == 2 else None
    if merged is not None:
        if result is None:
            return git.staged_changes(root, merged)
        return git.tree_changes(root, merged, result)
    # An octopus, or a git without `merge-tree --write-tree`: the paths that differ from
    # every parent, plus a parent's change the result does not keep. Stricter than git's
    # merge (a file both sides changed is the merge's own), never looser.
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
    # A pushed range's old side is the branch's own earlier tip, not where it left its base:
    # the branch's change is measured from the base branch, as its pull request will be.
    fork_from = (git.default_base(root, trusted_cfg.base_branch) or old_ref) if mode.kind == "range" else old_ref
    if _active(trusted_cfg, states.snapshot(old_ref)):
        anchors = stack.enter_context(trust.anchors(root, trusted_cfg, base=old_ref, head=new_ref))
        return _judge(
            root, listing, cfg=trusted_cfg, head_oid=new_ref, plan_id=plan_id, every=True, anchors=anchors,
            base=old_ref, states=states, fork_from=fork_from,
        )  # fmt: skip
    # The base predates adoption: judge every commit made with the gate on, under the
    # configuration the pushed head carries (there is no older one to trust).
    cfg = _config(root, config_file, new_ref, from_rev=True)
    anchors = stack.enter_context(trust.anchors(root, cfg, base=old_ref, head=new_ref))
    return _judge(
        root, listing, cfg=cfg, head_oid=new_ref, plan_id=plan_id, every=False, anchors=anchors, base=old_ref,
        states=states, fork_from=fork_from,
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
    return _judge(
        root, listing, cfg=cfg, head_oid=new_ref, plan_id=plan_id, every=not first_push, anchors=anchors,
        fork_from=git.default_base(root, cfg.base_branch),
    )  # fmt: skip


def _origins_of(origins: Mapping[str, Origins], oid: str) -> Callable[[], Origins]:
    return lambda: origins.get(oid, BASE_ONLY)


def _first_parent_line(listing: Sequence[git.Commit], head: str) -> list[git.Commit]:
    """The head's first-parent line within the listing, oldest first: the commits the
    branch made itself (on a base branch: its own history since the base)."""
    by_oid = {c.oid: c for c in listing}
    line = []
    oid: str | None = head
    while oid is not None and oid in by_oid:
        line.append(by_oid[oid])
        oid = by_oid[oid].parents[0] if by_oid[oid].parents else None
    return line[::-1]


class _Line:
    """A range seen from its head's first-parent line (the base branch's own history, on a
    landed range): where each commit of the range landed on it, and each plan's stretch."""

    def __init__(self, root: Path, cfg: config_mod.Config, states: history.History,
                 listing: Sequence[git.Commit], head: str) -> None:  # fmt: skip
        self.root = root
        self.cfg = cfg
        self.states = states
        self.line = _first_parent_line(listing, head)
        self.position = {c.oid: i for i, c in enumerate(self.line)}
        by_oid = {c.oid: c for c in listing}
        # The first line commit each commit of the range is reachable from: where it landed.
        self.landed_at: dict[str, int] = {}
        for i, commit in enumerate(self.line):
            todo = [commit.oid]
            while todo:
                oid = todo.pop()
                if oid in self.landed_at or oid not in by_oid:
                    continue
                self.landed_at[oid] = i
                todo.extend(by_oid[oid].parents)
        self.touched: dict[str, list[str]] = {}  # plan -> commits that changed its folder
        self.users: dict[str, list[str]] = {}  # plan -> commits it authorised
        prefix = os.fsencode(f"{cfg.artifacts_dir}/plans/")
        for commit in listing:
            for plan_id in {
                c.path[len(prefix) :].split(b"/", 1)[0] for c in commit.changes if c.path.startswith(prefix)
            }:
                self.touched.setdefault(os.fsdecode(plan_id), []).append(commit.oid)

    def used(self, plan_id: str, commit: str) -> None:
        self.users.setdefault(plan_id, []).append(commit)

    @functools.cache  # noqa: B019  (one per check: it lives as long as the check)
    def span(self, plan_id: str) -> tuple[str, str] | None:
        """The plan's own stretch of the line: from the parent of the line commit that brought
        its folder there (its first commit, a squash, or the merge of its pull request) to the
        line commit where the last commit that changed the folder or wrote under the plan
        landed. The change between them is the plan's change as it landed, whatever else
        landed in the same push."""
        mine = [*self.touched.get(plan_id, ()), *self.users.get(plan_id, ())]
        landed = [self.landed_at[c] for c in mine if c in self.landed_at]
        if not landed:
            return None
        first = self.line[min(landed)]
        prefix = f"{self.cfg.artifacts_dir}/plans/{plan_id}/"
        if not first.parents or self.states.entries_below(first.parents[0], prefix):
            return None  # the plan was on the line before this range: no stretch of its own here
        return first.parents[0], self.line[max(landed)].oid

    @functools.cache  # noqa: B019
    def plan_trees(self, plan_id: str) -> frozenset[str]:
        """The fingerprints of the range's commits that changed the plan's folder: the trees
        its evidence was committed with."""
        return frozenset(_fingerprint(self.root, self.cfg, oid) for oid in self.touched.get(plan_id, ()))


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
    fork_from: str | None = None,
) -> tuple[list[Finding], dict[str, Any], Head | None]:
    """`fork_from`: the base branch the change is measured from (a review speaks of it);
    by default `base`."""
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

    origins = branches.walk(listing, states.plan_ids)
    line = _Line(root, cfg, states, listing, head_oid)

    @functools.cache
    def on_at(oid: str) -> bool:
        # That commit's own files: its configuration, or its artifacts root.
        return states.config(oid).source is not None or state_of(oid).has_root

    behind: dict[tuple[int, frozenset[str]], tuple[snapshot.Snapshot, list[Finding]]] = {}
    findings: list[Finding] = []
    changes = 0
    checked = 0
    code_commits: list[str] = []
    judged: list[str] = []
    used: set[str] = set()
    for commit in listing:
        if not every and not _gate_was_on(commit, on_at):
            continue  # history from before the repository adopted harness-gate
        checked += 1
        judged.append(commit.oid)
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
            f"commit {commit.oid}", commit.oid, own, state_of(commit.oid), olds, merge=merge, first_parent=first,
            parent=commit.parents[0] if commit.parents else None, load_origins=_origins_of(origins, commit.oid),
        )  # fmt: skip
        prefix = f"commit {commit.oid[:12]}: "
        used_here: set[str] = set()
        # The message names the commit for a reader; `commit` carries its full id for tools.
        findings.extend(
            dataclasses.replace(f, commit=commit.oid)
            for f in gate.check_state(state, plan_id, prefix=prefix, used=used_here)
        )
        used |= used_here
        for p in used_here:
            line.used(p, commit.oid)
        # Only a plan this commit's branch shares with the base can be behind it: the base
        # branch may have amended or ended it since. A plan the branch started has no newer
        # records anywhere but on the branch (an old tip of the branch itself, force-pushed
        # over, is no base to be behind).
        with_base = used_here - origins.get(commit.oid, BASE_ONLY).own
        if base is not None and with_base:
            key = (id(state.new), frozenset(with_base))
            if key not in behind:
                behind[key] = (state.new, _behind_base(state.new, state_of(base), with_base, ""))
            findings.extend(
                dataclasses.replace(f, message=prefix + f.message, commit=commit.oid) for f in behind[key][1]
            )
        signers = f"{cfg.artifacts_dir}/{trust.SIGNERS_FILE}".encode()
        if any(c.path == signers for c in own):
            for f in anchors.anchor_change(commit.oid, signers.decode()):
                findings.append(dataclasses.replace(f, message=prefix + f.message, commit=commit.oid))
    active = every or checked > 0

    def fork() -> str | None:
        measured_from = fork_from or base
        if measured_from is not None:
            return git.merge_base(root, measured_from, head_oid)
        # No base named (a new branch's push): where the head's own line leaves the range.
        own = line.line
        return own[0].parents[0] if own and own[0].parents else None

    head = Head(
        state_of(head_oid), functools.cache(lambda: _fingerprint(root, cfg, head_oid)), bool(code_commits),
        frozenset(used),
        commit=head_oid, code_commits=tuple(code_commits), anchors=anchors,
        origins=_origins_of(origins, head_oid), fork=fork, span=line.span, plan_trees=line.plan_trees,
        brought=None if base is None else lambda: frozenset(states.plan_ids(head_oid) - states.plan_ids(base)),
        judged=tuple(judged),
    )  # fmt: skip
    data: dict[str, Any] = {"active": active, "changes": changes, "commits": checked}
    if base is not None:
        data["base"] = base
    return findings, data, head


def _behind_base(state: snapshot.Snapshot, base: snapshot.Snapshot, plan_ids: set[str], prefix: str) -> list[Finding]:
    """A commit judged under a plan as it stood before the base's newer records (an
    amendment that narrowed it, a completion, a newer approval) used authority the base
    has withdrawn: a branch cut before them must be rebased onto the base first."""
    out: list[Finding] = []
    for plan_id in sorted(plan_ids):
        folder = f"{base.artifacts_dir}/plans/{plan_id}/"
        for path in sorted(p for p in base.files if p.startswith(folder)):
            name = path[len(folder) :]
            before = base.files.get(path)
            if before is None or name == "evidence.jsonl":
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
    """With no trusted base, a commit is judged when its parent had the gate on. A root
    commit has no parent to trust: at most it adopts harness-gate, and is not judged."""
    return any(on_at(p) for p in commit.parents)


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
        return report_mod.inactive("explain")
    others: tuple[str, ...] = ()
    if plan_id is None:
        origins = branches.locally(root, cfg, [head] if head else [], frozenset(governance.present(new)))
        found = governance.candidates(new, origins)
        if len(found.ids) > 1:
            found = governance.narrow(found, branches.selected(root))
        plan_id, others = (found.ids[0], found.ids[1:]) if found.ids else (None, ())
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    life = lifecycle.replay(plans.load(new, plan_id)) if plan_id else None
    policy = life.policy if life else None
    allowed = boundary_mod.Boundary.compile(policy.boundary) if policy else None
    exact = allowed.exact if allowed else frozenset()
    if life is None:
        lines.append("plan: none open on this branch (no write authority for paths outside the artifacts root)")
    else:
        lines.append(f"plan: {plan_id} ({life.state.value}, write authority: {'yes' if life.grants_writes else 'no'})")
        if others:
            lines.append(f"      (also open here: {', '.join(others)}; `--plan ID` explains against another)")
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
    if rel.startswith(cfg.artifacts_dir + "/") and raw != gate.signers_path(cfg.artifacts_dir):
        return _explain_artifact(rel, cfg, trusted)
    if life is None or allowed is None or not life.grants_writes:
        state = life.state.value if life else "no open plan"
        return "blocked", f"no write authority ({state})"
    why = gate.protected(rel, cfg.source, cfg.artifacts_dir)
    if why is not None:
        if rel in exact:
            return "allowed", f"protected ({why}), listed exactly in the boundary"
        return "blocked", f"HG102: protected ({why}); only an exact, wildcard-free pattern allows it"
    pattern = allowed.which(raw)
    if pattern is None:
        return "blocked", "HG101: outside the write boundary"
    return "allowed", f"by pattern `{pattern}`"
