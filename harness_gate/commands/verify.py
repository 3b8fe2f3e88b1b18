"""`harness-gate verify`, `record` and `fingerprint`: evidence for exact trees (docs/evidence.md)."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Sequence
from pathlib import Path

from harness_gate import (
    artifacts_root,
    artifacts_tree,
    evidence,
    fingerprints,
    freshness,
    git,
    governance,
    plans,
    recording,
)
from harness_gate.errors import usage
from harness_gate.findings import Finding
from harness_gate.progress import Progress
from harness_gate.report import Report, inactive
from harness_gate.state_facts import GitFacts


def fingerprint(cwd: Path, source: str) -> Report:
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    cfg = artifacts.config
    if source == "worktree":
        tree = fingerprints.fingerprint_worktree(root, cfg)
    elif source == "index":
        tree = fingerprints.fingerprint_index(root, cfg)
    else:
        rev = git.resolve(root, source)
        if rev is None:
            raise usage(f"{source!r} does not name a commit")
        tree = fingerprints.fingerprint_commit(root, rev, cfg)
    return Report("fingerprint", data={"source": source, "tree": tree}, lines=(tree,))


def _log(root: Path, folder: plans.PlanFolder) -> Path:
    return root / artifacts_root.evidence_log(folder.path)


def verify(cwd: Path, plan_id: str | None, only: Sequence[str], progress: Progress | None = None) -> Report:
    """Run the required commands (`only`: those) and append their evidence; `progress`
    shows each command as it starts, runs and ends (harness_gate/progress.py)."""
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return inactive("verify")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    fingerprints.refuse_hidden(root)
    recording.check_log(root, folder, artifacts)
    commands = freshness.required_commands(life)
    known = {c["id"] for c in commands}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise usage(f"--only {unknown[0]!r} is not a required command ({', '.join(sorted(known))})")
    assert life.policy is not None and life.plan_sha256 is not None  # noqa: S101
    policy = evidence.policy_hash(life.policy.verification)
    lines: list[str] = []
    log = _log(root, folder)
    found: list[Finding] = []
    untracked = fingerprints.untracked_files(root, artifacts.config)
    inputs = fingerprints.Inputs.now(root, artifacts.config)
    for cmd in commands:
        if only and cmd["id"] not in only:
            continue
        with progress.command(cmd["id"], cmd["command"]) if progress else contextlib.nullcontext() as shown:
            tree, rec, changed, own = recording.run_and_record(
                root,
                artifacts.config,
                log,
                command_id=cmd["id"],
                command=cmd["command"],
                shell=cmd.get("shell", False),
                timeout=cmd["timeout_seconds"],
                plan=folder.plan_id,
                plan_sha256=life.plan_sha256,
                policy=policy,
                inputs=inputs,
            )
            if shown is not None:
                shown.result = f"{rec.status} {rec.duration_ms / 1000:.1f}s"
        lines.append(
            f"{cmd['id']:16} {rec.status:7} {rec.duration_ms / 1000:.1f}s  tree {tree[:12]}  `{cmd['command']}`"
        )
        if changed:
            found.append(recording.changed_tree(folder, cmd["id"], changed))
        if own != "PASS":
            tail = [ln for ln in rec.key_output.strip().splitlines() if not ln.startswith("[harness-gate]")][-3:]
            found.append(recording.failed(folder, cmd["id"], own, " | ".join(tail)[:300]))
    # Outputs that were there before and no command wrote are inputs the tree holds.
    seen = sorted({*untracked, *inputs.unwritten()})
    found[:0] = fingerprints.untracked_warning(seen, artifacts_root.evidence_log(folder.path))
    lines.append(f"recorded in {artifacts_root.evidence_log(folder.path)}; commit it with the tree it speaks of")
    return Report("verify", tuple(found), {"plan": folder.plan_id}, lines=tuple(lines))


def record(cwd: Path, plan_id: str | None, command_id: str, argv: Sequence[str], timeout: int) -> Report:
    if not argv:
        raise usage("give the command after `--`: harness-gate record -- CMD ARGS...")
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return inactive("record")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    if not evidence.ID_RE.match(command_id):
        raise usage(f"--id {command_id!r} must match [a-z0-9][a-z0-9._-]{{0,63}}")
    try:
        command = shlex.join(argv)
        command.encode("utf-8")
    except UnicodeEncodeError:
        raise usage("the command is not valid UTF-8") from None
    if "\n" in command or "\r" in command or "\0" in command or len(command) > 4096:
        raise usage("the command must be one line of at most 4096 characters")
    if command_id in {c["id"] for c in freshness.required_commands(life)}:
        raise usage(f"`{command_id}` is a required command: use `harness-gate verify --only {command_id}`")
    fingerprints.refuse_hidden(root)
    recording.check_log(root, folder, artifacts)
    assert life.policy is not None and life.plan_sha256 is not None  # noqa: S101
    tree, rec, changed, own = recording.run_and_record(
        root,
        artifacts.config,
        _log(root, folder),
        command_id=command_id,
        command=command,
        shell=False,
        timeout=timeout,
        plan=folder.plan_id,
        plan_sha256=life.plan_sha256,
        policy=evidence.policy_hash(life.policy.verification),
        inputs=fingerprints.Inputs.now(root, artifacts.config),
    )
    found = [recording.changed_tree(folder, command_id, changed)] if changed else []
    if own != "PASS":
        found.append(recording.failed(folder, command_id, own, own))
    return Report(
        "record",
        tuple(found),
        {"plan": folder.plan_id},
        lines=(f"{command_id} {rec.status} {rec.duration_ms / 1000:.1f}s tree {tree[:12]} `{command}`",),
    )
