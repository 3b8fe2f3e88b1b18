"""`verify`, `record` and `fingerprint`: evidence for exact trees, and its freshness.

The fingerprint of a state is the git tree id of its content with the artifacts root
removed. Anyone can reproduce it with plumbing (docs/evidence.md):

    git rev-parse HEAD^{tree}                               # a commit's tree
    git ls-tree HEAD | grep -v "	harness$" | git mktree     # ... without the artifacts root
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_gate import branches, evidence, fsutil, git, governance, lifecycle, plans, runner, snapshot
from harness_gate.config import Config
from harness_gate.errors import HarnessGateError, Refused
from harness_gate.findings import Finding, Severity, finding
from harness_gate.report import Report, inactive

SHOWN_PATHS = 10


def _strip(root: Path, tree: str, cfg: Config) -> str:
    return git.tree_without(root, tree, cfg.artifacts_dir.split("/"))


def fingerprint_worktree(root: Path, cfg: Config) -> str:
    # The artifacts root is removed from the fingerprint anyway: not staging it keeps a
    # long evidence log from being read at all.
    return _strip(root, git.worktree_tree(root, cfg.artifacts_dir, cfg.verify_outputs), cfg)


SHOWN_FILES = 8


def untracked_warning(root: Path, cfg: Config, path: str) -> list[Finding]:
    """Untracked files that are not ignored are part of the work tree's fingerprint: the
    evidence speaks of them, and of a tree the commit will not have unless they are added."""
    found = git.untracked_files(root, cfg.artifacts_dir, cfg.verify_outputs)
    if not found:
        return []
    shown = ", ".join(found[:SHOWN_FILES]) + (
        f" and {len(found) - SHOWN_FILES} more" if len(found) > SHOWN_FILES else ""
    )
    return [finding(
        "HG310", path, f"untracked files are part of the tree verify records: {shown}", severity=Severity.WARNING,
    )]  # fmt: skip


def _what_changed(root: Path, before: str, after: str) -> str:
    """The files a command created, changed or deleted, each with what git makes of it."""
    changed = git.changes_between(root, before, after)
    tracked = git.tracked_files(root, [path for _, path in changed])
    words = {"A": "created", "D": "deleted", "M": "changed", "T": "changed"}
    parts = [
        f"{words.get(status[:1], 'changed')} {path} ({'tracked' if path in tracked else 'untracked, not ignored'})"
        for status, path in changed[:SHOWN_FILES]
    ]
    more = f" and {len(changed) - SHOWN_FILES} more" if len(changed) > SHOWN_FILES else ""
    return "; ".join(parts) + more


def fingerprint_index(root: Path, cfg: Config) -> str:
    return _strip(root, git.index_tree(root), cfg)


def fingerprint_commit(root: Path, rev: str, cfg: Config) -> str:
    return _strip(root, git.commit_tree(root, rev), cfg)


def fingerprint(cwd: Path, source: str) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    cfg = snap.config
    if source == "worktree":
        tree = fingerprint_worktree(root, cfg)
    elif source == "index":
        tree = fingerprint_index(root, cfg)
    else:
        rev = git.resolve(root, source)
        if rev is None:
            raise HarnessGateError("HG904", f"{source!r} does not name a commit")
        tree = fingerprint_commit(root, rev, cfg)
    return Report("fingerprint", data={"source": source, "tree": tree}, lines=(tree,))


def plan_id_for(snap: snapshot.Snapshot, plan_id: str | None) -> str:
    """The plan a command on the work tree means (governance.for_command): `--plan`, this
    branch's selection, or the one plan this branch has open (or started)."""
    if plan_id is not None:
        if not plans.PLAN_ID.match(plan_id):
            raise HarnessGateError("HG904", f"--plan {plan_id!r} is not a valid plan id")
        return plan_id
    root = snap.root
    head = git.head(root)
    origins = branches.locally(root, snap.config, [head] if head else [], frozenset(governance.present(snap)))
    return governance.for_command(snap, origins, plan_id=None, selected=branches.selected(root))


