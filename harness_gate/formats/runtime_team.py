"""The `runtime` format's agent-team plans (`*.json`, the runtime's "Subagent Contract",
docs/formats/runtime.md): strict JSON with an `agents[]` list, each agent's role, scope,
write set and verification command, worker write sets that never overlap nor claim the
integrator's state surface, and each worker's task demand matched by its green gate.
Every finding names the line of the value it is about."""

from __future__ import annotations

import bisect
import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from harness_gate import jsonstrict
from harness_gate.findings import Finding, finding
from harness_gate.formats import shown

READ_ONLY_ROLES = ("planner", "reviewer", "security", "qa")
ROLES = ("planner", "worker", *READ_ONLY_ROLES[1:])
LEVELS = ("low", "medium", "high")
# "no protected integrator state surfaces such as `docs/harness-state.md`" (Subagent Contract)
PROTECTED = "docs/harness-state.md"
DEMAND_FIELDS = ("L", "H_tool", "S_state", "N_obs")


@dataclass(frozen=True)
class Node:
    """Where a JSON value starts (a 1-based line), and where its members do."""

    line: int
    keys: dict[str, int] = field(default_factory=dict)  # object member -> line of its key
    members: dict[str, Node] = field(default_factory=dict)
    items: list[Node] = field(default_factory=list)


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    return match.end() if match else i


def _locate(text: str, i: int, depth: int, lines: list[int]) -> tuple[Node, int]:
    """The positions of an already-validated JSON text, down to `depth` levels (deeper
    values are skipped with the C scanner). `lines` holds the offset of every newline."""
    node = Node(bisect.bisect_left(lines, i) + 1)
    if depth == 0 or text[i] not in "{[":
        return node, _DECODER.raw_decode(text, i)[1]
    close = "}" if text[i] == "{" else "]"
    i = _skip(text, i + 1)
    while text[i] != close:
        if close == "}":
            key_line = bisect.bisect_left(lines, i) + 1
            key, i = _DECODER.raw_decode(text, i)
            i = _skip(text, _skip(text, i) + 1)  # past the ':'
            child, i = _locate(text, i, depth - 1, lines)
            node.keys[key], node.members[key] = key_line, child
        else:
            child, i = _locate(text, i, depth - 1, lines)
            node.items.append(child)
        i = _skip(text, i)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return node, i + 1


def _positions(text: str) -> Node:
    lines = [m.start() for m in re.finditer("\n", text)]
    try:
        return _locate(text, _skip(text, 0), 4, lines)[0]
    except (ValueError, IndexError, RecursionError):  # cannot happen on validated text; stay total
        return Node(1)


def _member(node: Node, key: str) -> Node:
    return node.members.get(key, node)


@dataclass(frozen=True)
class Team:
    path: str
    agents: list[tuple[dict[str, Any], Node]]


def lint_team(path: str, data: bytes) -> list[Finding]:
    team, problems = _load_team(path, data)
    if team is None:
        return problems
    out: list[Finding] = []
    ids: set[str] = set()
    workers: list[tuple[str, str, int]] = []  # (agent id, normalized path, line)
    for agent, node in team.agents:
        out.extend(_agent(path, agent, node, ids))
        if agent.get("role") == "worker":
            workers.extend(_worker_paths(agent, node))
    out.extend(_overlaps(path, workers))
    return out


def _load_team(path: str, data: bytes) -> tuple[Team | None, list[Finding]]:
    try:
        text = data.decode("utf-8")
        plan = jsonstrict.loads(text, text_ok=True)
    except UnicodeDecodeError:
        return None, [finding("HG626", path, "not UTF-8", line=1)]
    except jsonstrict.StrictJSONError as exc:
        where = re.search(r" at line (\d+) column \d+$", str(exc))
        return None, [finding("HG626", path, f"not strict JSON: {exc}", line=int(where[1]) if where else None)]
    if not isinstance(plan, dict):
        return None, [finding("HG626", path, "the plan is not a JSON object", line=1)]
    root = _positions(text)
    agents = plan.get("agents")
    # "validates `agents[]`"; the original harness's validator refuses a plan without agents
    if not isinstance(agents, list) or not agents:
        line = root.keys.get("agents", root.line)
        return None, [finding("HG626", path, "`agents` must be a non-empty list", line=line)]
    nodes = _member(root, "agents").items
    located = [(a, nodes[i] if i < len(nodes) else root) for i, a in enumerate(agents)]
    return Team(path, [(a, n) for a, n in located if isinstance(a, dict)]), [
        finding("HG627", path, f"agents[{i}] is not an object", line=n.line)
        for i, (a, n) in enumerate(located)
        if not isinstance(a, dict)
    ]


