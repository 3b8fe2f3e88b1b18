"""An agent that reaches into the git directory from its shell, where no sandbox stops it:
the session record Stop keeps there removed or forged, a `commondir` that sends git to
another folder's configuration and hooks. Stop must not fail open (docs/agents.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate import agent_session, git
from tests.helpers import Repo
from tests.test_agent_hook import decision, hook, plumbing_commit, stop_payload

pytestmark = pytest.mark.slow


def _record(repo: Repo, sid: str) -> Path:
    return agent_session._path(git.locate(repo.path).cache_dir, sid)


@pytest.fixture
def branch(gated: Repo) -> Repo:
    """`gated` on a branch of its own: its fork point from `main` is the plan's commit."""
    gated.git("checkout", "-qb", "work")
    return gated


def test_a_removed_session_record_falls_back_to_the_fork_point(branch: Repo) -> None:
    assert decision(branch, "Bash", {"command": "git status"})[0] == "allow"  # session s1 begins
    assert _record(branch, "s1").exists()
    plumbing_commit(branch, "other.py", "x = 9\n")
    _record(branch, "s1").unlink()  # the shell removes what Stop would judge from
    out = hook(branch, stop_payload(branch, session_id="s1"))[1]
    assert out is not None and out["decision"] == "block", out
    assert "`other.py`" in out["reason"] and "since the branch left its base" in out["reason"]


@pytest.mark.parametrize("forged", [{"start": "HEAD"}, {"blocked": "forged", "blocks": 0}], ids=["start", "blocked"])
def test_a_malformed_session_record_falls_back_to_the_fork_point(branch: Repo, forged: dict[str, object]) -> None:
    """Not as the hook writes it: no record. A start moved past the commit, with a block
    digest no block wrote, does not hide the commit."""
    assert decision(branch, "Bash", {"command": "git status"})[0] == "allow"
    plumbing_commit(branch, "other.py", "x = 9\n")
    head = branch.git("rev-parse", "HEAD").decode().strip()
    _record(branch, "s1").write_text(json.dumps({"start": head, "blocked": "", "blocks": 0, **forged}))
    out = hook(branch, stop_payload(branch, session_id="s1"))[1]
    assert out is not None and out["decision"] == "block" and "`other.py`" in out["reason"]


def _forge(repo: Repo, sid: str, **fields: object) -> None:
    path = _record(repo, sid)
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, **fields}))


def test_a_forged_block_counter_does_not_silence_a_new_violation(branch: Repo) -> None:
    assert decision(branch, "Bash", {"command": "git status"})[0] == "allow"
    _forge(branch, "s1", blocks=agent_session.MAX_BLOCKS)  # "the blocks are spent"
    branch.write("other.py", "x = 2\n")
    out = hook(branch, stop_payload(branch, session_id="s1"))[1]
    assert out is not None and out["decision"] == "block" and "other.py" in out["reason"]


def test_a_forged_block_counter_inside_a_run_of_blocks_is_still_said(branch: Repo) -> None:
    """Within a run the runtime vouches for (`stop_hook_active`), the bound holds, but
    what would be refused is said to the human, never dropped."""
    assert decision(branch, "Bash", {"command": "git status"})[0] == "allow"
    branch.write("other.py", "x = 2\n")
    assert hook(branch, stop_payload(branch, session_id="s1"))[1]["decision"] == "block"
    _forge(branch, "s1", blocks=agent_session.MAX_BLOCKS)
    branch.write("secret/x", "changed\n")
    out = hook(branch, stop_payload(branch, True, session_id="s1"))[1]
    assert out is not None and "secret/x" in out["systemMessage"]


