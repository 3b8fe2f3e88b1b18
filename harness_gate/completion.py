"""Shell completion of plan ids (`--plan`, `plan use`): the plan folders the index holds.

click calls this while the user presses Tab: it must be quick, write nothing (no cache,
no `.git/config`), and never print an error into the shell's prompt. Anything that goes
wrong (not a repository, a configuration that does not parse, git missing) gives no
completions, never a traceback. Completion is a convenience: it does not judge anything.
"""

from __future__ import annotations

from pathlib import Path

MAX_PLANS = 1000  # a bound on what a prompt can show usefully


def plan_ids(cwd: Path, incomplete: str = "") -> list[str]:
    """The ids of the plans in the index (the configured artifacts root) that start with
    `incomplete`, sorted; empty on any failure."""
    try:
        from harness_gate import artifacts_root, artifacts_tree, git  # noqa: PLC0415  (only when Tab is pressed)

        root = git.locate(cwd).toplevel
        config = artifacts_tree.read_config(root, None)
        prefix = artifacts_root.plans_prefix(config.artifacts_dir)
        listed = artifacts_tree.plans_in((blob.path for blob in git.index_entries(root, prefix)), config.artifacts_dir)
    except Exception:  # completion fails quietly: no candidates rather than noise in the prompt
        return []
    return sorted(p for p in listed if p.startswith(incomplete))[:MAX_PLANS]
