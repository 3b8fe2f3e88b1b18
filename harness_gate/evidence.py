"""Verification evidence (`evidence.jsonl`): records, the policy hash and freshness.

Evidence is fresh for a state when, for every required command of the effective
policy, the newest record for it names the plan whose log holds it, matches the state's
tree fingerprint, the plan hash and the policy hash, and says PASS. Reading the newest
records walks the log from its end, so a long log costs no more than a short one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_gate import jsonstrict, schema
from harness_gate.findings import Finding, finding

SCHEMA_ID = "harness-gate.evidence/v2"
# v1 records name no plan: still valid lines (reviews cite them), never fresh for a plan.
SCHEMA_V1 = "harness-gate.evidence/v1"
KEY_ORDER = [
    "schema", "command_id", "command", "exit_code", "status", "key_output", "timestamp", "duration_ms", "tree",
    "plan", "plan_sha256", "policy",
]  # fmt: skip
KEY_ORDER_V1 = [k for k in KEY_ORDER if k != "plan"]
KEY_OUTPUT_CHARS = 4000
ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


@dataclass(frozen=True)
class Record:
    command_id: str
    command: str
    exit_code: int | None
    status: str
    key_output: str
    timestamp: str
    duration_ms: int
    tree: str
    plan: str | None  # the id of the plan it was recorded for; None in a v1 record
    plan_sha256: str
    policy: str
    line: int  # 1-based; 0 when unknown (a log on disk read from its end)
    sha256: str  # of the line's bytes: what reviews and completions cite


def policy_hash(verification: Mapping[str, Any]) -> str:
    """sha256 of the effective verification policy, canonically encoded."""
    canonical = jsonstrict.dumps_canonical(_sorted(verification))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def clean_output(text: str) -> str:
    """The tail of a command's output, safe to store and to show: colour codes and
    control characters removed, newlines and tabs kept, capped."""
    text = _ANSI.sub("", text.replace("\r\n", "\n"))
    return jsonstrict.UNSAFE_TEXT_CHARS.sub("\ufffd", text)[-KEY_OUTPUT_CHARS:]


def record_line(  # noqa: PLR0913  (one keyword per field written)
    *,
    command_id: str,
    command: str,
    exit_code: int | None,
    status: str,
    key_output: str,
    duration_ms: int,
    tree: str,
    plan: str,
    plan_sha256: str,
    policy: str,
    now: dt.datetime | None = None,
) -> str:
    when = (now or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    obj = {
        "schema": SCHEMA_ID,
        "command_id": command_id,
        "command": command,
        "exit_code": exit_code,
        "status": status,
        "key_output": clean_output(key_output),
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "duration_ms": duration_ms,
        "tree": tree,
        "plan": plan,
        "plan_sha256": plan_sha256,
        "policy": policy,
    }
    line = jsonstrict.dumps_canonical(obj)
    rec, why = parse_line(line.encode("utf-8"), 0)
    if rec is None:  # the writer obeys the reader's rules, or writes nothing
        raise ValueError(why)
    return line + "\n"


def parse_line(raw: bytes, number: int) -> tuple[Record | None, str]:  # noqa: PLR0911  (one return per case, in the order they are judged)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    try:
        obj = jsonstrict.loads_object(text, text_ok=True)
    except jsonstrict.StrictJSONError as exc:
        return None, f"invalid JSON: {exc}"
    if obj.get("schema") not in (SCHEMA_ID, SCHEMA_V1):
        return None, f"unknown schema {str(obj.get('schema'))[:60]!r} (expected {SCHEMA_ID})"
    problems = schema.errors("evidence", obj)
    if problems:
        return None, problems[0]
    if obj["status"] == "PASS" and obj["exit_code"] != 0:
        return None, "status PASS with a non-zero exit code"
    if obj["status"] == "TIMEOUT" and obj["exit_code"] is not None:
        return None, "status TIMEOUT carries no exit code"
    if obj["status"] == "FAIL" and obj["exit_code"] in (0, None):
        # docs/evidence.md: FAIL is "any other exit code" than PASS's 0; the writer
        # records a tree-changing command that exited 0 as FAIL with exit code 1.
        return None, "status FAIL needs a non-zero exit code"
    try:
        # The schema checks the shape only: "2026-13-45T25:61:61Z" is no time at all.
        dt.datetime.strptime(obj["timestamp"], "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None, f"timestamp {obj['timestamp']!r} is not a real UTC time"
    order = KEY_ORDER if obj["schema"] == SCHEMA_ID else KEY_ORDER_V1
    if list(obj) != order or jsonstrict.dumps_canonical(obj) != text:
        return None, "not in canonical form (extra characters, spacing or key order)"
    fields: dict[str, Any] = {k: obj.get(k) for k in KEY_ORDER[1:]}  # `plan` None in v1
    return Record(**fields, line=number, sha256=hashlib.sha256(raw).hexdigest()), ""


def _lines_from_end(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(offset, line) from the last line backwards, without splitting the whole log."""
    if not data:
        return
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    while True:
        start = data.rfind(b"\n", 0, end) + 1
        yield start, data[start:end]
        if start == 0:
            # The first line too, even when it is empty (`end` > 0 stopped before it).
            return
        end = start - 1


