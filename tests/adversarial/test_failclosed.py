"""Fail closed: a missing or dying git, a full disk, files of the wrong type, a crashing
rule, a corrupt index and unknown record schemas all end in a reasoned non-zero exit,
never in a pass and never in a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness_gate import boundary, evidence, lifecycle, rules
from tests.adversarial.util import (
    EVIDENCE_AT_PRE_PUSH,
    FOLDER,
    check,
    commit,
    error_code,
    executable,
    report,
    rev,
    run_json,
    setup_gated,
    staged,
)
from tests.helpers import Repo


def test_git_missing_from_path(gated: Repo, tmp_path: Path) -> None:
    """No `git` on PATH: exit 2 saying git cannot run (not "not a repository")."""
    gated.write("secret/x", "leak\n")
    gated.git("add", "-A")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for args in (["check", "--staged"], ["verify"], ["fingerprint"]):
        code, doc, err = run_json(gated, *args, env={"PATH": str(empty)})
        assert (code, error_code(doc)) == (2, "HG903"), doc
        assert "cannot run git" in doc["error"]["message"]
        assert err == b""  # no traceback, nothing on stderr


@pytest.mark.parametrize("log", ["evidence.jsonl", "approvals.jsonl"])
@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_log_of_the_wrong_type_is_refused_not_waited_on(repo: Repo, log: str, kind: str) -> None:
    """A FIFO (or a directory) where an append-only log is expected: `verify` and
    `approve` exit 2 with a reason instead of blocking forever on the FIFO."""
    setup_gated(repo, config=EVIDENCE_AT_PRE_PUSH)
    path = repo.path / FOLDER / log
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    if log == "approvals.jsonl":
        repo.write(f"{FOLDER}/plan.md", repo.read(f"{FOLDER}/plan.md").replace(b"Do it", b"Do it now"))
        code, doc, err = run_json(repo, "approve", input=b"y\n", timeout=10)
    else:
        code, doc, err = run_json(repo, "verify", timeout=10)
    assert (code, error_code(doc)) == (2, "HG903"), doc
    assert "not a regular file" in doc["error"]["message"]
    assert b"Traceback" not in err


def _faulty_git(tmp_path: Path, subcommand: str, action: str) -> Path:
    """A `git` first on PATH that runs the real git, except for `subcommand`, where it
    does `action` (fault injection around the real git, not a mock of it)."""
    real = shutil.which("git")
    assert real is not None
    body = f"""#!/bin/sh
for a in "$@"; do
  if [ "$a" = "{subcommand}" ]; then
    {action}
  fi
done
exec "{real}" "$@"
"""
    executable(tmp_path / "faulty-bin" / "git", body.replace("REAL", real))
    return tmp_path / "faulty-bin"


# Prints part of the answer, then dies by SIGKILL (an OOM kill, a killed CI job).
KILLED = 'REAL "$@" | head -c 20; kill -KILL $$'
# Prints the answer minus its last N bytes and exits 0 (a git that lies).
TRUNCATED = 'REAL "$@" > "$0.out"; head -c -{n} "$0.out"; exit 0'


def _with_path(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    monkeypatch.setenv("PATH", f"{directory}:{os.environ['PATH']}")


@pytest.mark.parametrize("subcommand", ["diff-index", "cat-file", "ls-files"])
def test_git_killed_mid_answer(gated: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subcommand: str) -> None:
    """git dies by SIGKILL half-way through one plumbing answer: exit 2 (HG903)."""
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "-A")
    assert staged(gated) == (0, [])
    _with_path(monkeypatch, _faulty_git(tmp_path, subcommand, KILLED))
    doc = report(gated, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc
    # The console script (its git reads started ahead, the checksum in a thread) as well.
    code, doc, err = run_json(gated, "check", "--staged")
    assert (code, error_code(doc)) == (2, "HG903"), doc
    assert b"Traceback" not in err


def test_corrupt_index_of_an_inactive_repository(repo: Repo) -> None:
    """Without the gate at HEAD nothing is judged, the index included: the checksum the
    console script started ahead is dropped unread, as the click path never computes it."""
    repo.write("a.txt", "a\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    repo.write("b.txt", "b\n")
    repo.git("add", "-A")
    index = repo.path / ".git" / "index"
    index.write_bytes(index.read_bytes().replace(b"b.txt\0", b"c.txt\0"))
    res = repo.cli("check", "--staged")
    assert (res.exit_code, "inactive" in res.output) == (0, True), res.output
    proc = repo.run("check", "--staged")
    assert (proc.returncode, b"inactive" in proc.stdout) == (0, True), proc.stdout + proc.stderr


def _star_py_plan(repo: Repo) -> None:
    """Boundary `src/*.py`: `src/x.pyc` is outside it, but its prefix `src/x.py` is inside."""
    setup_gated(repo, ("src/*.py",))


def test_truncated_diff_index_answer(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """diff-index's answer loses its last bytes and git exits 0: `src/x.pyc` would be
    read as `src/x.py` (inside the boundary) and pass."""
    _star_py_plan(repo)
    repo.write("src/x.pyc", "compiled\n")
    repo.git("add", "-A")
    assert staged(repo) == (1, [("HG101", "src/x.pyc")])
    _with_path(monkeypatch, _faulty_git(tmp_path, "diff-index", TRUNCATED.format(n=2)))
    doc = report(repo, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


def test_truncated_diff_tree_answer(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same lie from `diff-tree --stdin` while judging a pushed range."""
    _star_py_plan(repo)
    base = rev(repo, "HEAD")
    repo.write("src/x.pyc", "compiled\n")
    tip = commit(repo, "bad")
    assert check(repo, "--range", f"{base}..{tip}") == (1, [("HG101", "src/x.pyc")])
    _with_path(monkeypatch, _faulty_git(tmp_path, "diff-tree", TRUNCATED.format(n=2)))
    doc = report(repo, "check", "--range", f"{base}..{tip}")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


