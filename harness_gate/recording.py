"""Running a plan's command and appending its evidence record, and the log it goes to."""

from __future__ import annotations

from pathlib import Path

from harness_gate import artifacts_root, artifacts_tree, evidence, fingerprints, fsutil, git, plans, runner
from harness_gate.config import Config
from harness_gate.errors import Refused
from harness_gate.findings import Finding, finding


def run_and_record(  # noqa: PLR0913  (one argument per command-line option)
    root: Path,
    cfg: Config,
    log: Path,
    *,
    command_id: str,
    command: str,
    shell: bool,
    timeout: float,
    plan: str,
    plan_sha256: str,
    policy: str,
    inputs: fingerprints.Inputs | None = None,
) -> tuple[str, evidence.Record, str, str]:
    """The tree it ran on, the record appended, what it changed ("" if nothing) and the
    command's own status (PASS even when changing the tree made the record a FAIL).
    `inputs`: the untracked outputs there before `verify` ran, which count as inputs
    unless a command writes them."""
    kept = inputs.unwritten() if inputs is not None else []
    before = fingerprints.fingerprint_worktree(root, cfg, kept)
    outcome = runner.run(command, shell=shell, timeout=timeout, cwd=root)
    still = inputs.unwritten() if inputs is not None else []
    # What this command wrote among them is its output: left out of the tree it ran on.
    before = git.tree_without_paths(root, before, sorted(set(kept) - set(still)))
    after = fingerprints.fingerprint_worktree(root, cfg, still)
    status, output = outcome.status, outcome.output
    changed = ""
    if after != before:
        # Evidence speaks of one tree; a command that rewrote the tree tested another.
        status = "FAIL" if status == "PASS" else status
        changed = fingerprints.what_changed(root, before, after)
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
        plan=plan,
        plan_sha256=plan_sha256,
        policy=policy,
    )
    fsutil.append_record(log, line)
    rec, _ = evidence.parse_line(line[:-1].encode("utf-8"), 0)
    assert rec is not None  # noqa: S101  (record_line checked it)
    return before, rec, changed, outcome.status


def failed(folder: plans.PlanFolder, command_id: str, status: str, detail: str) -> Finding:
    """The command's own failure (HG305) or timeout (HG306), also when it changed the tree."""
    return finding(evidence.failure_code(status), artifacts_root.evidence_log(folder.path), f"`{command_id}`: {detail}")


def changed_tree(folder: plans.PlanFolder, command_id: str, changed: str) -> Finding:
    return finding(
        "HG309", artifacts_root.evidence_log(folder.path), f"`{command_id}` changed the work tree: {changed}"
    )


def check_log(root: Path, folder: plans.PlanFolder, snap: artifacts_tree.ArtifactsTree) -> None:
    """Never append to a log whose end is broken. Older lines were validated when they
    were committed (and `lint` reads them all); checking the end keeps `verify` cheap."""
    rel = artifacts_root.evidence_log(folder.path)
    path = snap.logs.get(rel)
    if path is None or path.stat().st_size == 0:
        return
    ends = evidence.ends_with_newline(path)
    last = next(evidence.lines_from_file_end(path), b"")
    rec, why = evidence.parse_line(last, 0)
    if not ends or rec is None:
        raise Refused("HG307", rel, f"the log is invalid at its end ({why or 'no final newline'}); nothing appended")
