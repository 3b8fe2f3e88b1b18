"""Shared helpers for the adversarial suite: real repositories, the real CLI, exact codes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.helpers import PY, Repo, git_failed, lean_passes

# Evidence required from pre-push on (the default only warns there), no review, no completion.
EVIDENCE_AT_PRE_PUSH = (
    'artifacts_dir = "harness"\nevidence_stages = ["pre-push", "ci"]\nreview_stages = []\ncompletion_stages = []\n'
)
BOUNDARY_ONLY = 'artifacts_dir = "harness"\nevidence_stages = []\nreview_stages = []\ncompletion_stages = []\n'
FOLDER = "harness/plans/p1"
Found = list[tuple[str, str]]


def report(repo: Repo, *args: str) -> dict[str, Any]:
    """Run a command in-process with `--format json`; the exit code must match the document."""
    res = repo.cli(*args, "--format", "json")
    doc: dict[str, Any] = json.loads(res.output)
    assert res.exit_code == doc["exit_code"], res.output
    return doc


def codes_of(doc: Mapping[str, Any]) -> tuple[int, Found]:
    return doc["exit_code"], sorted({(f["code"], f["path"]) for f in doc["findings"]})


def check(repo: Repo, *args: str) -> tuple[int, Found]:
    """`check ARGS --format json`: the exit code and the set of (code, path) findings."""
    return codes_of(report(repo, "check", *args))


def staged(repo: Repo, *args: str) -> tuple[int, Found]:
    return check(repo, "--staged", *args)


def error_code(doc: Mapping[str, Any]) -> str | None:
    err = doc.get("error")
    return err["code"] if err else None


def run_json(
    repo: Repo, *args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None, **kw: Any
) -> tuple[int, dict[str, Any], bytes]:
    """The CLI as a real subprocess with `--format json`: (exit code, document, stderr)."""
    lean_passed = lean_passes(cwd or repo.path, args, env)
    proc = subprocess.run(
        [sys.executable, "-m", "harness_gate", *args, "--format", "json"],
        cwd=cwd or repo.path,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=kw.pop("timeout", 60),
        **kw,
    )
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"not a JSON report: {proc.stdout!r} {proc.stderr!r}") from None
    assert doc["exit_code"] == proc.returncode, proc.stdout
    if lean_passed and not git_failed(proc.stdout.decode(errors="replace")):
        assert proc.returncode == 0, f"the lean path passed what the full check refuses: {proc.stdout!r}"
    return proc.returncode, doc, proc.stderr


def commit(repo: Repo, message: str) -> str:
    """Stage everything and commit it without hooks (the attacker's `--no-verify`)."""
    repo.git("add", "-A")
    repo.git("commit", "-qm", message, "--no-verify")
    return rev(repo, "HEAD")


def rev(repo: Repo, name: str) -> str:
    return repo.git("rev-parse", "--verify", name).decode().strip()


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def setup_gated(
    repo: Repo,
    boundary: tuple[str, ...] = ("src/**",),
    config: str = BOUNDARY_ONLY,
    verify: str = f"{PY} -c pass",
) -> Repo:
    """Adopted harness-gate with an approved, committed plan `p1`; files inside and outside."""
    repo.write("README.md", "hello\n")
    repo.write("src/a.py", "a = 1\n")
    repo.write("other.py", "x = 1\n")
    repo.write("secret/x", "secret\n")
    commit(repo, "init")
    assert repo.cli("init").exit_code == 0
    repo.write(".harness-gate.toml", config)
    commit(repo, "adopt harness-gate")
    args = ["plan", "new", "p1", "--objective", "Do it", "--verify", f"tests={verify}", "--timeout", "60"]
    for pattern in boundary:
        args += ["--boundary", pattern]
    res = repo.cli(*args)
    assert res.exit_code == 0, res.output
    repo.approve()
    commit(repo, "plan p1")
    return repo


@contextmanager
def env(monkeypatch: Any, **values: str) -> Iterator[None]:
    with monkeypatch.context() as m:
        for k, v in values.items():
            m.setenv(k, v)
        yield
