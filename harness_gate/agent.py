"""`harness-gate agent-hook`: the gate inside a coding agent's runtime, before a write.

Claude Code and Codex call a command before each tool use (PreToolUse) and when the agent
is about to stop (Stop, SubagentStop), with a JSON payload on stdin. Every path a writing
tool names is judged by the same rules `check --staged` applies (rules.judge_writes): the
plan that governs this branch, its boundary, protected paths; and here, before anything
is written, where the write would land (outside the repository, through a symbolic link,
inside `.git` or the artifacts root). Anything not understood is denied with a reason
(fail closed). docs/agents.md says what this can and cannot guarantee.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

# Bytes read from stdin, a chunk at a time; a larger payload is denied. A Write carries the
# whole file it writes: the cap fits large generated files, and bounds what is held.
MAX_PAYLOAD = 64 << 20
_CHUNK = 1 << 20
RUNTIMES = ("claude", "codex", "gemini")
# Tool -> the input key holding the one path it writes (Gemini CLI's: write_file, replace).
WRITE_TOOLS = {
    "Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path",
    "write_file": "file_path", "replace": "file_path",
}  # fmt: skip
PATCH_TOOLS = frozenset({"apply_patch"})
SHELL_TOOLS = frozenset({"Bash", "shell", "local_shell", "exec_command", "run_shell_command"})
# Gemini CLI's event names, as the hook judges them.
GEMINI_EVENTS = {"BeforeTool": "PreToolUse", "AfterAgent": "Stop"}
# Claude Code and Codex name an MCP server's tools `mcp__<server>__<tool>`, Gemini CLI
# `mcp_<server>_<tool>`: no built-in tool of any of them starts so.
MCP_PREFIX = "mcp_"
# Tools that write nothing in the work tree: let through without a look.
READ_ONLY = frozenset({
    # Claude Code 2.1.197. Agent, Workflow and Skill run tools of their own, each through
    # the hook; the worktree tools make and leave a linked worktree (judged in itself); the
    # task, cron and message tools schedule or talk, and write no file.
    "Agent", "CronCreate", "CronDelete", "CronList", "EnterWorktree", "ExitWorktree", "Read", "ReportFindings",
    "ScheduleWakeup", "SendMessage", "Skill", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop",
    "TaskUpdate", "WebFetch", "WebSearch", "Workflow", "ExitPlanMode", "EnterPlanMode", "AskUserQuestion",
    "ListMcpResourcesTool", "ReadMcpResourceTool",
    # Earlier Claude Code versions.
    "Glob", "Grep", "LS", "TodoWrite", "TodoRead", "Task", "NotebookRead", "BashOutput", "KillShell", "KillBash",
    "SlashCommand",
    # Codex 0.171 (write_stdin types into a running command: judged as a shell command); the
    # goal tools and, with `multi_agent_v2`, the sub-agent tools, whose agents' tools meet the hook.
    "update_plan", "view_image", "web_search", "request_user_input", "tool_search", "get_goal", "create_goal",
    "update_goal", "spawn_agent", "followup_task", "interrupt_agent", "list_agents", "send_message",
    # Gemini CLI 0.61.
    "read_file", "read_many_files", "list_directory", "glob", "search_file_content", "grep_search",
    "google_web_search", "web_fetch", "write_todos", "save_memory",
})  # fmt: skip
AMEND = (
    "To write there, ask for an amendment: `harness-gate plan amend --add-boundary PATTERN`, then a human "
    "approves it (`harness-gate approve`) and the plan folder is committed (the gate reads the index)."
)
_PATCH_LINES = (
    ("*** Add File: ", "A"),
    ("*** Update File: ", "M"),
    ("*** Delete File: ", "D"),
    ("*** Move to: ", "A"),
)
_SHOWN = 10  # findings named in one reason
# Ways round the commit gate a shell command can take: git's --no-verify (any prefix git
# accepts, and `commit -n`), core.hooksPath, and pre-commit's SKIP.
_BYPASS = re.compile(r"--no-ver(?:i(?:fy?)?)?\b|\bcommit\b[^;&|\n]*\s-[a-z]*n[a-z]*\b|hookspath|\bskip=")
# git's plumbing that makes a commit or moves a ref without `git commit` and its hooks.
_PLUMBING = re.compile(
    r"\bgit\b[^;&|\n]*?\s(commit-tree|update-ref|write-tree|mktree|hash-object|read-tree|update-index|fast-import"
    r"|symbolic-ref|replace|filter-branch|filter-repo)\b"
)
# `harness-gate approve` (or `python -m harness_gate approve`) in one simple command.
_APPROVE = re.compile(r"harness[-_]gate[^\s;&|]*\s+(?:[^\s;&|]+\s+)*?approve\b")
APPROVE_DENIED = (
    "harness-gate denies this command: it runs `harness-gate approve`. An approval is a human's answer at their own "
    "terminal, never an agent's tool call (and `approve` refuses inside one, HG908). Ask the human to approve."
)
CODEX_MCP = (
    " To let MCP tools through unjudged, a human removes `mcp__.*` from the PreToolUse matcher in .codex/hooks.json."
)
GEMINI_MCP = (
    " To let MCP tools through unjudged, a human removes `mcp_.*` from the BeforeTool matcher in .gemini/settings.json."
)


@dataclass(frozen=True)
class Decision:
    kind: str  # "allow", "deny", "ask" (PreToolUse); "block", "none" (Stop)
    reason: str = ""
    # For "ask", what a runtime that cannot ask a human from a hook (Codex) answers instead,
    # and why.
    cannot_ask: str = "deny"
    cannot_ask_reason: str = ""


class Malformed(Exception):
    """The payload is not one this hook understands: denied."""


# -- the runtime's side: read the payload, write the answer -----------------------------------


def run(runtime: str, stdin: IO[bytes]) -> tuple[int, str, str]:
    """The hook's answer to one payload: (exit code, stdout, stderr). Never raises."""
    try:
        return _answer(runtime, stdin)
    finally:
        from harness_gate import cache  # noqa: PLC0415

        cache.configure(None)


