"""Diff computation and a git that lies: hostile configuration, environment, replace refs,
grafts and index flags never change the gate's verdict; odd kinds of change still count.

Every "verdict unchanged" test asserts the blocking verdict and its exact codes both
without and with the hostile setting, so it fails if either side changes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.util import FOLDER, check, commit, executable, report, rev, setup_gated
from tests.helpers import Repo


def _bad_range(repo: Repo) -> tuple[str, str]:
    """A commit outside the boundary (made with --no-verify) on top of the plan."""
    base = rev(repo, "HEAD")
    repo.write("secret/x", "leaked\n")
    return base, commit(repo, "bad")


def test_grafts_cannot_hide_a_range(gated: Repo) -> None:
    """`.git/info/grafts` making the base a child of the tip would empty the range."""
    base, tip = _bad_range(gated)
    expected = (1, [("HG101", "secret/x")])
    assert check(gated, "--range", f"{base}..{tip}") == expected
    assert check(gated, "--base", base, "--head", tip) == expected
    grafts = gated.path / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{base} {tip}\n")
    assert gated.git("rev-list", tip, f"^{base}") == b""  # git itself now sees no commit
    assert check(gated, "--range", f"{base}..{tip}") == expected
    assert check(gated, "--base", base, "--head", tip) == expected


def _evidence_repo(repo: Repo) -> Repo:
    """Like `gated`, but pre-push requires fresh evidence (`python -c pass`)."""
    setup_gated(repo, config='artifacts_dir = "harness"\nreview_stages = []\n')
    return repo


def test_clean_filter_cannot_launder_the_fingerprint(repo: Repo, tmp_path: Path) -> None:
    """`filter.<x>.clean` turns the tested bytes into other committed bytes: `verify`
    must neither run the filter nor fingerprint its output."""
    _evidence_repo(repo)
    repo.write("src/a.py", "good\n")
    repo.cli("verify")
    repo.git("add", "-A")
    assert check(repo, "--stage", "pre-push", "--staged") == (0, [])  # no filter: fresh
    repo.git("reset", "-q", "--hard")
    ran = tmp_path / "filter-ran"
    repo.git("config", "filter.evil.clean", f"touch {ran}; sed s/good/bad/")
    repo.git("config", "filter.evil.required", "true")
    repo.write(".git/info/attributes", "*.py filter=evil\n")
    repo.write("src/a.py", "good\n")
    assert report(repo, "verify")["exit_code"] == 0
    assert not ran.exists()  # the fingerprint ran no configured program
    repo.git("add", "-A")  # the user's own `git add` runs the filter: "bad" is committed
    assert ran.exists()
    assert repo.git("show", ":src/a.py") == b"bad\n"
    assert check(repo, "--stage", "pre-push", "--staged") == (1, [("HG302", f"{FOLDER}/evidence.jsonl")])


def test_clean_filter_staged_before_verify(repo: Repo, tmp_path: Path) -> None:
    """The same filter, but the file is staged (filtered) first and its stat data then
    matches the index entry: the fingerprint must still read the bytes on disk."""
    _evidence_repo(repo)
    ran = tmp_path / "filter-ran"
    repo.git("config", "filter.evil.clean", f"touch {ran}; sed s/good/bad/")
    repo.write(".git/info/attributes", "*.py filter=evil\n")
    old = repo.write("src/a.py", "good\n")
    os.utime(old, (1_700_000_000, 1_700_000_000))  # not racily clean: git trusts the stat data
    repo.git("add", "-A")
    assert repo.git("show", ":src/a.py") == b"bad\n"
    ran.unlink()
    assert report(repo, "verify")["exit_code"] == 0
    assert not ran.exists()
    repo.git("add", "-A")
    assert check(repo, "--stage", "pre-push", "--staged") == (1, [("HG302", f"{FOLDER}/evidence.jsonl")])


def test_every_filter_driver_is_disabled_whatever_its_name(repo: Repo, tmp_path: Path) -> None:
    """Driver names may hold dots and `=`, and `.process` drivers run too: neither runs
    while harness-gate fingerprints the work tree or the index."""
    _evidence_repo(repo)
    cleaned, processed = tmp_path / "clean-ran", tmp_path / "process-ran"
    repo.git("config", "filter.a.B=c.clean", f"touch {cleaned}; cat")
    repo.git("config", "filter.proc.process", f"sh -c 'touch {processed}; exit 1'")
    repo.write(".git/info/attributes", "*.py filter=a.B=c\n*.txt filter=proc\n")
    repo.write("src/a.py", "a = 2\n")
    repo.write("src/notes.txt", "n\n")
    assert report(repo, "fingerprint")["exit_code"] == 0
    assert report(repo, "fingerprint", "index")["exit_code"] == 0
    assert report(repo, "status")["exit_code"] == 0
    assert not cleaned.exists()
    assert not processed.exists()
    # Both drivers are real: git's own `add` runs them (and the failing one stops it).
    assert subprocess.run(["git", "add", "-A"], cwd=repo.path, capture_output=True, check=False).returncode != 0
    assert cleaned.exists()
    assert processed.exists()


def test_git_lfs_standard_driver_is_kept(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git LFS's standard driver stays on (the committed pointer is what the fingerprint
    describes); a driver named `lfs` with another command is switched off like any other."""
    _evidence_repo(repo)
    fake = tmp_path / "bin"
    executable(fake / "git-lfs", '#!/bin/sh\n[ "$1" = clean ] || exit 3\nprintf \'pointer %s\\n\' "$(wc -c)"\n')
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    repo.git("config", "filter.lfs.clean", "git-lfs clean -- %f")
    repo.git("config", "filter.lfs.required", "true")
    repo.write(".git/info/attributes", "*.bin filter=lfs\n")
    repo.write("src/big.bin", "x" * 1000)
    fingerprint = report(repo, "fingerprint")["data"]["tree"]
    repo.git("add", "-A")
    assert repo.git("show", ":src/big.bin") == b"pointer 1000\n"
    assert fingerprint == report(repo, "fingerprint", "index")["data"]["tree"]
    repo.git("config", "filter.lfs.clean", "git-lfs clean -- %f; true")  # not the standard command
    assert report(repo, "fingerprint")["data"]["tree"] != fingerprint
