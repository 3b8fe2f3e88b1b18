"""The runtimes' side of the hook: the payload Claude Code, Codex or Gemini CLI sends on
stdin, read bounded and parsed into typed values (anything else is Malformed, denied), and
the answer written in each runtime's own shape.

The three send one JSON object: `hook_event_name` (Gemini CLI's own names: BeforeTool,
AfterAgent), `session_id`, `cwd`, and for a tool call `tool_name` and `tool_input`; for a
stop, `stop_hook_active`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from harness_gate.agent.decisions import Decision, Malformed

# Bytes read from stdin, a chunk at a time; a larger payload is denied. A Write carries the
# whole file it writes: the cap fits large generated files, and bounds what is held.
MAX_PAYLOAD = 64 << 20
_CHUNK = 1 << 20
RUNTIMES = ("claude", "codex", "gemini")
# Gemini CLI's event names, as the hook judges them.
GEMINI_EVENTS = {"BeforeTool": "PreToolUse", "AfterAgent": "Stop"}
STOP_EVENTS = ("Stop", "SubagentStop")
CODEX_MCP = (
    " To let MCP tools through unjudged, a human removes `mcp__.*` from the PreToolUse matcher in .codex/hooks.json."
)
GEMINI_MCP = (
    " To let MCP tools through unjudged, a human removes `mcp_.*` from the BeforeTool matcher in .gemini/settings.json."
)

# The payload's `session_id` while one payload is answered: the first hook call of a session
# records where HEAD was (agent_session.py), wherever the repository is located.
SESSION: list[str] = []

JsonObject = Mapping[str, object]


@dataclass(frozen=True)
class Payload:
    """One hook call: its event as the hook judges it (PreToolUse, Stop, SubagentStop, or
    one it does not judge) and the JSON object it came in."""

    event: str
    session: str | None
    fields: JsonObject

    @property
    def is_tool_call(self) -> bool:
        return "tool_name" in self.fields or "tool_input" in self.fields


@dataclass(frozen=True)
class ToolCall:
    """A PreToolUse payload: the tool, its input (a JSON object whose keys each tool names
    its own way) and the working directory relative names start from."""

    tool: str
    input: JsonObject
    raw_cwd: object = None

    def cwd(self) -> Path:
        """`cwd`, or the process's own when the payload names none; Malformed otherwise.
        Asked only for a tool that may write: a read-only tool is let through first."""
        if self.raw_cwd is None:
            return Path.cwd()
        if not isinstance(self.raw_cwd, str) or not self.raw_cwd or "\0" in self.raw_cwd:
            raise Malformed("`cwd` is not a directory name")
        return Path(self.raw_cwd)


@dataclass(frozen=True)
class StopCall:
    """A Stop or SubagentStop payload: the session's working directory when it names one
    (a name without NUL), and whether the agent already goes on because of a stop hook."""

    cwd: str | None
    active: bool


def read_payload(stdin: IO[bytes]) -> bytes:
    """The payload, read a chunk at a time and never past the cap (Malformed beyond it)."""
    chunks: list[bytes] = []
    size = 0
    while chunk := stdin.read(min(_CHUNK, MAX_PAYLOAD + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_PAYLOAD:
            raise Malformed(f"the payload is larger than {MAX_PAYLOAD} bytes ({MAX_PAYLOAD >> 20} MiB)")
    return b"".join(chunks)


def json_object(data: bytes) -> JsonObject:
    try:
        payload: object = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Malformed(f"the payload is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise Malformed("the payload is not a JSON object")
    return {str(k): v for k, v in payload.items()}


def parse(runtime: str, fields: JsonObject) -> Payload:
    name = fields.get("hook_event_name")
    if not isinstance(name, str):
        raise Malformed("the payload has no `hook_event_name`")
    event = GEMINI_EVENTS.get(name, name) if runtime == "gemini" else name
    session = fields.get("session_id")
    return Payload(event, session if isinstance(session, str) and 0 < len(session) <= 256 else None, fields)


def tool_call(fields: JsonObject) -> ToolCall:
    tool = fields.get("tool_name")
    tool_input = fields.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        raise Malformed("the payload has no `tool_name` and `tool_input` object")
    return ToolCall(tool, {str(k): v for k, v in tool_input.items()}, fields.get("cwd"))


def stop_call(fields: JsonObject) -> StopCall:
    cwd = fields.get("cwd")
    return StopCall(cwd if isinstance(cwd, str) and "\0" not in cwd else None, continuing(fields))


def continuing(fields: JsonObject) -> bool:
    """`stop_hook_active` as a runtime may spell it: true, or the string "true"."""
    active = fields.get("stop_hook_active")
    return active is True or (isinstance(active, str) and active.strip().casefold() == "true")


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
    out = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision.kind,
                "permissionDecisionReason": decision.reason,
            }
        }
    )
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
