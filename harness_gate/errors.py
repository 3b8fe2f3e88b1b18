"""Errors that stop a command (exit 2), and refusals (exit 1). Per-file problems are findings."""

from __future__ import annotations


class HarnessGateError(Exception):
    """A usage, configuration, environment or git error: the command cannot decide."""

    def __init__(self, code: str, message: str, hint: str = "") -> None:
        from harness_gate.findings import RULES  # noqa: PLC0415  (keeps this module import-light)

        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint or (RULES[code].hint if code in RULES else "")


class Refused(HarnessGateError):
    """An authoring command that cannot do what was asked in the plan's current state (no
    plan, a precondition not met): it writes nothing and reports one finding, exit 1. Usage,
    configuration, git and internal errors stay HarnessGateError, exit 2."""

    def __init__(self, code: str, path: str, message: str, hint: str = "") -> None:
        super().__init__(code, message, hint)
        self.path = path


class GitError(HarnessGateError):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__("HG903", message, hint)


class ConfigError(HarnessGateError):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__("HG902", message, hint)
