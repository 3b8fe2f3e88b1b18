"""`harness-gate pre-receive` as git's pre-receive hook of a bare repository: every case a
real `git push` from a clone, with the pushed objects in git's quarantine while the hook
runs (docs/pre-receive.md)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate.git import process
from tests.helpers import Repo, adopted_main, blocked_branch, planned_branch, verified_work

pytestmark = pytest.mark.slow  # every case pushes through a hook that starts Python


def server(tmp: Path, *args: str) -> Path:
    """A bare repository (HEAD: main) whose pre-receive hook is `harness-gate pre-receive ARGS`."""
    bare = tmp / "server.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    line = " ".join(shlex.quote(a) for a in (sys.executable, "-m", "harness_gate", "pre-receive", *args))
    hook.write_text(f"#!/bin/sh\nexec {line}\n")
    hook.chmod(0o755)
    return bare


def push(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", "origin", *args], cwd=repo.path, capture_output=True, text=True, check=False)


def refs(bare: Path) -> str:
    return subprocess.run(["git", "for-each-ref"], cwd=bare, capture_output=True, text=True, check=True).stdout


def files(bare: Path) -> set[str]:
    return {str(p.relative_to(bare)) for p in bare.rglob("*")}


def has_object(bare: Path, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=bare, capture_output=True, check=False).returncode == 0


@pytest.fixture
def origin(repo: Repo, tmp_path: Path) -> Path:
    """`main` adopted and pushed (the repository's first push) to a server with the hook."""
    adopted_main(repo)
    bare = server(tmp_path)
    repo.git("remote", "add", "origin", str(bare))
    first = push(repo, "main")
    assert first.returncode == 0, first.stderr
    assert "first push" in first.stderr
    return bare


def test_the_git_environment_keeps_the_quarantine() -> None:
    """The hardened environment drops what changes plumbing's answers, never where the
    pushed objects are: without these a hook cannot read the commits it judges."""
    names = ("GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_DIR")
    saved = {n: os.environ.get(n) for n in names}
    try:
        for n in names:
            os.environ[n] = f"/q/{n}"
        env = process._env()
        assert {n: env.get(n) for n in names} == {n: f"/q/{n}" for n in names}
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def test_a_push_made_with_no_verify_is_rejected_and_leaves_nothing(repo: Repo, origin: Path) -> None:
    outside = blocked_branch(repo)
    before = files(origin)
    out = push(repo, "--no-verify", "feature")
    assert out.returncode != 0
    assert "HG101" in out.stderr and outside[:12] in out.stderr
    assert "pre-receive hook declined" in out.stderr
    assert "refs/heads/feature" not in refs(origin)
    assert not has_object(origin, outside)  # the quarantine was dropped
    assert files(origin) == before  # no cache, no object, no ref


def test_a_new_branch_inside_its_boundary_is_accepted(repo: Repo, origin: Path) -> None:
    planned_branch(repo)
    verified_work(repo)
    out = push(repo, "feature")
    assert out.returncode == 0, out.stderr
    assert "refs/heads/feature: allowed (2 commits judged at pre-push)" in out.stderr
    assert "refs/heads/feature" in refs(origin)


def test_a_new_branch_without_a_plan_is_rejected(repo: Repo, origin: Path) -> None:
    repo.git("checkout", "-qb", "feature")
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "work", "--no-verify")
    out = push(repo, "feature")
    assert out.returncode != 0 and "HG201" in out.stderr


def test_a_force_push_is_judged_whole_against_the_default_branch(repo: Repo, origin: Path) -> None:
    planned_branch(repo)
    verified_work(repo)
    assert push(repo, "feature").returncode == 0
    # Rewritten: the work commit now also writes outside the boundary.
    repo.write("other.py", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "--amend", "--no-edit", "--no-verify")
    bad = repo.git("rev-parse", "HEAD").decode().strip()
    out = push(repo, "--force", "feature")
    assert out.returncode != 0 and "HG101" in out.stderr
    assert bad not in refs(origin)
    # Rewritten again, inside the boundary: accepted.
    repo.git("rm", "-q", "other.py")
    repo.git("commit", "-q", "--amend", "--no-edit", "--no-verify")
    assert push(repo, "--force", "feature").returncode == 0


