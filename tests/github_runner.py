"""Running action.yml's steps as GitHub's runner does, for the tests that need the Action.

Each `run:` step is executed with `bash --noprofile --norc -eo pipefail`, its `env:` and
`working-directory:` evaluated from the inputs, and the runner's variables set
(GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP,
GITHUB_ACTION_PATH). The install step really installs this checkout into a venv, once per
test run (`action_venv`, shared by pytest-xdist's workers); every run after that finds the
venv where the step leaves it and runs that installed copy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import built_once

PROJECT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((PROJECT / "action.yml").read_text())
EXPR = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


@dataclass
class Outcome:
    code: int
    stdout: str
    outputs: dict[str, str]
    summary: str


INSTALL = "Install harness-gate"
VENV = "harness-gate-venv"  # where the install step leaves the venv, under RUNNER_TEMP


@pytest.fixture(scope="session")
def action_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """action.yml's install step, run through bash as the runner would, once per test run."""
    [step] = [s for s in ACTION["runs"]["steps"] if s["name"] == INSTALL]

    def install(temp: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
        env.update(
            {
                "RUNNER_TEMP": str(temp),
                "GITHUB_ACTION_PATH": str(PROJECT),
                "HG_PYTHON": sys.executable,
                "PIP_CACHE_DIR": str(temp / "pip-cache"),
            }
        )
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=temp,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr

    return built_once(tmp_path_factory, "action-venv", install) / VENV


@pytest.fixture
def runner_temp(tmp_path: Path, action_venv: Path) -> Path:
    path = tmp_path / "runner-temp"
    path.mkdir()
    (path / VENV).symlink_to(action_venv)  # what the install step left there
    return path


RUNNER_OS = {"linux": "Linux", "darwin": "macOS"}.get(sys.platform, "Windows")
CONDITION = re.compile(r"^runner\.os == '(\w+)'$")  # the one `if:` form action.yml uses


def runs_on(step: dict[str, Any], runner_os: str) -> bool:
    """Whether the runner runs `step` on a `runner_os` runner (its `if:`, if any)."""
    if "if" not in step:
        return True
    m = CONDITION.match(step["if"].strip())
    assert m is not None, f"unexpected condition {step['if']!r}"
    return m.group(1) == runner_os


def run_action(
    repo: Path,
    runner_temp: Path,
    event: str,
    payload: dict[str, Any],
    runner_os: str = RUNNER_OS,
    github: dict[str, str] | None = None,
    **inputs: str,
) -> Outcome:
    """`github`: the `github` context's values the action reads (`action_repository`,
    `action_ref`, `server_url`); by default those of `uses: ./`, which has no repository
    or ref."""
    work = runner_temp / f"step-{os.urandom(4).hex()}"
    work.mkdir()
    event_path = work / "event.json"
    event_path.write_text(json.dumps(payload))
    output, summary = work / "output", work / "summary"
    output.touch()
    summary.touch()
    values = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values.update({k.replace("_", "-"): v for k, v in inputs.items()})
    outputs: dict[str, str] = {}
    context = {"action_repository": "", "action_ref": "", "server_url": "https://github.com", **(github or {})}

    def evaluate(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            expr = m.group(1)
            if expr.startswith("inputs."):
                return values[expr[len("inputs.") :]]
            if expr == "github.action_path":
                return str(PROJECT)
            if expr in ("github.action_repository", "github.action_ref", "github.server_url"):
                return context[expr[len("github.") :]]
            if expr.startswith("steps."):
                return ""
            raise AssertionError(f"unexpected expression {expr}")

        return EXPR.sub(one, text)

    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    base_env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": event,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(runner_temp),
            "GITHUB_ACTION_PATH": str(PROJECT),
            "GITHUB_WORKSPACE": str(repo),
        }
    )
    stdout = ""
    code = 0
    for step in ACTION["runs"]["steps"]:
        if not runs_on(step, runner_os):
            continue
        if step["name"] == INSTALL and (runner_temp / VENV).exists():
            continue  # installed once for the session (action_venv)
        env = {**base_env, **{k: evaluate(str(v)) for k, v in step.get("env", {}).items()}}
        cwd = repo / evaluate(step.get("working-directory", "."))
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        stdout += proc.stdout
        code = proc.returncode
        assert "Traceback" not in proc.stderr, proc.stderr
        if code != 0:
            break
    for line in output.read_text().splitlines():
        key, _, value = line.partition("=")
        outputs[key] = value
    return Outcome(code, stdout, outputs, summary.read_text())
