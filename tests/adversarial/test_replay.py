"""Replay and rollback: an approval bound to another plan, another repository or an
older sequence number grants nothing; going back to older approved bytes is blocked."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import Repo, amendment_md, plan_sha

FOLDER = "harness/plans/p1"


def findings(repo: Repo, *args: str) -> list[tuple[str, str]]:
    res = repo.cli("check", *args, "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == doc["exit_code"], res.output
    return [(f["code"], f["path"]) for f in doc["findings"]]


def codes(repo: Repo, *args: str) -> set[str]:
    return {c for c, _ in findings(repo, *args)}


def adopted(repo: Repo) -> Repo:
    repo.write("README.md", "x\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    return repo


def test_record_binds_plan_sequence_and_repository(repo: Repo) -> None:
    """What `approve` writes: the plan id, seq 1, and this history's root commit."""
    adopted(repo)
    repo.new_plan()
    repo.approve()
    rec = json.loads(repo.read(f"{FOLDER}/approvals.jsonl"))
    root = repo.git("rev-list", "--max-parents=0", "HEAD").decode().strip()
    assert (rec["plan"], rec["seq"], rec["repository"]) == ("p1", 1, root)


def test_plan_folder_copied_under_another_id(repo: Repo) -> None:
    """A completed (or any) plan's folder copied to a new id: its approval names p1."""
    adopted(repo)
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    shutil.copytree(repo.path / FOLDER, repo.path / "harness/plans/p2")
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged", "--plan", "p2")
    assert ("HG213", "harness/plans/p2/approvals.jsonl") in found
    assert ("HG202", "harness/plans/p2/plan.md") in found


def test_approval_from_another_repository(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan folder with its approvals copied from another repository's history."""
    other = Repo(tmp_path / "other")
    other.path.mkdir()
    subprocess.run(["git", "init", "-q", str(other.path)], check=True)
    monkeypatch.chdir(other.path)
    other.write("README.md", "another project\n")
    assert other.cli("init").exit_code == 0
    other.git("add", "-A")
    other.git("commit", "-qm", "other root")
    other.new_plan("p1", ("src/**",))
    assert other.cli("approve", input="y\n").exit_code == 0
    monkeypatch.chdir(repo.path)
    adopted(repo)
    shutil.copytree(other.path / FOLDER, repo.path / FOLDER)
    repo.write("harness/active", "p1\n")
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged")
    assert ("HG214", f"{FOLDER}/approvals.jsonl") in found
    assert ("HG202", f"{FOLDER}/plan.md") in found
    # The same in CI: the record's root is not a root of the judged history.
    repo.git("commit", "-qm", "copied", "--no-verify")
    assert "HG214" in codes(repo, "--base", "HEAD~1", "--stage", "pre-push")


def test_old_record_appended_again_is_a_replay(repo: Repo) -> None:
    """v1 approved, v2 approved, then record 1 appended again to make v1 the newest."""
    adopted(repo)
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    v1 = repo.read(f"{FOLDER}/plan.md")
    repo.write(f"{FOLDER}/plan.md", v1.replace(b"src/**", b"lib/**"))
    repo.approve()
    log = repo.path / FOLDER / "approvals.jsonl"
    first = log.read_bytes().splitlines(keepends=True)[0]
    log.write_bytes(log.read_bytes() + first)
    repo.write(f"{FOLDER}/plan.md", v1)
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged")
    assert ("HG215", f"{FOLDER}/approvals.jsonl") in found
    assert ("HG216", f"{FOLDER}/plan.md") in found


def test_plan_rolled_back_to_older_approved_bytes(repo: Repo) -> None:
    """Re-committing an old approved plan after a newer one was approved is blocked."""
    adopted(repo)
    repo.new_plan("p1", ("lib/**",))
    repo.approve()
    v1 = repo.read(f"{FOLDER}/plan.md")
    repo.write(f"{FOLDER}/plan.md", v1.replace(b"lib/**", b"src/**"))
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan v2")
    repo.write(f"{FOLDER}/plan.md", v1)
    repo.write("lib/a.py", "x = 1\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged")
    assert ("HG216", f"{FOLDER}/plan.md") in found
    assert ("HG210", f"{FOLDER}/plan.md") in found
    # Without the gate on the commit, CI still sees the rollback at that commit.
    repo.git("commit", "-qm", "rollback", "--no-verify")
    assert {"HG216", "HG210"} <= codes(repo, "--range", "HEAD~1..HEAD", "--stage", "pre-push")


def test_re_approving_older_bytes_on_purpose_counts(repo: Repo) -> None:
    """The newest record decides: approving v1 again after v2 is a real approval."""
    adopted(repo)
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    v1 = repo.read(f"{FOLDER}/plan.md")
    repo.write(f"{FOLDER}/plan.md", v1.replace(b"src/**", b"lib/**"))
    repo.approve()
    repo.write(f"{FOLDER}/plan.md", v1)
    repo.approve()
    assert [json.loads(x)["seq"] for x in repo.read(f"{FOLDER}/approvals.jsonl").splitlines()] == [1, 2, 3]
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    assert findings(repo, "--staged") == []


def test_amendment_rolled_back(repo: Repo) -> None:
    """An amendment approved at bytes A, rewritten and approved at B, then put back to A."""
    adopted(repo)
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    psha = plan_sha(repo, FOLDER)
    a = amendment_md(psha, material=True, boundary=("src/**", "lib/**"))
    repo.write(f"{FOLDER}/001-amendment.md", a)
    repo.approve()
    repo.write(f"{FOLDER}/001-amendment.md", amendment_md(psha, material=True, boundary=("src/**", "docs/**")))
    repo.approve()
    repo.write(f"{FOLDER}/001-amendment.md", a)
    repo.write("lib/a.py", "x = 1\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged")
    assert ("HG216", f"{FOLDER}/001-amendment.md") in found
    assert ("HG101", "lib/a.py") not in found  # no authority at all: the amendment awaits approval


def test_v1_records_are_not_accepted(repo: Repo) -> None:
    """A record of the superseded schema binds no plan or repository: it grants nothing."""
    adopted(repo)
    folder = repo.new_plan()
    rec = {
        "schema": "harness-gate.approval/v1",
        "gate": "plan",
        "artifact": "plan.md",
        "sha256": __import__("hashlib").sha256(repo.read(f"{folder}/plan.md")).hexdigest(),
        "answer": "y",
        "approver": "A <a@x>",
        "approved_at": "2026-01-01T00:00:00Z",
    }
    repo.write(f"{folder}/approvals.jsonl", json.dumps(rec, separators=(",", ":")) + "\n")
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    found = findings(repo, "--staged")
    assert ("HG204", f"{folder}/approvals.jsonl") in found
    assert ("HG202", f"{folder}/plan.md") in found


def test_approving_in_a_shallow_clone_is_refused(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shallow clone's cut would be recorded as the root: refuse instead of binding a wrong one."""
    adopted(repo)
    for n in range(2):
        repo.write(f"f{n}", "x\n")
        repo.git("add", "-A")
        repo.git("commit", "-qm", f"c{n}")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone)], check=True)
    monkeypatch.chdir(clone)
    shallow = Repo(clone)
    shallow.new_plan()
    res = shallow.cli("approve", input="y\n")
    assert res.exit_code == 2, res.output
    assert "HG905" in res.output
    assert not (clone / FOLDER / "approvals.jsonl").exists()