# The payload's `session_id` while one payload is answered: the first hook call of a session
# records where HEAD was (agent_session.py), wherever the repository is located.
_SESSION: list[str] = []


def _answer(runtime: str, stdin: IO[bytes]) -> tuple[int, str, str]:
    event = "PreToolUse"
    payload: Any = None
    _SESSION.clear()
    try:
        data = _read_payload(stdin)
        try:
            payload = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            raise Malformed(f"the payload is not JSON ({exc})") from None
        if not isinstance(payload, dict):
            raise Malformed("the payload is not a JSON object")
        name = payload.get("hook_event_name")
        if not isinstance(name, str):
            raise Malformed("the payload has no `hook_event_name`")
        event = GEMINI_EVENTS.get(name, name) if runtime == "gemini" else name
        session = payload.get("session_id")
        if isinstance(session, str) and 0 < len(session) <= 256:
            _SESSION.append(session)
        if event in ("Stop", "SubagentStop"):
            return stop_answer(on_stop(payload), runtime)
        if event != "PreToolUse":
            if "tool_name" in payload or "tool_input" in payload:
                # A tool call under an event name this hook does not know: never a silent pass.
                raise Malformed(f"a tool call under the unknown event `{event[:40]}`")
            return 0, "", ""  # an event this hook does not judge: no opinion
        decision = pre_tool_use(payload)
    except Malformed as exc:
        decision = Decision("deny", f"harness-gate denies this tool call: {exc}")
    except Exception as exc:  # fail closed: any bug denies with a reason, never a traceback
        decision = Decision("deny", f"harness-gate failed closed: {_error_text(exc)}")
    if event in ("Stop", "SubagentStop"):
        # A Stop payload that failed to be judged: block, once (nothing is remembered, so a
        # second block could loop for ever); when the runtime says the agent already goes on
        # after a block, the human hears it, never silence: the agent can cause an error
        # (an empty nested repository makes the fingerprint fail) to end a session unjudged.
        active = payload.get("stop_hook_active") if isinstance(payload, dict) else None
        if _continuing(active):
            note = (f"{decision.reason}. This stop was NOT judged: the session's changes may lie outside "
                    "the boundary; run `harness-gate status` before committing")  # fmt: skip
            return stop_answer(Decision("note", note), runtime)
        return stop_answer(Decision("block", decision.reason), runtime)
    return pre_tool_answer(runtime, decision)


def _read_payload(stdin: IO[bytes]) -> bytes:
    """The payload, read a chunk at a time and never past the cap (Malformed beyond it)."""
    chunks: list[bytes] = []
    size = 0
    while chunk := stdin.read(min(_CHUNK, MAX_PAYLOAD + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_PAYLOAD:
            raise Malformed(f"the payload is larger than {MAX_PAYLOAD} bytes ({MAX_PAYLOAD >> 20} MiB)")
    return b"".join(chunks)


def pre_tool_answer(runtime: str, decision: Decision) -> tuple[int, str, str]:
    """The PreToolUse answer. Claude Code: exit 0 and `hookSpecificOutput` on stdout. Codex
    (a younger hook API, docs/agents.md): the same JSON, and a deny also exits 2 with the
    reason on stderr, which Codex documents as a block. Adjust here alone if it differs.

    An allowed call is answered with nothing at all: `"allow"` would skip the runtime's own
    permission prompts, and the gate never grants more than the user's settings do."""
    if runtime in ("codex", "gemini") and decision.kind == "ask":
        # Codex parses `ask` but does not support it: the hook counts as failed and the call
        # runs. What would be asked is denied (an MCP tool) or let through (a shell command).
        name, hint = ("Codex", CODEX_MCP) if runtime == "codex" else ("Gemini CLI", GEMINI_MCP)
        reason = decision.cannot_ask_reason.replace("{runtime}", name).replace("{mcp_hint}", hint)
        decision = Decision(decision.cannot_ask, reason)
    if decision.kind == "allow":
        return 0, "", ""
    if runtime == "codex":
        # Codex ends the reason with a period of its own: "...the index).." otherwise.
        decision = Decision(decision.kind, decision.reason.rstrip("."))
    if runtime == "gemini":
        # Gemini CLI reads a top-level decision only (hookSpecificOutput is ignored there).
        return 0, json.dumps({"decision": "deny", "reason": decision.reason}) + "\n", ""
    out = json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision.kind,
            "permissionDecisionReason": decision.reason,
        }
    })  # fmt: skip
    if runtime == "codex" and decision.kind == "deny":
        return 2, out + "\n", decision.reason + "\n"
    return 0, out + "\n", ""


def stop_answer(decision: Decision, runtime: str = "claude") -> tuple[int, str, str]:
    """Stop/SubagentStop: `{"decision": "block", "reason": ...}` keeps the agent working;
    nothing lets it stop. Gemini CLI's AfterAgent: `"deny"`, its word for the same."""
    if decision.kind == "block":
        kind = "deny" if runtime == "gemini" else "block"
        return 0, json.dumps({"decision": kind, "reason": decision.reason}) + "\n", ""
    if decision.kind == "note":  # said to the human, the stop goes ahead
        return 0, json.dumps({"systemMessage": decision.reason}) + "\n", ""
    return 0, "", ""


