"""The pre-commit hooks, defined once: `.pre-commit-hooks.yaml` (the manifest a `repo:` entry
installs, `language: python`) and the `.pre-commit-config.yaml` that `init` writes (a
`repo: local` entry running the installed harness-gate) are both rendered from `HOOKS`.
`python -m harness_gate.hooks` prints the manifest; a test holds the file to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Hook:
    id: str
    name: str
    description: str
    args: str  # after `harness-gate`
    stages: tuple[str, ...]
    files: str | None = None  # a file regex: the hook runs on those files (the lint); None: always, without names
    verbose: bool = False  # show the output of a passing run (warnings)


HOOKS = (
    Hook(
        "harness-gate",
        "harness-gate (write boundary)",
        "Block commits whose changes leave the approved plan's write boundary.",
        "check --stage pre-commit --staged",
        ("pre-commit", "pre-merge-commit"),
    ),
    Hook(
        "harness-gate-push",
        "harness-gate (pushed commits)",
        "Check every pushed commit on its own against the plans its own state holds; warn about evidence.",
        "check --stage pre-push",
        ("pre-push",),
        verbose=True,  # its warnings (evidence CI will ask for) show on a push that passes
    ),
    Hook(
        "harness-gate-lint",
        "harness-gate lint (artifacts)",
        "Validate plans, approvals, reviews and the lifecycle of the plans touched.",
        "lint",
        ("pre-commit", "pre-merge-commit", "pre-push"),
        files="^harness/",
    ),
)
# Every stage a hook runs at: what `pre-commit install` must install.
INSTALL_TYPES = tuple(dict.fromkeys(stage for hook in HOOKS for stage in hook.stages))
MINIMUM_PRE_COMMIT = "3.2.0"  # the stage names


def _lines(hook: Hook, indent: str, *, language: str, entry: str, stages: tuple[str, ...]) -> list[str]:
    out = [f"{indent}- id: {hook.id}", f"{indent}  name: {hook.name}"]
    if language == "python":
        out.append(f"{indent}  description: {hook.description}")
    out += [f"{indent}  entry: {entry} {hook.args}", f"{indent}  language: {language}"]
    if hook.files is None:
        out += [f"{indent}  pass_filenames: false", f"{indent}  always_run: true"]
    else:
        out.append(f"{indent}  files: {hook.files}")
    out.append(f"{indent}  require_serial: true")
    if hook.verbose:
        out.append(f"{indent}  verbose: true")
    out.append(f"{indent}  stages: [{', '.join(stages)}]")
    if language == "python":
        out.append(f"{indent}  minimum_pre_commit_version: '{MINIMUM_PRE_COMMIT}'")
    return out


def manifest() -> str:
    """`.pre-commit-hooks.yaml`: what a `repo:` entry pinned to this repository installs."""
    lines = [
        "# harness-gate hooks for pre-commit (docs/hooks.md). Rendered by `python -m harness_gate.hooks`",
        "# from harness_gate/hooks.py. The gate computes its own change set from git plumbing: it",
        "# needs no file names, must run even for deletion-only commits, and must never be sharded.",
    ]
    for hook in HOOKS:
        lines += _lines(hook, "", language="python", entry="harness-gate", stages=(*hook.stages, "manual"))
    return "\n".join(lines) + "\n"


def local_config(artifacts_dir: str) -> str:
    """The `.pre-commit-config.yaml` `init` writes: the harness-gate on PATH, as a `repo: local`."""
    lines = [
        "# harness-gate hooks (docs/hooks.md). They run the harness-gate on PATH: install it in an",
        "# environment of its own (`pipx install <this project's URL or path>`), so that no package of",
        "# the repository it guards can stand in for one of its own.",
        f"default_install_hook_types: [{', '.join(INSTALL_TYPES)}]",
        "repos:",
        "  - repo: local",
        "    hooks:",
    ]
    for hook in HOOKS:
        files = None if hook.files is None else f"^{re.escape(artifacts_dir)}/"
        local = Hook(hook.id, hook.name, hook.description, hook.args, hook.stages, files, hook.verbose)
        lines += _lines(local, "      ", language="system", entry="harness-gate", stages=hook.stages)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(manifest(), end="")
