"""`harness-gate agent-hook`: the gate inside a coding agent's runtime, before a write.

Claude Code and Codex call a command before each tool use (PreToolUse) and when the agent
is about to stop (Stop, SubagentStop), with a JSON payload on stdin. Every path a writing
tool names is judged by the same rules `check --staged` applies (rules.judge_writes): the
plan that governs this branch, its boundary, protected paths; and here, before anything
is written, where the write would land (outside the repository, through a symbolic link,
inside `.git` or the artifacts root). Anything not understood is denied with a reason
(fail closed). docs/agents.md says what this can and cannot guarantee.

One job per module: `runtimes` (the payloads and answers of each runtime), `hook` (one
call answered, failing closed), `tools` (what each tool writes), `patches` (apply_patch),
`shell` (shell commands), `paths` (where a write lands), `judging` (the gate's rules over
those writes), `stop` (Stop), `decisions` (what is answered, and the reason's text).
"""

from __future__ import annotations

from harness_gate.agent.decisions import Decision, Malformed, deny_reason
from harness_gate.agent.hook import main, run
from harness_gate.agent.patches import patch_paths, shell_patch
from harness_gate.agent.runtimes import MAX_PAYLOAD, RUNTIMES, pre_tool_answer, stop_answer
from harness_gate.agent.shell import reads_only
from harness_gate.agent.tools import pre_tool_use

__all__ = [
    "MAX_PAYLOAD",
    "RUNTIMES",
    "Decision",
    "Malformed",
    "deny_reason",
    "main",
    "patch_paths",
    "pre_tool_answer",
    "pre_tool_use",
    "reads_only",
    "run",
    "shell_patch",
    "stop_answer",
]
