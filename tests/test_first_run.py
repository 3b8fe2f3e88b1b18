"""First run and daily use: each thing a new user trips over, held to what they should see."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import SCOPE_READ, Repo, adopted_main

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
    res = repo.cli(
        "plan", "new", "p1", "--objective", "Fix the thing", "--boundary", "src/**", "--verify", f"tests={command}"
    )
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
    status = adopted.cli("status").output  # what to do now: not "verify again" while junit.xml is there
    assert "next:       commit, remove or ignore the untracked files HG310 names; then harness-gate verify" in status
    assert "HG310 untracked files are part of the tree verify records: junit.xml" in status
    (adopted.path / "junit.xml").unlink()
    adopted.write(".harness-gate.toml", 'artifacts_dir = "harness"\nverify_outputs = ["junit.xml"]\n')
    res = adopted.cli("verify")
    assert res.exit_code == 0, res.output  # named as the command's output: left out of the fingerprint


def test_a_command_that_fails_and_writes_a_file_reports_both(adopted: Repo) -> None:
    planned(adopted, f"{PY} -c \"open('out.txt', 'w').write('x'); raise SystemExit('no such module: thing')\"")
    res = adopted.cli("verify")
    assert res.exit_code == 1
    assert "HG309" in res.output and "created out.txt" in res.output
    assert "HG305" in res.output and "no such module: thing" in res.output  # the failure itself, not hidden


def test_untracked_files_in_the_verified_tree_are_said(adopted: Repo) -> None:
    planned(adopted)
    adopted.write("scratch-notes.txt", "mine\n")
    res = adopted.cli("verify")
    assert res.exit_code == 0
    assert "HG310" in res.output and "scratch-notes.txt" in res.output
    assert "HG310" in adopted.cli("status").output


def test_a_scratch_file_verify_saw_is_named_at_ci_with_the_way_out(adopted: Repo) -> None:
    """The issue's trail: a scratch file joined the verified tree, the commit left it out, and
    CI said only "run verify again"; now verify warns (HG310) and CI's hint names the cause."""
    planned(adopted)
    adopted.write("src/a.py", "a = 2\n")
    adopted.write("scratch-notes.txt", "mine\n")
    assert "HG310" in adopted.cli("verify").output
    adopted.git("add", "src", "harness")  # the scratch file stays out of the commit
    adopted.git("commit", "-qm", "work and evidence")
    res = adopted.cli("check", "--stage", "ci", "--base", "HEAD~2")
    assert res.exit_code == 1
    assert "HG302" in res.output and "scratch-notes.txt" in res.output
    assert "HG310" in res.output and "commit, remove or ignore it first" in res.output


def test_status_after_the_tree_moved_since_verify_says_verify_again(adopted: Repo) -> None:
    planned(adopted)
    assert adopted.cli("verify").exit_code == 0
    adopted.write("src/a.py", "a = 3\n")
    out = adopted.cli("status").output
    assert "tree-moved" in out
    assert "next:       the work tree changed since verify" in out and "harness-gate verify again" in out
    adopted.write("scratch-notes.txt", "written after verify\n")  # an untracked file: dealt with first
    out = adopted.cli("status").output
    assert "next:       commit, remove or ignore the untracked files HG310 names; then harness-gate verify" in out
    assert "HG310 untracked files are part of the tree verify records: scratch-notes.txt" in out


