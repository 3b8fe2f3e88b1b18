"""First run and daily use: each thing a new user trips over, held to what they should see."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import Repo

PY = Path(sys.executable).as_posix()
PLACEHOLDER = "FILL_IN: PASS | PASS_WITH_NOTES | REPAIR_REQUIRED | BLOCKED"


@pytest.fixture
def adopted(repo: Repo) -> Repo:
    repo.write("README.md", "x\n")
    repo.write(".gitignore", "__pycache__/\n")
    repo.write("src/a.py", "a = 1\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    return repo


def planned(repo: Repo, command: str = f"{PY} -c pass") -> Repo:
    res = repo.cli("plan", "new", "p1", "--objective", "Fix the thing", "--boundary", "src/**", "--verify",
                   f"tests={command}")  # fmt: skip
    assert res.exit_code == 0, res.output
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan", "--no-verify")
    return repo


# 1. the demo, with bytecode writing on (as on every user's machine)
@pytest.mark.slow
def test_the_demo_passes_where_python_writes_bytecode(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    res = subprocess.run([PY, "-m", "harness_gate", "demo"], cwd=tmp_path, env=env, capture_output=True, check=False)
    assert res.returncode == 0, res.stdout.decode()[-2000:]
    assert b"Demo finished: every step behaved as shown." in res.stdout


# 2. a verify command that writes files
def test_verify_names_what_a_command_wrote_and_how_to_fix_it(adopted: Repo) -> None:
    planned(adopted, f"{PY} -c \"open('junit.xml', 'w').write('x')\"")
    res = adopted.cli("verify")
    assert res.exit_code == 1
    assert "HG309" in res.output
    assert "created junit.xml (untracked, not ignored)" in res.output
    assert "verify_outputs" in res.output and ".git/info/exclude" in res.output
    (adopted.path / "junit.xml").unlink()
    adopted.write(".harness-gate.toml", 'artifacts_dir = "harness"\nverify_outputs = ["junit.xml"]\n')
    res = adopted.cli("verify")
    assert res.exit_code == 0, res.output  # named as the command's output: left out of the fingerprint


def test_untracked_files_in_the_verified_tree_are_said(adopted: Repo) -> None:
    planned(adopted)
    adopted.write("scratch-notes.txt", "mine\n")
    res = adopted.cli("verify")
    assert res.exit_code == 0
    assert "HG310" in res.output and "scratch-notes.txt" in res.output
    assert "HG310" in adopted.cli("status").output


def test_status_after_the_tree_moved_since_verify_says_verify_again(adopted: Repo) -> None:
    planned(adopted)
    assert adopted.cli("verify").exit_code == 0
    adopted.write("scratch-notes.txt", "written after verify\n")
    out = adopted.cli("status").output
    assert "tree-moved" in out
    assert "next:       the work tree changed since verify" in out and "harness-gate verify again" in out
    assert "HG310 untracked files are part of the tree verify records: scratch-notes.txt" in out


# 3. init says what comes next
def test_init_says_to_commit_the_set_up_and_install_the_hooks(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    out = repo.cli("init").output
    assert "git add -A && git commit -m 'Adopt harness-gate'" in out
    assert "pre-commit install --hook-type pre-commit --hook-type pre-merge-commit --hook-type pre-push" in out
    assert "harness-gate plan new" in out


# 4. plan amend
def test_plan_amend_writes_an_amendment_ready_for_approve(adopted: Repo) -> None:
    planned(adopted)
    res = adopted.cli("plan", "amend", "--add-boundary", "docs/**", "--add-verify", "lint=ruff check")
    assert res.exit_code == 0, res.output
    assert "write_boundary: adds docs/**" in res.output
    approval = adopted.cli("approve", input="y\n")
    assert approval.exit_code == 0, approval.output
    assert "changes (material):" in approval.output and "  docs/**" in approval.output
    status = json.loads(adopted.cli("status", "--json").output)["data"]
    assert status["boundary"] == ["src/**", "docs/**"]
    assert [c["id"] for c in status["required_commands"]] == ["tests", "lint"]
    assert adopted.cli("lint").exit_code == 0
    assert adopted.cli("plan", "amend").exit_code == 2  # nothing to amend is a usage error


# 5. status informs, never blocks, and says what to do next
def test_status_in_ordinary_states(adopted: Repo) -> None:
    res = adopted.cli("status")
    assert res.exit_code == 0 and "there is no plan yet" in res.output
    planned(adopted)
    adopted.write("src/a.py", "a = 2\n")
    assert "harness-gate verify" in adopted.cli("status").output
    assert adopted.cli("verify").exit_code == 0
    assert "review new" in adopted.cli("status").output
    assert adopted.cli("review", "new").exit_code == 0
    res = adopted.cli("status")
    assert res.exit_code == 0, res.output  # the unfilled review is no reason to say "blocked"
    assert "fills in harness/plans/p1/001-review.md" in res.output
    assert "blocked" not in res.output
    res = adopted.cli("status", "--plan", "ghost")
    assert res.exit_code == 2 and "there is no plan `ghost`" in res.output


# 6. a reader that stops reading
def test_a_closed_pipe_ends_quietly(adopted: Repo) -> None:
    planned(adopted)
    read, write = os.pipe()
    os.close(read)  # nobody will read: the first write fails with EPIPE
    proc = subprocess.run([PY, "-m", "harness_gate", "status"], cwd=adopted.path, stdout=write,
                          stderr=subprocess.PIPE, check=False)  # fmt: skip
    os.close(write)
    assert proc.returncode == 0
    assert proc.stderr == b""


# 7. approve shows what is approved
def test_approve_shows_the_objective_boundary_and_commands_before_the_hash(adopted: Repo) -> None:
    adopted.cli("plan", "new", "p1", "--objective", "Fix the thing", "--boundary", "src/**", "--verify",
                "tests=pytest -q")  # fmt: skip
    out = adopted.cli("approve", input="y\n").output
    assert out.index("objective: Fix the thing") < out.index("  src/**") < out.index("tests: pytest -q")
    assert out.index("tests: pytest -q") < out.index("sha256:") < out.index("Proceed with this Plan? [y/N]")


# 8. refusals are findings (exit 1); every command exits 0 where harness-gate is not adopted
def test_refusals_exit_1_and_inactive_repositories_exit_0(adopted: Repo, tmp_path: Path) -> None:
    planned(adopted)
    res = adopted.cli("complete")
    assert res.exit_code == 1 and "HG405" in res.output
    assert adopted.cli("complete", "--cancel").exit_code == 0
    res = adopted.cli("review", "new")
    assert res.exit_code == 1 and "HG411" in res.output
    plain = Repo(tmp_path / "plain")
    plain.path.mkdir()
    subprocess.run(["git", "init", "-q", str(plain.path)], check=True)
    for args in (["verify"], ["review", "new"], ["complete"], ["status"], ["lint"], ["record", "--", "true"]):
        proc = plain.run(*args)
        assert proc.returncode == 0, (args, proc.stdout)
        assert b"inactive" in proc.stdout


# 9. --format github is check's
def test_only_check_speaks_github(adopted: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    assert adopted.cli("status", "--format", "github").exit_code == 2
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    res = adopted.run("check", "--staged", "--format", "github")
    assert res.returncode == 0
    assert b"step summary" not in res.stdout  # there is none to point at


# 10. configuration errors a person can act on
@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            'artifact_dir = "harness"\n',
            ".harness-gate.toml, line 1: unknown key `artifact_dir` (did you mean `artifacts_dir`?)",
        ),
        ('artifacts_dir = "../outside"\n', ".harness-gate.toml, line 1: `artifacts_dir` must be a relative path"),
        ('artifacts_dir = "harness\n', ".harness-gate.toml, line 1, column 25: not valid TOML"),
        (
            '\nevidence_stages = ["prepush"]\n',
            ".harness-gate.toml, line 2: `evidence_stages[0]`: 'prepush' is not one of",
        ),
        ("[formats.taks]\nenabled = false\n", "unknown key `formats.taks` (did you mean `formats.tasks`?)"),
    ],
)
def test_configuration_errors_name_the_file_line_and_key(adopted: Repo, text: str, said: str) -> None:
    adopted.write(".harness-gate.toml", text)
    res = adopted.cli("status")
    assert res.exit_code == 2
    assert said in res.output


# 11. init in an adopted repository; a dependency that does not load
def test_init_again_and_someone_elses_config(adopted: Repo) -> None:
    again = adopted.cli("init").output
    assert "has harness-gate's hooks" in again and "repo: local" not in again
    adopted.write(".pre-commit-config.yaml", "repos: []\n")
    other = adopted.cli("init").output
    assert other.count("- repo: local") == 1 and "default_install_hook_types" in other
    assert adopted.read(".pre-commit-config.yaml") == b"repos: []\n"  # never rewritten


def test_a_dependency_that_does_not_load_is_one_line(adopted: Repo, tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "click"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('a click under development')\n")
    project = Path(__file__).resolve().parent.parent
    res = adopted.run("status", env={"PYTHONPATH": f"{shadow.parent}{os.pathsep}{project}"})
    assert res.returncode == 2
    assert b"Traceback" not in res.stderr
    assert b"cannot load its command line" in res.stderr


# 12. who reviews is the reviewer's to say; a demo repository can be kept
def test_the_review_template_leaves_the_reviewer_to_the_reviewer(adopted: Repo) -> None:
    planned(adopted)
    assert adopted.cli("verify").exit_code == 0
    assert adopted.cli("review", "new").exit_code == 0
    text = adopted.read("harness/plans/p1/001-review.md").decode()
    assert "Ada Author" not in text  # the author's own identity is not offered
    adopted.write("harness/plans/p1/001-review.md", text.replace(PLACEHOLDER, "PASS"))
    res = adopted.cli("lint")
    assert res.exit_code == 1 and "identity" in res.output  # not a review until someone signs it


@pytest.mark.slow
def test_the_demo_can_keep_its_repository(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    res = subprocess.run([PY, "-m", "harness_gate", "demo", "--keep", str(kept)], capture_output=True, check=False)
    assert res.returncode == 0, res.stdout.decode()[-1000:]
    assert (kept / "harness" / "plans" / "add" / "002-completion.md").is_file()
    again = subprocess.run([PY, "-m", "harness_gate", "demo", "--keep", str(kept)], capture_output=True, check=False)
    assert again.returncode == 2 and b"not an empty directory" in again.stdout


# 13. help says it plainly
def test_help_lists_every_command_without_cutting_it_short(repo: Repo) -> None:
    out = repo.cli("--help").output
    listing = out[out.index("Commands:") :]
    assert "..." not in listing
    assert "seed" not in out and "clean-context" not in out
    for sub in (["formats", "--help"], ["review", "--help"], ["plan", "--help"]):
        text = repo.cli(*sub).output
        assert "..." not in text[text.index("Commands:") :] and "seed" not in text