def _error_text(exc: BaseException) -> str:
    from harness_gate.errors import HarnessGateError  # noqa: PLC0415

    if isinstance(exc, HarnessGateError):
        return f"{exc.code} {exc}"
    return f"{type(exc).__name__}: {exc}"


# -- PreToolUse ---------------------------------------------------------------------------------


def pre_tool_use(payload: dict[str, Any]) -> Decision:
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise Malformed("the payload has no `tool_name` and `tool_input` object")
    if tool in READ_ONLY:
        return Decision("allow", f"harness-gate: `{tool}` writes nothing")
    cwd = _cwd(payload)
    if tool in WRITE_TOOLS:
        key = WRITE_TOOLS[tool]
        path = tool_input.get(key)
        if not isinstance(path, str) or not path:
            raise Malformed(f"`{tool}` names no `{key}`")
        return judge(cwd, [(path, "M")], tool)
    if tool in PATCH_TOOLS:
        return judge(cwd, patch_paths(_patch_text(tool_input)), tool)
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


def _project() -> Path:
    """The repository the hook guards: the project's (Claude Code names it in
    CLAUDE_PROJECT_DIR; a runtime starts its hooks there), never the payload's `cwd`, which
    follows the agent's `cd` (into a repository of its own making, say) and only says
    where relative names start."""
    named = os.environ.get("CLAUDE_PROJECT_DIR")
    return Path(named) if named else Path.cwd()


def _cwd(payload: dict[str, Any]) -> Path:
    cwd = payload.get("cwd")
    if cwd is None:
        return Path.cwd()
    if not isinstance(cwd, str) or not cwd or "\0" in cwd:
        raise Malformed("`cwd` is not a directory name")
    return Path(cwd)


def _patch_text(tool_input: dict[str, Any]) -> str:
    """The patch of an `apply_patch` call: `input`, `patch`, or the last word of `command`."""
    for key in ("input", "patch"):
        if isinstance(tool_input.get(key), str):
            return str(tool_input[key])
    command = tool_input.get("command")
    if isinstance(command, str):  # Codex's hook payload: the patch itself
        return command
    if isinstance(command, list) and command and isinstance(command[-1], str):
        return command[-1]
    raise Malformed("`apply_patch` carries no patch (`input`, `patch` or `command`)")


def patch_paths(text: str) -> list[tuple[str, str]]:
    """The files an apply_patch patch names, as (path, "A"|"M"|"D"): a move is the deletion
    of its source and the addition of its destination, and both are judged."""
    lines = [line.rstrip("\r") for line in text.strip().splitlines()]
    if not lines or lines[0].strip() != "*** Begin Patch" or lines[-1].strip() != "*** End Patch":
        raise Malformed("the patch does not run from `*** Begin Patch` to `*** End Patch`")
    marks = [line.strip() for line in lines if line.strip() in ("*** Begin Patch", "*** End Patch")]
    if len(marks) != 2:
        # An early `*** End Patch` does not end what the runtime applies: what follows it
        # would be applied unjudged. One patch, one pair of marks.
        raise Malformed("the patch holds `*** Begin Patch` or `*** End Patch` more than once")
    out: list[tuple[str, str]] = []
    for line in (raw.lstrip() for raw in lines[1:-1]):  # the runtime trims padding: so does this
        for prefix, status in _PATCH_LINES:
            if line.startswith(prefix):
                path = line[len(prefix) :].strip()
                if not path:
                    raise Malformed(f"`{prefix.strip()}` names no file")
                if prefix == "*** Move to: ":
                    if not out or out[-1][1] != "M":
                        raise Malformed("`*** Move to:` does not follow an `*** Update File:`")
                    out[-1] = (out[-1][0], "D")
                out.append((path, status))
                break
        else:
            if line.startswith("*** ") and not line.startswith("*** End of File"):
                raise Malformed(f"the patch holds a line this hook does not know: {line[:80]!r}")
    if not out:
        raise Malformed("the patch names no file")
    return out


_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/bin/zsh"})
# `apply_patch <<'EOF'` (or <<EOF, <<"EOF", <<-EOF): the here-document's opening line.
_HEREDOC = re.compile(r"\s*apply_patch\s+<<(-?)[ \t]*(?:'(\w+)'|\"(\w+)\"|(\w+))[ \t]*\n")
_QUOTED = re.compile(r"\s*apply_patch\s+'([^']*)'\s*", re.S)


def shell_patch(command: object) -> str:
    """The patch of a shell command that applies one and does nothing else: `["apply_patch",
    PATCH]`, or a script (alone, or under `bash -lc`) that is `apply_patch` with the patch in
    a here-document or single quotes. Anything else, Malformed: a command after the patch
    (on a new line too), a second patch, an unquoted here-document the shell would expand."""
    if isinstance(command, list):
        if len(command) == 2 and command[0] == "apply_patch" and isinstance(command[1], str):
            return command[1]
        if (
            len(command) == 3
            and command[0] in _SHELLS
            and command[1] in ("-c", "-lc", "-l -c")
            and isinstance(command[2], str)
        ):
            command = command[2]
        else:
            raise Malformed("a shell command that does more than apply one patch cannot be judged by its text")
    if not isinstance(command, str):
        raise Malformed("the shell call carries no `command`")
    heredoc = _HEREDOC.match(command)
    if heredoc is not None:
        return _heredoc_body(heredoc, command[heredoc.end() :])
    quoted = _QUOTED.fullmatch(command)
    if quoted is not None:
        return quoted.group(1)
    raise Malformed("a shell command that does more than apply one patch cannot be judged by its text")


