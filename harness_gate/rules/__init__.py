"""The gate's rules for one transition: a commit, or the index about to be committed.

`check_transition` gets a `Transition`: the changed paths, the new state, one old state per
parent, and the facts (rules/transition.py) its rules ask of the repository; it returns
findings. PASS is decided by the caller from the absence of blocking findings, after every
state has been checked. No module here asks git anything: one module per rule family.
"""

from __future__ import annotations

from harness_gate.artifacts_tree import ArtifactsTree
from harness_gate.config import Config
from harness_gate.findings import Finding
from harness_gate.rules.artifacts import APPEND_ONLY, artifact_rules, grows, signers_file
from harness_gate.rules.authority import plan_authority
from harness_gate.rules.explanation import explain
from harness_gate.rules.formats import format_rules
from harness_gate.rules.protected_paths import (
    AGENT_DIRS,
    always_blocked,
    case_variant,
    protected,
    protected_names,
    suspects,
    touches_links,
    wildcard_reach,
)
from harness_gate.rules.symlinks import escaping_links
from harness_gate.rules.transition import Transition, added_plans, decode, signers_path, split, touches_code

__all__ = [
    "AGENT_DIRS",
    "APPEND_ONLY",
    "Transition",
    "active",
    "added_plans",
    "case_variant",
    "check_transition",
    "decode",
    "explain",
    "grows",
    "judge_artifacts",
    "judge_writes",
    "protected",
    "protected_names",
    "suspects",
    "touches_code",
    "wildcard_reach",
]


def check_transition(
    transition: Transition, plan_id: str | None, *, prefix: str = "", used: set[str] | None = None
) -> list[Finding]:
    """Findings for one state change; `used` collects the plans that authorised code."""
    cfg = transition.new.config
    out: list[Finding] = []
    # The only paths that can be protected (or a variant of a protected one), found once.
    suspect = suspects([c.path for c in transition.changes], cfg.source, cfg.artifacts_dir)
    out.extend(_always_blocked(transition, suspect))
    root_changes, code_changes = split(transition.changes, cfg.artifacts_dir)
    out.extend(artifact_rules(transition, root_changes))
    if code_changes:
        out.extend(plan_authority(transition, code_changes, plan_id, used, suspect))
        out.extend(signers_file(code_changes, signers_path(cfg.artifacts_dir)))
    if code_changes or transition.merge:
        out.extend(format_rules(transition, code_changes))
    if prefix:
        out = [Finding(f.code, f.path, f.line, f"{prefix}{f.message}", f.hint, f.severity) for f in out]
    return out


def judge_writes(transition: Transition) -> list[Finding]:
    """The rules a write is judged by before it happens (the agent hook, docs/agents.md):
    control characters, case variants, protected paths, and the authority of the plan that
    governs the state (its boundary), exactly as `check_transition` judges them. The artifacts
    root, formats and links are the caller's: nothing is written yet."""
    cfg = transition.new.config
    suspect = suspects([c.path for c in transition.changes], cfg.source, cfg.artifacts_dir)
    out = _always_blocked(transition, suspect)
    code_changes = split(transition.changes, cfg.artifacts_dir)[1]
    if code_changes:
        out.extend(plan_authority(transition, code_changes, None, None, suspect))
    return out


def judge_artifacts(transition: Transition) -> list[Finding]:
    """The artifact rules for the state's changes under the artifacts root, as
    `check_transition` judges them: what the agent hook reports of the work tree at Stop."""
    return artifact_rules(transition, split(transition.changes, transition.new.config.artifacts_dir)[0])


def _always_blocked(transition: Transition, suspect: set[bytes]) -> list[Finding]:
    """Rules no boundary can lift. They judge what the change leaves behind: removing a
    badly named file is how one fixes it."""
    out = always_blocked(transition, suspect)
    if touches_links(transition.changes):
        out.extend(escaping_links(transition))
    return out


def active(cfg: Config, *states: ArtifactsTree) -> bool:
    """The trusted side decides whether the gate is on (config from the base, docs/threat-model.md):
    the commit that adopts harness-gate is not judged by rules it introduces, and a
    change that deletes the gate's files is judged by the rules it deletes."""
    return cfg.source is not None or any(s.active for s in states)
