"""`harness-gate demo` walks the whole lifecycle in a throwaway repository and succeeds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the whole lifecycle, end to end


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "harness_gate", "demo"], cwd=tmp_path, capture_output=True, check=False)
    out = res.stdout.decode()
    assert res.returncode == 0, out + res.stderr.decode()
    assert "UNEXPECTED" not in out
    # Every block of the story, in order: refused answer, boundary, stale evidence.
    order = [out.index(marker) for marker in ("HG208", "HG101", "HG302 `tests`: tree-moved", "differs in src/calc.py")]
    assert order == sorted(order)
    assert "wrote harness/plans/add/002-completion.md" in out
    assert "state:      completed  (write authority: no)" in out
    assert out.count("-> exit 0 (as expected)") >= 10
    assert out.rstrip().endswith("Demo finished: every step behaved as shown.")
    assert list(tmp_path.iterdir()) == []  # nothing left behind in the caller's directory


def test_a_demo_that_cannot_start_is_an_error_of_the_one_wrapper(tmp_path: Path) -> None:
    """A `--keep` directory that is not empty: a usage error with its hint, exit 2, as any
    command's (runs.report_of), never a traceback."""
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept/x").write_text("x\n")
    res = subprocess.run(
        [sys.executable, "-m", "harness_gate", "demo", "--keep", "kept"], cwd=tmp_path, capture_output=True, check=False
    )
    out = res.stdout.decode() + res.stderr.decode()
    assert res.returncode == 2 and "HG904" in out and "Name a new directory for --keep." in out, out
    assert "Traceback" not in out
