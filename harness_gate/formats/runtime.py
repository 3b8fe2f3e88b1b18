"""The `runtime` format: the MyCodexEnv harness runtime (docs/formats/runtime.md).

Four kinds of file, told apart by name so that `[formats.runtime] paths` may move them:

* `*.jsonl`            evidence events (the runtime's "Evidence Contract");
* `*.json`             agent-team plans, `agents[]` (the runtime's "Subagent Contract");
* `harness-state.md`   the state log and its checkpoint entries (the runtime's "Checkpoint Contract");
* any other `*.md`     requirements artifacts (the runtime's "Workflow Contract", `## Task Demand (D_task)`).

Every rule here quotes the runtime's own contracts; what they leave open is left alone.
"Its specification" below is the runtime's, which is not part of this repository;
docs/formats/runtime.md quotes the passage each rule enforces and names its contract.
"""

from __future__ import annotations

import bisect
import datetime
import itertools
import json
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from harness_gate import jsonstrict
from harness_gate.findings import Finding, finding
from harness_gate.formats import Context, Format, capped, more_finding

READ_ONLY_ROLES = ("planner", "reviewer", "security", "qa")
ROLES = ("planner", "worker", *READ_ONLY_ROLES[1:])
KINDS = ("decision", "routine", "unknown")
LEVELS = ("low", "medium", "high")
STAGES = ("research", "requirements", "planning", "development", "validation", "review", "ship", "handoff")
# "no protected integrator state surfaces such as `docs/harness-state.md`" (Subagent Contract)
PROTECTED = "docs/harness-state.md"
DEMAND_FIELDS = ("L", "H_tool", "S_state", "N_obs")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_FINDINGS = 50  # per file and rule, then one finding counting the rest (as the tasks format)


def _show(value: object) -> str:
    """A value for a message: repr (so control characters stay escaped), kept short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def kind_of(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".jsonl"):
        return "events"
    if name.endswith(".json"):
        return "team"
    if name == "harness-state.md":
        return "state"
    if name.endswith(".md"):
        return "requirements"
    return "other"  # a configured path of no kind the runtime describes: nothing to check


# -- evidence events -------------------------------------------------------------------


class _Duplicate(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(f"duplicate key {key!r}")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _event(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """One JSONL line as an object, or why it is malformed.

    Not jsonstrict: events carry captured tool output (`key_output`, escape sequences
    included) and free-form metadata with fractional numbers, which the original harness's writer
    emits; duplicate keys and NaN are still refused (two readers would disagree)."""
    try:
        text = raw.decode("utf-8")
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except UnicodeDecodeError:
        return None, "not UTF-8"
    except json.JSONDecodeError as exc:
        return None, exc.msg
    except RecursionError:
        return None, "nesting too deep"
    except ValueError as exc:  # duplicates, NaN, an integer beyond the digit limit
        return None, str(exc)[:120]
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, ""


def _event_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(1-based line, bytes) of every non-blank line: JSONL readers skip blank lines."""
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if raw.strip():
            yield n, raw.removesuffix(b"\r")


def _timestamp(stamp: object) -> bool:
    """ISO 8601 that names a real moment: `2025-13-45T99:99:99` has the shape, not the date.
    What follows the seconds (a fraction, `Z`, an offset) is left to the writer."""
    if not isinstance(stamp, str) or not TIMESTAMP.match(stamp):
        return False
    try:
        datetime.datetime.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        return False
    return True


def _event_findings(path: str, n: int, event: dict[str, Any]) -> list[Finding]:
    out = []
    # "Required verification evidence fields: command, exit_code, key_output, timestamp"
    wrong = []
    if not isinstance(event.get("command"), str) or not event["command"].strip():
        wrong.append("command")
    if not isinstance(event.get("exit_code"), int) or isinstance(event.get("exit_code"), bool):
        wrong.append("exit_code")
    if not isinstance(event.get("key_output"), str):
        wrong.append("key_output")
    stamp = event.get("timestamp")
    if not _timestamp(stamp):
        wrong.append("timestamp")
    if wrong:
        out.append(finding("HG621", path, f"missing or mistyped: {', '.join(wrong)}", line=n))
    # "Evidence kinds: decision, routine, unknown" (an absent kind reads as `unknown`)
    if "evidence_kind" in event and event["evidence_kind"] not in KINDS:
        out.append(finding("HG622", path, f"evidence_kind {_show(event['evidence_kind'])}", line=n))
    if event.get("event_type") == "agent_team_validated":
        out.extend(_receipt(path, n, event))
    return out


