"""`harness-gate explain`: which rule or pattern allows or blocks each path, judged on the index."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_gate import artifacts_tree, fsutil, git, governance, lifecycle, plans, rules
from harness_gate import boundary as boundary_mod
from harness_gate import origins as origins_mod
from harness_gate import report as report_mod
from harness_gate.report import Report


def run_explain(cwd: Path, paths: Sequence[str], plan_id: str | None) -> Report:
    """Which rule or pattern allows or blocks each path, judged on the index."""
    root = git.toplevel(cwd)
    governance.checked_id(plan_id)
    head = git.head(root)
    cfg = artifacts_tree.read_config(root, head)
    new = artifacts_tree.from_index(root, cfg)
    trusted = artifacts_tree.from_commit(root, head, cfg) if head else new
    if not rules.active(cfg, trusted):
        return report_mod.inactive("explain")
    others: tuple[str, ...] = ()
    if plan_id is None:
        origins = origins_mod.locally(root, cfg, [head] if head else [], frozenset(governance.present(new)))
        found = governance.candidates(new, origins)
        if len(found.ids) > 1:
            found = governance.narrow(found, origins_mod.selected(root))
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
        rel = fsutil.repository_path(root, cwd, raw)
        verdict, why = rules.explain(rel, cfg, allowed, exact, life, trusted=trusted)
        blocked_any = blocked_any or verdict == "blocked"
        rows.append({"path": rel, "verdict": verdict, "reason": why})
        lines.append(f"{verdict:8} {rel}: {why}")
    data = {"plan": plan_id, "paths": rows}
    return Report("explain", data=data, lines=tuple(lines), exit_override=1 if blocked_any else 0)