def _heredoc_body(opening: re.Match[str], rest: str) -> str:
    """The here-document's body as the shell reads it: up to the first line that is the
    delimiter (after leading tabs, for `<<-`); nothing but blank space may follow it."""
    strip = bool(opening.group(1))
    delimiter = opening.group(2) or opening.group(3) or opening.group(4)
    lines = rest.split("\n")
    for i, line in enumerate(lines):
        if (line.lstrip("\t") if strip else line) == delimiter:
            if "\n".join(lines[i + 1 :]).strip():
                raise Malformed("a shell command that does more than apply one patch cannot be judged by its text")
            body = [line.lstrip("\t") for line in lines[:i]] if strip else lines[:i]
            text = "\n".join(body)
            if opening.group(4) is not None and re.search(r"[$`\\]", text):
                raise Malformed("an unquoted here-document: the shell would expand `$`, backquotes and backslashes")
            return text
    raise Malformed("the here-document of the patch has no end line")


def mcp(tool: str) -> Decision:
    """An MCP server's tool: its arguments mean what the server makes of them, so what it
    writes cannot be told. Not denied (many only read); a human at the prompt decides."""
    repo = _repository(_project())
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


def shell(cwd: Path, tool_input: dict[str, Any]) -> Decision:
    """A shell command cannot be judged by its text: allowed (the git gate stays the
    enforcement), `ask` when it names a protected path or the artifacts root (a heuristic)."""
    command = tool_input.get("command")
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        text = " ".join(command)
    elif isinstance(command, str):
        text = command
    else:
        raise Malformed("the shell call carries no `command`")
    if "*** begin patch" in text.casefold():
        # `apply_patch` run through the shell (Codex does): judged as the patch when the
        # command is exactly that one patch, every byte of it one the runtime acts on.
        if tool_input.get("workdir") not in (None, "", "."):
            raise Malformed("a patch applied in another directory cannot be judged by its text")
        return judge(cwd, patch_paths(shell_patch(command)), "apply_patch")
    if _APPROVE.search(text.casefold()):
        return Decision("deny", APPROVE_DENIED)
    repo = _repository(_project())
    if isinstance(repo, Decision):
        return repo
    from harness_gate import rules  # noqa: PLC0415

    _, cfg = repo
    folded = text.casefold()
    hits = [n for n in dict.fromkeys(rules.protected_names(cfg.source)) if n.casefold() in folded]
    # The artifacts root, `.git` and the runtimes' folders as words (`rm -rf harness`,
    # `> .git/hooks/pre-commit`, `rm -rf .claude`), never as part of one (`harness-gate
    # verify`, `.github`, `.harness/`); and the ways round the commit gate itself.
    for word in (cfg.artifacts_dir, ".git", *rules.AGENT_DIRS):
        if re.search(rf"(?<![\w.-]){re.escape(word.casefold())}(?![\w-])", folded):
            hits.append(word + "/")
    around = [m.group(0) for m in _BYPASS.finditer(folded)]
    around += [f"git {m.group(1)}" for m in _PLUMBING.finditer(folded)]
    if around:
        # A way round the commit gate: asked in Claude Code; denied where no human can be
        # asked (Codex), since the commit it makes is seen by no hook but Stop.
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys([*around, *hits][:5]))
        what = (
            f"harness-gate: this command names {shown}, a way round the commit gate (skipping its hooks, or git's "
            "plumbing that commits or moves a branch without `git commit`)"
        )
        return Decision(
            "ask",
            f"{what}; a shell command cannot be judged by its text, so a human decides. Stop judges the commits "
            "made in this session.",
            cannot_ask_reason=f"{what}, and Codex and Gemini CLI cannot ask a human from a hook: denied. Commit "
            "with plain `git commit`.",
        )
    if hits and not reads_only(text):
        shown = ", ".join(f"`{n}`" for n in dict.fromkeys(hits[:5]))
        return Decision(
            "ask",
            f"harness-gate: this command names {shown} (a protected path or the artifacts root); a shell command "
            "cannot be judged by its text, so a human decides. The commit gate still judges what it changes.",
            cannot_ask="allow",
        )
    return Decision("allow", "harness-gate: shell commands are not judged by their text; `check` judges the commit")


# Programs that only read files (with no option that writes: `sort -o`, `sed -i`, `git log
# --output` are not among them), and git's reading commands.
_READERS = frozenset({
    "cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ls", "stat", "wc", "file", "diff",
    "cmp", "jq", "tree", "find", "echo", "printf", "pwd", "realpath", "readlink", "basename", "dirname", "true",
})  # fmt: skip
_GIT_READERS = frozenset({"status", "diff", "log", "show", "ls-files", "blame", "grep", "rev-parse", "cat-file"})
_WRITES = re.compile(r"[>`]|\$\(|-(?:exec|execdir|delete|fprint\w*|o)\b|--output\b")


def reads_only(text: str) -> bool:
    """Whether a shell command plainly only reads: every simple command in it (split at
    `;`, `&`, `|` and new lines) is a reader, with no redirection, command substitution or
    option that writes. Anything else may write (a heuristic, docs/agents.md)."""
    if _WRITES.search(text):
        return False
    for part in re.split(r"[;&|\n]+", text):
        words = part.split()
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=\S*", words[0]):
            words = words[1:]  # VAR=value before the program
        if not words:
            continue
        if words[0] == "git":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if not rest or rest[0] not in _GIT_READERS:
                return False
        elif words[0] not in _READERS:
            return False
    return True


# -- judging paths ------------------------------------------------------------------------------


