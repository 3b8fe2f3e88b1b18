"""Approval records (`approvals.jsonl`) and the exact `y` gate (SPEC §4)."""

from __future__ import annotations

import datetime as dt
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness_gate import jsonstrict, schema
from harness_gate.findings import Finding, finding

SCHEMA_ID = "harness-gate.approval/v1"
# The only byte strings that approve: the token `y`, plus at most one LF or CRLF.
APPROVING_ANSWERS = (b"y", b"y\n", b"y\r\n")
MAX_ANSWER_BYTES = 16
MAX_LOG_BYTES = 16 * 1024 * 1024  # tens of thousands of approvals: far beyond any real plan


def answer_approves(raw: bytes) -> bool:
    return raw in APPROVING_ANSWERS


@dataclass(frozen=True)
class Approval:
    gate: str
    artifact: str
    sha256: str
    approver: str
    approved_at: str
    line: int


class Status(enum.Enum):
    APPROVED = "approved"
    STALE = "stale"  # approved once, but at other bytes
    UNAPPROVED = "unapproved"


def valid_approver(approver: str) -> bool:
    """Whether `approver` can be written into a record the parser will accept."""
    return _parse_line(record_unchecked("plan", "plan.md", "0" * 64, approver)[:-1].encode())[0] is not None


def record_unchecked(gate: str, artifact: str, sha256: str, approver: str, now: dt.datetime | None = None) -> str:
    when = (now or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    obj: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "gate": gate,
        "artifact": artifact,
        "sha256": sha256,
        "answer": "y",
        "approver": approver,
        "approved_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return jsonstrict.dumps_canonical(obj) + "\n"


def record(gate: str, artifact: str, sha256: str, approver: str, now: dt.datetime | None = None) -> str:
    """The canonical JSONL line (with its LF) for a new approval; the writer and the
    reader are the same rules: a record this returns always parses back."""
    line = record_unchecked(gate, artifact, sha256, approver, now)
    rec, why = _parse_line(line[:-1].encode())
    if rec is None:
        raise ValueError(why)
    return line


def parse(path: str, data: bytes) -> tuple[list[Approval], list[Finding]]:
    """Every line must be the canonical encoding of a valid record, nothing else."""
    out: list[Approval] = []
    problems: list[Finding] = []
    if len(data) > MAX_LOG_BYTES:
        return [], [finding("HG512", path, f"{len(data)} bytes is over the {MAX_LOG_BYTES} byte cap")]
    if data and not data.endswith(b"\n"):
        problems.append(
            finding("HG204", path, "the last record is not terminated by a newline", line=data.count(b"\n") + 1)
        )
    for n, raw in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), start=1):
        if not data:
            break
        rec, why = _parse_line(raw)
        if rec is None:
            problems.append(finding("HG204", path, why, line=n))
            continue
        out.append(Approval(rec["gate"], rec["artifact"], rec["sha256"], rec["approver"], rec["approved_at"], n))
    return out, problems


def _parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    try:
        obj = jsonstrict.loads_object(text)
    except jsonstrict.StrictJSONError as exc:
        return None, f"invalid JSON: {exc}"
    problems = schema.errors("approval", obj)
    if problems:
        return None, problems[0]
    try:
        dt.datetime.strptime(obj["approved_at"], "%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return None, f"approved_at {obj['approved_at']!r} is not a real UTC time"
    if jsonstrict.dumps_canonical(obj) != text or list(obj) != _KEY_ORDER:
        return None, "not in canonical form (extra characters, spacing or key order)"
    return obj, ""


_KEY_ORDER = ["schema", "gate", "artifact", "sha256", "answer", "approver", "approved_at"]


def status(approvals: Sequence[Approval], gate: str, artifact: str, sha256: str) -> Status:
    mine = [a for a in approvals if a.artifact == artifact and a.gate == gate]
    if any(a.sha256 == sha256 for a in mine):
        return Status.APPROVED
    return Status.STALE if mine else Status.UNAPPROVED
