"""`harness-gate doctor`: is each runtime's agent hook live in this clone (harness_gate/doctor.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness_gate import doctor, git, hooks
from harness_gate.findings import Finding
from harness_gate.report import Report

_CHECKS = {"claude": doctor.claude, "codex": doctor.codex, "gemini": doctor.gemini}


def set_up(root: Path) -> list[str]:
    """The runtimes whose project settings run the agent hook (what `init --agent` wrote)."""
    found = []
    for runtime, rel in hooks.AGENT_SETTINGS.items():
        try:
            doc = doctor.read_json(root / rel)
        except doctor.Unreadable:
            found.append(runtime)  # its check says why it cannot be read
            continue
        if doctor.runs(doc, hooks.agent_command(runtime)):
            found.append(runtime)
    return found


def doctor_report(cwd: Path, runtimes: Sequence[str] = (), homes: doctor.Homes | None = None) -> Report:
    root = git.toplevel(cwd)
    homes = homes or doctor.Homes.from_environment()
    chosen = list(runtimes) or set_up(root)
    if not chosen:
        return Report(
            "doctor",
            data={"runtimes": {}},
            lines=("no agent hook is set up in this repository (`harness-gate init --agent claude|codex|gemini`)",),
        )
    lines: list[str] = []
    findings: list[Finding] = []
    data: dict[str, object] = {}
    for runtime in chosen:
        rel = hooks.AGENT_SETTINGS[runtime]
        command = hooks.agent_command(runtime)
        result = _CHECKS[runtime](root, homes, hooks.AGENT_EVENTS[runtime], command, rel)
        findings += result.findings
        data[runtime] = result.as_data()
        warned = any(not f.blocks for f in result.findings)
        state = "live" if result.live else "NOT live"
        lines.append(f"{runtime}: the hook in {rel} is {state} in this clone" + (" (with warnings)" if warned else ""))
        lines += [f"  {line}" for line in result.advice]
    return Report("doctor", findings=tuple(findings), data={"runtimes": data}, lines=tuple(lines))