def test_branch_cut_before_the_base_narrowed_the_plan(repo: Repo) -> None:
    """p1 allowed src/** and lib/**; main then approved an amendment narrowing it to src/**.
    A branch cut before that keeps coding in lib/: CI must not judge it under the old plan."""
    adopted(repo)
    repo.new_plan("p1", ("src/**", "lib/**"))
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan")
    repo.git("branch", "old")
    repo.write(f"{FOLDER}/001-amendment.md", amendment_md(plan_sha(repo, FOLDER), material=True, boundary=("src/**",)))
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "narrow the plan")
    repo.git("checkout", "-q", "old")
    repo.write("lib/x.py", "x = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "lib work under the old plan")
    found = findings(repo, "--base", "main", "--head", "HEAD", "--stage", "pre-push")
    assert ("HG216", f"{FOLDER}/001-amendment.md") in found
    # Rebased onto main, the same change is judged under the narrowed plan.
    repo.git("rebase", "-q", "main")
    found = findings(repo, "--base", "main", "--head", "HEAD", "--stage", "pre-push")
    assert ("HG101", "lib/x.py") in found
    assert "HG216" not in {c for c, _ in found}


def test_v1_records_do_not_block_a_new_approval(repo: Repo) -> None:
    """A log written by an earlier harness-gate: its v1 line grants nothing, and `approve`
    appends the v2 record after it (the log stays append-only)."""
    adopted(repo)
    folder = repo.new_plan()
    digest = __import__("hashlib").sha256(repo.read(f"{folder}/plan.md")).hexdigest()
    v1 = (
        '{"schema":"harness-gate.approval/v1","gate":"plan","artifact":"plan.md","sha256":"'
        + digest
        + '","answer":"y","approver":"A <a@x>","approved_at":"2026-01-01T00:00:00Z"}\n'
    )
    repo.write(f"{folder}/approvals.jsonl", v1)
    repo.approve()
    lines = repo.read(f"{folder}/approvals.jsonl").decode().splitlines(keepends=True)
    assert lines[0] == v1 and json.loads(lines[1])["seq"] == 1
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    doc = json.loads(res.output)
    assert res.exit_code == 0, res.output  # the v1 line is a warning, not a block
    assert [(f["code"], f["severity"], f["line"]) for f in doc["findings"]] == [("HG204", "warning", 1)]
