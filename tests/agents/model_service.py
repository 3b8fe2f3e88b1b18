"""A scripted model service on 127.0.0.1 for the real clients: the Anthropic Messages API
(`POST /v1/messages`, server-sent events) for Claude Code, the OpenAI Responses API
(`POST /v1/responses`, server-sent events) for Codex, and Gemini's `streamGenerateContent`
for Gemini CLI. Each request of the agent's loop
gets the script's next step, chosen by how many assistant turns its history holds: a tool
call (name and input), or a final text. Requests outside the loop (titles, summaries) get
a short text. Every request body is kept, for the assertions and the notes."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    tool: str  # the name the client's model sees
    input: dict[str, Any] | str  # a string: a Responses API custom tool's input (Codex's apply_patch)
    namespace: str | None = None  # a Responses API tool namespace (Codex's `collaboration`)


SUB_MODEL = "gpt-5.6-luna"  # the model a sub-agent is spawned with (one Codex knows): its requests follow `sub`


@dataclass
class Script:
    steps: Sequence[Call | str]
    requests: list[dict[str, Any]] = field(default_factory=list)
    sub: Sequence[Call | str] = ()  # a sub-agent's steps (Codex: `spawn_agent` with model SUB_MODEL)

    def step(self, turns: int, model: object = None) -> Call | str:
        steps = self.sub if model == SUB_MODEL and self.sub else self.steps
        return steps[turns] if turns < len(steps) else "done"


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


def _claude(script: Script, body: dict[str, Any]) -> bytes:
    messages = body.get("messages", [])
    in_loop = any(t.get("name") == "Bash" for t in body.get("tools", []) if isinstance(t, dict))
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    step = script.step(turns) if in_loop else "ok"
    n = len(script.requests)
    message = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message})]
    if isinstance(step, Call):
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": step.tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step}
        stop = "end_turn"
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)


def _codex(script: Script, body: dict[str, Any]) -> bytes:
    items = body.get("input", [])
    turns = sum(
        1
        for i in items
        if isinstance(i, dict)
        and (i.get("type") in ("function_call", "custom_tool_call") or i.get("role") == "assistant")
    )
    step = script.step(turns, body.get("model"))
    n = len(script.requests)
    rid = f"resp_{n}"
    if isinstance(step, Call) and isinstance(step.input, str):
        item: dict[str, Any] = {
            "type": "custom_tool_call",
            "id": f"ct_{n}",
            "call_id": f"call_{n}",
            "name": step.tool,
            "input": step.input,
            "status": "completed",
        }
    elif isinstance(step, Call):
        item = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": step.tool,
            "arguments": json.dumps(step.input),
            "status": "completed",
            **({"namespace": step.namespace} if step.namespace else {}),
        }
    else:
        item = {
            "type": "message",
            "id": f"m_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": step, "annotations": []}],
        }
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return _sse(
        [
            ("response.created", {"type": "response.created", "response": {"id": rid}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": usage}}),
        ]
    )


def _gemini(script: Script, body: dict[str, Any], *, stream: bool) -> bytes:
    """Gemini's `generateContent` / `streamGenerateContent` (server-sent events): the agent
    loop offers tools; the client's side requests (checks, summaries) do not."""
    contents = body.get("contents", [])
    turns = sum(1 for c in contents if isinstance(c, dict) and c.get("role") == "model")
    step = script.step(turns) if body.get("tools") else "ok"
    part = {"functionCall": {"name": step.tool, "args": step.input}} if isinstance(step, Call) else {"text": step}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }
    return f"data: {json.dumps(chunk)}\n\n".encode() if stream else json.dumps(chunk).encode()


class Service:
    """The service on an ephemeral port, serving `script` until closed."""

    def __init__(self, script: Script) -> None:
        self.script = script
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(size) if size else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                path = self.path.split("?", 1)[0]
                with outer.lock:
                    if path.endswith("/messages/count_tokens"):
                        data, kind = json.dumps({"input_tokens": 1}).encode(), "application/json"
                    elif path.endswith("/messages"):
                        data, kind = _claude(outer.script, body), "text/event-stream"
                    elif path.endswith("/responses"):
                        data, kind = _codex(outer.script, body), "text/event-stream"
                    elif path.endswith(":streamGenerateContent"):
                        data, kind = _gemini(outer.script, body, stream=True), "text/event-stream"
                    elif path.endswith(":generateContent"):
                        data, kind = _gemini(outer.script, body, stream=False), "application/json"
                    elif path.endswith(":countTokens"):
                        data, kind = json.dumps({"totalTokens": 1}).encode(), "application/json"
                    else:
                        data, kind = b"{}", "application/json"
                    outer.script.requests.append({"path": path, "body": body})
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                data = b'{"data": [], "models": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
