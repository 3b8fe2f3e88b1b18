"""One hook call answered: the payload read and parsed (agent/runtimes.py), the event
judged (PreToolUse by agent/tools.py, Stop by agent/stop.py), the answer written in the
runtime's shape. Never raises: a payload not understood is denied, and any error fails
closed with its reason."""

from __future__ import annotations

import contextlib
from typing import IO

from harness_gate.agent import runtimes
from harness_gate.agent.decisions import Decision, Malformed, error_text
from harness_gate.agent.runtimes import SESSION, STOP_EVENTS, JsonObject, pre_tool_answer, stop_answer
from harness_gate.agent.stop import on_stop
from harness_gate.agent.tools import pre_tool_use


def run(runtime: str, stdin: IO[bytes]) -> tuple[int, str, str]:
    """The hook's answer to one payload: (exit code, stdout, stderr). Never raises."""
    try:
        return _answer(runtime, stdin)
    finally:
        from harness_gate import cache  # noqa: PLC0415

        cache.configure(None)


def _answer(runtime: str, stdin: IO[bytes]) -> tuple[int, str, str]:
    event = "PreToolUse"
    fields: JsonObject | None = None
    SESSION.clear()
    try:
        fields = runtimes.json_object(runtimes.read_payload(stdin))
        payload = runtimes.parse(runtime, fields)
        event = payload.event
        if payload.session is not None:
            SESSION.append(payload.session)
        if event in STOP_EVENTS:
            return stop_answer(on_stop(runtimes.stop_call(fields)), runtime)
        if event != "PreToolUse":
            if payload.is_tool_call:
                # A tool call under an event name this hook does not know: never a silent pass.
                raise Malformed(f"a tool call under the unknown event `{event[:40]}`")
            return 0, "", ""  # an event this hook does not judge: no opinion
        decision = pre_tool_use(fields)
    except Malformed as exc:
        decision = Decision("deny", f"harness-gate denies this tool call: {exc}")
    except Exception as exc:  # fail closed: any bug denies with a reason, never a traceback
        decision = Decision("deny", f"harness-gate failed closed: {error_text(exc)}")
    if event in STOP_EVENTS:
        # A Stop payload that failed to be judged: block, once (nothing is remembered, so a
        # second block could loop for ever); when the runtime says the agent already goes on
        # after a block, the human hears it, never silence: the agent can cause an error
        # (an empty nested repository makes the fingerprint fail) to end a session unjudged.
        if fields is not None and runtimes.continuing(fields):
            note = (
                f"{decision.reason}. This stop was NOT judged: the session's changes may lie outside "
                "the boundary; run `harness-gate status` before committing"
            )
            return stop_answer(Decision("note", note), runtime)
        return stop_answer(Decision("block", decision.reason), runtime)
    return pre_tool_answer(runtime, decision)


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
