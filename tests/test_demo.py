"""`harness-gate demo` walks the lifecycle in a throwaway repository and succeeds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "harness_gate", "demo"], cwd=tmp_path, capture_output=True, check=False)
    out = res.stdout.decode()
    assert res.returncode == 0, out + res.stderr.decode()
    assert "UNEXPECTED" not in out
    assert "HG208" in out  # the refused `yes`
    assert "HG203" in out  # the edited approved plan
    assert "state:      executing  (write authority: yes)" in out
    assert out.rstrip().endswith("Demo finished: every step behaved as shown.")
    assert list(tmp_path.iterdir()) == []  # nothing left behind in the caller's directory
