"""Left from the last attack round: raw control bytes from a path in `--format github`, and
an NFD path under an NFC boundary whose HG101 showed two strings that look the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

from tests.adversarial.util import check, commit, rev, setup_gated
from tests.helpers import Repo


def test_github_format_escapes_control_bytes_from_a_path(gated: Repo, tmp_path: object) -> None:
    base = rev(gated, "HEAD")
    name = "evil\x1b]8;;x\x07\x1b[2J\x7f\x01.py"
    gated.write(name, "x\n")
    commit(gated, "a name with control bytes")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")}
    proc = subprocess.run(
        [sys.executable, "-m", "harness_gate", "check", "--base", base, "--head", "HEAD", "--format", "github"],
        cwd=gated.path,
        capture_output=True,
        env={**env, "RUNNER_TEMP": str(tmp_path)},
        check=False,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert b"::error " in out
    assert not [b for b in out if (b < 0x20 and b != 0x0A) or b == 0x7F], out
    assert b"\\x1b" in out and b"\\x07" in out


def test_nfd_path_under_an_nfc_boundary_shows_the_difference(repo: Repo) -> None:
    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    assert nfc != nfd

    setup_gated(repo, boundary=(f"src/{nfc}/**",))
    repo.write(f"src/{nfd}/a.py", "x\n")
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")

    doc = json.loads(res.output)
    assert doc["exit_code"] == 1
    [hg101] = [f for f in doc["findings"] if f["code"] == "HG101"]
    assert "src/cafe\\u0301/a.py" in hg101["message"]
    assert "src/caf\\u00e9/**" in hg101["message"]
    assert check(repo, "--staged")[0] == 1


def test_action_docs_say_what_the_gate_cannot_see() -> None:
    """docs/action.md names the two blind spots and the settings that close them."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "action.md").read_text(encoding="utf-8")
    section = text.split("## What the gate cannot see", 1)[1].split("\n## ", 1)[0]
    for words in (
        "rewrite `.git`",
        "job\n  of its own",
        "weaker base branch",
        "Require status checks to pass",
        "Require a pull\n    request before merging",
        "Do not allow bypassing the above",
        "Require\n    review from Code Owners",
    ):
        assert words in section, words