def _text(value: object) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _agent(path: str, agent: dict[str, Any], node: Node, ids: set[str]) -> list[Finding]:
    """Its specification: "every agent requires `id`, `role`, `scope`, `write_set`, and `verification_command`"."""
    out = []
    agent_id = _text(agent.get("id"))
    missing = [k for k in ("id", "scope", "verification_command") if _text(agent.get(k)) is None]
    if not isinstance(agent.get("write_set"), list):
        missing.append("write_set (a list)")
    if agent.get("role") not in ROLES:
        missing.append(f"role (one of {', '.join(ROLES)})")
    name = agent_id or f"at line {node.line}"
    if missing:
        out.append(finding("HG627", path, f"agent {name}: missing or invalid {', '.join(missing)}", line=node.line))
    if agent_id is not None and agent_id in ids:
        out.append(finding("HG627", path, f"agent id {shown(agent_id)} is used twice", line=node.line))
    if agent_id is not None:
        ids.add(agent_id)
    out.extend(_write_set(path, agent, node, name))
    role = agent.get("role")
    if role in READ_ONLY_ROLES:
        out.extend(_read_only(path, agent, node, name, str(role)))
    elif role == "worker":
        out.extend(_demand(path, agent, node, name))
    return out


def _write_set(path: str, agent: dict[str, Any], node: Node, name: str) -> list[Finding]:
    """Its specification: "empty paths, `..` traversal, and absolute paths outside the repo fail"."""
    entries = agent.get("write_set")
    if not isinstance(entries, list):
        return []
    items = _member(node, "write_set").items
    out = []
    for i, entry in enumerate(entries):
        line = items[i].line if i < len(items) else node.line
        why = _bad_path(entry)
        if why is not None:
            out.append(finding("HG630", path, f"agent {name}: write_set entry {shown(entry)} {why}", line=line))
    return out


def _bad_path(entry: object) -> str | None:
    if not isinstance(entry, str) or not entry.strip():
        return "is empty or not text"
    raw = entry.strip()
    # A committed plan travels between checkouts: an absolute path names one machine's
    # copy and cannot be proven to stay inside the repository.
    if raw.startswith(("/", "~", "\\")) or re.match(r"[A-Za-z]:", raw):
        return "is absolute"
    if ".." in re.split(r"[/\\]", raw):
        return "climbs out with `..`"
    return None


def _normalized(entry: str) -> str:
    """Repo-relative and normalized, as the original harness's validator compares them: `./a//b/` is `a/b`."""
    return posixpath.normpath(entry.strip().replace("\\", "/"))


def _worker_paths(agent: dict[str, Any], node: Node) -> list[tuple[str, str, int]]:
    entries = agent.get("write_set")
    if not isinstance(entries, list):
        return []
    items = _member(node, "write_set").items
    name = _text(agent.get("id")) or f"at line {node.line}"
    return [
        (name, _normalized(e), items[i].line if i < len(items) else node.line)
        for i, e in enumerate(entries)
        if _bad_path(e) is None
    ]


def _covers(parent: str, child: str) -> bool:
    return parent in (".", child) or child.startswith(parent + "/")


def _overlaps(path: str, workers: list[tuple[str, str, int]]) -> list[Finding]:
    """Its specification: "worker write sets are normalized to repo-relative paths and must be disjoint";
    "worker write sets must not overlap protected integrator state surfaces"."""
    out = []
    for i, (agent, where, line) in enumerate(workers):
        if _covers(where, PROTECTED):
            msg = f"worker {agent} claims {where!r}, which holds {PROTECTED}"
            out.append(finding("HG632", path, msg, line=line))
        for other, there, _ in workers[:i]:
            if other != agent and (_covers(where, there) or _covers(there, where)):
                msg = f"worker {agent} owns {where!r}, overlapping {there!r} of worker {other}"
                out.append(finding("HG631", path, msg, line=line))
                break
    return out


