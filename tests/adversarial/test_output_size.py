"""Output size: one plan with 4,000 paths outside its boundary, in every format.

GitHub refuses a step summary over 1 MiB, shows 10 error and 10 warning annotations per
step, and code scanning refuses more than 25,000 results in a run or a SARIF file over
10 MB. A terminal reader wants the first paths and a count, not 4,000 lines. Every bound
says what it left out.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate import github, prview, sarif
from harness_gate.findings import finding
from harness_gate.report import MESSAGE_CHARS, Report, write_text
from tests.adversarial.util import commit, rev
from tests.helpers import Repo

N = 4000


@pytest.fixture
def flood(gated: Repo) -> tuple[Repo, str]:
    """The gated repository (plan p1 for `src/**`) and a commit adding N files outside it."""
    base = rev(gated, "HEAD")
    for i in range(N):
        gated.write(f"out/d{i // 100:02d}/a-rather-long-file-name-{i:05d}.py", "x\n")
    commit(gated, "4000 files outside the boundary")
    return gated, base


def _run(repo: Repo, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "harness_gate", *args],
        cwd=repo.path,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=120,
    )


@pytest.mark.integration
def test_github_format_bounds_the_summary_and_the_annotations(flood: tuple[Repo, str], tmp_path: Path) -> None:
    repo, base = flood
    step = tmp_path / "summary.md"
    step.write_text("# an earlier step's summary\n" + "x" * 50_000 + "\n")  # counts against the same cap
    temp = tmp_path / "runner"
    temp.mkdir()
    env = {"GITHUB_STEP_SUMMARY": str(step), "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(tmp_path / "out")}
    proc = _run(repo, "check", "--base", base, "--head", "HEAD", "--stage", "ci", "--format", "github", env=env)
    assert proc.returncode == 1, proc.stderr
    size = step.stat().st_size
    assert size <= github.SUMMARY_BYTES, size
    text = step.read_text(encoding="utf-8")
    rows = text.count("| HG101 | <code>out/")
    assert 0 < rows < N
    assert f"| | | | {N - rows} more: the JSON report lists every finding | |" in text
    lines = proc.stdout.decode().splitlines()
    assert sum(line.startswith("::error ") for line in lines) == github.ANNOTATIONS_PER_LEVEL
    notices = [line for line in lines if line.startswith("::notice ")]
    assert len(notices) == 1 and f"{N - github.ANNOTATIONS_PER_LEVEL} blocking" in notices[0]
    # The JSON report keeps every finding.
    outputs = dict(line.split("=", 1) for line in (tmp_path / "out").read_text().splitlines())
    doc = json.loads(Path(outputs["report-path"]).read_text())
    assert sum(f["code"] == "HG101" for f in doc["findings"]) == N


@pytest.mark.integration
def test_text_shows_the_first_paths_then_a_count(flood: tuple[Repo, str]) -> None:
    repo, base = flood
    proc = _run(repo, "check", "--base", base, "--head", "HEAD", "--format", "text")
    assert proc.returncode == 1
    out = proc.stdout.decode().splitlines()
    assert len(out) < 40, len(out)
    assert f"  ... and {N - 20} more HG101 (--format json lists every finding)" in out
    assert out[-1] == f"harness-gate check: blocked ({N} blocking findings)"


def test_sarif_stays_under_code_scanning_limits(flood: tuple[Repo, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """At the real limits the 4,000 results fit; at smaller ones (the same code path as
    25,000 results or 10 MB) the run is cut and a notification counts the rest."""
    repo, base = flood
    res = repo.cli("check", "--base", base, "--head", "HEAD", "--format", "sarif")
    log = json.loads(res.output)
    assert len(log["runs"][0]["results"]) == N
    assert len(res.output.encode()) <= sarif.MAX_BYTES
    for name, value in (("MAX_RESULTS", 1000), ("MAX_BYTES", 1_000_000)):
        with monkeypatch.context() as m:
            m.setattr(sarif, name, value)
            res = repo.cli("check", "--base", base, "--head", "HEAD", "--format", "sarif")
        assert res.exit_code == 1
        run = json.loads(res.output)["runs"][0]
        kept = len(run["results"])
        if name == "MAX_RESULTS":
            assert kept == value
        else:
            assert 0 < kept < N and len(res.output.encode()) <= value
        notes = run["invocations"][0]["toolExecutionNotifications"]
        assert any(n["message"]["text"].startswith(f"{N - kept} more findings left out") for n in notes)


def test_one_long_message_is_cut_with_a_count() -> None:
    """A finding's message or path past MESSAGE_CHARS is cut in every reader's format."""
    long = "y" * (MESSAGE_CHARS * 5)
    report = Report("check", (finding("HG101", "a/" + long, long),))
    buf = io.StringIO()
    write_text(report, buf, color=False)
    assert len(buf.getvalue()) < MESSAGE_CHARS * 3
    assert f"({MESSAGE_CHARS * 4} more characters)" in buf.getvalue()
    assert len(prview.render(report, shown=None)) < MESSAGE_CHARS * 4
    ann = io.StringIO()
    github.write_annotations(report, ann)
    assert len(ann.getvalue()) < MESSAGE_CHARS * 4
    assert len(json.dumps(sarif.to_sarif(report))) < MESSAGE_CHARS * 4 + 200_000
