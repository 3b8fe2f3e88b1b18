"""A Plan Amendment's policy arithmetic: the plan's effective policy (lifecycle.Policy)
with patterns and required commands added and removed, the objective replaced, and the
deltas an amendment marks (docs/lifecycle.md). What cannot be applied (a pattern or a
command that is not there to remove, a command required twice, nothing changed) is a
usage error: nothing is written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness_gate.errors import usage
from harness_gate.lifecycle import Policy


@dataclass(frozen=True)
class Change:
    """What `plan amend` asks of the policy in force."""

    objective: str | None = None
    add_boundary: Sequence[str] = ()
    remove_boundary: Sequence[str] = ()
    add_verify: Sequence[str] = ()  # ID=COMMAND, as `--add-verify` takes it
    remove_verify: Sequence[str] = ()
    timeout: int = 0  # of each added command
    why: str | None = None


@dataclass(frozen=True)
class Amended:
    """The policy after the change, and each delta: material or not, and its summary."""

    objective: str
    boundary: list[str]
    commands: list[dict[str, Any]]
    deltas: dict[str, dict[str, Any]]


def verify_command(spec: str, timeout: int) -> dict[str, Any]:
    """A required command from `ID=COMMAND`."""
    ident, sep, command = spec.partition("=")
    if not sep or not ident or not command.strip():
        raise usage(f"--verify {spec!r}: expected ID=COMMAND", "e.g. --verify 'tests=pytest -q'")
    return {"id": ident, "command": command, "timeout_seconds": timeout}


def amend(policy: Policy, objective: str, change: Change) -> Amended:
    """`policy` (whose plan or amendment states `objective`) with `change` applied."""
    boundary = [p for p in policy.boundary if p not in change.remove_boundary]
    unknown = [p for p in change.remove_boundary if p not in policy.boundary]
    if unknown:
        raise usage(
            f"--remove-boundary {unknown[0]!r} is not in the boundary ({', '.join(policy.boundary) or 'None'})",
            "Name a pattern exactly as the boundary lists it.",
        )
    boundary += [p for p in dict.fromkeys(change.add_boundary) if p not in boundary]
    current = list(policy.verification["required_commands"])
    ids = {c["id"] for c in current}
    gone = [i for i in change.remove_verify if i not in ids]
    if gone:
        raise usage(f"--remove-verify {gone[0]!r} is not a required command ({', '.join(sorted(ids))})")
    commands = [c for c in current if c["id"] not in change.remove_verify]
    for spec in change.add_verify:
        added = verify_command(spec, change.timeout)
        if added["id"] in {c["id"] for c in commands}:
            raise usage(f"--add-verify {spec!r}: `{added['id']}` is already required", "Remove it first to change it.")
        commands.append(added)
    new_objective = change.objective if change.objective is not None else objective
    why = change.why
    deltas = {
        # The old objective in the summary: approve shows the deltas, so a human sees both.
        "objective": _delta(new_objective != objective, f"{why + ' ' if why else ''}(was: {objective})"),
        "acceptance_criteria": _delta(False, ""),
        "scope": _delta(False, ""),
        "write_boundary": _delta(
            boundary != list(policy.boundary), _summary(change.add_boundary, change.remove_boundary)
        ),
        "verification": _delta(
            commands != current,
            _summary([a.partition("=")[0] for a in change.add_verify], change.remove_verify),
        ),
        "risk": _delta(False, ""),
    }
    if not any(d["material"] for d in deltas.values()):
        raise usage(
            "nothing to amend", "Give --objective, --add-boundary, --remove-boundary, --add-verify or --remove-verify."
        )
    return Amended(new_objective, boundary, commands, deltas)


def _delta(changed: bool, summary: str) -> dict[str, Any]:
    return {"material": changed, "summary": summary if changed else "Unchanged."}


def _summary(added: Sequence[str], removed: Sequence[str]) -> str:
    parts = [f"adds {', '.join(added)}" if added else "", f"removes {', '.join(removed)}" if removed else ""]
    return "; ".join(p for p in parts if p)
