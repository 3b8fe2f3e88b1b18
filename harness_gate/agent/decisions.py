"""What the agent hook answers, before a runtime's protocol spells it: a decision, a
payload it cannot judge, and the reason that names the findings behind a deny or a block."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the hook's start-up imports no rule: a read-only tool is let through first
    from harness_gate.findings import Finding

AMEND = (
    "To write there, ask for an amendment: `harness-gate plan amend --add-boundary PATTERN`, then a human "
    "approves it (`harness-gate approve`) and the plan folder is committed (the gate reads the index)."
)
_SHOWN = 10  # findings named in one reason


@dataclass(frozen=True)
class Decision:
    kind: str  # "allow", "deny", "ask" (PreToolUse); "block", "note", "none" (Stop)
    reason: str = ""
    # For "ask", what a runtime that cannot ask a human from a hook (Codex) answers instead,
    # and why.
    cannot_ask: str = "deny"
    cannot_ask_reason: str = ""


class Malformed(Exception):
    """The payload is not one this hook understands: denied."""


def refusal(path: str, message: str, code: str = "") -> Finding:
    """A finding of the hook's own. Without a code: where the write would land is refused
    before any rule reads it (the artifacts root, a hard link), and the reason says why."""
    from harness_gate.findings import Finding  # noqa: PLC0415

    return Finding(code, path, None, message, "")


def triples(findings: Sequence[Finding]) -> list[tuple[str, str, str]]:
    """(code, path, message) of each finding: what a reason says of it, and what a Stop
    block remembers (agent_session.digest)."""
    return [(f.code, f.path, f.message) for f in findings]


def deny_reason(tool: str, findings: Sequence[Finding], header: str = "") -> str:
    lines = [header or f"harness-gate denies this {tool}:"]
    lines += [f"- `{f.path}`: {f.message}" + (f" [{f.code}]" if f.code else "") for f in findings[:_SHOWN]]
    if len(findings) > _SHOWN:
        lines.append(f"- and {len(findings) - _SHOWN} more")
    codes = {f.code for f in findings}
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


def error_text(exc: BaseException) -> str:
    from harness_gate.errors import HarnessGateError  # noqa: PLC0415

    if isinstance(exc, HarnessGateError):
        return f"{exc.code} {exc}"
    return f"{type(exc).__name__}: {exc}"