def _repository(
    cwd: Path, *, prefetch: bool = False, begin: bool = True, location: Any = None
) -> tuple[Any, Any] | Decision:
    """(git location, trusted configuration), or the decision for a repository the gate
    does not guard (allow: nothing to enforce). With `prefetch`, git starts at once on the
    reads a write is judged with, as `check --staged` does (git/process.py's contract:
    what is not read is discarded). With `begin`, a session without a record gets one at
    HEAD (a tool call; never Stop, where a missing record means the fork point)."""
    from harness_gate import artifacts_tree, cache, git, state_facts  # noqa: PLC0415

    location = location or git.locate(cwd)
    if prefetch:
        artifacts_tree.prefetch(location)
    cache.configure(location.cache_dir)  # the parsed configuration and plans, as `check` keeps them
    if location.head is None:
        return Decision("allow", "harness-gate: no commit yet; the adopting commit is not judged")
    if _SESSION and begin:
        from harness_gate import agent_session  # noqa: PLC0415

        agent_session.begin(location.cache_dir, _SESSION[0], location.head)
    cfg = artifacts_tree.trusted_config(location.toplevel, None, location.head)
    if not state_facts.active_at(location.toplevel, location.head, cfg):
        return Decision("allow", "harness-gate is not active in this repository (no configuration at HEAD)")
    return location, cfg


def judge(cwd: Path, paths: Sequence[tuple[str, str]], tool: str) -> Decision:
    from harness_gate import git  # noqa: PLC0415

    try:  # git/process.py's contract: what was started and not read ends here, on every way out
        repo = _repository(_judged_in(_project(), cwd, paths), prefetch=True)
        if isinstance(repo, Decision):
            return repo
        location, cfg = repo
        findings, plan = judge_paths(location, cfg, cwd, paths)
    finally:
        git.discard_started()
    if not findings:
        shown = ", ".join(f"`{p}`" for p, _ in paths[:3])
        return Decision("allow", f"harness-gate: {shown} inside the write boundary of `{plan}`")
    return Decision("deny", deny_reason(tool, findings))


def _judged_in(project: Path, cwd: Path, paths: Sequence[tuple[str, str]]) -> Path:
    """Where a write is judged: the linked worktree of the project's repository it lands in
    (Claude Code's EnterWorktree, agent_worktrees.py), else the project."""
    from harness_gate import agent_worktrees  # noqa: PLC0415

    if paths:
        target = os.path.normpath(cwd / paths[0][0])
        found = agent_worktrees.worktree_of(project, target)
        if found is not None:
            return found
    return project


def deny_reason(tool: str, findings: Sequence[tuple[str, str, str]], header: str = "") -> str:
    lines = [header or f"harness-gate denies this {tool}:"]
    lines += [f"- `{path}`: {message}" + (f" [{code}]" if code else "") for code, path, message in findings[:_SHOWN]]
    if len(findings) > _SHOWN:
        lines.append(f"- and {len(findings) - _SHOWN} more")
    codes = {code for code, _, _ in findings}
    if codes & {"HG101", "HG102", "HG105"}:
        lines.append(AMEND + (" A protected path needs its exact name, without wildcards." if "HG102" in codes else ""))
    if any(code.startswith("HG3") for code in codes):
        lines.append("Run `harness-gate verify`: it runs the plan's commands and records evidence for this tree.")
    if codes & {"HG201", "HG202", "HG209"}:
        lines.append(
            "Writes need an approved, open plan of this branch, committed: `harness-gate status` says what is "
            "missing; `harness-gate plan new` writes one, a human approves it with `harness-gate approve`."
        )
    return "\n".join(lines)


def resolve(
    root: Path, cwd: Path, raw: str, real_root: str | None = None, links: dict[str, bool] | None = None
) -> tuple[list[str], str | None]:
    """The repository-relative paths a write to `raw` lands on (as named, and where symbolic
    links lead, when that differs), or why it lands nowhere the gate allows. `real_root`
    (`root` with its links resolved) and `links` (what `_unlinked` found) are a caller's
    that resolves many paths (Stop): each folder is then looked at once, not once per path."""
    if not raw or "\0" in raw:
        return [], "not a file name"
    joined = str(cwd / raw)
    top = os.path.normpath(root)
    real_top = os.path.realpath(root) if real_root is None else real_root
    lexical = os.path.normpath(joined)
    rel = _inside(lexical, top)
    if rel is None:
        rel = _inside(lexical, real_top)
    real = (_unlinked(real_top, rel, links) if rel and links is not None else None) or os.path.realpath(joined)
    real_rel = _inside(real, real_top)
    if rel is None and real_rel is None:
        return [], f"outside the repository `{top}`"
    if real_rel is None:
        return [], f"leads through a symbolic link to `{real}`, outside the repository"
    named = [p for p in dict.fromkeys([rel, real_rel]) if p is not None]
    for p in named:
        if not p:
            return [], "the repository's top directory itself"
        first = p.split("/", 1)[0]
        if first.casefold() == ".git":
            return [], "inside `.git`: git's own files (hooks, config) are never an agent's to write"
    return named, None


def _unlinked(real_top: str, rel: str, links: dict[str, bool]) -> str | None:
    """`rel` below `real_top` when nothing on the way is a symbolic link, so that it is its
    own real path (what os.path.realpath says, which looks at every folder of every path
    again); None when one is (os.path.realpath then follows it). `links` remembers each
    folder looked at. As realpath, a name that cannot be looked at is no link."""
    here = real_top.rstrip("/")  # the file system's root, too
    for part in rel.split("/"):
        here = f"{here}/{part}"
        link = links.get(here)
        if link is None:
            try:
                link = stat.S_ISLNK(os.lstat(here).st_mode)
            except OSError:
                link = False
            links[here] = link
        if link:
            return None
    return here


