"""Approval records (`approvals.jsonl`) and the exact `y` gate (docs/artifacts.md).

A record names what it approves and where: the plan id, the artifact's file name and
sha256, a sequence number and the repository (its root commit). A record copied into
another plan folder, another repository, or re-appended to roll an artifact back to
older bytes grants nothing (docs/threat-model.md).
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_gate import artifacts_root, jsonstrict, schema
from harness_gate.artifacts.kinds import REPAIR_PLAN
from harness_gate.errors import Refused
from harness_gate.findings import Finding, Severity, finding

if TYPE_CHECKING:
    from harness_gate.artifacts.artifact import Artifact

SCHEMA_ID = "harness-gate.approval/v2"
OLD_SCHEMAS = ("harness-gate.approval/v1",)
_OLD_SCHEMA = re.compile(rb'\A\{"schema":"harness-gate\.approval/v1"')
# The only byte strings that approve: the token `y`, plus at most one LF or CRLF.
APPROVING_ANSWERS = (b"y", b"y\n", b"y\r\n")
MAX_ANSWER_BYTES = 16
MAX_LOG_BYTES = 16 * 1024 * 1024  # tens of thousands of approvals: far beyond any real plan


def not_approvable(art: Artifact) -> Finding | None:
    """Why `art` takes no approval at all (HG208), or None when its kind has an approval gate.
    A Repair Plan is named apart: it is a strict/manual compatibility artifact, and a `y`
    to it would seem to grant what nothing reads."""
    if art.kind is REPAIR_PLAN:
        why = "a Repair Plan is strict/manual compatibility only: approving it grants and records nothing"
        return finding("HG208", art.path, why)
    if not art.kind.approval_gate:
        return finding("HG208", art.path, f"a `# {art.kind.title}` takes no approval")
    return None


def require_yes(raw: bytes, path: str) -> None:
    """Refuse (HG208) any answer but the exact `y` (answer_approves)."""
    if not answer_approves(raw):
        shown = raw.decode("utf-8", "backslashreplace")[:MAX_ANSWER_BYTES]
        raise Refused("HG208", path, f"answer {shown!r} is not exactly `y`; nothing was written")


def answer_approves(raw: bytes) -> bool:
    return raw in APPROVING_ANSWERS


@dataclass(frozen=True)
class Approval:
    seq: int
    plan: str
    gate: str  # the approval gate it answers (`plan`, `amendment`, `repair_resume`): the JSONL field
    artifact: str
    sha256: str
    approver: str
    approved_at: str
    repository: str | None  # the root commit of the history it was given in; None before the first commit
    line: int
    # Who signed the commit that added the record, where commits are judged and a rule
    # asks (trust.Anchors): the principal allowed_signers names and the key's fingerprint;
    # "" when unsigned, unverified, or not asked.
    signer: str = ""
    key: str = ""


class Status(enum.Enum):
    APPROVED = "approved"
    STALE = "stale"  # approved once, but at other bytes
    ROLLED_BACK = "rolled_back"  # these bytes were approved, but a newer approval replaced them
    UNAPPROVED = "unapproved"


def valid_approver(approver: str) -> bool:
    """Whether `approver` can be written into a record the parser will accept."""
    line = record_unchecked("plan", artifacts_root.PLAN, "0" * 64, approver, plan="p", seq=1, repository=None)
    return _parse_line(line[:-1].encode())[0] is not None


def record_unchecked(  # noqa: PLR0913  (one keyword per field written)
    approval_gate: str,
    artifact: str,
    sha256: str,
    approver: str,
    *,
    plan: str,
    seq: int,
    repository: str | None,
    now: dt.datetime | None = None,
) -> str:
    when = (now or dt.datetime.now(dt.timezone.utc)).astimezone(dt.timezone.utc)
    obj: dict[str, Any] = {
        "schema": SCHEMA_ID,
        "seq": seq,
        "plan": plan,
        "gate": approval_gate,
        "artifact": artifact,
        "sha256": sha256,
        "answer": "y",
        "approver": approver,
        "approved_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "repository": repository,
    }
    return jsonstrict.dumps_canonical(obj) + "\n"


def record(  # noqa: PLR0913  (one keyword per field written)
    approval_gate: str,
    artifact: str,
    sha256: str,
    approver: str,
    *,
    plan: str,
    seq: int,
    repository: str | None,
    now: dt.datetime | None = None,
) -> str:
    """The canonical JSONL line (with its LF) for a new approval; the writer and the
    reader are the same rules: a record this returns always parses back."""
    line = record_unchecked(
        approval_gate, artifact, sha256, approver, plan=plan, seq=seq, repository=repository, now=now
    )
    rec, why = _parse_line(line[:-1].encode())
    if rec is None:
        raise ValueError(why)
    return line


def next_seq(approvals: Sequence[Approval]) -> int:
    return max((a.seq for a in approvals), default=0) + 1


def next_record(  # noqa: PLR0913  (one keyword per field written)
    log: str,
    approvals: Sequence[Approval],
    approval_gate: str,
    artifact: str,
    sha256: str,
    *,
    approver: str,
    plan: str,
    repository: str | None,
) -> str:
    """The record that follows `approvals` in the log at `log` (record, numbered next_seq).
    A refusal (HG215) when no number is left: a forged record took the last one, and a
    record numbered below it would read as a replay."""
    try:
        return record(
            approval_gate, artifact, sha256, approver, plan=plan, seq=next_seq(approvals), repository=repository
        )
    except ValueError as exc:
        raise Refused("HG215", log, f"cannot number a record: {exc}") from None


def parse(path: str, data: bytes) -> tuple[list[Approval], list[Finding]]:
    """Every line must be the canonical encoding of a valid record, nothing else; and
    an artifact's records carry rising sequence numbers, so an old record appended
    again (to make older bytes the newest approval) is refused, not obeyed."""
    out: list[Approval] = []
    problems: list[Finding] = []
    last_seq: dict[tuple[str, str], int] = {}
    if len(data) > MAX_LOG_BYTES:
        return [], [finding("HG512", path, f"{len(data)} bytes is over the {MAX_LOG_BYTES} byte cap")]
    # A last line without its newline is unfinished (a torn write): a finding, never a record.
    lines = data.split(b"\n")[:-1]
    if data and not data.endswith(b"\n"):
        problems.append(
            finding("HG204", path, "the last record is not terminated by a newline", line=data.count(b"\n") + 1)
        )
    for n, raw in enumerate(lines, start=1):
        if _OLD_SCHEMA.search(raw[:64]):
            # A record of an earlier harness-gate: it binds no plan, sequence or repository,
            # so it grants nothing; it stays in the append-only log, and a new `approve`
            # appends after it.
            problems.append(
                finding(
                    "HG204",
                    path,
                    "an approval/v1 record grants nothing (it binds no plan, sequence or repository);"
                    " approve the artifact again",
                    line=n,
                    severity=Severity.WARNING,
                )
            )
            continue
        rec, why = _parse_line(raw)
        if rec is None:
            problems.append(finding("HG204", path, why, line=n))
            continue
        approval = Approval(
            rec["seq"],
            rec["plan"],
            rec["gate"],
            rec["artifact"],
            rec["sha256"],
            rec["approver"],
            rec["approved_at"],
            rec["repository"],
            n,
        )
        last = last_seq.get((approval.gate, approval.artifact), 0)
        if approval.seq <= last:
            problems.append(
                finding(
                    "HG215",
                    path,
                    f"seq {approval.seq} is not above {last}, the previous record's for {approval.artifact}:"
                    " a replayed or reordered approval grants nothing",
                    line=n,
                )
            )
            continue
        last_seq[(approval.gate, approval.artifact)] = approval.seq
        out.append(approval)
    return out, problems


def _parse_line(raw: bytes) -> tuple[dict[str, Any] | None, str]:  # noqa: PLR0911  (one return per case, in the order they are judged)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not valid UTF-8"
    try:
        obj = jsonstrict.loads_object(text)
    except jsonstrict.StrictJSONError as exc:
        return None, f"invalid JSON: {exc}"
    if obj.get("schema") in OLD_SCHEMAS:
        return None, f"{obj['schema']} records bind no plan, sequence or repository; approve again"
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


_KEY_ORDER = ["schema", "seq", "plan", "gate", "artifact", "sha256", "answer", "approver", "approved_at", "repository"]


def status(approvals: Sequence[Approval], approval_gate: str, artifact: str, sha256: str) -> Status:
    """The newest record for the artifact decides: going back to bytes an older record
    approved is a rollback, not an approval (re-approve them to mean it)."""
    mine = [a for a in approvals if a.artifact == artifact and a.gate == approval_gate]
    if not mine:
        return Status.UNAPPROVED
    if max(mine, key=lambda a: a.seq).sha256 == sha256:
        return Status.APPROVED
    return Status.ROLLED_BACK if any(a.sha256 == sha256 for a in mine) else Status.STALE


# What the coding agents set in the environment of the commands their tools run: Claude Code
# `CLAUDECODE=1` (and `CLAUDE_CODE_ENTRYPOINT`); Codex `CODEX_THREAD_ID` and, under its
# sandbox, `CODEX_SANDBOX_NETWORK_DISABLED` (Linux) or `CODEX_SANDBOX` (macOS); Gemini CLI
# `GEMINI_CLI=1`; `AI_AGENT`, a convention some others follow. Any of them, set to anything
# but the empty string, means a tool call.
AGENT_MARKERS = (
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CODEX_THREAD_ID",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_SANDBOX",
    "GEMINI_CLI",
    "AI_AGENT",
)


def agent_marker(env: Mapping[str, str]) -> str | None:
    """The first agent marker set in `env`, or None."""
    return next((name for name in AGENT_MARKERS if env.get(name)), None)


def refuse_inside_agent(env: Mapping[str, str]) -> None:
    """HG908 (exit 2) when `env` is a coding agent's tool call: an approval is a human's."""
    marker = agent_marker(env)
    if marker is not None:
        from harness_gate.errors import HarnessGateError  # noqa: PLC0415

        raise HarnessGateError("HG908", f"`approve` runs inside a coding agent's tool call ({marker} is set)")