def _receipt(path: str, n: int, event: dict[str, Any]) -> list[Finding]:
    """Its specification: "appends one local `agent_team_validated` decision receipt on success, with
    `metadata.plan_sha256`, `agent_count`, `worker_count`, and `repo_root`"."""
    meta = event.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    wrong = [] if event.get("evidence_kind") == "decision" else ["evidence_kind is not `decision`"]
    if not isinstance(meta.get("plan_sha256"), str) or not SHA256.fullmatch(meta["plan_sha256"]):
        wrong.append("metadata.plan_sha256 (64 lowercase hex digits)")
    agents, workers = _count(meta.get("agent_count")), _count(meta.get("worker_count"))
    if agents is None or workers is None:
        wrong.append("metadata.agent_count / worker_count (non-negative integers)")
    elif workers > agents:
        wrong.append("metadata.worker_count exceeds agent_count")
    if not isinstance(meta.get("repo_root"), str) or not meta["repo_root"].strip():
        wrong.append("metadata.repo_root")
    return [finding("HG623", path, "; ".join(wrong), line=n)] if wrong else []


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def lint_events(path: str, data: bytes) -> list[Finding]:
    malformed: list[tuple[int, str]] = []  # the first MAX_FINDINGS + 1: the rest are counted
    total = 0

    def events() -> Iterator[Finding]:
        nonlocal total
        for n, raw in _event_lines(data):
            event, why = _event(raw)
            if event is None:
                total += 1
                if len(malformed) <= MAX_FINDINGS:
                    malformed.append((n, why))
            else:
                yield from _event_findings(path, n, event)

    out = capped(path, events(), MAX_FINDINGS)
    # "malformed JSONL lines: report continues, increments `malformed_count`, and lists file and line"
    out.extend(
        finding("HG620", path, f"malformed event ({why}); {total} malformed line(s) in this file", line=n)
        for n, why in malformed[:MAX_FINDINGS]
    )
    if total > MAX_FINDINGS:
        out.append(more_finding("HG620", path, total - MAX_FINDINGS, malformed[MAX_FINDINGS][0]))
    return out


def gate_events(path: str, old: bytes | None, new: bytes | None) -> list[Finding]:
    """A committed log only grows ("Local logs are not migrated"), and what it gains is
    labelled ("new appends must use or infer `decision` or `routine`")."""
    if old is None or new is None:
        # A new log may be a copy of legacy lines; a removed one rewrites nothing.
        return []
    if not new.startswith(old):
        n = _first_difference(old, new)
        return [finding("HG624", path, "lines already committed were changed or removed", line=n)]
    start = old.count(b"\n") + 1  # the line the appended bytes begin on
    return capped(path, _unlabelled(path, old, new, start), MAX_FINDINGS)


def _unlabelled(path: str, old: bytes, new: bytes, start: int) -> Iterator[Finding]:
    for n, raw in _event_lines(new):
        if n < start or (n == start and not old.endswith(b"\n") and old):
            continue
        event, _ = _event(raw)
        if event is not None and event.get("evidence_kind", "unknown") == "unknown":
            yield finding("HG625", path, "an appended event has no `decision`/`routine` kind", line=n)


def _first_difference(old: bytes, new: bytes) -> int:
    for n, (a, b) in enumerate(zip(old.split(b"\n"), new.split(b"\n"), strict=False), start=1):
        if a != b:
            return n
    return min(old.count(b"\n"), new.count(b"\n")) + 1


# -- agent-team plans ------------------------------------------------------------------


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
        out.append(finding("HG627", path, f"agent id {_show(agent_id)} is used twice", line=node.line))
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
            out.append(finding("HG630", path, f"agent {name}: write_set entry {_show(entry)} {why}", line=line))
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
        wrong.append(f"task_demand.level {_show(demand.get('level'))} is not low, medium or high")
    wrong.extend(f"task_demand.{k} is empty" for k in DEMAND_FIELDS if _text(demand.get(k)) is None)
    if gate.get("gate_scope") not in ("worker", "integrator"):
        wrong.append(f"green_gate.gate_scope {_show(gate.get('gate_scope'))} is not worker or integrator")
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


