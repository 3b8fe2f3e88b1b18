"""`harness-gate plan new|amend|use`: write a plan, write its next amendment, pick the plan
this branch means."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness_gate import (
    amendments,
    artifacts_root,
    artifacts_tree,
    fsutil,
    git,
    governance,
    lifecycle,
    origins,
    plans,
    templates,
)
from harness_gate import boundary as boundary_mod
from harness_gate import report as report_mod
from harness_gate.artifacts.parse import parse_artifact
from harness_gate.errors import HarnessGateError, usage
from harness_gate.findings import Finding, Severity
from harness_gate.report import Report
from harness_gate.state_facts import GitFacts


def _bad_options(problems: Sequence[Finding], what: str) -> HarnessGateError:
    """Options that would make an invalid artifact are a usage error (nothing is written):
    said as the problem, without the line of a file that does not exist."""
    first = next((f for f in problems if f.severity is Severity.ERROR), None)
    message = first.message if first else "it does not validate"
    return usage(f"the options make an invalid {what}, not written: {message}", "Fix that option and run it again.")


def _check_patterns(option: str, patterns: Sequence[str], artifacts_dir: str) -> None:
    for pattern, reason in boundary_mod.validate_all(patterns, artifacts_dir):
        raise usage(f"{option} {pattern!r}: {reason}", "docs/boundary.md gives the pattern dialect.")


def plan_new(  # noqa: PLR0913  (one argument per command-line option)
    cwd: Path,
    plan_id: str,
    *,
    objective: str,
    acceptance: Sequence[str],
    scope: str | None,
    boundary: Sequence[str],
    verify: Sequence[str],
    timeout: int,
    kind: str,
    mode: str,
    risks: Sequence[str],
) -> Report:
    root = git.toplevel(cwd)
    governance.checked_id(plan_id)
    if not verify:
        raise usage("at least one --verify 'ID=COMMAND' is required", "Every plan carries its verification commands.")
    artifacts = artifacts_tree.from_worktree(root)
    folder = root / artifacts_root.plan_folder(artifacts.artifacts_dir, plan_id)
    if folder.exists():
        raise usage(
            f"{folder.relative_to(root).as_posix()} already exists", "Pick another id; plans are never overwritten."
        )
    _check_patterns("--boundary", boundary, artifacts.artifacts_dir)
    text = templates.plan(
        objective=objective,
        acceptance=list(acceptance) or ["Every required verification command passes on the committed tree."],
        scope=scope or "Only the paths in the Write Boundary.",
        boundary=[b for b in boundary if b != "None"],
        commands=[amendments.verify_command(v, timeout) for v in verify],
        kind=kind,
        execution_mode=mode,
        risks=risks,
    )
    rel = artifacts_root.plan_file(artifacts.artifacts_dir, plan_id)
    art, found = parse_artifact(rel, text.encode(), artifacts_dir=artifacts.artifacts_dir)
    if art is None:
        raise _bad_options(found, "plan")
    fsutil.write_atomic(root / rel, text.encode())
    # This branch's local pick, for when it has more than one plan open (never committed).
    branch = origins.select(root, plan_id) if git.head(root) is not None else None
    picked = (f"picked for branch `{branch}` (harness-gate plan use)",) if branch else ()
    from harness_gate import rules  # noqa: PLC0415  (the rule tables, only for this warning)

    reach = rules.wildcard_reach(boundary, artifacts.config.source, artifacts.artifacts_dir)
    return Report(
        "plan new",
        tuple(reach),
        data={"plan": plan_id, "path": rel, "sha256": art.sha256},
        lines=(
            f"wrote {rel} (sha256 {art.sha256})",
            *picked,
            "next: review the plan, then `harness-gate approve`",
        ),
    )


def plan_amend(  # noqa: PLR0913  (one argument per command-line option)
    cwd: Path,
    plan_id: str | None,
    *,
    objective: str | None,
    add_boundary: Sequence[str],
    remove_boundary: Sequence[str],
    add_verify: Sequence[str],
    remove_verify: Sequence[str],
    timeout: int,
    why: str | None,
) -> Report:
    """Write the next Plan Amendment: the plan's effective policy with these changes, its
    deltas marked, bound to the plan and the amendment in force, ready for `approve`."""
    root = git.toplevel(cwd)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return report_mod.inactive("plan amend")
    folder, life = governance.plan_for(artifacts, plan_id, GitFacts(artifacts.root))
    lifecycle.require_open(folder, life)
    lifecycle.require_no_pending_amendment(folder, life)
    policy = life.policy
    assert policy is not None and life.plan_sha256 is not None  # noqa: S101  (plan_for checked both)
    source = next((e.artifact for e in folder.entries if e.path == policy.source), None) or folder.plan
    assert source is not None  # noqa: S101  (a parsed plan: plan_for checked it)
    _check_patterns("--add-boundary", add_boundary, artifacts.artifacts_dir)
    change = amendments.Change(
        objective, add_boundary, remove_boundary, add_verify, remove_verify, timeout=timeout, why=why
    )
    amended = amendments.amend(policy, source.value("Objective"), change)
    text = templates.amendment(
        plan_sha256=life.plan_sha256,
        amendment_sha256=life.amendment_sha256,
        deltas=amended.deltas,
        objective=amended.objective,
        acceptance=[
            line.removeprefix("- ") for line in source.value("Acceptance Criteria").splitlines() if line.strip()
        ],
        scope=source.value("Scope"),
        boundary=amended.boundary,
        verification={"kind": policy.verification["kind"], "required_commands": amended.commands},
        unmodeled=policy.unmodeled_commands,
        risks=_section_markdown(artifacts.files.get(source.path, b""), "Risks") or source.value("Risks"),
    )
    rel = plans.next_path(folder, "amendment")
    art, problems = parse_artifact(rel, text.encode(), artifacts_dir=artifacts.artifacts_dir)
    if art is None:
        raise _bad_options(problems, "amendment")
    fsutil.write_atomic(root / rel, text.encode())
    changed = [f"  {name}: {d['summary']}" for name, d in amended.deltas.items() if d["material"]]
    return Report(
        "plan amend",
        data={"plan": folder.plan_id, "path": rel, "sha256": art.sha256},
        lines=(
            f"wrote {rel} (sha256 {art.sha256})",
            *changed,
            "next: review it, then `harness-gate approve` (the plan keeps its policy until then)",
        ),
    )


def _section_markdown(data: bytes, title: str) -> str | None:
    """A section's Markdown as written (its lists keep their markers), or None."""
    lines = data.decode("utf-8", "replace").splitlines()
    out: list[str] | None = None
    fence = False
    for line in lines:
        if line.startswith(("```", "~~~")):
            fence = not fence
        if not fence and line.startswith("## "):
            if out is not None:
                break
            if line[3:].strip() == title:
                out = []
                continue
        if out is not None:
            out.append(line)
    text = "\n".join(out).strip() if out is not None else ""
    return text or None


def plan_use(cwd: Path, plan_id: str) -> Report:
    """Pick the plan this branch's local commands and hook use when it has several open."""
    root = git.toplevel(cwd)
    governance.checked_id(plan_id)
    artifacts = artifacts_tree.from_worktree(root)
    if not artifacts.active:
        return report_mod.inactive("plan use")
    governance.require_plan(
        artifacts, plan_id, f"there is no plan `{plan_id}` in {artifacts_root.plans_prefix(artifacts.artifacts_dir)}"
    )
    branch = origins.select(root, plan_id)
    if branch is None:
        raise usage("HEAD is detached: a pick is kept per branch", "Check out a branch first.")
    return Report(
        "plan use",
        data={"plan": plan_id, "branch": branch},
        lines=(
            f"branch `{branch}` uses plan `{plan_id}` (kept in .git/config as branch.{branch}.{origins.SELECTION_KEY})",
        ),
    )