def test_the_default_branch_is_never_rewritten(repo: Repo, origin: Path) -> None:
    repo.git("commit", "-q", "--amend", "-m", "adopt, reworded", "--no-verify")
    out = push(repo, "--force", "main")
    assert out.returncode != 0 and "HG517" in out.stderr


def test_deletions(repo: Repo, origin: Path) -> None:
    planned_branch(repo)
    assert push(repo, "feature").returncode == 0
    out = push(repo, ":feature")
    assert out.returncode == 0, out.stderr
    assert "refs/heads/feature: allowed (deleted)" in out.stderr
    out = push(repo, ":main")
    assert out.returncode != 0 and "HG518" in out.stderr
    assert "refs/heads/main" in refs(origin)


def test_deletions_refused_by_the_default_branchs_configuration(repo: Repo, tmp_path: Path) -> None:
    adopted_main(repo)
    with (repo.path / ".harness-gate.toml").open("a") as f:
        f.write('\n[pre_receive]\ndeletions = "reject"\n')
    repo.git("commit", "-qam", "no deletions")
    bare = server(tmp_path)
    repo.git("remote", "add", "origin", str(bare))
    assert push(repo, "main").returncode == 0
    planned_branch(repo)
    assert push(repo, "feature").returncode == 0
    out = push(repo, ":feature")
    assert out.returncode != 0 and "HG518" in out.stderr and "deletions" in out.stderr


def test_tags(repo: Repo, origin: Path) -> None:
    repo.git("tag", "v1", "main")
    repo.git("tag", "-a", "-m", "annotated", "v1a", "main")
    out = push(repo, "v1", "v1a")
    assert out.returncode == 0, out.stderr
    # A tag of a commit that no branch holds: code the gate never judged.
    repo.git("checkout", "-q", "--detach")
    repo.write("other.py", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "loose", "--no-verify")
    repo.git("tag", "v2")
    out = push(repo, "v2")
    assert out.returncode != 0 and "HG519" in out.stderr
    # A tag pushed with the branch that holds it: the branch is judged, and the tag is on it.
    repo.git("checkout", "-q", "main")
    planned_branch(repo)
    verified_work(repo)
    repo.git("tag", "v3")
    out = push(repo, "feature", "v3")
    assert out.returncode == 0, out.stderr
    assert "refs/tags/v3: allowed (on a branch)" in out.stderr


def test_other_refs_are_refused_by_default(repo: Repo, origin: Path) -> None:
    repo.git("notes", "add", "-m", "note", "main")
    out = push(repo, "refs/notes/commits")
    assert out.returncode != 0 and "HG518" in out.stderr and "other_refs" in out.stderr


def test_a_push_to_the_default_branch_that_lands_a_pull_request(repo: Repo, origin: Path) -> None:
    planned_branch(repo)
    verified_work(repo, reviewer="Rae")
    # Landing an open plan: `ci` asks every plan that lands to be ended.
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-verify", "-m", "Merge feature", "feature")
    out = push(repo, "main")
    assert out.returncode != 0 and "HG415" in out.stderr
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.git("checkout", "-q", "feature")
    res = repo.cli("complete")
    assert res.exit_code == 0, res.output
    repo.git("add", "-A")
    repo.git("commit", "-qm", "complete")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "--no-verify", "-m", "Merge feature", "feature")
    out = push(repo, "main")
    assert out.returncode == 0, out.stderr
    assert "refs/heads/main: allowed" in out.stderr and "judged at ci" in out.stderr


def test_a_broken_configuration_on_the_default_branch_rejects_every_push(repo: Repo, tmp_path: Path) -> None:
    adopted_main(repo)
    repo.write(".harness-gate.toml", "artifacts_dir = [\n")
    repo.git("commit", "-qam", "broken", "--no-verify")
    bare = server(tmp_path)
    repo.git("remote", "add", "origin", str(bare))
    assert push(repo, "main").returncode == 0  # the first push: nothing to judge it by
    repo.git("checkout", "-qb", "feature")
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "work", "--no-verify")
    out = push(repo, "feature")
    assert out.returncode != 0
    assert "error HG902" in out.stderr and ".harness-gate.toml" in out.stderr