def _read_only(path: str, agent: dict[str, Any], node: Node, name: str, role: str) -> list[Finding]:
    out = []
    # "planner, reviewer, security, and qa roles must have an empty `write_set`"
    if isinstance(agent.get("write_set"), list) and agent["write_set"]:
        line = node.keys.get("write_set", node.line)
        out.append(finding("HG628", path, f"{role} {name} has a non-empty write_set", line=line))
    # "read-only roles reject `task_demand` and `green_gate`"
    out.extend(
        finding("HG635", path, f"{role} {name} carries `{key}`", line=node.keys.get(key, node.line))
        for key in ("task_demand", "green_gate")
        if key in agent
    )
    return out


def _demand(path: str, agent: dict[str, Any], node: Node, name: str) -> list[Finding]:
    out = []
    # "worker roles must have a non-empty `write_set`"
    if isinstance(agent.get("write_set"), list) and not agent["write_set"]:
        out.append(
            finding("HG629", path, f"worker {name} has an empty write_set", line=node.keys.get("write_set", node.line))
        )
    demand, gate = agent.get("task_demand"), agent.get("green_gate")
    wrong = _demand_shape(demand, gate)
    if wrong:
        line = next((node.keys[k] for k in ("task_demand", "green_gate") if k in node.keys), node.line)
        out.append(finding("HG633", path, f"worker {name}: {'; '.join(wrong)}", line=line))
        return out
    if not isinstance(demand, dict) or not isinstance(gate, dict):  # ruled out by _demand_shape; narrows types
        return out
    mismatch = _gate_mismatch(str(demand["level"]), gate, _text(agent.get("verification_command")))
    if mismatch:
        out.append(
            finding("HG634", path, f"worker {name}: {'; '.join(mismatch)}", line=node.keys.get("green_gate", node.line))
        )
    return out


def _demand_shape(demand: object, gate: object) -> list[str]:
    """Its specification: "`task_demand`: `level` (`low`, `medium`, or `high`), `L`, `H_tool`, `S_state`, and
    `N_obs`"; "`green_gate`: `gate_scope` (`worker` or `integrator`), `command`, and `rationale`"."""
    if not isinstance(demand, dict) or not isinstance(gate, dict):
        return ["task_demand and green_gate must both be objects"]
    wrong = []
    if demand.get("level") not in LEVELS:
        wrong.append(f"task_demand.level {shown(demand.get('level'))} is not low, medium or high")
    wrong.extend(f"task_demand.{k} is empty" for k in DEMAND_FIELDS if _text(demand.get(k)) is None)
    if gate.get("gate_scope") not in ("worker", "integrator"):
        wrong.append(f"green_gate.gate_scope {shown(gate.get('gate_scope'))} is not worker or integrator")
    wrong.extend(f"green_gate.{k} is empty" for k in ("command", "rationale") if _text(gate.get(k)) is None)
    return wrong


def _gate_mismatch(level: str, gate: dict[str, Any], verification: str | None) -> list[str]:
    wrong = []
    # "medium and high demand require `focused_gate_command`"
    if level in ("medium", "high") and _text(gate.get("focused_gate_command")) is None:
        wrong.append(f"{level} demand needs green_gate.focused_gate_command")
    # "high demand also requires `full_gate_command` and `new_probe`"
    if level == "high":
        wrong.extend(
            f"high demand needs green_gate.{k}" for k in ("full_gate_command", "new_probe") if not _text(gate.get(k))
        )
    # "when `gate_scope=worker`, `verification_command` must match `green_gate.command`"
    if gate["gate_scope"] == "worker" and _text(gate.get("command")) != verification:
        wrong.append("gate_scope worker: green_gate.command differs from verification_command")
    # "when `gate_scope=integrator`, `integrator_gate_command` must match `verification_command`"
    if gate["gate_scope"] == "integrator" and _text(gate.get("integrator_gate_command")) != verification:
        wrong.append("gate_scope integrator: green_gate.integrator_gate_command differs from verification_command")
    return wrong
