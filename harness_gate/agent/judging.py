"""Writes judged by the gate's own rules: the repository the hook guards and its trusted
configuration, the paths a tool writes (before the write, or after it at Stop) as
`check --staged` judges the index, the artifacts root's changes, the commits of a session
as `check --range` judges them, and evidence that is not fresh. Each answer is a list of
findings; the caller says them."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness_gate import artifacts_root
from harness_gate.agent import paths as where
from harness_gate.agent.decisions import Decision, deny_reason, refusal
from harness_gate.agent.runtimes import SESSION

if TYPE_CHECKING:
    from harness_gate import git
    from harness_gate.config import Config
    from harness_gate.findings import Finding


@dataclass(frozen=True)
class Repository:
    """A repository the gate guards: where git found it, its trusted configuration (HEAD's),
    and HEAD (a commit: an unborn branch is not judged)."""

    location: git.Location
    cfg: Config
    head: str

    @property
    def root(self) -> Path:
        return self.location.toplevel


def repository(
    cwd: Path, *, prefetch: bool = False, begin: bool = True, location: git.Location | None = None
) -> Repository | Decision:
    """The repository at `cwd`, or the decision for one the gate does not guard (allow:
    nothing to enforce). With `prefetch`, git starts at once on the reads a write is judged
    with, as `check --staged` does (git/process.py's contract: what is not read is
    discarded). With `begin`, a session without a record gets one at HEAD (a tool call;
    never Stop, where a missing record means the fork point)."""
    from harness_gate import artifacts_tree, cache, git, state_facts  # noqa: PLC0415

    location = location or git.locate(cwd)
    if prefetch:
        artifacts_tree.prefetch(location)
    cache.configure(location.cache_dir)  # the parsed configuration and plans, as `check` keeps them
    if location.head is None:
        return Decision("allow", "harness-gate: no commit yet; the adopting commit is not judged")
    if SESSION and begin:
        from harness_gate import agent_session  # noqa: PLC0415

        agent_session.begin(location.cache_dir, SESSION[0], location.head)
    cfg = artifacts_tree.trusted_config(location.toplevel, None, location.head)
    if not state_facts.active_at(location.toplevel, location.head, cfg):
        return Decision("allow", "harness-gate is not active in this repository (no configuration at HEAD)")
    return Repository(location, cfg, location.head)


def judge(cwd: Path, paths: Sequence[tuple[str, str]], tool: str) -> Decision:
    from harness_gate import git  # noqa: PLC0415

    try:  # git/process.py's contract: what was started and not read ends here, on every way out
        repo = repository(where.judged_in(where.project(), cwd, paths), prefetch=True)
        if isinstance(repo, Decision):
            return repo
        findings, plan = judge_paths(repo, cwd, paths)
    finally:
        git.discard_started()
    if not findings:
        shown = ", ".join(f"`{p}`" for p, _ in paths[:3])
        return Decision("allow", f"harness-gate: {shown} inside the write boundary of `{plan}`")
    return Decision("deny", deny_reason(tool, findings))


def change(rel: str, status: str, on_disk: bool) -> git.Change:
    """A change of `rel` as the gate's rules read one: what git would show for it (modes
    of a regular file; object ids that are never read)."""
    from harness_gate import git  # noqa: PLC0415

    if status == "M" and not on_disk:
        status = "A"  # a Write that creates the file: said as an addition, as git will show it
    old_mode = "100644" if on_disk or status == "D" else git.NO_MODE
    new_mode = git.NO_MODE if status == "D" else "100644"
    zero = "0" * 40
    return git.Change(rel.encode("utf-8", "surrogateescape"), (old_mode,), new_mode, (zero,), zero, status)


def judge_paths(
    repo: Repository,
    cwd: Path,
    paths: Sequence[tuple[str, str]],
    *,
    before: bool = True,
    walked: frozenset[str] = frozenset(),
) -> tuple[list[Finding], str | None]:
    """Findings for writing `paths` ((name, "A"|"M"|"D")), and the plan that allows them
    when none blocks. The plan's rules are rules.judge_writes over the index's plans, chosen
    as `check --staged` chooses them. `before` the write, a file with other hard links is
    refused too (Stop judges what was written). `walked`: the names of `paths` that git's
    untracked listing found (Stop), below the top directory: git entered every folder on
    the way, so none is a symbolic link or holds a `.git` of its own (git enters neither),
    and only the file itself is looked at."""
    root, cfg = repo.root, repo.cfg
    out: list[Finding] = []
    changes: list[git.Change] = []
    seen: dict[str, str | None] = {}  # folders looked at for a nested repository
    real_root, symlinks = os.path.realpath(root), dict[str, bool]()  # folders looked at for a link
    top = os.fspath(root)
    for raw, status in paths:
        if raw in walked and not Path(raw).is_symlink():
            named, why, entered = [raw[len(top) + 1 :]], None, True
        else:
            (named, why), entered = where.resolve(root, cwd, raw, real_root, symlinks), False
        if why is not None:
            out.append(refusal(raw, why, "HG104"))
            continue
        for rel in named:
            nested = None if entered else where.nested_repository(root, rel, seen)
            if nested is not None:
                out.append(refusal(rel, f"inside `{nested}`, a repository of its own nested in this one", "HG104"))
                continue
            if artifacts_root.inside(cfg.artifacts_dir, rel):
                out.append(
                    refusal(
                        rel,
                        f"inside the artifacts root `{cfg.artifacts_dir}/`: only harness-gate's commands write there "
                        "(plan new, plan amend, verify, review, complete), and approvals come from a human at "
                        "`harness-gate approve`",
                    )
                )
                continue
            links = where.hard_links(root / rel) if before and status != "D" else 1
            if links > 1:
                out.append(
                    refusal(
                        rel,
                        f"a hard link ({links} names of one file): writing it changes the file under its other names "
                        "too, which may lie outside the write boundary or the repository",
                    )
                )
                continue
            # Before the write, the disk says whether it adds; after it (Stop), git's status does.
            existed = os.path.lexists(root / rel) if before else status != "A"
            changes.append(change(rel, status, existed))
    if not changes:
        return out, None
    return _judge_changes(repo, changes, out)


def _judge_changes(repo: Repository, changes: list[git.Change], out: list[Finding]) -> tuple[list[Finding], str | None]:
    """`out` and the rules' blocking findings for `changes`, judged as the index would be
    with them in it; the plan that allows them when nothing blocks."""
    from harness_gate import changesets, git, governance, rules  # noqa: PLC0415

    plan = None
    try:
        with contextlib.ExitStack() as stack:
            transition = changesets.writes(repo.location, repo.cfg, changes, stack)
            out.extend(f for f in rules.judge_writes(transition) if f.blocks)
            if not out:
                ids = governance.narrow(
                    governance.candidates(transition.new, transition.origins), transition.selected
                ).ids
                plan = ids[0] if len(ids) == 1 else ", ".join(ids)
    finally:
        git.discard_started()
    return out, plan


def artifact_findings(repo: Repository, changes: Sequence[git.Change]) -> list[Finding]:
    """What `check` would refuse of the work tree's changes under the artifacts root (an
    approvals log or a plan written by hand, a record changed after its approval): the
    gate's own artifact rules (rules.judge_artifacts), HEAD against the work tree."""
    from harness_gate import changesets, git, rules  # noqa: PLC0415

    try:
        with contextlib.ExitStack() as stack:
            transition = changesets.work_tree(repo.root, repo.cfg, repo.head, changes, stack)
            return [f for f in rules.judge_artifacts(transition) if f.blocks]
    finally:
        git.discard_started()