# -- Markdown: requirements and the state log --------------------------------------------


def _md_lines(data: bytes) -> list[tuple[int, str]] | None:
    """(1-based line, text) outside fenced code blocks, or None when not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    out, fence = [], ""
    for n, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        mark = re.match(r"\s{0,3}(`{3,}|~{3,})", line)
        if mark and (not fence or mark[1].startswith(fence)):
            fence = "" if fence else mark[1]
            continue
        if not fence:
            out.append((n, line))
    return out


def _section(lines: list[tuple[int, str]], title: str, level: str = "## ") -> list[tuple[int, str]] | None:
    """The lines under heading `title`, with the heading first; None when absent."""
    start = next((i for i, (_, t) in enumerate(lines) if t.rstrip() == f"{level}{title}"), None)
    if start is None:
        return None
    depth = len(level) - 1
    end = next(
        (j for j in range(start + 1, len(lines)) if re.match(rf"#{{1,{depth}}} ", lines[j][1])),
        len(lines),
    )
    return lines[start:end]


_FIELD = re.compile(r"- +`?([A-Za-z_]+)`?(?: *\([^)]*\))? *: *(.*)$")


@dataclass(frozen=True)
class Field:
    line: int
    value: str  # the text after the colon
    sub: tuple[str, ...]  # indented lines below it (continuations or nested items), stripped


def _fields(body: list[tuple[int, str]]) -> dict[str, Field]:
    """Top-level `- name: value` bullets with their indented continuation lines."""
    heads: dict[str, tuple[int, str]] = {}
    subs: dict[str, list[str]] = {}  # a list per field: rebuilding a tuple per line is quadratic
    current: str | None = None
    for n, text in body:
        match = _FIELD.match(text)
        if match:
            # The first spelling of a field counts; a repeat's lines belong to nobody.
            current = match[1] if match[1] not in heads else None
            if current is not None:
                heads[current] = (n, match[2].strip())
                subs[current] = []
        elif current is not None and text[:1].isspace() and text.strip():
            subs[current].append(text.strip())
        elif text.strip():
            current = None  # any other unindented line ends the bullet
    return {name: Field(line, value, tuple(subs[name])) for name, (line, value) in heads.items()}


def lint_requirements(path: str, data: bytes) -> list[Finding]:
    """Its specification: "Validated requirements artifacts must include `## Task Demand (D_task)`. The
    validator requires `estimated_level` to be exactly `low`, `medium`, or `high`, and
    requires non-empty `L`, `H_tool`, `S_state`, and `N_obs` fields"."""
    lines = _md_lines(data)
    if lines is None:
        return [finding("HG636", path, "not UTF-8: the Task Demand section cannot be read")]
    section = _section(lines, "Task Demand (D_task)")
    if section is None:
        return [finding("HG636", path, "no `## Task Demand (D_task)` section")]
    heading = section[0][0]
    fields = _fields(section[1:])
    out = []
    level = fields.get("estimated_level")
    if level is None:
        out.append(finding("HG637", path, "estimated_level is missing", line=heading))
    elif level.value not in LEVELS:
        out.append(
            finding("HG637", path, f"estimated_level {_show(level.value)}: not low, medium or high", line=level.line)
        )
    for name in DEMAND_FIELDS:
        got = fields.get(name)
        if got is None:
            out.append(finding("HG637", path, f"{name} is missing", line=heading))
        elif not got.value and not got.sub:
            out.append(finding("HG637", path, f"{name} is empty", line=got.line))
    return out


def lint_state(path: str, data: bytes) -> list[Finding]:
    """Checkpoint entries of the state log: the `### ` entries under `## State Log` that
    `scripts/harness_checkpoint.py append` writes (`- event: checkpoint`)."""
    lines = _md_lines(data)
    if lines is None:
        return [finding("HG638", path, "not UTF-8: the checkpoint entries cannot be read")]
    log = _section(lines, "State Log")
    if log is None:
        return []
    out: list[Finding] = []
    starts = [i for i, (_, t) in enumerate(log) if t.startswith("### ")] + [len(log)]
    for a, b in itertools.pairwise(starts):
        fields = _fields(log[a + 1 : b])
        event = fields.get("event")
        if event is not None and event.value == "checkpoint":
            out.extend(_checkpoint(path, log[a][0], fields))
    return out