def plan_for(snap: snapshot.Snapshot, plan_id: str | None) -> tuple[plans.PlanFolder, lifecycle.Lifecycle]:
    plan_id = plan_id_for(snap, plan_id)
    folder = plans.load(snap, plan_id)
    life = lifecycle.replay(folder)
    if folder.plan is None or life.policy is None or life.plan_sha256 is None:
        problems = [*folder.findings, *life.findings]
        what = problems[0].message if problems else "it does not parse"
        raise Refused("HG201", f"{folder.path}/plan.md", f"plan `{plan_id}` cannot be used: {what}")
    return folder, life


def required_commands(life: lifecycle.Lifecycle) -> list[Mapping[str, Any]]:
    assert life.policy is not None  # noqa: S101  (checked by plan_for)
    commands: list[Mapping[str, Any]] = life.policy.verification["required_commands"]
    return commands


def _log(root: Path, folder: plans.PlanFolder) -> Path:
    return root / folder.path / "evidence.jsonl"


def _refuse_hidden(root: Path) -> None:
    dirty = git.dirty_submodules(root)
    if dirty:
        raise Refused(
            "HG308", dirty[0],
            f"submodule(s) with uncommitted changes: {', '.join(dirty[:3])}; the fingerprint records only their commit",
            "Commit (or discard) the changes inside the submodule first.",
        )  # fmt: skip
    hidden = git.hidden_edits(root)
    if hidden:
        raise Refused(
            "HG308", hidden[0],
            f"the index hides edits to {len(hidden)} path(s) ({', '.join(hidden[:3])}): "
            "evidence would speak of a tree that is not on disk",
        )  # fmt: skip


