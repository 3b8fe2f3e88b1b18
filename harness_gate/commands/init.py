"""`harness-gate init`: the artifacts root, the configuration, .gitattributes and the hooks."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness_gate import artifacts_root, artifacts_tree, fsutil, git, hooks
from harness_gate.report import Report
from harness_gate.state_facts import active_at

GITATTRIBUTES_LINES = (
    # Artifacts are hashed byte for byte: no end-of-line conversion on any platform.
    "harness/** -text",
    "harness/plans/*/approvals.jsonl merge=union",
    "harness/plans/*/evidence.jsonl merge=union",
)


TEMPLATE_ROOT = "harness"  # the artifacts root CONFIG_TEMPLATE names
CONFIG_TEMPLATE = f"""\
# harness-gate configuration (docs/config.md)
artifacts_dir = "{TEMPLATE_ROOT}"
"""


def init(cwd: Path, agents: Sequence[str] = ()) -> Report:
    root = git.toplevel(cwd)
    lines: list[str] = []
    agent_paths = [hooks.AGENT_SETTINGS[r] for r in agents]
    # Every check before the first write. No file init writes or reads is a link (its
    # configuration first: it names the artifacts root, checked once it is known).
    fsutil.refuse_links(root, [".harness-gate.toml", ".gitattributes", ".pre-commit-config.yaml", *agent_paths])
    # Without `.harness-gate.toml`, the artifacts root is the template's: the file init
    # writes is then the whole configuration (a `[tool.harness-gate]` table beside it is
    # not read).
    exists = (root / ".harness-gate.toml").exists()
    artifacts_dir = artifacts_tree.worktree_config(root).artifacts_dir if exists else TEMPLATE_ROOT
    targets = [
        ".harness-gate.toml",
        f"{artifacts_root.plans_prefix(artifacts_dir)}.gitkeep",
        ".gitattributes",
        ".pre-commit-config.yaml",
    ]
    fsutil.refuse_links(root, [f"{artifacts_root.plans_prefix(artifacts_dir)}.gitkeep"])
    fsutil.require_writable(root, [*targets, *agent_paths])
    # A settings file it cannot merge writes nothing at all: merged before any write.
    settings = [hooks.agent_settings(root, runtime) for runtime in agents]
    cfg = root / ".harness-gate.toml"
    if not cfg.exists():
        fsutil.write_atomic(cfg, CONFIG_TEMPLATE.encode())
        lines.append("wrote .harness-gate.toml")
    keep = root / artifacts_root.plans_dir(artifacts_dir) / ".gitkeep"
    if not keep.exists():
        fsutil.write_atomic(keep, b"")
        lines.append(f"wrote {artifacts_root.plans_prefix(artifacts_dir)}.gitkeep")
    lines += _gitattributes(root, artifacts_dir)
    lines.append(_pre_commit_config(root))
    agent_files = [path for path, _, _ in settings]
    lines += _agent_hooks(root, agents, settings)
    sandboxed = [runtime for runtime in agents if runtime in hooks.SANDBOXED]
    if sandboxed:
        # The runtimes' own sandboxes, from the boundary approved now (none yet: nothing in
        # the work tree is the agent's to write); `agent-sandbox` brings them up to date.
        from harness_gate.commands import agent_sandbox  # noqa: PLC0415

        lines += list(agent_sandbox.agent_sandbox(root, sandboxed).lines)
    types = " ".join(f"--hook-type {t}" for t in hooks.INSTALL_TYPES)
    head = git.head(root)
    adopted = head is not None and active_at(root, head, artifacts_tree.trusted_config(root, None, head))
    # Once the gate is on, the set-up files are protected paths: no adopting commit lets
    # them in unjudged, a plan that names each exactly does (docs/agents.md).
    files = [".harness-gate.toml", ".gitattributes", ".pre-commit-config.yaml", *agent_files]
    set_up = [*files[:3], artifacts_dir, *files[3:]]
    touched = {path for _, path in git.status_records(root, *set_up)}  # each file, untracked ones too
    protected = [p for p in files if p in touched] if adopted else []
    # Only the set-up's own files: `git add -A` would sweep work in progress into the adoption.
    steps = (
        [f"git add {' '.join(set_up)} && git commit -m 'Adopt harness-gate'   (the adopting commit is not judged)"]
        if not adopted and touched
        else []
    )
    if protected:
        named = " ".join(f"--boundary {p}" for p in protected)
        steps += [
            f"harness-gate plan new gate-setup --objective 'Set up harness-gate' {named} "
            "--verify 'lint=harness-gate lint'   (the gate is on: these are protected paths, a plan must name each "
            "exactly)",
            f"harness-gate approve && git add {artifacts_dir} {' '.join(protected)} && git commit -m 'Set up "
            "harness-gate'",
        ]
    steps += [f"pre-commit install {types}   (in each clone)"]
    if not protected:
        steps += ["harness-gate plan new ID --objective '...' --boundary 'src/**' --verify 'tests=pytest -q'"]
    lines += [("next: " if i == 0 else "      ") + step for i, step in enumerate(steps)]
    return Report("init", lines=tuple(lines))


def _gitattributes(root: Path, artifacts_dir: str) -> list[str]:
    """Adds the JSONL logs' merge=union lines that .gitattributes lacks."""
    attrs = root / ".gitattributes"
    old = attrs.read_text("utf-8") if attrs.exists() else ""
    wanted = [ln.replace("harness/", artifacts_root.prefix(artifacts_dir), 1) for ln in GITATTRIBUTES_LINES]
    missing = [ln for ln in wanted if ln not in old.splitlines()]
    if not missing:
        return []
    sep = "" if not old or old.endswith("\n") else "\n"
    fsutil.write_atomic(attrs, (old + sep + "\n".join(missing) + "\n").encode())
    return ["added merge=union for the JSONL logs to .gitattributes"]


def _pre_commit_config(root: Path) -> str:
    """Writes .pre-commit-config.yaml where there is none; says what it did."""
    pcc = root / ".pre-commit-config.yaml"
    config = hooks.local_config()
    if not pcc.exists():
        fsutil.write_atomic(pcc, config.encode())
        return "wrote .pre-commit-config.yaml"
    if all(f"id: {hook.id}" in pcc.read_text("utf-8", "replace") for hook in hooks.HOOKS):
        return ".pre-commit-config.yaml has harness-gate's hooks"
    # Someone else's configuration: never rewritten, and said once what to add to it.
    return (
        ".pre-commit-config.yaml exists: add harness-gate's hooks to it (this entry under `repos:`, and "
        f"`default_install_hook_types: [{', '.join(hooks.INSTALL_TYPES)}]` at its top):\n"
        + config[config.index("  - repo: local") :]
    )


def _agent_hooks(root: Path, agents: Sequence[str], settings: Sequence[tuple[str, bytes, bool]]) -> list[str]:
    """Writes each agent runtime's merged settings that changed; says what it did."""
    lines = []
    for runtime, (path, merged, changed) in zip(agents, settings, strict=True):
        if changed:
            fsutil.write_atomic(root / path, merged)
            lines.append(f"wrote the {runtime} agent hook to {path}")
            if runtime == "codex":
                # Codex skips a new or changed hook in silence until it is trusted again.
                lines.append("Codex runs a new or changed hook only once trusted: `harness-gate doctor` says how")
        else:
            lines.append(f"{path} has harness-gate's agent hook")
    return lines