def test_a_configuration_file_the_default_branch_lacks_rejects_every_push(repo: Repo, tmp_path: Path) -> None:
    adopted_main(repo)
    bare = server(tmp_path, "--config", "gate.toml")
    repo.git("remote", "add", "origin", str(bare))
    assert push(repo, "main").returncode == 0
    planned_branch(repo)
    out = push(repo, "feature")
    assert out.returncode != 0 and "error HG902" in out.stderr and "gate.toml" in out.stderr


def test_a_branch_that_deletes_the_configuration_is_rejected(repo: Repo, origin: Path) -> None:
    planned_branch(repo)
    repo.git("rm", "-q", ".harness-gate.toml")
    repo.git("commit", "-qm", "no more gate", "--no-verify")
    out = push(repo, "feature")
    assert out.returncode != 0 and "HG102" in out.stderr


def test_the_first_push_creates_the_default_branch_alone(repo: Repo, tmp_path: Path) -> None:
    adopted_main(repo)
    repo.git("branch", "other")
    bare = server(tmp_path)
    repo.git("remote", "add", "origin", str(bare))
    out = push(repo, "main", "other")
    assert out.returncode != 0 and "HG518" in out.stderr
    assert refs(bare) == ""
    assert push(repo, "main").returncode == 0
    assert push(repo, "other").returncode == 0


def test_an_inactive_repository_takes_every_push(repo: Repo, tmp_path: Path) -> None:
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    bare = server(tmp_path)
    repo.git("remote", "add", "origin", str(bare))
    assert push(repo, "main").returncode == 0
    repo.git("tag", "v1")
    repo.git("checkout", "-qb", "feature")
    repo.write("other.py", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "work")
    out = push(repo, "feature", "v1")
    assert out.returncode == 0, out.stderr
    assert "inactive" in out.stderr


def thousand(repo: Repo, branch: str, *, outside_at: int | None = None) -> str:
    """1000 commits on `branch` from HEAD, each changing a file under src/ (commit number
    `outside_at` also writes other.py); returns that commit's id or the tip's."""
    head = repo.git("rev-parse", "HEAD").decode().strip()
    stream = []
    for i in range(1000):
        message, content = f"c{i}\n", f"{i}\n"
        stream.append(
            f"commit refs/heads/{branch}\nmark :{i + 1}\ncommitter A <a@example.com> 1700000000 +0000\n"
            f"data {len(message)}\n{message}"
            + (f"from {head}\n" if i == 0 else "")
            + f"M 100644 inline src/f{i % 50}.py\ndata {len(content)}\n{content}\n"
            + ("M 100644 inline other.py\ndata 2\nx\n" if i == outside_at else "")
        )
    marks = repo.path.parent / f"{branch}.marks"
    repo.git("fast-import", "--quiet", f"--export-marks={marks}", input="".join(stream).encode())
    wanted = 1000 if outside_at is None else outside_at + 1
    return dict(line.split() for line in marks.read_text().splitlines())[f":{wanted}"]


def test_a_push_of_a_thousand_commits(repo: Repo, origin: Path) -> None:
    """Every commit judged on its own: a thousand inside the boundary are accepted, and one
    outside it among a thousand is found (benchmarks/run times the hook)."""
    planned_branch(repo)
    thousand(repo, "feature")
    out = push(repo, "feature")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "1001 commits judged" in out.stderr
    repo.git("checkout", "-q", "-b", "second", "main")
    planned_branch_commit = repo.git("rev-parse", "feature~1000").decode().strip()
    repo.git("reset", "-q", "--hard", planned_branch_commit)
    outside = thousand(repo, "second", outside_at=700)
    out = push(repo, "second")
    assert out.returncode != 0
    assert f"commit {outside[:12]}: " in out.stderr and "HG101" in out.stderr
    assert out.stderr.count("HG101 ") == 1 + 1  # the group's title, and its one finding