def _run_and_record(
    root: Path,
    cfg: Config,
    log: Path,
    *,
    command_id: str,
    command: str,
    shell: bool,
    timeout: float,
    plan_sha256: str,
    policy: str,
) -> tuple[str, evidence.Record, str, str]:
    """The tree it ran on, the record appended, what it changed ("" if nothing) and the
    command's own status (PASS even when changing the tree made the record a FAIL)."""
    before = fingerprint_worktree(root, cfg)
    outcome = runner.run(command, shell=shell, timeout=timeout, cwd=root)
    after = fingerprint_worktree(root, cfg)
    status, output = outcome.status, outcome.output
    changed = ""
    if after != before:
        # Evidence speaks of one tree; a command that rewrote the tree tested another.
        status = "FAIL" if status == "PASS" else status
        changed = _what_changed(root, before, after)
        output += f"\n[harness-gate] the command changed the work tree ({changed}): the evidence is not for it"
    exit_code = outcome.exit_code if status != "TIMEOUT" else None
    if status == "FAIL" and exit_code == 0:
        exit_code = 1  # recorded as a failure: a PASS record always carries exit code 0
    line = evidence.record_line(
        command_id=command_id,
        command=command,
        exit_code=exit_code,
        status=status,
        key_output=output,
        duration_ms=outcome.duration_ms,
        tree=before,
        plan_sha256=plan_sha256,
        policy=policy,
    )
    try:
        fsutil.append_line_atomic(log, line.encode("utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessGateError("HG903", f"cannot append to {log}: {exc}") from None
    rec, _ = evidence.parse_line(line[:-1].encode("utf-8"), 0)
    assert rec is not None  # noqa: S101  (record_line checked it)
    return before, rec, changed, outcome.status


def _changed_tree(folder: plans.PlanFolder, command_id: str, changed: str) -> Finding:
    return finding("HG309", f"{folder.path}/evidence.jsonl", f"`{command_id}` changed the work tree: {changed}")


def _check_log(root: Path, folder: plans.PlanFolder, snap: snapshot.Snapshot) -> None:
    """Never append to a log whose end is broken. Older lines were validated when they
    were committed (and `lint` reads them all); checking the end keeps `verify` cheap."""
    rel = f"{folder.path}/evidence.jsonl"
    path = snap.logs.get(rel)
    if path is None or path.stat().st_size == 0:
        return
    ends = evidence.ends_with_newline(path)
    last = next(evidence.lines_from_file_end(path), b"")
    rec, why = evidence.parse_line(last, 0)
    if not ends or rec is None:
        raise Refused("HG307", rel, f"the log is invalid at its end ({why or 'no final newline'}); nothing appended")


def verify(cwd: Path, plan_id: str | None, only: Sequence[str]) -> Report:
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return inactive("verify")
    folder, life = plan_for(snap, plan_id)
    _refuse_hidden(root)
    _check_log(root, folder, snap)
    commands = required_commands(life)
    known = {c["id"] for c in commands}
    unknown = [i for i in only if i not in known]
    if unknown:
        raise HarnessGateError("HG904", f"--only {unknown[0]!r} is not a required command ({', '.join(sorted(known))})")
    assert life.policy is not None and life.plan_sha256 is not None  # noqa: S101
    policy = evidence.policy_hash(life.policy.verification)
    lines: list[str] = []
    log = _log(root, folder)
    found: list[Finding] = untracked_warning(root, snap.config, f"{folder.path}/evidence.jsonl")
    for cmd in commands:
        if only and cmd["id"] not in only:
            continue
        tree, rec, changed, own = _run_and_record(
            root, snap.config, log, command_id=cmd["id"], command=cmd["command"], shell=cmd.get("shell", False),
            timeout=cmd["timeout_seconds"], plan_sha256=life.plan_sha256, policy=policy,
        )  # fmt: skip
        lines.append(
            f"{cmd['id']:16} {rec.status:7} {rec.duration_ms / 1000:.1f}s  tree {tree[:12]}  `{cmd['command']}`"
        )
        if changed:
            found.append(_changed_tree(folder, cmd["id"], changed))
        if own != "PASS":  # the command's own failure, also when it changed the tree
            code = "HG305" if own == "FAIL" else "HG306"
            tail = [ln for ln in rec.key_output.strip().splitlines() if not ln.startswith("[harness-gate]")][-3:]
            found.append(finding(code, f"{folder.path}/evidence.jsonl", f"`{cmd['id']}`: {' | '.join(tail)[:300]}"))
    lines.append(f"recorded in {folder.path}/evidence.jsonl; commit it with the tree it speaks of")
    return Report("verify", tuple(found), {"plan": folder.plan_id}, lines=tuple(lines))


def record(cwd: Path, plan_id: str | None, command_id: str, argv: Sequence[str], timeout: int) -> Report:
    if not argv:
        raise HarnessGateError("HG904", "give the command after `--`: harness-gate record -- CMD ARGS...")
    root = git.toplevel(cwd)
    snap = snapshot.from_worktree(root)
    if not snap.active:
        return inactive("record")
    folder, life = plan_for(snap, plan_id)
    if not evidence.ID_RE.match(command_id):
        raise HarnessGateError("HG904", f"--id {command_id!r} must match [a-z0-9][a-z0-9._-]{{0,63}}")
    try:
        command = shlex.join(argv)
        command.encode("utf-8")
    except UnicodeEncodeError:
        raise HarnessGateError("HG904", "the command is not valid UTF-8") from None
    if "\n" in command or "\r" in command or "\0" in command or len(command) > 4096:
        raise HarnessGateError("HG904", "the command must be one line of at most 4096 characters")
    if command_id in {c["id"] for c in required_commands(life)}:
        raise HarnessGateError(
            "HG904", f"`{command_id}` is a required command: use `harness-gate verify --only {command_id}`"
        )
    _refuse_hidden(root)
    _check_log(root, folder, snap)
    assert life.policy is not None and life.plan_sha256 is not None  # noqa: S101
    tree, rec, changed, own = _run_and_record(
        root, snap.config, _log(root, folder), command_id=command_id, command=command, shell=False,
        timeout=timeout, plan_sha256=life.plan_sha256, policy=evidence.policy_hash(life.policy.verification),
    )  # fmt: skip
    found = [_changed_tree(folder, command_id, changed)] if changed else []
    if own != "PASS":  # the command's own failure, also when it changed the tree
        found.append(finding(
            "HG305" if own == "FAIL" else "HG306", f"{folder.path}/evidence.jsonl", f"`{command_id}`: {own}"
        ))  # fmt: skip
    return Report("record", tuple(found), {"plan": folder.plan_id}, lines=(
        f"{command_id} {rec.status} {rec.duration_ms / 1000:.1f}s tree {tree[:12]} `{command}`",
    ))  # fmt: skip


# -- freshness for a state ------------------------------------------------------------


def state_freshness(
    snap: snapshot.Snapshot, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str
) -> tuple[list[evidence.Freshness], list[Finding]]:
    """Freshness of every required command for the state whose fingerprint is `tree`."""
    if life.policy is None or life.plan_sha256 is None:
        return [], []
    rel = f"{folder.path}/evidence.jsonl"
    commands = required_commands(life)
    ids = [c["id"] for c in commands]
    if rel in snap.logs:
        records, problems = evidence.newest_in_file(rel, snap.logs[rel], ids)
    else:
        records, problems = evidence.newest(rel, snap.files.get(rel, b""), ids)
    policy = evidence.policy_hash(life.policy.verification)
    fresh = evidence.freshness(records, commands, tree=tree, plan_sha256=life.plan_sha256, policy=policy)
    return fresh, problems


def freshness_findings(
    root: Path,
    snap: snapshot.Snapshot,
    folder: plans.PlanFolder,
    life: lifecycle.Lifecycle,
    tree: str,
    *,
    accept: Callable[[str], bool] | None = None,
) -> list[Finding]:
    """Why each required command's evidence is not fresh for `tree`. `accept` (a landed
    range): a PASS for another tree it accepts is a warning, not a block."""
    fresh, problems = state_freshness(snap, folder, life, tree)
    rel = f"{folder.path}/evidence.jsonl"
    out = list(problems)
    for f in fresh:
        if f.fresh:
            continue
        message = f"`{f.command_id}`: {f.reason}"
        severity = Severity.ERROR
        if f.reason == "tree-moved" and f.record is not None:
            message += f" ({_moved(root, f.record.tree, tree)})"
            if accept is not None and f.record.status == "PASS" and accept(f.record.tree):
                severity = Severity.WARNING
                message += "; it passed on the pull request's tree, the merged tree was not verified"
        elif f.detail:
            message += f" ({f.detail})"
        # The newest record for the command is what is stale: its line, where it is known.
        line = f.record.line if f.record is not None and f.record.line > 0 else None
        out.append(finding(evidence.REASON_CODES[f.reason], rel, message, line=line, severity=severity))
    return out


def _moved(root: Path, verified: str, tree: str) -> str:
    """What can be said of evidence for another tree. The verified tree exists only where
    `verify` ran (it is never committed): a fresh clone says so, with the same verdict."""
    if not git.has_tree(root, verified):
        return f"verified tree {verified[:12]}, not in this clone; this tree {tree[:12]}"
    paths = git.changed_paths(root, verified, tree, SHOWN_PATHS + 1)
    shown = ", ".join(paths[:SHOWN_PATHS]) + (" ..." if len(paths) > SHOWN_PATHS else "")
    return f"verified tree {verified[:12]}, this tree {tree[:12]}; differs in {shown or 'no file'}"


def reverify(root: Path, cfg: Config, folder: plans.PlanFolder, life: lifecycle.Lifecycle, tree: str) -> list[Finding]:
    """CI runs the required commands itself, on the checked-out head, and uses its own
    results instead of the recorded ones (nothing is appended)."""
    here = fingerprint_worktree(root, cfg)
    rel = f"{folder.path}/evidence.jsonl"
    if here != tree:
        return [finding("HG302", rel, f"--reverify needs the head checked out: the work tree is {here[:12]}, "
                        f"the head is {tree[:12]}")]  # fmt: skip
    out = []
    for cmd in required_commands(life):
        outcome = runner.run(cmd["command"], shell=cmd.get("shell", False), timeout=cmd["timeout_seconds"], cwd=root)
        if fingerprint_worktree(root, cfg) != tree:
            out.append(finding("HG305", rel, f"`{cmd['id']}` (re-run in CI) changed the work tree"))
        elif outcome.status != "PASS":
            code = "HG305" if outcome.status == "FAIL" else "HG306"
            tail = " | ".join(evidence.clean_output(outcome.output).strip().splitlines()[-3:])[:300]
            out.append(finding(code, rel, f"`{cmd['id']}` (re-run in CI): {outcome.status}: {tail}"))
    return out
