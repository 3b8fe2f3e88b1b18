"""Stop and SubagentStop: what the git gate would say now of the session's work, before
the agent ends it. Its changes of the work tree, its commits and the evidence they need
are judged; a stop is blocked so the agent fixes them, within the bound agent_session.py
keeps."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from harness_gate import artifacts_root
from harness_gate.agent import judging, paths
from harness_gate.agent.decisions import Decision, deny_reason, triples
from harness_gate.agent.runtimes import SESSION, StopCall

if TYPE_CHECKING:
    from harness_gate import git
    from harness_gate.findings import Finding


def on_stop(call: StopCall) -> Decision:
    """What the git gate would say now of the work tree's changes (every path not as HEAD
    has it) and of the commits made since the session began (as `check --range` judges
    them; a commit made through the shell with `git commit-tree` and `git update-ref`
    leaves the tree clean). Blocks the stop when some would be refused, so the agent fixes
    them; again only when the set of findings changed since the last block, and at most
    agent_session.MAX_BLOCKS times in a row while the runtime says the agent continues
    because of a stop hook (`stop_hook_active`, which the agent cannot set): a record
    forged to say the blocks are spent silences no new set outside such a run, and past
    the bound the findings are still said to the human. Without a record (removed, or not
    as agent_session writes it) the commits are judged from the fork point. A payload
    without a session id blocks unless the agent already continues because of a stop hook."""
    from harness_gate import git  # noqa: PLC0415

    sid = SESSION[0] if SESSION else None
    if sid is None and call.active:
        return Decision("none")
    # The work tree's listing, the one slow read (every untracked folder is entered), starts
    # in a thread at once, while the configuration and plans are read; once the repository
    # is located (a foreign `commondir` refused first, HG909). Not read, it is discarded.
    # The session's work tree: the linked worktree its `cwd` is in (EnterWorktree), else the project.
    project = paths.project()
    where = paths.judged_in(project, Path(call.cwd), [("x", "M")]) if call.cwd is not None else project
    location = git.locate(where)
    git.prefetch_status_records(location.toplevel, ignore_files=True)
    try:
        decision = _on_stop(sid, call.active, location)
    finally:
        git.discard_started()
    if where == project or decision.kind == "block":
        return decision
    # The session moved into a linked worktree; the main tree is judged as well, as Stop
    # judges it without one: a worktree the agent made itself (`git worktree add`) is no
    # way to end a session with its changes of the main tree unjudged. Each tree keeps its
    # own session record (under its own git directory).
    try:
        main = _on_stop(sid, call.active, git.locate(project))
    finally:
        git.discard_started()
    return main if main.kind == "block" or decision.kind == "none" else decision


def _on_stop(sid: str | None, active: bool, location: git.Location) -> Decision:  # noqa: PLR0911  (one return per case, in the order they are judged)
    from harness_gate import agent_session  # noqa: PLC0415

    repo = judging.repository(paths.project(), begin=False, location=location)
    if isinstance(repo, Decision):
        return Decision("none")
    cache_dir = repo.location.cache_dir
    state = agent_session.load(cache_dir, sid) if sid is not None else None
    if sid is not None and state is None and active:
        return Decision("none")  # nothing remembered (an unwritable git directory): the old guard
    found, reason, base = stop_findings(repo, state.start if state is not None else None)
    if sid is None:
        return Decision("block", reason) if found else Decision("none")
    if state is None:
        state = agent_session.Session(base or repo.head)  # the fork point from here on
        if not found:
            with contextlib.suppress(OSError):
                agent_session.save(cache_dir, sid, state)
            return Decision("none")
    if not found:
        if state.blocked:
            agent_session.save(cache_dir, sid, dataclasses.replace(state, blocked=""))
        return Decision("none")
    key = agent_session.digest(triples(found))
    if key == state.blocked:
        return Decision("none")
    blocks = state.blocks if active else 0  # the bound holds within a run of blocks the runtime vouches for
    if blocks >= agent_session.MAX_BLOCKS:
        return Decision("note", f"harness-gate: not blocking the stop again ({blocks} blocks in a row).\n{reason}")
    with contextlib.suppress(OSError):
        agent_session.save(cache_dir, sid, dataclasses.replace(state, blocked=key, blocks=blocks + 1))
    return Decision("block", reason)


def stop_findings(repo: judging.Repository, start: str | None) -> tuple[list[Finding], str, str | None]:
    """Every finding Stop reports, the reason that says them, and where the commits were
    judged from (`start`, else the fork point; None when there is neither)."""
    from harness_gate import fingerprints, git  # noqa: PLC0415

    root, cfg = repo.root, repo.cfg
    named: list[tuple[str, str]] = []
    artifacts: list[git.Change] = []
    walked: set[str] = set()
    common: list[str | None] = []
    records = git.status_records(root, ignore_files=True)
    for xy, path in records:
        if xy == "??" and path.endswith("/"):
            # A folder git does not descend into holds a `.git`: a linked worktree of this
            # repository (EnterWorktree's) is no change of this tree; it is judged in itself.
            from harness_gate import agent_worktrees  # noqa: PLC0415

            common = common or [agent_worktrees.common_dir(root)]
            if common[0] is not None and agent_worktrees.linked(common[0], root / path.rstrip("/")):
                continue
        # An addition in the index or the work tree (`A `, ` A` from `add -N`, `AD`) adds;
        # HEAD never had the file.
        status = "A" if "A" in xy or xy == "??" else ("D" if "D" in xy else "M")
        if path.startswith(artifacts_root.prefix(cfg.artifacts_dir)):
            artifacts.append(judging.change(path, status, True))  # judged by the artifact rules, below
        else:
            named.append((f"{root}/{path}", status))
            if xy == "??" and path and not path.endswith("/") and path.split("/", 1)[0].casefold() != ".git":
                walked.add(f"{root}/{path}")
    blocking, plan = (
        judging.judge_paths(repo, root, named, before=False, walked=frozenset(walked)) if named else ([], None)
    )
    if artifacts:
        blocking.extend(judging.artifact_findings(repo, artifacts))
    one = plan if plan is not None and ", " not in plan else None  # the plan `check --staged` chose: not asked again
    stale = (
        judging.stale_evidence(root, one, fingerprints.untracked_listed(records))
        if cfg.evidence_stages and (named or artifacts)
        else []
    )
    base = start if start is not None else git.fork_point(root, cfg.base_branch, repo.head)
    committed = judging.commit_findings(repo, base) if base is not None and base != repo.head else []
    parts = []
    if blocking:
        header = "harness-gate: the commit gate (`check`) blocks these changes of the work tree:"
        parts.append(deny_reason("", blocking, header) + "\nRevert them, or ask for an amendment, before you stop.")
    if committed:
        header = (
            f"harness-gate: the commits made since {'this session began' if start else 'the branch left its base'} "
            f"({(base or '')[:12]}..HEAD) would be refused (`check --range`):"
        )
        parts.append(
            deny_reason("", committed, header) + "\nCommits are made with `git commit`, through the commit gate: "
            "move the branch back and commit what the plan allows."
        )
    if stale:
        # Not a block at commit by default (`evidence_stages`, default CI): said as what the
        # stages that ask for it will say, so the agent runs verify before it ends.
        header = f"harness-gate: evidence the gate asks for at {', '.join(cfg.evidence_stages)} is not fresh:"
        parts.append(deny_reason("", stale, header))
    return [*blocking, *committed, *stale], "\n".join(parts), base
