"""The CLI end to end: CliRunner and real subprocesses in real repositories."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate import __version__
from tests.helpers import Repo


def test_version_as_module_and_console_script(repo: Repo) -> None:
    res = repo.run("--version")
    assert res.returncode == 0
    assert __version__ in res.stdout.decode()
    script = shutil.which("harness-gate", path=str(Path(sys.executable).parent))
    assert script is not None, "the console script is installed next to the interpreter"
    out = subprocess.run([script, "--version"], capture_output=True, check=True).stdout.decode()
    assert __version__ in out


@pytest.mark.slow
def test_inactive_repository_passes_with_one_line(repo: Repo) -> None:
    for args in (["lint"], ["status"]):
        res = repo.run(*args)
        assert res.returncode == 0
        assert res.stdout.decode().strip().splitlines() == [
            "harness-gate: inactive (no artifacts root and no configuration); nothing to check"
        ]


def test_outside_a_git_repository_is_an_error(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "harness_gate", "lint"], cwd=tmp_path, capture_output=True, check=False)
    assert res.returncode == 2
    assert b"HG901" in res.stdout
    assert b"Traceback" not in res.stdout + res.stderr


def test_init_scaffolds_and_is_idempotent(repo: Repo) -> None:
    res = repo.cli("init")
    assert res.exit_code == 0, res.output
    assert (repo.path / ".harness-gate.toml").is_file()
    assert (repo.path / "harness/plans/.gitkeep").is_file()
    attrs = repo.read(".gitattributes").decode()
    assert "harness/plans/*/approvals.jsonl merge=union" in attrs
    assert "harness/plans/*/evidence.jsonl merge=union" in attrs
    assert (repo.path / ".pre-commit-config.yaml").is_file()
    before = {p: p.read_bytes() for p in repo.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert repo.cli("init").exit_code == 0
    after = {p: p.read_bytes() for p in repo.path.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert before == after
    assert repo.cli("lint").exit_code == 0
    # git sees the union merge driver for the logs
    out = repo.git("check-attr", "merge", "--", "harness/plans/x/approvals.jsonl").decode()
    assert out.strip().endswith("merge: union")


def test_plan_new_writes_a_valid_plan_and_picks_it(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "init")
    res = repo.cli(
        "plan",
        "new",
        "fix-login",
        "--objective",
        "Fix the login bug",
        "--boundary",
        "src/auth/**",
        "--boundary",
        "tests/test_auth.py",
        "--verify",
        "tests=pytest -q tests/test_auth.py",
        "--timeout",
        "120",
        "--kind",
        "regression_first",
        "--acceptance",
        "login works",
        "--risk",
        "session handling",
    )
    assert res.exit_code == 0, res.output
    assert not (repo.path / "harness/active").exists()  # no shared pointer: only the plan's folder
    assert repo.git("config", "branch.main.harnessGatePlan") == b"fix-login\n"  # the local pick
    text = repo.read("harness/plans/fix-login/plan.md").decode()
    assert text.startswith("# Plan\n")
    assert text.endswith("## Approval\n\nProceed with this Plan? [y/N]\n")
    assert '"timeout_seconds": 120' in text
    assert repo.cli("lint", "harness/plans/fix-login/plan.md").exit_code == 0


@pytest.mark.parametrize(
    ("pattern", "reached"),
    [(".github/workflows/**", ".github/workflows/ci.yml"), ("*.yaml", ".pre-commit-config.yaml"), (".claude/*", None)],
)
def test_plan_new_warns_of_a_wildcard_over_a_protected_path(repo: Repo, pattern: str, reached: str | None) -> None:
    """A wildcard never allows a protected path: `plan new` says so (exit 0, a warning), with
    the exact path to name instead; an exact path or an ordinary wildcard draws nothing."""
    exact = ".github/workflows/release.yml"
    res = repo.cli(
        "plan",
        "new",
        "p",
        "--objective",
        "x",
        "--verify",
        "t=true",
        "--boundary",
        pattern,
        "--boundary",
        "src/**",
        "--boundary",
        exact,
        "--format",
        "json",
    )
    assert res.exit_code == 0, res.output
    [warning] = json.loads(res.output)["findings"]
    assert warning["code"] == "HG102" and warning["severity"] == "warning"
    if reached is not None:
        assert warning["path"] == reached and f"--boundary {reached}" in warning["message"]
    text = repo.cli("plan", "new", "q", "--objective", "x", "--verify", "t=true", "--boundary", pattern)
    assert text.exit_code == 0 and "no wildcard allows" in text.output
    plain = repo.cli(
        "plan",
        "new",
        "r",
        "--objective",
        "x",
        "--verify",
        "t=true",
        "--boundary",
        "src/**",
        "--boundary",
        ".github/workflows/ci.yml",
        "--format",
        "json",
    )
    assert plain.exit_code == 0 and json.loads(plain.output)["findings"] == []


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--boundary", "../etc"], "'../etc'"),
        (["--boundary", "**"], "'**'"),
        (["--boundary", "harness/**"], "'harness/**'"),
        (["--boundary", ".git/hooks"], "'.git/hooks'"),
    ],
)
def test_plan_new_refuses_invalid_boundaries(repo: Repo, args: list[str], words: str) -> None:
    # An option that would make an invalid plan is a usage error: nothing is written.
    res = repo.cli("plan", "new", "p", "--objective", "x", "--verify", "t=true", *args)
    assert res.exit_code == 2
    assert "HG904" in res.output and f"--boundary {words}" in res.output
    assert not (repo.path / "harness/plans/p").exists()
    assert not (repo.path / "harness/active").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "new", "Bad_Id", "--objective", "x", "--verify", "t=true"],
        ["plan", "new", "p", "--objective", "x"],
        ["plan", "new", "p", "--objective", "x", "--verify", "no-equals-sign"],
    ],
)
def test_plan_new_usage_errors_exit_2(repo: Repo, args: list[str]) -> None:
    res = repo.cli(*args)
    assert res.exit_code == 2, res.output
    assert "HG904" in res.output


def test_plan_new_never_overwrites(repo: Repo) -> None:
    folder = repo.new_plan()
    before = repo.read(f"{folder}/plan.md")
    res = repo.cli("plan", "new", "p1", "--objective", "other", "--verify", "t=true")
    assert res.exit_code == 2
    assert repo.read(f"{folder}/plan.md") == before


def test_status_text_and_json(repo: Repo) -> None:
    repo.new_plan()
    text = repo.cli("status")
    assert text.exit_code == 0
    assert "state:      planning" in text.output
    assert "not staged:" in text.output
    repo.git("add", "-A")
    assert "not staged:" not in repo.cli("status").output
    doc = json.loads(repo.cli("status", "--json").output)
    assert doc["schema"] == "harness-gate.report/v2"
    assert doc["command"] == "status"
    assert doc["data"]["plan"] == "p1"
    assert doc["data"]["state"] == "planning"


def test_lint_json_report_shape(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_GATE_RULES_URL", "https://docs.example.org/harness-gate/rules/")
    folder = repo.new_plan()
    p = repo.path / folder / "plan.md"
    p.write_bytes(p.read_bytes().replace(b"## Scope\n", b"## Scope\n\n# Second\n"))
    res = repo.cli("lint", "--format", "json")
    assert res.exit_code == 1
    doc = json.loads(res.output)
    assert doc["result"] == "blocked"
    assert doc["exit_code"] == 1
    assert set(doc) == {"schema", "command", "result", "exit_code", "findings", "data"}
    assert doc["findings"][0] == {
        "code": "HG506",
        "title": "more than one H1",
        "severity": "error",
        "path": f"{folder}/plan.md",
        "line": 13,
        "commit": None,
        "message": "second H1 `# Second`",
        "hint": "An artifact has exactly one H1, on its first line.",
        "rule_url": "https://docs.example.org/harness-gate/rules/#hg506",
    }


def _lint_on_a_terminal(repo: Repo, env: dict[str, str]) -> bytes:
    import os
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness_gate", "lint"],
        cwd=repo.path,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, **env},
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=30) == 1
    os.close(master)
    return out


@pytest.mark.slow
def test_text_report_colour_follows_tty_and_no_color(repo: Repo) -> None:
    folder = repo.new_plan()
    (repo.path / folder / "plan.md").write_bytes(b"# Nope\n")
    coloured = _lint_on_a_terminal(repo, {})
    assert b"\x1b[31m" in coloured
    plain = _lint_on_a_terminal(repo, {"NO_COLOR": "1"})
    assert b"\x1b[" not in plain
    assert b"HG501" in plain
    piped = repo.run("lint")
    assert b"\x1b[" not in piped.stdout


def test_json_report_is_valid_utf8_for_any_name(repo: Repo) -> None:
    import os

    repo.new_plan()
    (repo.path / "harness" / os.fsdecode(b"bad\xff.txt")).write_bytes(b"x")
    res = repo.run("lint", "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout.decode("utf-8"))  # strict: raises on invalid UTF-8
    assert doc["findings"][0]["path"] == "harness/bad\\xff.txt"


def test_unwritable_output_is_exit_2_without_traceback(repo: Repo) -> None:
    repo.new_plan()
    with Path("/dev/full").open("wb") as full:
        res = subprocess.run(
            [sys.executable, "-m", "harness_gate", "status"],
            cwd=repo.path,
            stdout=full,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert res.returncode == 2
    assert b"Traceback" not in res.stderr
    assert b"cannot write the report" in res.stderr


def test_rewritten_approval_line_is_caught(repo: Repo) -> None:
    folder = repo.new_plan()
    repo.approve()
    log = repo.path / folder / "approvals.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"approver":"Ada', b'"approver": "Ada'))
    res = repo.cli("lint")
    assert res.exit_code == 1
    assert "HG204" in res.output
    assert f"{folder}/approvals.jsonl:1" in res.output


def test_approval_of_another_hash_is_stale(repo: Repo) -> None:
    folder = repo.new_plan()
    repo.approve()
    log = repo.path / folder / "approvals.jsonl"
    rec = json.loads(log.read_bytes())
    rec["sha256"] = "0" * 64
    log.write_bytes(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
    res = repo.cli("lint")
    assert res.exit_code == 1
    assert "HG203" in res.output


@pytest.mark.slow
def test_bad_config_is_exit_2(repo: Repo) -> None:
    repo.write(".harness-gate.toml", "artifacts_dirr = 'x'\n")
    res = repo.run("lint")
    assert res.returncode == 2
    assert b"HG902" in res.stdout
    repo.write(".harness-gate.toml", "artifacts_dir = [\n")
    assert repo.run("status").returncode == 2


def test_config_in_pyproject_and_custom_root(repo: Repo) -> None:
    repo.write("pyproject.toml", "[tool.harness-gate]\nartifacts_dir = 'gate'\n")
    repo.new_plan()
    assert (repo.path / "gate/plans/p1/plan.md").is_file()
    assert repo.cli("lint").exit_code == 0
    # `.harness-gate.toml` beside it is the whole configuration; status says the table is unread.
    repo.write(".harness-gate.toml", "artifacts_dir = 'gate'\nreview_stages = []\n")
    assert repo.cli("lint").exit_code == 0
    res = repo.cli("status")
    assert res.exit_code == 0
    assert "HG902" in res.output and "its [tool.harness-gate] table is not read" in res.output


def test_unknown_files_under_the_root(repo: Repo) -> None:
    repo.new_plan()
    repo.write("harness/notes.txt", "hello")
    repo.write("harness/plans/p1/scratch.md", "# Plan\n")
    res = repo.cli("lint", "--format", "json")
    codes = {(f["code"], f["path"]) for f in json.loads(res.output)["findings"]}
    assert codes == {("HG516", "harness/notes.txt"), ("HG516", "harness/plans/p1/scratch.md")}


def test_a_leftover_active_pointer_is_reported(repo: Repo) -> None:
    repo.new_plan()
    repo.write("harness/active", "ghost\n")
    res = repo.cli("lint")
    assert res.exit_code == 1
    assert "HG516" in res.output
    assert "`active` is no longer used" in res.output


def test_lint_files_outside_the_root_parse_standalone(repo: Repo, tmp_path: Path) -> None:
    good = repo.new_plan() + "/plan.md"
    shutil.copy(repo.path / good, repo.path / "copy.md")
    assert repo.cli("lint", "copy.md").exit_code == 0
    repo.write("bad.md", "# Completion Report\n\nDone.\n")
    res = repo.cli("lint", "bad.md", "copy.md")
    assert res.exit_code == 1
    assert "bad.md:1: HG502" in res.output


def test_internal_error_fails_closed_without_traceback(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.new_plan()

    def boom(*_: object) -> None:
        raise RuntimeError("rule crashed")

    monkeypatch.setattr("harness_gate.lifecycle.replay", boom)
    res = repo.cli("lint")
    assert res.exit_code == 2
    assert "HG999" in res.output
    assert "rule crashed" in res.output
    assert "Traceback" not in res.output


def test_symlink_under_the_root_is_reported(repo: Repo) -> None:
    repo.new_plan()
    (repo.path / "harness/plans/p1/evil.md").symlink_to("/etc/passwd")
    res = repo.cli("lint")
    assert res.exit_code == 1
    assert "HG516" in res.output


def test_lint_files_apply_layout_rules_like_the_hook(repo: Repo) -> None:
    folder = repo.new_plan()
    repo.write(f"{folder}/notes.txt", "x")
    repo.write("harness/plans/Bad_Id/plan.md", repo.read(f"{folder}/plan.md"))
    res = repo.cli(
        "lint", f"{folder}/notes.txt", "harness/plans/Bad_Id/plan.md", f"{folder}/typo.md", "--format", "json"
    )
    assert res.exit_code == 1
    found = sorted((f["code"], f["path"]) for f in json.loads(res.output)["findings"])
    assert found == [
        ("HG206", "harness/plans/Bad_Id/plan.md"),
        ("HG516", f"{folder}/notes.txt"),
        ("HG516", f"{folder}/typo.md"),
    ]
    # Only what was named: the plan itself lints clean.
    assert repo.cli("lint", f"{folder}/plan.md").exit_code == 0


@pytest.mark.slow
def test_lint_artifacts_only_keeps_the_files_under_the_configured_root(repo: Repo) -> None:
    """The lint hook's form: pre-commit passes every staged name; only the configured root's
    are linted, and none of them lints nothing (not everything)."""
    repo.write(".harness-gate.toml", 'artifacts_dir = "meta/gate"\n')
    repo.write("meta/gate/plans/p1/plan.md", "not a plan\n")
    repo.write("harness/plans/p2/plan.md", "not a plan either, but not an artifact here\n")
    repo.write("notes.md", "x\n")
    for run in (lambda *a: repo.cli(*a).exit_code, lambda *a: repo.run(*a).returncode):  # click, and the lean path
        assert run("lint", "--artifacts-only", "notes.md", "harness/plans/p2/plan.md") == 0
        assert run("lint", "--artifacts-only") == 0  # with no names: nothing, though the root has a broken plan
        assert run("lint", "--artifacts-only", "notes.md", "meta/gate/plans/p1/plan.md") == 1
    res = repo.run("lint", "--artifacts-only", "notes.md", "meta/gate/plans/p1/plan.md")
    assert b"meta/gate/plans/p1/plan.md" in res.stdout and b"notes.md" not in res.stdout


def test_lint_a_plan_folder(repo: Repo) -> None:
    folder = repo.new_plan()
    assert repo.cli("lint", folder).exit_code == 0
    assert repo.cli("lint", "harness").exit_code == 0
    (repo.path / folder / "plan.md").write_bytes(b"# Plan\n")
    res = repo.cli("lint", folder)
    assert res.exit_code == 1
    assert "HG503" in res.output


def test_huge_files_are_capped_not_read(repo: Repo) -> None:
    folder = repo.new_plan()
    with (repo.path / folder / "001-review.md").open("wb") as fh:
        fh.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of zeros
    res = repo.cli("lint", "--format", "json")
    assert res.exit_code == 1
    assert ("HG512", f"{folder}/001-review.md") in {(f["code"], f["path"]) for f in json.loads(res.output)["findings"]}
    res = repo.run("lint", "/dev/zero")  # endless: not a regular file, so never read at all
    assert res.returncode == 1
    assert b"HG516" in res.stdout
