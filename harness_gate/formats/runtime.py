"""The `runtime` format: the MyCodexEnv harness runtime (docs/formats/runtime.md).

Four kinds of file, told apart by name so that `[formats.runtime] paths` may move them:

* `*.jsonl`            evidence events (the runtime's "Evidence Contract");
* `*.json`             agent-team plans, `agents[]` (the runtime's "Subagent Contract"; runtime_team.py);
* `harness-state.md`   the state log and its checkpoint entries (the runtime's "Checkpoint Contract");
* any other `*.md`     requirements artifacts (the runtime's "Workflow Contract", `## Task Demand (D_task)`).

Every rule here quotes the runtime's own contracts; what they leave open is left alone.
"Its specification" below is the runtime's, which is not part of this repository;
docs/formats/runtime.md quotes the passage each rule enforces and names its contract.
"""

from __future__ import annotations

import datetime
import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from harness_gate.findings import Finding, finding
from harness_gate.formats import Context, Format, capped, more_finding, shown
from harness_gate.formats.runtime_team import DEMAND_FIELDS, LEVELS, lint_team

KINDS = ("decision", "routine", "unknown")
STAGES = ("research", "requirements", "planning", "development", "validation", "review", "ship", "handoff")
TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")
SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_FINDINGS = 50  # per file and rule, then one finding counting the rest (as the tasks format)


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
        out.append(finding("HG622", path, f"evidence_kind {shown(event['evidence_kind'])}", line=n))
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
            finding("HG637", path, f"estimated_level {shown(level.value)}: not low, medium or high", line=level.line)
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
        wrong.append(f"phase {shown(phase.value if phase else None)} is not a lifecycle stage")
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