def test_truncated_cat_file_answer(gated: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cat-file --batch` (the plan and its approvals) comes back short with exit 0."""
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "-A")
    _with_path(monkeypatch, _faulty_git(tmp_path, "cat-file", TRUNCATED.format(n=40)))
    doc = report(gated, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


# -- a full disk -------------------------------------------------------------------------------

FULL_DISK = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv.pop(1))
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv[0] = "harness_gate"
runpy.run_module("harness_gate", run_name="__main__", alter_sys=True)
"""


def _on_a_full_disk(repo: Repo, limit: int, *args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    """The CLI in a subprocess whose files may not grow past `limit` bytes (RLIMIT_FSIZE)."""
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(limit), *args, "--format", "json"],
        cwd=repo.path,
        input=stdin,
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
        timeout=60,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["exit_code"] == proc.returncode
    return proc.returncode, doc


def test_disk_full_while_appending_evidence(repo: Repo) -> None:
    """The evidence log cannot grow: exit 2 with the reason, the log byte for byte as it was."""
    setup_gated(repo, config=EVIDENCE_AT_PRE_PUSH)
    log = repo.path / FOLDER / "evidence.jsonl"
    # A long, valid log: rewriting it (old bytes plus one line) needs more than the limit,
    # while git's own small writes (objects, the private index copy) stay below it.
    line = evidence.record_line(
        command_id="older",
        command="true",
        exit_code=0,
        status="PASS",
        key_output="x" * 4000,
        duration_ms=1,
        tree="0" * 40,
        plan="p1",
        plan_sha256="0" * 64,
        policy="0" * 64,
    )
    log.write_text(line * 8)
    before = log.read_bytes()
    code, doc = _on_a_full_disk(repo, 24_000, "verify")
    assert (code, error_code(doc)) == (2, "HG903"), doc
    assert "File too large" in doc["error"]["message"]
    assert log.read_bytes() == before
    assert not [p for p in log.parent.iterdir() if p.name.endswith(".tmp")]


def test_disk_full_while_appending_an_approval(repo: Repo) -> None:
    """The approvals log cannot be written: exit 2 with the reason, nothing recorded."""
    setup_gated(repo)
    repo.new_plan("p2", ("src/**",))
    log = repo.path / "harness/plans/p2/approvals.jsonl"
    code, doc = _on_a_full_disk(repo, 100, "approve", stdin=b"y\n")
    assert (code, error_code(doc)) == (2, "HG903"), doc
    assert "File too large" in doc["error"]["message"]
    assert not log.exists()
    assert not [p for p in log.parent.iterdir() if p.name.endswith(".tmp")]


# -- a crashing rule -----------------------------------------------------------------------------


RULES = {
    "always-blocked": (rules, "_always_blocked"),
    "authority": (rules, "plan_authority"),
    "boundary-matcher": (boundary.Boundary, "matches"),
    "lifecycle-replay": (lifecycle, "replay"),
    "evidence-freshness": (evidence, "freshness"),
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_a_crash_inside_a_rule(repo: Repo, monkeypatch: pytest.MonkeyPatch, rule: str) -> None:
    """One of harness-gate's own rules raises: exit 2 with HG999, no traceback, never 0."""
    setup_gated(repo, config=EVIDENCE_AT_PRE_PUSH)
    repo.write("src/a.py", "a = 2\n")
    assert report(repo, "verify")["exit_code"] == 0
    repo.git("add", "-A")
    assert check(repo, "--stage", "pre-push", "--staged") == (0, [])

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("injected fault")

    monkeypatch.setattr(*RULES[rule], boom)
    res = repo.cli("check", "--stage", "pre-push", "--staged", "--format", "json")
    doc = json.loads(res.output)
    assert (res.exit_code, error_code(doc)) == (2, "HG999"), res.output
    assert "injected fault" in doc["error"]["message"]
    assert "Traceback" not in res.output


# -- a corrupt index and files of the wrong type -------------------------------------------------


@pytest.mark.parametrize("damage", ["renamed-entry", "truncated", "directory"])
def test_corrupt_index(gated: Repo, damage: str) -> None:
    """The index fails its checksum (one byte of a name changed: git itself would read
    `secret/y`), is cut short (git reads entries past its end as empty names), or is a
    directory: exit 2 (HG903), never a verdict on what git half-read."""
    gated.write("secret/x", "leak\n")
    gated.git("add", "-A")
    index = gated.path / ".git" / "index"
    data = index.read_bytes()
    if damage == "renamed-entry":
        assert data.count(b"secret/x\0") == 1
        index.write_bytes(data.replace(b"secret/x\0", b"secret/y\0"))
        assert b"secret/y" in gated.git("ls-files", "--cached")  # git reads it without complaint
    elif damage == "truncated":
        index.write_bytes(data[: len(data) // 2])
    else:
        index.unlink()
        index.mkdir()
    doc = report(gated, "check", "--staged")
    assert (doc["exit_code"], error_code(doc)) == (2, "HG903"), doc


WRONG_TYPES = {
    "plan-as-symlink": ("plan.md", "120000", {"HG201", "HG210", "HG516"}),
    "approvals-as-gitlink": ("approvals.jsonl", "160000", {"HG202", "HG211", "HG516"}),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_artifact_of_the_wrong_type_in_the_index(gated: Repo, case: str) -> None:
    """An approved artifact staged as a symlink or a submodule instead of a regular file:
    not an artifact (HG516), the approved one is gone (HG210/HG211), no authority."""
    name, mode, codes = WRONG_TYPES[case]
    path = f"{FOLDER}/{name}"
    link = gated.git("hash-object", "-w", "--stdin", input=b"../../../README.md").decode().strip()
    gated.git("update-index", "--cacheinfo", f"{mode},{rev(gated, 'HEAD') if mode == '160000' else link},{path}")
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "src/a.py")
    code, found = staged(gated)
    assert code == 1
    assert {c for c, _ in found} == codes
    assert {p for _, p in found} <= {path, f"{FOLDER}/plan.md", "harness/plans"}


def test_active_as_a_symlink(gated: Repo) -> None:
    """A leftover `active` pointer staged as a symlink to a file naming the plan: not an
    artifact (HG516); the plan that governs is found without it."""
    gated.write("src/p1", "p1\n")
    link = gated.git("hash-object", "-w", "--stdin", input=b"../src/p1").decode().strip()
    gated.git("update-index", "--add", "--cacheinfo", f"120000,{link},harness/active")
    gated.git("add", "src/p1")
    assert staged(gated) == (1, [("HG516", "harness/active")])


# -- unknown schemas ---------------------------------------------------------------------------


def test_unknown_schema_in_an_evidence_record(repo: Repo) -> None:
    """A record that says it is `harness-gate.evidence/v9` is not evidence (HG307)."""
    setup_gated(repo, config=EVIDENCE_AT_PRE_PUSH)
    repo.write("src/a.py", "a = 2\n")
    assert report(repo, "verify")["exit_code"] == 0
    log = repo.path / FOLDER / "evidence.jsonl"
    log.write_bytes(log.read_bytes().replace(b"harness-gate.evidence/v2", b"harness-gate.evidence/v9"))
    repo.git("add", "-A")
    log_path = f"{FOLDER}/evidence.jsonl"
    assert check(repo, "--stage", "pre-push", "--staged") == (1, [("HG301", log_path), ("HG307", log_path)])


def test_unknown_schema_in_an_approval_record(gated: Repo) -> None:
    """An approval that says it is `harness-gate.approval/v9` approves nothing (HG204)."""
    gated.new_plan("p2", ("src/**",))
    gated.approve()
    log = gated.path / "harness/plans/p2/approvals.jsonl"
    before = log.read_bytes()
    after = re.sub(rb"harness-gate\.approval/v[0-9]+", b"harness-gate.approval/v9", before)
    assert after != before
    log.write_bytes(after)
    gated.write("src/a.py", "a = 2\n")
    gated.git("add", "-A")
    plan = "harness/plans/p2/plan.md"
    assert staged(gated) == (1, [("HG202", plan), ("HG204", "harness/plans/p2/approvals.jsonl")])


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_lint_of_a_file_that_is_not_a_regular_file(gated: Repo, kind: str) -> None:
    """`lint x.md` where x.md is a FIFO (or a device): a finding, not a read that waits
    for a writer forever (or never ends)."""
    name = "x.md"
    if kind == "fifo":
        os.mkfifo(gated.path / name)
    else:
        (gated.path / name).symlink_to("/dev/zero")
    code, doc, err = run_json(gated, "lint", name, timeout=10)
    assert (code, [(f["code"], f["path"]) for f in doc["findings"]]) == (1, [("HG516", name)])
    assert "not a regular file" in doc["findings"][0]["message"]
    assert b"Traceback" not in err
