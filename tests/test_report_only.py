"""Report-only (roll-out) mode: `check` reports everything it would block, says "would
block" in every output, and exits 0; an error still exits 2 (docs/config.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_gate import github, schema
from harness_gate.errors import HarnessGateError
from harness_gate.findings import finding
from harness_gate.report import Report
from tests.adversarial.util import BOUNDARY_ONLY, commit, setup_gated
from tests.helpers import Repo

REPORT_ONLY = BOUNDARY_ONLY + "report_only = true\n"
CI = ("check", "--base", "main", "--head", "HEAD", "--stage", "ci")


@pytest.fixture
def violating(repo: Repo) -> Repo:
    """report_only on main; a branch `pr` that writes outside its plan's boundary."""
    setup_gated(repo, config=REPORT_ONLY)
    repo.git("checkout", "-qb", "pr")
    repo.write("other.py", "x = 2\n")
    commit(repo, "outside the boundary")
    return repo


@pytest.mark.slow
def test_ci_reports_what_it_would_block_and_exits_0(violating: Repo) -> None:
    res = violating.cli(*CI, "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == 0
    assert (doc["result"], doc["exit_code"], doc["data"]["report_only"]) == ("would-block", 0, True)
    assert ("HG101", "other.py", "error") in {(f["code"], f["path"], f["severity"]) for f in doc["findings"]}
    assert schema.errors("report", doc) == []


@pytest.mark.slow
def test_the_text_says_would_block(violating: Repo) -> None:
    res = violating.cli(*CI)
    assert res.exit_code == 0
    assert "HG101" in res.output
    assert "harness-gate check: would block (1 finding that would block; report-only mode" in res.output


@pytest.mark.slow
def test_the_hook_lets_the_commit_through_and_says_so(violating: Repo) -> None:
    violating.write("other.py", "x = 3\n")
    violating.git("add", "-A")
    res = violating.run("check", "--stage", "pre-commit", "--staged")
    assert res.returncode == 0, res.stdout
    assert b"would block" in res.stdout and b"HG101" in res.stdout


@pytest.mark.slow
def test_the_actions_outputs_and_summary_say_would_block(
    violating: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("RUNNER_TEMP", str(tmp_path))
    res = violating.cli(*CI, "--format", "github")
    assert res.exit_code == 0
    assert "::error file=other.py" in res.output  # the annotations are what would block
    assert res.output.rstrip().endswith(")") and "harness-gate: would block (1 finding that would block" in res.output
    assert summary.read_text().startswith("## 🟡 harness-gate: would block\n")
    assert "**Would block**" in summary.read_text()
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert (outputs["result"], outputs["violations"]) == ("would-block", "1")


@pytest.mark.slow
def test_a_passing_check_in_report_only_mode_passes(repo: Repo) -> None:
    setup_gated(repo, config=REPORT_ONLY)
    repo.git("checkout", "-qb", "pr")
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "inside")
    doc = json.loads(repo.cli(*CI, "--format", "json").output)
    assert (doc["result"], doc["exit_code"]) == ("pass", 0)


def test_an_error_still_exits_2() -> None:
    """Nothing was judged: report-only has nothing to report, and a green run would hide a
    roll-out that is not running (a shallow clone, a base that does not resolve)."""
    f = finding("HG101", "x", "outside")
    errored = Report("check", (f,), error=HarnessGateError("HG905", "not enough history"), report_only=True)
    assert (errored.exit_code, errored.result) == (2, "error")
    assert (Report("check", (f,), report_only=True).exit_code, Report("check", (f,)).exit_code) == (0, 1)


def test_github_final_line_without_a_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    f = finding("HG101", "x", "outside")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    line = github.final_line(Report("check", (f,), report_only=True))
    assert line.startswith("harness-gate: would block (1 finding that would block; report-only mode")