def _items(f: Field | None) -> dict[str, str]:
    """Nested `- key: value` items of a field (`- verification:` / `  - command: ...`)."""
    out: dict[str, str] = {}
    for sub in f.sub if f is not None else ():
        match = re.match(r"- +([A-Za-z_]+) *: *(.*)$", sub)
        if match:
            out.setdefault(match[1], match[2].strip().strip("`").strip())
    return out


def _checkpoint(path: str, heading: int, fields: dict[str, Field]) -> list[Finding]:
    """Its specification: "A checkpoint must record: phase; files or surfaces changed; validation evidence;
    blockers; next safe task; whether a git commit exists." """
    wrong: list[str] = []
    phase = fields.get("phase")
    if phase is None or phase.value not in STAGES:
        wrong.append(f"phase {_show(phase.value if phase else None)} is not a lifecycle stage")
    for name in ("changed_surfaces", "blockers"):
        if name not in fields or not fields[name].sub:
            wrong.append(f"{name} lists nothing (write `none` when there are none)")
    if "next_safe_task" not in fields or not fields["next_safe_task"].value:
        wrong.append("next_safe_task is empty")
    if not _items(fields.get("git")).get("latest_commit"):
        wrong.append("git latest_commit is missing")
    verification = _items(fields.get("verification"))
    unverified = verification.get("unverified") == "true"
    # "missing verification fields fail non-zero before writing"
    if not unverified:
        missing = [k for k in ("command", "exit_code", "key_output") if not verification.get(k)]
        if re.fullmatch(r"-?[0-9]+", verification.get("exit_code", "x")) is None and "exit_code" not in missing:
            missing.append("exit_code (an integer)")
        if missing:
            wrong.append(f"verification lacks {', '.join(missing)}")
    out = [finding("HG638", path, "; ".join(wrong), line=heading)] if wrong else []
    if unverified:
        out.extend(_unverified(path, heading, fields))
    return out


def _unverified(path: str, heading: int, fields: dict[str, Field]) -> list[Finding]:
    """Its specification: "`--allow-unverified` is only valid for `handoff` checkpoints with an explicit blocker"."""
    phase = fields.get("phase")
    blockers = [b for b in (fields["blockers"].sub if "blockers" in fields else ()) if b not in ("- none", "-")]
    if phase is not None and phase.value == "handoff" and blockers:
        return []
    why = "not a handoff" if phase is None or phase.value != "handoff" else "no explicit blocker"
    return [finding("HG639", path, f"unverified checkpoint: {why}", line=fields["verification"].line)]


# -- the format ------------------------------------------------------------------------


def lint(path: str, data: bytes, ctx: Context) -> list[Finding]:
    kind = kind_of(path)
    if kind == "events":
        return lint_events(path, data)
    if kind == "team":
        return capped(path, lint_team(path, data), MAX_FINDINGS)
    if kind == "state":
        return capped(path, lint_state(path, data), MAX_FINDINGS)
    if kind == "requirements":
        return capped(path, lint_requirements(path, data), MAX_FINDINGS)
    return []


def gate(path: str, old: bytes | None, new: bytes | None, ctx: Context) -> list[Finding]:
    return gate_events(path, old, new) if kind_of(path) == "events" else []


def status(path: str, data: bytes, ctx: Context) -> list[str]:
    """The counts the original harness's report names: events by `evidence_kind`, `malformed_count`."""
    if kind_of(path) != "events":
        return []
    counts = dict.fromkeys(KINDS, 0)
    malformed = 0
    for _, raw in _event_lines(data):
        event, _ = _event(raw)
        if event is None:
            malformed += 1
        elif event.get("evidence_kind", "unknown") in counts:
            counts[event.get("evidence_kind", "unknown")] += 1
    kinds = ", ".join(f"{k} {v}" for k, v in counts.items())
    return [f"events: {sum(counts.values())} ({kinds})", f"malformed_count: {malformed}"]


FORMAT = Format("runtime", "agent runtime", lint, gate, status)