@pytest.fixture
def elsewhere(gated: Repo, tmp_path: Path) -> tuple[Repo, Path]:
    """`.git/commondir` written to name a copy of the git directory whose configuration
    runs a command at `git status` and whose hooks are the agent's."""
    other = tmp_path / "other-git"
    gated.git("clone", "-q", "--bare", str(gated.path), str(other))
    mark = tmp_path / "ran"
    with (other / "config").open("a") as fh:
        fh.write(f'[core]\n\tfsmonitor = "touch {mark}; false"\n\thooksPath = {tmp_path}/hooks\n')
    (gated.path / ".git/commondir").write_text(f"{other}\n")
    return gated, mark


def test_stop_refuses_a_git_directory_that_takes_its_config_elsewhere(elsewhere: tuple[Repo, Path]) -> None:
    repo, mark = elsewhere
    repo.write("other.py", "x = 2\n")
    out = hook(repo, stop_payload(repo, session_id="s"))[1]
    assert out is not None and out["decision"] == "block" and "HG909" in out["reason"], out
    assert not mark.exists()
    res = repo.cli("check", "--staged")
    assert res.exit_code == 2 and "HG909" in res.output


def test_a_linked_work_tree_is_its_own_repository(gated: Repo, tmp_path: Path) -> None:
    """The one `commondir` git writes itself: `.git/worktrees/<name>` names the repository."""
    gated.git("worktree", "add", "-q", str(tmp_path / "linked"), "-b", "linked")
    assert git.locate(tmp_path / "linked").toplevel == (tmp_path / "linked").resolve()


@pytest.mark.parametrize("rel", [".gitignore", "secret/.gitignore"])
def test_a_new_gitignore_that_hides_itself_is_reported(gated: Repo, rel: str) -> None:
    """`*` in a new ignore file hides the new files beside it, and itself, from `git
    status`: the ignore file is reported, as the protected path it is."""
    gated.write(rel, "*\n")
    gated.write(rel.replace(".gitignore", "hidden.py"), "x\n")
    out = hook(gated, stop_payload(gated, session_id="s"))[1]
    assert out is not None and out["decision"] == "block", out
    assert f"`{rel}`: protected" in out["reason"] and "HG102" in out["reason"]


def _objects(repo: Repo) -> set[str]:
    return {str(p) for p in (repo.path / ".git/objects").rglob("*") if p.is_file()}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_gates_commands_run_where_the_sandbox_makes_git_read_only(gated: Repo) -> None:
    """In an agent's sandbox `.git` is read-only (so its shell cannot replace an object):
    `verify`, `status` and `check` still answer, their objects in a scratch store, and
    nothing is added to the repository's."""
    gated.write("src/new.py", "n = 1\n")
    gated.git("add", "src/new.py")
    before = _objects(gated)
    git_dir = str(gated.path / ".git")
    for args in (["verify"], ["status"], ["check", "--staged"]):
        proc = subprocess.run(
            ["bwrap", "--bind", "/", "/", "--ro-bind", git_dir, git_dir, "--dev", "/dev", "--",
             sys.executable, "-m", "harness_gate", *args],
            cwd=gated.path, capture_output=True, check=False, timeout=120,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        )  # fmt: skip
        assert proc.returncode == 0, (args, proc.stdout.decode()[-800:], proc.stderr.decode()[-800:])
    assert gated.read("harness/plans/p1/evidence.jsonl").strip()  # verify appended its record
    assert _objects(gated) == before


@pytest.mark.parametrize(
    ("rel", "target", "said"),
    [
        ("src/out.py", "/etc/hostname", "outside the repository"),
        ("src/up.py", "../other.py", "`other.py`"),
        ("src/deep/a/b/dir", "../../../../secret", "`secret"),
    ],
    ids=["file-outside", "file-inside", "folder-inside"],
)
def test_stop_follows_a_new_symbolic_link_git_lists(gated: Repo, rel: str, target: str, said: str) -> None:
    """Stop does not look again at the folders on the way to a file `git status` lists
    (git enters no link), but the listed name itself may be a link: it is judged where it
    leads."""
    link = gated.path / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    out = hook(gated, stop_payload(gated, session_id="s"))[1]
    assert out is not None and out["decision"] == "block", out
    assert said in out["reason"]
