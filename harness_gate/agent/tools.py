"""PreToolUse: what each tool of each runtime writes. A tool that writes one file names it
in its input; `apply_patch` names files in its patch; a shell command is judged as
agent/shell.py says; an MCP server's tool, whose writes cannot be told, is asked about;
a tool that writes nothing is let through; any other tool is denied (fail closed)."""

from __future__ import annotations

from collections.abc import Mapping

from harness_gate.agent import paths
from harness_gate.agent.decisions import Decision, Malformed
from harness_gate.agent.judging import judge, repository
from harness_gate.agent.patches import patch_paths, patch_text
from harness_gate.agent.runtimes import tool_call
from harness_gate.agent.shell import shell

# Tool -> the input key holding the one path it writes (Gemini CLI's: write_file, replace).
WRITE_TOOLS = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "write_file": "file_path",
    "replace": "file_path",
}
PATCH_TOOLS = frozenset({"apply_patch"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "run_shell_command"})
# Claude Code and Codex name an MCP server's tools `mcp__<server>__<tool>`, Gemini CLI
# `mcp_<server>_<tool>`: no built-in tool of any of them starts so.
MCP_PREFIX = "mcp_"
# Tools that write nothing in the work tree: let through without a look.
READ_ONLY = frozenset(
    {
        # Claude Code 2.1.197. Agent, Workflow and Skill run tools of their own, each through
        # the hook; the worktree tools make and leave a linked worktree (judged in itself); the
        # task, cron and message tools schedule or talk, and write no file.
        "Agent",
        "CronCreate",
        "CronDelete",
        "CronList",
        "EnterWorktree",
        "ExitWorktree",
        "Read",
        "ReportFindings",
        "ScheduleWakeup",
        "SendMessage",
        "Skill",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskOutput",
        "TaskStop",
        "TaskUpdate",
        "WebFetch",
        "WebSearch",
        "Workflow",
        "ExitPlanMode",
        "EnterPlanMode",
        "AskUserQuestion",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        # Earlier Claude Code versions.
        "Glob",
        "Grep",
        "LS",
        "TodoWrite",
        "TodoRead",
        "Task",
        "NotebookRead",
        "BashOutput",
        "KillShell",
        "KillBash",
        "SlashCommand",
        # Codex 0.171 (write_stdin types into a running command: judged as a shell command); the
        # goal tools and, with `multi_agent_v2`, the sub-agent tools, whose agents' tools meet the hook.
        "update_plan",
        "view_image",
        "web_search",
        "request_user_input",
        "tool_search",
        "get_goal",
        "create_goal",
        "update_goal",
        "spawn_agent",
        "followup_task",
        "interrupt_agent",
        "list_agents",
        "send_message",
        # Gemini CLI 0.61.
        "read_file",
        "read_many_files",
        "list_directory",
        "glob",
        "search_file_content",
        "grep_search",
        "google_web_search",
        "web_fetch",
        "write_todos",
        "save_memory",
    }
)


def pre_tool_use(fields: Mapping[str, object]) -> Decision:
    """The decision on one PreToolUse payload (its JSON object)."""
    call = tool_call(fields)
    tool, tool_input = call.tool, call.input
    if tool in READ_ONLY:
        return Decision("allow", f"harness-gate: `{tool}` writes nothing")
    cwd = call.cwd()
    if tool in WRITE_TOOLS or tool in PATCH_TOOLS:
        return judge(cwd, _written(tool, tool_input), tool)
    if tool in SHELL_TOOLS:
        return shell(cwd, tool_input)
    if tool == "write_stdin":  # Codex: what is typed into a running command is a shell command's text
        chars = tool_input.get("chars")
        return shell(cwd, {"command": chars if isinstance(chars, str) else ""})
    if tool.startswith(MCP_PREFIX):
        return mcp(tool)
    return Decision(
        "deny",
        f"harness-gate does not know the tool `{tool}` and cannot tell what it writes: denied (fail closed). "
        "Write files with Write/Edit/NotebookEdit (Claude Code), apply_patch (Codex) or write_file/replace "
        "(Gemini CLI).",
    )


def _written(tool: str, tool_input: Mapping[str, object]) -> list[tuple[str, str]]:
    """The files a write or patch tool's call names, as (path, "A"|"M"|"D")."""
    if tool in PATCH_TOOLS:
        return patch_paths(patch_text(tool_input))
    key = WRITE_TOOLS[tool]
    path = tool_input.get(key)
    if not isinstance(path, str) or not path:
        raise Malformed(f"`{tool}` names no `{key}`")
    return [(path, "M")]


def mcp(tool: str) -> Decision:
    """An MCP server's tool: its arguments mean what the server makes of them, so what it
    writes cannot be told. Not denied (many only read); a human at the prompt decides."""
    repo = repository(paths.project())
    if isinstance(repo, Decision):
        return repo
    what = (
        f"harness-gate cannot tell what the MCP tool `{tool[:80]}` writes: an MCP server acts on its own, outside "
        "the gate's view"
    )
    return Decision(
        "ask",
        f"{what}, so a human decides. The commit gate still judges what it changes in the repository.",
        cannot_ask_reason=f"{what}, and {{runtime}} cannot ask a human from a hook: denied (fail closed).{{mcp_hint}}",
    )