def _nested_repository(root: Path, rel: str, seen: dict[str, str | None]) -> str | None:
    """The directory on the way to `rel` that holds a `.git` of its own (another work tree,
    which this repository's gate does not judge), or None. `seen` remembers each directory
    already looked at (the answer for it and the ones above it), so that a Stop over many
    files in deep folders looks at each folder once, not once per file and level."""
    top = os.fspath(root)
    here = ""
    for part in rel.split("/")[:-1]:
        here = f"{here}/{part}" if here else part
        if here in seen:
            found = seen[here]
        else:
            found = here if part.casefold() == ".git" or os.path.lexists(f"{top}/{here}/.git") else None
            seen[here] = found
        if found is not None:
            return found
    return None


def _hard_links(path: Path) -> int:
    """How many names the regular file at `path` has (1 when there is none yet)."""
    try:
        st = path.stat()
    except OSError:
        return 1
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 1


def _change(rel: str, status: str, on_disk: bool) -> Any:
    """A change of `rel` as the gate's rules read one: what git would show for it (modes
    of a regular file; object ids that are never read)."""
    from harness_gate import git  # noqa: PLC0415

    if status == "M" and not on_disk:
        status = "A"  # a Write that creates the file: said as an addition, as git will show it
    old_mode = "100644" if on_disk or status == "D" else git.NO_MODE
    new_mode = git.NO_MODE if status == "D" else "100644"
    zero = "0" * 40
    return git.Change(rel.encode("utf-8", "surrogateescape"), (old_mode,), new_mode, (zero,), zero, status)


def _inside(path: str, top: str) -> str | None:
    if path == top:
        return ""
    prefix = top.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix) :].replace(os.sep, "/")


def judge_paths(
    location: Any,
    cfg: Any,
    cwd: Path,
    paths: Sequence[tuple[str, str]],
    *,
    before: bool = True,
    walked: frozenset[str] = frozenset(),
) -> tuple[list[tuple[str, str, str]], str | None]:
    """Findings (code, path, message) for writing `paths` ((name, "A"|"M"|"D")), and the
    plan that allows them when none blocks. The plan's rules are rules.judge_writes over the
    index's plans, chosen as `check --staged` chooses them. `before` the write, a file with
    other hard links is refused too (Stop judges what was written). `walked`: the names of
    `paths` that git's untracked listing found (Stop), below the top directory: git entered
    every folder on the way, so none is a symbolic link or holds a `.git` of its own (git
    enters neither), and only the file itself is looked at."""
    from harness_gate import artifacts_tree, branches, git, governance, rules, state_facts, trust  # noqa: PLC0415

    root: Path = location.toplevel
    head: str = location.head
    out: list[tuple[str, str, str]] = []
    changes: list[Any] = []
    seen: dict[str, str | None] = {}  # folders looked at for a nested repository
    real_root, symlinks = os.path.realpath(root), dict[str, bool]()  # folders looked at for a link
    top = os.fspath(root)
    for raw, status in paths:
        if raw in walked and not Path(raw).is_symlink():
            named, why, entered = [raw[len(top) + 1 :]], None, True
        else:
            (named, why), entered = resolve(root, cwd, raw, real_root, symlinks), False
        if why is not None:
            out.append(("HG104", raw, why))
            continue
        for rel in named:
            nested = None if entered else _nested_repository(root, rel, seen)
            if nested is not None:
                out.append(("HG104", rel, f"inside `{nested}`, a repository of its own nested in this one"))
                continue
            if rel == cfg.artifacts_dir or rel.startswith(cfg.artifacts_dir + "/"):
                out.append((
                    "", rel,
                    f"inside the artifacts root `{cfg.artifacts_dir}/`: only harness-gate's commands write there "
                    "(plan new, plan amend, verify, review, complete), and approvals come from a human at "
                    "`harness-gate approve`",
                ))  # fmt: skip
                continue
            links = _hard_links(root / rel) if before and status != "D" else 1
            if links > 1:
                out.append((
                    "", rel,
                    f"a hard link ({links} names of one file): writing it changes the file under its other names "
                    "too, which may lie outside the write boundary or the repository",
                ))  # fmt: skip
                continue
            # Before the write, the disk says whether it adds; after it (Stop), git's status does.
            existed = os.path.lexists(root / rel) if before else status != "A"
            changes.append(_change(rel, status, existed))
    if not changes:
        return out, None
    try:
        with contextlib.ExitStack() as stack:
            new = artifacts_tree.from_index(root, cfg)
            anchors = stack.enter_context(trust.anchors(root, cfg, base=head, head=None))
            new = trust.vouched(new, anchors, None)
            others = git.merge_heads(location)
            parents = [head, *others]

            def origins() -> Any:
                return state_facts.index_origins(root, cfg, parents, new, lambda: git.staged_changes(root, head))

            state = rules.Transition(
                "work tree", None, changes, new, lambda: [artifacts_tree.from_commit(root, r, cfg) for r in parents],
                state_facts.GitFacts(root, None, head), first_parent=head, parent=head, load_origins=origins,
                load_selected=lambda: branches.selected(root),
            )  # fmt: skip
            found = [f for f in rules.judge_writes(state) if f.blocks]
            out.extend((f.code, f.path, f.message) for f in found)
            plan = None
            if not out:
                ids = governance.narrow(governance.candidates(new, state.origins), state.selected).ids
                plan = ids[0] if len(ids) == 1 else ", ".join(ids)
    finally:
        git.discard_started()
    return out, plan


# -- Stop ---------------------------------------------------------------------------------------