# 3. init says what comes next
def test_init_says_to_commit_the_set_up_and_install_the_hooks(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    out = repo.cli("init").output
    add = "git add .harness-gate.toml .gitattributes .pre-commit-config.yaml harness && git commit -m 'Adopt harness-ga"
    assert f"next: {add}" in out
    assert "pre-commit install --hook-type pre-commit --hook-type pre-merge-commit --hook-type pre-push" in out
    assert "harness-gate plan new" in out
    repo.write("src/wip.py", "work in progress\n")
    repo.git("add", ".harness-gate.toml", ".gitattributes", ".pre-commit-config.yaml", "harness")
    repo.git("commit", "-qm", "Adopt harness-gate")
    assert repo.git("status", "--porcelain").decode().split() == ["??", "README.md", "??", "src/"]  # left alone
    again = repo.cli("init").output  # adopted and committed: no adoption step to take again
    assert "git add" not in again and "next: pre-commit install" in again


def test_init_beside_a_pyproject_table_sets_up_the_root_its_own_file_names(repo: Repo) -> None:
    repo.write("pyproject.toml", '[tool.harness-gate]\nartifacts_dir = "gov"\n')
    assert repo.cli("init").exit_code == 0
    # `.harness-gate.toml` is then the whole configuration: everything else follows it.
    assert 'artifacts_dir = "harness"' in repo.read(".harness-gate.toml").decode()
    assert (repo.path / "harness/plans/.gitkeep").is_file() and not (repo.path / "gov").exists()
    assert "entry: harness-gate lint --artifacts-only" in repo.read(".pre-commit-config.yaml").decode()


def test_init_in_an_adopted_repository_names_every_protected_file_it_changed(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.cli("init")
    repo.git("add", ".harness-gate.toml", "harness")  # adopted without the hooks' files
    repo.git("commit", "-qm", "Adopt harness-gate")
    out = repo.cli("init").output
    step = next(line for line in out.splitlines() if "plan new gate-setup" in line)
    assert "--boundary .gitattributes --boundary .pre-commit-config.yaml" in step


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


def test_plan_amend_keeps_the_plan_as_written_and_shows_the_old_objective(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    res = repo.cli(
        "plan",
        "new",
        "p1",
        "--objective",
        "Fix the thing",
        "--boundary",
        "src/**",
        "--verify",
        "tests=python -c pass",
        "--risk",
        "R1",
        "--risk",
        "R2",
    )
    assert res.exit_code == 0, res.output
    repo.approve()
    assert repo.cli("plan", "amend", "--objective", "Fix two things").exit_code == 0
    text = repo.read("harness/plans/p1/001-amendment.md").decode()
    assert "## Risks\n\n- R1\n- R2\n" in text  # the list stays a list
    approval = repo.cli("approve", input="y\n")
    assert "objective: (was: Fix the thing)" in approval.output and "objective: Fix two things" in approval.output


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "amend", "--add-boundary", "/abs"],
        ["plan", "new", "p2", "--objective", "o", "--boundary", "../x", "--verify", "t=true"],
        ["plan", "new", "p2", "--objective", "o", "--boundary", "**", "--verify", "t=true"],
    ],
)
def test_an_option_that_makes_an_invalid_plan_is_a_usage_error(adopted: Repo, argv: list[str]) -> None:
    planned(adopted)
    before = sorted(p.name for p in (adopted.path / "harness/plans").rglob("*"))
    res = adopted.cli(*argv)
    assert res.exit_code == 2, res.output
    assert "HG904" in res.output and repr(argv[6] if argv[1] == "new" else argv[3]) in res.output
    assert ".md:" not in res.output  # no line of a file that was never written
    assert sorted(p.name for p in (adopted.path / "harness/plans").rglob("*")) == before


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


@pytest.mark.slow
def test_status_names_the_step_that_works(adopted: Repo) -> None:
    """Each next step is one the named command accepts: no `complete` that complete refuses."""
    adopted.cli(
        "plan", "new", "p1", "--objective", "Fix the thing", "--boundary", "src/**", "--verify", f"tests={PY} -c pass"
    )
    adopted.approve()
    out = adopted.cli("status").output  # approved, not committed
    assert "next:       commit the plan and its approval: git add harness && git commit -m 'Plan: p1'" in out
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "plan")
    adopted.write("src/a.py", "a = 2\n")
    assert adopted.cli("verify").exit_code == 0
    assert adopted.cli("review", "new", "--reviewer", "Rae Viewer").exit_code == 0
    [review] = (adopted.path / "harness/plans/p1").glob("*-review.md")
    review.write_text(review.read_text().replace(*SCOPE_READ).replace(PLACEHOLDER, "PASS"))
    adopted.git("add", "-A")
    adopted.git("commit", "-qm", "work, evidence, review")
    assert "next:       complete it: harness-gate complete" in adopted.cli("status").output
    adopted.write("src/a.py", "a = 3\n")  # changed after the review
    out = adopted.cli("status").output
    assert "next:       the tree changed since the review: harness-gate verify, then harness-gate review new" in out
    assert adopted.cli("complete").exit_code == 1  # what status no longer suggests
    assert adopted.cli("verify").exit_code == 0
    assert adopted.cli("review", "new", "--reviewer", "Rae Viewer").exit_code == 0  # the step status named works


