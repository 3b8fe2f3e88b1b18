"""The pre-commit hooks, defined once: `.pre-commit-hooks.yaml` (the manifest a `repo:` entry
installs, `language: python`) and the `.pre-commit-config.yaml` that `init` writes (a
`repo: local` entry running the installed harness-gate) are both rendered from `HOOKS`.
`python -m harness_gate.hooks` prints the manifest; a test holds the file to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Hook:
    id: str
    name: str
    description: str
    args: str  # after `harness-gate`
    stages: tuple[str, ...]
    # True (the lint): pre-commit passes the staged files' names, and the command picks those
    # under the configured artifacts root itself (a file regex here could not follow
    # `artifacts_dir`). False: always run, without names.
    names: bool = False
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
        "lint --artifacts-only",
        ("pre-commit", "pre-merge-commit", "pre-push"),
        names=True,
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
    if not hook.names:
        out += [f"{indent}  pass_filenames: false", f"{indent}  always_run: true"]
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


def local_config() -> str:
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
        lines += _lines(hook, "      ", language="system", entry="harness-gate", stages=hook.stages)
    lines += [
        "# pre-commit.ci runs no `language: system` hook (no harness-gate installed there, no network),",
        "# and a fresh clone has nothing staged to judge: the GitHub Action judges pull requests.",
        "ci:",
        f"  skip: [{', '.join(h.id for h in HOOKS)}]",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(manifest(), end="")


# -- the agent hook (docs/agents.md) -----------------------------------------------------------

AGENT_SETTINGS = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}
# The runtimes `agent-sandbox` writes an OS sandbox for (Gemini CLI's is a container it
# starts itself: docs/agents.md).
SANDBOXED = ("claude", "codex")
# The tools routed to the hook (a regex each runtime matches against the tool name): the writing
# tools, the shell, and every MCP tool (`mcp__<server>__<tool>`). Codex names its shell tools
# `Bash` in hook payloads (`shell` stays for a version that names it so). MultiEdit stays for
# Claude Code before 2.1 (2.1.197 has none).
AGENT_MATCHER = {
    "claude": "Write|Edit|MultiEdit|NotebookEdit|Bash|mcp__.*",
    "codex": "apply_patch|Bash|shell|write_stdin|mcp__.*",
    "gemini": "write_file|replace|run_shell_command|mcp_.*",
}
# The events each runtime's hook file gets, the tool event first (the one with a matcher).
AGENT_EVENTS = {
    "claude": ("PreToolUse", "Stop", "SubagentStop"),
    "codex": ("PreToolUse", "Stop", "SubagentStop"),
    "gemini": ("BeforeTool", "AfterAgent"),
}
TOOL_EVENTS = frozenset({"PreToolUse", "BeforeTool"})


def agent_command(runtime: str) -> str:
    return f"harness-gate agent-hook --runtime {runtime}"


def agent_settings(root: Path, runtime: str) -> tuple[str, bytes, bool]:
    """The runtime's project settings with the agent hook merged in: (path, bytes, whether
    they changed). Every other key is kept; an entry already there is not added again. A
    file that is not a JSON object is refused (HG904), never rewritten."""
    import json  # noqa: PLC0415

    from harness_gate.errors import HarnessGateError  # noqa: PLC0415

    rel = AGENT_SETTINGS[runtime]
    path = root / rel
    if path.exists():
        try:
            doc = json.loads(path.read_bytes())
        except (ValueError, UnicodeDecodeError) as exc:
            raise HarnessGateError(
                "HG904", f"{rel} is not valid JSON ({exc})", "Fix it, or add the agent hook by hand (docs/agents.md)."
            ) from None
    else:
        doc = {}
    hooks = doc.get("hooks", {}) if isinstance(doc, dict) else None
    if not isinstance(hooks, dict) or any(not isinstance(hooks.get(e, []), list) for e in AGENT_EVENTS[runtime]):
        raise HarnessGateError(
            "HG904",
            f"{rel} is not a settings object with a `hooks` table of lists",
            "Fix it, or add the agent hook by hand (docs/agents.md).",
        )
    command = agent_command(runtime)

    def ours(entry: object, test: Callable[[Iterable[bool]], bool]) -> bool:
        """Whether `test` (any, all) of the entry's hooks run this command."""
        hooks_of = entry.get("hooks") if isinstance(entry, dict) else None
        return isinstance(hooks_of, list) and test(
            isinstance(h, dict) and h.get("command") == command for h in hooks_of
        )

    changed = not path.exists()
    for event in AGENT_EVENTS[runtime]:
        entries = hooks.setdefault(event, [])
        mine = [e for e in entries if ours(e, any)]
        for old in mine:
            # An entry of an earlier `init` routes the tools it knew: it gets today's matcher
            # (MCP tools), unless it holds other hooks, whose matcher is the user's.
            if event in TOOL_EVENTS and ours(old, all) and old.get("matcher") != AGENT_MATCHER[runtime]:
                old["matcher"] = AGENT_MATCHER[runtime]
                changed = True
        if not mine:
            entry: dict[str, object] = {"hooks": [{"type": "command", "command": command}]}
            if event in TOOL_EVENTS:
                entry = {"matcher": AGENT_MATCHER[runtime], **entry}
            entries.append(entry)
            changed = True
    doc["hooks"] = hooks
    # ensure_ascii off: the user's own text (a non-ASCII path or comment) is kept as written;
    # on, for text UTF-8 cannot hold (a lone surrogate `\ud800` the JSON escaped).
    try:
        data = json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(doc, indent=2).encode("ascii")
    return rel, data + b"\n", changed