def on_stop(payload: dict[str, Any]) -> Decision:
    """What the git gate would say now of the work tree's changes (every path not as HEAD
    has it) and of the commits made since the session began (as `check --range` judges
    them; a commit made through the shell with `git commit-tree` and `git update-ref`
    leaves the tree clean). Blocks the stop when some would be refused, so the agent fixes
    them; again only when the set of findings changed since the last block, and at most
    agent_session.MAX_BLOCKS times in a row while the runtime says the agent continues
    because of a stop hook (`stop_hook_active`, which the agent cannot set): a record
    forged to say the blocks are spent silences no new set outside such a run, and past
    the bound the findings are still said to the human. Without a record (removed, or not
    as agent_session writes it) the commits are judged from the fork point. A payload
    without a session id blocks unless the agent already continues because of a stop hook."""
    from harness_gate import git  # noqa: PLC0415

    sid = _SESSION[0] if _SESSION else None
    active = _continuing(payload.get("stop_hook_active"))
    if sid is None and active:
        return Decision("none")
    # The work tree's listing, the one slow read (every untracked folder is entered), starts
    # in a thread at once, while the configuration and plans are read; once the repository
    # is located (a foreign `commondir` refused first, HG909). Not read, it is discarded.
    # The session's work tree: the linked worktree its `cwd` is in (EnterWorktree), else the project.
    cwd = payload.get("cwd")
    project = _project()
    where = _judged_in(project, Path(cwd), [("x", "M")]) if isinstance(cwd, str) and "\0" not in cwd else project
    location = git.locate(where)
    git.prefetch_status_records(location.toplevel, ignore_files=True)
    try:
        decision = _on_stop(sid, active, location)
    finally:
        git.discard_started()
    if where == project or decision.kind == "block":
        return decision
    # The session moved into a linked worktree; the main tree is judged as well, as Stop
    # judges it without one: a worktree the agent made itself (`git worktree add`) is no
    # way to end a session with its changes of the main tree unjudged. Each tree keeps its
    # own session record (under its own git directory).
    try:
        main = _on_stop(sid, active, git.locate(project))
    finally:
        git.discard_started()
    return main if main.kind == "block" or decision.kind == "none" else decision


def _on_stop(sid: str | None, active: bool, location: Any) -> Decision:
    from harness_gate import agent_session  # noqa: PLC0415

    repo = _repository(_project(), begin=False, location=location)
    if isinstance(repo, Decision):
        return Decision("none")
    location, cfg = repo
    state = agent_session.load(location.cache_dir, sid) if sid is not None else None
    if sid is not None and state is None and active:
        return Decision("none")  # nothing remembered (an unwritable git directory): the old guard
    found, reason, base = _stop_findings(location, cfg, state.start if state is not None else None)
    if sid is None:
        return Decision("block", reason) if found else Decision("none")
    if state is None:
        state = agent_session.Session(base or location.head)  # the fork point from here on
        if not found:
            with contextlib.suppress(OSError):
                agent_session.save(location.cache_dir, sid, state)
            return Decision("none")
    if not found:
        if state.blocked:
            agent_session.save(location.cache_dir, sid, dataclasses.replace(state, blocked=""))
        return Decision("none")
    key = agent_session.digest(found)
    if key == state.blocked:
        return Decision("none")
    blocks = state.blocks if active else 0  # the bound holds within a run of blocks the runtime vouches for
    if blocks >= agent_session.MAX_BLOCKS:
        return Decision("note", f"harness-gate: not blocking the stop again ({blocks} blocks in a row).\n{reason}")
    with contextlib.suppress(OSError):
        agent_session.save(location.cache_dir, sid, dataclasses.replace(state, blocked=key, blocks=blocks + 1))
    return Decision("block", reason)


def _stop_findings(location: Any, cfg: Any, start: str | None) -> tuple[list[tuple[str, str, str]], str, str | None]:
    """Every finding Stop reports, the reason that says them, and where the commits were
    judged from (`start`, else the fork point; None when there is neither)."""
    from harness_gate import fingerprints, git  # noqa: PLC0415

    root = location.toplevel
    paths, artifacts, walked = [], [], set()
    common: list[str | None] = []
    records = git.status_records(root, ignore_files=True)
    for xy, path in records:
        if xy == "??" and path.endswith("/"):
            # A folder git does not descend into holds a `.git`: a linked worktree of this
            # repository (EnterWorktree's) is no change of this tree; it is judged in itself.
            from harness_gate import agent_worktrees  # noqa: PLC0415

            common = common or [agent_worktrees.common_dir(root)]
            if common[0] is not None and agent_worktrees.linked(common[0], root / path.rstrip("/")):
                continue
        # An addition in the index or the work tree (`A `, ` A` from `add -N`, `AD`) adds;
        # HEAD never had the file.
        status = "A" if "A" in xy or xy == "??" else ("D" if "D" in xy else "M")
        if path.startswith(cfg.artifacts_dir + "/"):
            artifacts.append(_change(path, status, True))  # judged by the artifact rules, below
        else:
            paths.append((f"{root}/{path}", status))
            if xy == "??" and path and not path.endswith("/") and path.split("/", 1)[0].casefold() != ".git":
                walked.add(f"{root}/{path}")
    blocking, plan = (
        judge_paths(location, cfg, root, paths, before=False, walked=frozenset(walked)) if paths else ([], None)
    )
    if artifacts:
        blocking.extend(_artifact_findings(location, cfg, artifacts))
    one = plan if plan is not None and ", " not in plan else None  # the plan `check --staged` chose: not asked again
    stale = (
        _stale_evidence(root, one, fingerprints.untracked_listed(records))
        if cfg.evidence_stages and (paths or artifacts)
        else []
    )
    base = start if start is not None else git.fork_point(root, cfg.base_branch, location.head)
    committed = _commit_findings(location, base) if base is not None and base != location.head else []
    parts = []
    if blocking:
        header = "harness-gate: the commit gate (`check`) blocks these changes of the work tree:"
        parts.append(deny_reason("", blocking, header) + "\nRevert them, or ask for an amendment, before you stop.")
    if committed:
        header = (
            f"harness-gate: the commits made since {'this session began' if start else 'the branch left its base'} "
            f"({(base or '')[:12]}..HEAD) would be refused (`check --range`):"
        )
        parts.append(
            deny_reason("", committed, header) + "\nCommits are made with `git commit`, through the commit gate: "
            "move the branch back and commit what the plan allows."
        )
    if stale:
        # Not a block at commit by default (`evidence_stages`, default CI): said as what the
        # stages that ask for it will say, so the agent runs verify before it ends.
        header = f"harness-gate: evidence the gate asks for at {', '.join(cfg.evidence_stages)} is not fresh:"
        parts.append(deny_reason("", stale, header))
    return [*blocking, *committed, *stale], "\n".join(parts), base