# 6. a reader that stops reading
@pytest.mark.slow
@pytest.mark.parametrize(
    ("argv", "code"),
    [(["status"], 0), (["--help"], 0), (["plan", "--help"], 0), (["--version"], 0), (["check", "--range", "x"], 2)],
)
def test_a_closed_pipe_ends_quietly(adopted: Repo, argv: list[str], code: int) -> None:
    """status and click's own output (help, version) alike; a verdict keeps its exit code."""
    planned(adopted)
    read, write = os.pipe()
    os.close(read)  # nobody will read: the first write fails with EPIPE
    proc = subprocess.run(
        [PY, "-m", "harness_gate", *argv], cwd=adopted.path, stdout=write, stderr=subprocess.PIPE, check=False
    )
    os.close(write)
    assert proc.returncode == code
    assert proc.stderr == b""


# 7. approve shows what is approved
def test_approve_shows_the_objective_boundary_and_commands_before_the_hash(adopted: Repo) -> None:
    adopted.cli(
        "plan", "new", "p1", "--objective", "Fix the thing", "--boundary", "src/**", "--verify", "tests=pytest -q"
    )
    out = adopted.cli("approve", input="y\n").output
    assert out.index("objective: Fix the thing") < out.index("  src/**") < out.index("tests: pytest -q")
    assert out.index("tests: pytest -q") < out.index("sha256:") < out.index("Proceed with this Plan? [y/N]")


# 8. refusals are findings (exit 1); every command exits 0 where harness-gate is not adopted
@pytest.mark.slow
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
    plain.git("commit", "-q", "--allow-empty", "-m", "a project that never adopted harness-gate")
    commands = (
        ["verify"],
        ["review", "new"],
        ["complete"],
        ["status"],
        ["lint"],
        ["record", "--", "true"],
        ["approve"],
        ["plan", "amend", "--objective", "x"],
        ["plan", "use", "p"],
        ["explain", "a.py"],
        ["check", "--staged"],
    )
    for args in commands:
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
        (
            "# comment\n[formats.taks]\nenabled = false\n",
            ".harness-gate.toml, line 2: unknown key `formats.taks` (did you mean `formats.tasks`?)",
        ),
        ("formats.tasks.enabld = true\n", ".harness-gate.toml, line 1: unknown key `formats.tasks.enabld`"),
        ('\n\nverify_outputs = ["../x"]\n', ".harness-gate.toml, line 3: `verify_outputs`: '../x'"),
        ('[formats.tasks]\npaths = ["/abs"]\n', ".harness-gate.toml, line 2: `formats.tasks.paths`: '/abs'"),
    ],
)
def test_configuration_errors_name_the_file_line_and_key(adopted: Repo, text: str, said: str) -> None:
    adopted.write(".harness-gate.toml", text)
    res = adopted.cli("status")
    assert res.exit_code == 2
    assert said in res.output


def test_a_key_in_pyproject_is_found_in_its_own_table(adopted: Repo) -> None:
    """`name` on line 2 is the project's; the one harness-gate refuses is on line 6."""
    (adopted.path / ".harness-gate.toml").unlink()
    adopted.write(
        "pyproject.toml", '[project]\nname = "x"\n\n[tool.harness-gate]\nartifacts_dir = "harness"\nname = "y"\n'
    )
    res = adopted.cli("status")
    assert res.exit_code == 2
    assert "pyproject.toml, line 6: unknown key `name`" in res.output


# 11. init in an adopted repository; a dependency that does not load
def test_init_again_and_someone_elses_config(adopted: Repo) -> None:
    again = adopted.cli("init").output
    assert "has harness-gate's hooks" in again and "repo: local" not in again
    adopted.write(".pre-commit-config.yaml", "repos: []\n")
    other = adopted.cli("init").output
    assert other.count("- repo: local") == 1 and "default_install_hook_types" in other
    assert adopted.read(".pre-commit-config.yaml") == b"repos: []\n"  # never rewritten


@pytest.mark.parametrize("blocker", [".gitattributes/", "harness", ".pre-commit-config.yaml/"])
def test_init_that_cannot_write_a_file_writes_nothing(repo: Repo, blocker: str) -> None:
    """A directory where init writes a file (or a file where it needs a directory): a
    usage error naming it, before any write, and no traceback."""
    if blocker.endswith("/"):
        repo.write(blocker + "keep", "x\n")  # a directory in the file's place
    else:
        repo.write(blocker, "x\n")  # a file in the place of the artifacts root
    before = sorted(p.relative_to(repo.path).as_posix() for p in repo.path.rglob("*") if ".git/" not in p.as_posix())
    res = repo.run("init")
    after = sorted(p.relative_to(repo.path).as_posix() for p in repo.path.rglob("*") if ".git/" not in p.as_posix())
    assert res.returncode == 2, res.stdout + res.stderr
    assert b"Traceback" not in res.stderr and b"HG999" not in res.stdout + res.stderr
    assert b"HG904" in res.stdout + res.stderr and blocker.rstrip("/").encode() in res.stdout + res.stderr
    assert after == before