def newest(path: str, data: bytes, wanted: Sequence[str]) -> tuple[dict[str, Record], list[Finding]]:
    """The newest record of each wanted command id, read from the end of the log.

    A bad line met on the way is a finding: a gate that skipped it could be fooled by
    whatever it hides. Lines older than the newest wanted records are not read here;
    `validate` reads them all, and each commit's appended lines are validated when they
    are committed.
    """
    truncated = bool(data) and not data.endswith(b"\n")

    def count() -> int:  # one memchr pass over bytes already in memory
        return data.count(b"\n") + truncated

    return _newest_of(path, (raw for _, raw in _lines_from_end(data)), wanted, truncated=truncated, count=count)


def _newest_of(
    path: str,
    lines: Iterator[bytes],
    wanted: Sequence[str],
    *,
    truncated: bool,
    count: Callable[[], int] | None = None,
) -> tuple[dict[str, Record], list[Finding]]:
    """Walk lines newest first until every wanted id is found; bad lines met are findings.

    `count` (the log's number of lines) turns a line's place from the end into its number,
    asked once, after the walk; without it records and findings carry no line."""
    found: dict[str, Record] = {}
    problems: list[tuple[int, str]] = []  # (place from the end, why)
    if truncated:
        problems.append((0, "the last record is truncated (no final newline)"))
    todo = set(wanted)
    for back, raw in enumerate(lines):
        if not todo:
            break
        rec, why = parse_line(raw, back)
        if rec is None:
            problems.append((back, why))
            continue
        if rec.command_id in todo:
            found[rec.command_id] = rec
            todo.discard(rec.command_id)
    total = count() if count is not None and (found or problems) else None

    def number(back: int) -> int:
        return total - back if total is not None else 0

    records = {k: dataclasses.replace(r, line=number(r.line)) for k, r in found.items()}
    return records, [finding("HG307", path, why, line=number(back) or None) for back, why in problems]


def lines_from_file_end(path: Path, chunk: int = 1 << 16) -> Iterator[bytes]:
    """The lines of a file, last first, read backwards in chunks: the newest records of
    a long log cost what the newest records cost, not what the log costs."""
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        pos = fh.tell()
        rest = b""
        first = True
        while pos > 0:
            step = min(chunk, pos)
            pos -= step
            fh.seek(pos)
            block = fh.read(step) + rest
            lines = block.split(b"\n")
            rest = lines.pop(0)
            if first:
                first = False
                if lines and lines[-1] == b"":
                    lines.pop()
            yield from reversed(lines)
        if not first:  # the first line of a non-empty file, even when it is empty
            yield rest


