"""Errors that stop a command (exit 2), and refusals (exit 1). Per-file problems are findings.

The refusal contract (docs/design.md, "Commands and refusals"): an authoring command that
cannot do what was asked raises before it writes anything. A usage error (what was
asked is wrong: an argument that names nothing there, or an option that cannot be right)
is `usage(...)`, HG904, exit 2; a precondition the repository does not meet yet is
`Refused`, its findings, exit 1. Rule codes are raised by domain modules, never from a
command module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness_gate.findings import Finding


class HarnessGateError(Exception):
    """A usage, configuration, environment or git error: the command cannot decide."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        from harness_gate.findings import RULES  # noqa: PLC0415  (keeps this module import-light)

        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint or (RULES[code].hint if code in RULES else "")


def usage(message: str, hint: str = "") -> HarnessGateError:
    """A usage error (HG904, exit 2): what was asked is wrong, and the fix is another command
    line: an argument that names nothing there (a plan, an artifact, a command id or a
    pattern the repository does not hold, or an id it already holds for `plan new`), or an
    option that cannot be right whatever the repository holds."""
    return HarnessGateError("HG904", message, hint)


def not_enough_history(message: str) -> HarnessGateError:
    """HG905, exit 2: a shallow clone lacks the history the command must read."""
    return HarnessGateError("HG905", message)


def nothing_to_judge_in_ci() -> HarnessGateError:
    """HG950, exit 2: `check --staged` in CI with nothing staged (a fresh clone: pre-commit.ci,
    `pre-commit run --all-files`), where "Passed" would say nothing about the branch."""
    return HarnessGateError(
        "HG950",
        "CI with nothing staged: the index of a fresh clone holds no change to judge; "
        "the GitHub Action judges the branch's commits (docs/action.md)",
    )


def unsafe_agent_settings(message: str) -> HarnessGateError:
    """HG910, exit 2: a coding agent's local settings hold keys that switch its hooks off or
    run commands of their own, so no sandbox rules are written beside them (docs/agents.md)."""
    return HarnessGateError("HG910", message)


class Refused(HarnessGateError):
    """An authoring command that cannot do what was asked in the plan's current state (no
    plan, a precondition not met): it writes nothing and reports its findings, exit 1 (one
    finding, or with `Refused.by` the findings that stand in the way and a note). Usage,
    configuration, git and internal errors stay HarnessGateError, exit 2."""

    def __init__(self, code: str, path: str, message: str, hint: str = "") -> None:
        super().__init__(code, message, hint)
        self.path = path
        self.found: tuple[Finding, ...] = ()
        self.note = ""

    @classmethod
    def by(cls, found: Sequence[Finding], note: str = "") -> Refused:
        """A refusal that reports the findings in the way (at least one), and a note."""
        first = found[0]
        refused = cls(first.code, first.path, first.message, first.hint)
        refused.found = tuple(found)
        refused.note = note
        return refused

    def findings(self) -> tuple[Finding, ...]:
        from harness_gate.findings import finding  # noqa: PLC0415

        return self.found or (finding(self.code, self.path, self.message, hint=self.hint or None),)


class GitError(HarnessGateError):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__("HG903", message, hint)


class ConfigError(HarnessGateError):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__("HG902", message, hint)