def _commit_findings(location: Any, start: str) -> list[tuple[str, str, str]]:
    """What `check --range START..HEAD` refuses of the commits (the history rules; evidence
    is said apart, for the work tree). A start that is no longer a commit here fails closed."""
    from harness_gate import git, ranges, trust  # noqa: PLC0415
    from harness_gate.errors import usage  # noqa: PLC0415

    root: Path = location.toplevel
    head: str = location.head
    old = git.resolve(root, start)
    if old is None:
        raise usage(f"the session began at {start[:12]}, which names no commit here")
    try:
        listing = git.commits(root, head, [old])
        judged = ranges.range_trust(root, None, listing, old, head, pushed=True)
        with trust.anchors(root, judged.cfg, base=old, head=head) as anchors:
            found, _, _ = ranges.judge(
                root, listing, cfg=judged.cfg, head_oid=head, plan_id=None, every=judged.every, anchors=anchors,
                base=old, states=judged.states, fork_from=judged.fork_from,
            )  # fmt: skip
    finally:
        git.discard_started()
    return [(f.code, f.path, f.message) for f in dict.fromkeys(found) if f.blocks]


def _continuing(active: object) -> bool:
    """`stop_hook_active` as a runtime may spell it: true, or the string "true"."""
    return active is True or (isinstance(active, str) and active.strip().casefold() == "true")


def _artifact_findings(location: Any, cfg: Any, changes: Sequence[Any]) -> list[tuple[str, str, str]]:
    """What `check` would refuse of the work tree's changes under the artifacts root (an
    approvals log or a plan written by hand, a record changed after its approval): the
    gate's own artifact rules (rules.judge_artifacts), HEAD against the work tree."""
    from harness_gate import artifacts_tree, git, rules, state_facts, trust  # noqa: PLC0415

    root: Path = location.toplevel
    head: str = location.head
    try:
        with contextlib.ExitStack() as stack:
            old = artifacts_tree.from_commit(root, head, cfg)
            new = artifacts_tree.worktree_over(old, [rules.decode(c.path) for c in changes])
            anchors = stack.enter_context(trust.anchors(root, cfg, base=head, head=None))
            new = trust.vouched(new, anchors, None)
            facts = state_facts.GitFacts(root, None, head)
            state = rules.Transition(
                "work tree", None, changes, new, lambda: [old], facts, first_parent=head, parent=head
            )
            found = [f for f in rules.judge_artifacts(state) if f.blocks]
    finally:
        git.discard_started()
    return [(f.code, f.path, f.message) for f in found]


def _stale_evidence(
    root: Path, plan_id: str | None = None, untracked: Sequence[str] | None = None
) -> list[tuple[str, str, str]]:
    """Evidence of the plan this branch works under (`plan_id`, when the caller knows it)
    that is not fresh for the work tree (as `harness-gate status` reports it), when the
    configuration asks for evidence. `untracked`: the untracked files the work tree's
    listing found, when it found nothing `add -A` would stage otherwise."""
    from harness_gate import artifacts_tree, evidence, fingerprints, freshness, governance, lifecycle, plans  # noqa: PLC0415
    from harness_gate.errors import HarnessGateError  # noqa: PLC0415
    from harness_gate.state_facts import GitFacts  # noqa: PLC0415

    snap = artifacts_tree.from_worktree(root)
    try:
        plan_id = plan_id or governance.plan_id_for(snap, None, GitFacts(snap.root))
    except HarnessGateError:
        return []  # no plan, or several: the boundary findings say so
    folder = plans.load(snap, plan_id)
    life = lifecycle.replay(folder)
    if life.policy is None or not life.grants_writes:
        return []
    rel = f"{folder.path}/evidence.jsonl"
    # The work tree's fingerprint (a `git add -A` into a copy of the index, as costly as a
    # second status) is compared with records only: with none, every command is missing.
    logged = rel in snap.logs or bool(snap.files.get(rel))
    tree = fingerprints.fingerprint_worktree(root, snap.config, untracked=untracked) if logged else ""
    fresh, _ = freshness.state_freshness(snap, folder, life, tree)
    return [
        (
            evidence.REASON_CODES.get(f.reason, ""), f"{folder.path}/evidence.jsonl",
            f"evidence for `{f.command_id}` is {f.reason} for the work tree",
        )
        for f in fresh
        if not f.fresh
    ]  # fmt: skip


def main(runtime: str, stdin: IO[bytes] | None = None) -> int:
    """Answer one payload on the process's own streams; the exit code."""
    import sys  # noqa: PLC0415

    code, out, err = run(runtime, stdin if stdin is not None else sys.stdin.buffer)
    with contextlib.suppress(OSError):
        sys.stdout.write(out)
        sys.stdout.flush()
        sys.stderr.write(err)
        sys.stderr.flush()
    return code