def commit_findings(repo: Repository, start: str) -> list[Finding]:
    """What `check --range START..HEAD` refuses of the commits (the history rules; evidence
    is said apart, for the work tree). A start that is no longer a commit here fails closed."""
    from harness_gate import changesets, git  # noqa: PLC0415
    from harness_gate.errors import usage  # noqa: PLC0415

    root, head = repo.root, repo.head
    old = git.resolve(root, start)
    if old is None:
        raise usage(f"the session began at {start[:12]}, which names no commit here")
    try:
        with contextlib.ExitStack() as stack:
            found, _, _ = changesets.commit_range(root, None, old, head, stack, pushed=True).judge(None)
    finally:
        git.discard_started()
    return [f for f in dict.fromkeys(found) if f.blocks]


def stale_evidence(root: Path, plan_id: str | None = None, untracked: Sequence[str] | None = None) -> list[Finding]:
    """Evidence of the plan this branch works under (`plan_id`, when the caller knows it)
    that is not fresh for the work tree (as `harness-gate status` reports it), when the
    configuration asks for evidence. `untracked`: the untracked files the work tree's
    listing found, when it found nothing `add -A` would stage otherwise."""
    from harness_gate import (  # noqa: PLC0415
        artifacts_root,
        artifacts_tree,
        evidence,
        fingerprints,
        freshness,
        governance,
        lifecycle,
        plans,
    )
    from harness_gate.errors import HarnessGateError  # noqa: PLC0415
    from harness_gate.state_facts import GitFacts  # noqa: PLC0415

    artifacts = artifacts_tree.from_worktree(root)
    try:
        plan_id = plan_id or governance.plan_id_for(artifacts, None, GitFacts(artifacts.root))
    except HarnessGateError:
        return []  # no plan, or several: the boundary findings say so
    folder = plans.load(artifacts, plan_id)
    life = lifecycle.replay(folder)
    if life.policy is None or not life.grants_writes:
        return []
    rel = artifacts_root.evidence_log(folder.path)
    # The work tree's fingerprint (a `git add -A` into a copy of the index, as costly as a
    # second status) is compared with records only: with none, every command is missing.
    logged = rel in artifacts.logs or bool(artifacts.files.get(rel))
    tree = fingerprints.fingerprint_worktree(root, artifacts.config, untracked=untracked) if logged else ""
    fresh, _ = freshness.state_freshness(artifacts, folder, life, tree)
    return [
        refusal(
            rel,
            f"evidence for `{f.command_id}` is {f.reason} for the work tree",
            evidence.REASON_CODES.get(f.reason, ""),
        )
        for f in fresh
        if not f.fresh
    ]
