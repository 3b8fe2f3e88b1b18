"""The exact `y` gate: only `y`, `y\\n` or `y\\r\\n` approve; anything else writes nothing."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from tests.helpers import Repo, plan_sha

APPROVING = [b"y", b"y\n", b"y\r\n"]
REFUSED = [
    b"Y",
    b"Y\n",
    b"yes\n",
    b" y\n",
    b"y \n",
    b"y\t\n",
    "\uff59\n".encode(),
    "y\u200b\n".encode(),
    b"y\nn\n",
    b"y\n\n",
    b"y\ny\n",
    b"",
    b"\n",
    b"n\n",
    b"N\n",
    b"y\r",
    b"y\n\r\n",
    b"\xefy\n",
    b"yy\n",
    b"y\x00\n",
]


@pytest.mark.parametrize("answer", APPROVING, ids=repr)
def test_approving_answers(repo: Repo, answer: bytes) -> None:
    folder = repo.new_plan()
    res = repo.cli("approve", input=answer)
    assert res.exit_code == 0, res.output
    assert "Proceed with this Plan? [y/N]" in res.output
    assert "Approval activated" in res.output
    lines = repo.read(f"{folder}/approvals.jsonl").splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec == {
        "schema": "harness-gate.approval/v2",
        "seq": 1,
        "plan": "p1",
        "gate": "plan",
        "artifact": "plan.md",
        "sha256": plan_sha(repo, folder),
        "answer": "y",
        "approver": "Ada Author <ada@example.com>",
        "approved_at": rec["approved_at"],
        "repository": None,
    }


@pytest.mark.parametrize("answer", REFUSED, ids=repr)
def test_refused_answers_write_nothing(repo: Repo, answer: bytes) -> None:
    folder = repo.new_plan()
    before = sorted(p.relative_to(repo.path) for p in repo.path.rglob("*") if ".git" not in p.parts)
    res = repo.cli("approve", input=answer)
    assert res.exit_code == 1, res.output
    assert "HG208" in res.output
    after = sorted(p.relative_to(repo.path) for p in repo.path.rglob("*") if ".git" not in p.parts)
    assert before == after
    assert not (repo.path / folder / "approvals.jsonl").exists()


@pytest.mark.slow
def test_refusal_as_subprocess_with_piped_stdin(repo: Repo) -> None:
    repo.new_plan()
    res = repo.run("approve", input=b"yes\n")
    assert res.returncode == 1
    assert b"HG208" in res.stdout
    ok = repo.run("approve", input=b"y\n")
    assert ok.returncode == 0, ok.stdout + ok.stderr


def _approve_on_a_terminal(repo: Repo, typed: bytes) -> int:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness_gate", "approve"], cwd=repo.path, stdin=slave, stdout=slave, stderr=slave
    )
    os.close(slave)
    output = b""
    while b"[y/N]" not in output:
        output += os.read(master, 4096)
    os.write(master, typed)
    code = proc.wait(timeout=30)
    os.close(master)
    return code


@pytest.mark.slow
@pytest.mark.parametrize(("typed", "code"), [(b"y\n", 0), (b"Y\n", 1), (b"yes\n", 1), (b"y\nextra\n", 1)])
def test_approve_from_a_terminal(repo: Repo, typed: bytes, code: int) -> None:
    folder = repo.new_plan()
    assert _approve_on_a_terminal(repo, typed) == code
    log = repo.path / folder / "approvals.jsonl"
    if code == 0:
        assert b'"answer":"y"' in log.read_bytes()
    else:
        assert not log.exists()


def test_second_approval_of_same_bytes_is_a_no_op(repo: Repo) -> None:
    folder = repo.new_plan()
    repo.approve()
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 0
    assert "already approved" in res.output
    assert len(repo.read(f"{folder}/approvals.jsonl").splitlines()) == 1


def test_edited_plan_needs_a_new_approval(repo: Repo) -> None:
    folder = repo.new_plan()
    repo.approve()
    p = repo.path / folder / "plan.md"
    p.write_bytes(p.read_bytes().replace(b"Do it", b"Do it better"))
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 0
    assert len(repo.read(f"{folder}/approvals.jsonl").splitlines()) == 2
    assert repo.cli("lint").exit_code == 0


def test_invalid_plan_cannot_be_approved(repo: Repo) -> None:
    folder = repo.new_plan()
    p = repo.path / folder / "plan.md"
    p.write_bytes(p.read_bytes().replace(b"## Risks", b"## Risk"))
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 1
    assert "HG504" in res.output
    assert not (repo.path / folder / "approvals.jsonl").exists()


def test_corrupt_approvals_log_is_not_appended_to(repo: Repo) -> None:
    folder = repo.new_plan()
    log = repo.write(f"{folder}/approvals.jsonl", b'{"schema": "x"}\n')
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 1
    assert "HG204" in res.output
    assert log.read_bytes() == b'{"schema": "x"}\n'


def test_missing_identity_is_an_error_not_an_approval(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo.new_plan()
    for var in ("GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL"):
        monkeypatch.delenv(var)
    monkeypatch.setenv("EMAIL", "")
    repo.git("config", "user.useConfigOnly", "true")
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 2, res.output
    assert "HG903" in res.output
    assert not (repo.path / folder / "approvals.jsonl").exists()


def test_identity_that_cannot_be_recorded_is_refused(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo.new_plan()
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Dana \u200fLevi")
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 2
    assert not (repo.path / folder / "approvals.jsonl").exists()


def test_approve_in_an_inactive_repository(repo: Repo) -> None:
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 0
    assert "inactive" in res.output


def test_amendment_the_lifecycle_rejects_is_not_put_to_the_approver(repo: Repo) -> None:
    from tests.helpers import amendment_md

    folder = repo.new_plan()
    repo.approve()
    repo.write(f"{folder}/001-amendment.md", amendment_md(plan_sha(repo, folder), material=False))
    res = repo.cli("approve", input="y\n")
    assert res.exit_code == 1
    assert "HG406" in res.output
    assert "Proceed with" not in res.output
    assert len(repo.read(f"{folder}/approvals.jsonl").splitlines()) == 1


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CLAUDECODE", "1"),
        ("CLAUDE_CODE_ENTRYPOINT", "sdk-cli"),
        ("CODEX_THREAD_ID", "t1"),
        ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
        ("CODEX_SANDBOX", "seatbelt"),
        ("GEMINI_CLI", "1"),
        ("AI_AGENT", "x"),
    ],
)
def test_approve_refuses_inside_a_coding_agent(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    """An agent that ran `plan amend` pipes its own `y` to `approve` through its shell tool:
    the runtime's marker in the tool's environment refuses it, before anything is read."""
    folder = repo.new_plan()
    monkeypatch.setenv(name, value)
    res = repo.cli("approve", input=b"y\n")
    assert res.exit_code == 2, res.output
    assert "HG908" in res.output and name in res.output
    assert "Proceed" not in res.output
    assert not (repo.path / folder / "approvals.jsonl").exists()
    monkeypatch.setenv(name, "")  # set but empty: no marker
    assert repo.cli("approve", input=b"y\n").exit_code == 0