def ends_with_newline(path: Path) -> bool:
    """True for an empty file too: nothing is truncated there."""
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def newest_in_file(rel: str, path: Path, wanted: Sequence[str]) -> tuple[dict[str, Record], list[Finding]]:
    """`newest` for a log on disk, read from its end (its records carry no line number:
    counting them would read the whole log)."""
    return _newest_of(rel, lines_from_file_end(path), wanted, truncated=not ends_with_newline(path))


def _validate_lines(rel: str, lines: Iterable[bytes], first_line: int) -> list[Finding]:
    """Each line (with its newline, when it has one) must be a valid record."""
    problems: list[Finding] = []
    for n, raw in enumerate(lines, start=first_line):
        if not raw.endswith(b"\n"):
            problems.append(finding("HG307", rel, "the last record is truncated (no final newline)", line=n))
        rec, why = parse_line(raw.removesuffix(b"\n"), n)
        if rec is None:
            problems.append(finding("HG307", rel, why, line=n))
    return problems


def validate(path: str, data: bytes, *, first_line: int = 1) -> list[Finding]:
    """Every line of (a part of) the log must be a valid record."""
    parts = data.split(b"\n")
    tail = parts.pop()  # empty when the data ends with a newline
    lines = [part + b"\n" for part in parts] + ([tail] if tail else [])
    return _validate_lines(path, lines, first_line)


def validate_file(rel: str, path: Path) -> list[Finding]:
    """`validate` for a log on disk, a line at a time."""
    with path.open("rb") as fh:
        return _validate_lines(rel, fh, 1)


@dataclass(frozen=True)
class Freshness:
    command_id: str
    # "fresh", "missing", "other-plan", "tree-moved", "plan-changed", "command-drift", "failed", "timeout"
    reason: str
    record: Record | None
    detail: str = ""

    @property
    def fresh(self) -> bool:
        return self.reason == "fresh"


REASON_CODES = {
    "missing": "HG301",
    "other-plan": "HG320",
    "tree-moved": "HG302",
    "plan-changed": "HG303",
    "command-drift": "HG304",
    "failed": "HG305",
    "timeout": "HG306",
}


def failure_code(status: str) -> str:
    """The code of a run that did not pass: HG305 when it failed, HG306 when it timed out."""
    return REASON_CODES["failed" if status == "FAIL" else "timeout"]


def freshness(  # noqa: PLR0913  (the facts it works from; a bundle of them would be a type used once)
    records: Mapping[str, Record],
    commands: Sequence[Mapping[str, Any]],
    *,
    tree: str,
    plan: str,
    plan_sha256: str,
    policy: str,
) -> list[Freshness]:
    """`plan`: the id of the plan whose log holds the records. A record speaks of one plan:
    copied into another plan's log (even one whose plan.md has the same bytes) it is not
    that plan's evidence; a v1 record names no plan, so it is no plan's."""
    out = []
    for cmd in commands:
        rec = records.get(cmd["id"])
        if rec is None:
            out.append(Freshness(cmd["id"], "missing", None))
        elif rec.plan != plan:
            why = f"recorded for plan `{rec.plan}`" if rec.plan is not None else f"a {SCHEMA_V1} record names no plan"
            out.append(Freshness(cmd["id"], "other-plan", rec, why))
        elif rec.command != cmd["command"] or rec.policy != policy:
            out.append(Freshness(cmd["id"], "command-drift", rec, f"recorded `{rec.command}`"))
        elif rec.plan_sha256 != plan_sha256:
            out.append(Freshness(cmd["id"], "plan-changed", rec))
        elif rec.tree != tree:
            out.append(Freshness(cmd["id"], "tree-moved", rec))
        elif rec.status == "FAIL":
            out.append(Freshness(cmd["id"], "failed", rec, f"exit code {rec.exit_code}"))
        elif rec.status == "TIMEOUT":
            out.append(Freshness(cmd["id"], "timeout", rec))
        else:
            out.append(Freshness(cmd["id"], "fresh", rec))
    return out