def test_a_dependency_that_does_not_load_is_one_line(adopted: Repo, tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "click"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('a click under development')\n")
    project = Path(__file__).resolve().parent.parent
    res = adopted.run("status", env={"PYTHONPATH": f"{shadow.parent}{os.pathsep}{project}"})
    assert res.returncode == 2
    assert b"Traceback" not in res.stderr
    assert b"cannot load its command line" in res.stderr


@pytest.mark.parametrize(
    ("module", "source", "argv"),
    [
        ("jsonschema", "this is not python (\n", ["lint", "harness/plans/p1/plan.md"]),
        ("markdown_it", "raise ImportError('a markdown_it under development')\n", ["lint", "harness/plans/p1/plan.md"]),
        ("jsonschema", "raise RuntimeError('half a package')\n", ["status"]),
    ],
)
def test_any_dependency_that_does_not_load_is_said_to_be_one(
    adopted: Repo, tmp_path: Path, module: str, source: str, argv: list[str]
) -> None:
    """Not only click: a shadowed jsonschema or markdown_it is the environment's, not a bug (HG907)."""
    planned(adopted)
    shadow = tmp_path / "shadow" / module
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(source)
    project = Path(__file__).resolve().parent.parent
    clean = adopted.run(*argv)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    shutil.rmtree(adopted.path / ".git" / "harness-gate", ignore_errors=True)  # no cached parse: the parsers load
    res = adopted.run(*argv, env={"PYTHONPATH": f"{shadow.parent}{os.pathsep}{project}"})
    assert res.returncode == 2, res.stdout + res.stderr
    assert b"Traceback" not in res.stdout + res.stderr
    assert b"HG907" in res.stdout and b"failed to load" in res.stdout and b"HG999" not in res.stdout
    assert b"pipx install" in res.stdout


# 12. who reviews is the reviewer's to say; a demo repository can be kept
def test_the_review_template_leaves_the_reviewer_to_the_reviewer(adopted: Repo) -> None:
    planned(adopted)
    assert adopted.cli("verify").exit_code == 0
    assert adopted.cli("review", "new").exit_code == 0
    text = adopted.read("harness/plans/p1/001-review.md").decode()
    assert "Ada Author" not in text  # the author's own identity is not offered
    adopted.write(
        "harness/plans/p1/001-review.md",
        text.replace(*SCOPE_READ).replace(PLACEHOLDER, "PASS"),
    )
    res = adopted.cli("lint")
    assert res.exit_code == 1 and "identity" in res.output  # not a review until someone signs it
    assert "must be the reviewer's name" in res.output and "(?!" not in res.output  # words, not a pattern
    status = adopted.cli("status").output
    assert "fills in harness/plans/p1/001-review.md: Reviewer identity, Scope Reviewed" in status  # not yet done
    assert "must be the reviewer's name" in status


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


@pytest.mark.slow
def test_a_branch_opened_before_adoption_is_told_to_put_its_plan_first(repo: Repo) -> None:
    """Rebased onto the adoption, the branch's first commit still predates its plan: HG201 on
    it at CI, and starting a plan (the rule's own hint) cannot clear it. The hint names what
    does, and following it passes the authority rules."""
    adopted_main(repo)
    repo.git("checkout", "-qb", "feat", "main~1")  # opened before the adoption
    repo.write("src/x.py", "x = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "early work")
    repo.git("rebase", "-q", "main")
    res = repo.cli("plan", "new", "feat", "--objective", "o", "--boundary", "src/**", "--verify", f"tests={PY} -c pass")
    assert res.exit_code == 0, res.output
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan")
    base = repo.git("rev-parse", "main").decode().strip()
    res = repo.cli("check", "--stage", "ci", "--base", "main")
    assert "HG201" in res.output and "made before the branch's plan was committed" in res.output, res.output
    assert f"git reset --soft {base[:12]}" in res.output
    repo.git("reset", "--soft", base[:12])
    repo.git("commit", "-qm", "feat: plan and work")
    res = repo.cli("check", "--stage", "ci", "--base", "main")
    assert "HG201" not in res.output, res.output
