"""The `tasks` format (the long-running task harness): the corpus through the real CLI, and the
gate in real repositories, with real `harness-gate record` evidence for completions."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness_gate import config, formats
from harness_gate.findings import RULES
from harness_gate.formats import tasks
from tests.helpers import Repo

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "formats" / "tasks"
BLOCK = [f"HG6{n:02d}" for n in range(1, 20)]  # HG601-HG619
AS = {".json": "harness-tasks.json", ".txt": "harness-progress.txt", ".bak": "harness-tasks.json.bak"}
AS[".tmp"] = "harness-tasks.json.tmp"
NEGATIVE = re.compile(r"^(HG6[0-9]{2})-(0|[1-9][0-9]*)-[a-z0-9][a-z0-9-]*(\.[a-z]+)?$")
POSITIVE = re.compile(r"^(HG6[0-9]{2}|spec)-[a-z0-9][a-z0-9-]*(\.[a-z]+)?$")
FILES = ["harness-tasks.json", "harness-progress.txt", "harness-tasks.json.bak", "harness-tasks.json.tmp"]
PY = sys.executable


def _cases(group: str, *, dirs: bool) -> list[Path]:
    return sorted(p for p in (CORPUS / group).iterdir() if p.is_dir() == dirs)


def _params(paths: list[Path]) -> list[Any]:
    return [pytest.param(p, id=p.name) for p in paths]


def _expected(path: Path) -> tuple[str, int | None]:
    m = NEGATIVE.match(path.name)
    assert m, f"{path.name}: name must be CODE-LINE-slug.ext"
    return m[1], int(m[2]) or None


def _findings(res: Any) -> list[tuple[str, str, int | None]]:
    return [(f["code"], f["path"], f["line"]) for f in json.loads(res.output)["findings"]]


# -- the corpus: layout ------------------------------------------------------------------


def test_corpus_is_complete() -> None:
    """Not vacuous: the cases exist, are named as their rule, and every code of the block
    has a positive and a negative example."""
    negatives = _cases("negative", dirs=False) + _cases("negative", dirs=True)
    positives = _cases("positive", dirs=False) + _cases("positive", dirs=True)
    assert len(negatives) == 43
    assert len(positives) == 25
    for p in negatives:
        assert _expected(p)[0] in BLOCK, p.name
    for p in positives:
        assert POSITIVE.match(p.name), p.name
    for p in _cases("negative", dirs=False) + _cases("positive", dirs=False):
        assert p.suffix in AS, p.name
    assert {_expected(p)[0] for p in negatives} == set(BLOCK)
    assert {p.name[:5] for p in positives} >= set(BLOCK)
    assert all(code in RULES for code in BLOCK)


def test_default_paths() -> None:
    assert formats.REGISTRY["tasks"].paths == tuple(f"**/{name}" for name in FILES)
    match = formats.matcher(_config())
    for name in FILES:
        assert match.which(f"ops/{name}".encode()) == "tasks"
    for other in ("harness-tasks.json.orig", "tasks.json", "harness-progress.log", "x/harness-tasks.jsonl"):
        assert match.which(other.encode()) is None


def _config() -> Any:
    return config.parse(b"", None)


# -- the corpus: lint through the CLI ----------------------------------------------------


def _lint(repo: Repo, case: Path) -> tuple[int, list[tuple[str, str, int | None]]]:
    name = AS[case.suffix]
    shutil.copyfile(case, repo.path / name)
    res = repo.cli("lint", name, "--format", "json")
    return res.exit_code, _findings(res)


@pytest.mark.parametrize("case", _params(_cases("positive", dirs=False)))
def test_positive_lints_clean(repo: Repo, case: Path) -> None:
    code, found = _lint(repo, case)
    assert (code, found) == (0, [])


@pytest.mark.parametrize("case", _params(_cases("negative", dirs=False)))
def test_negative_gives_its_code_at_its_line(repo: Repo, case: Path) -> None:
    code, line = _expected(case)
    exit_code, found = _lint(repo, case)
    assert exit_code == 1
    assert (code, AS[case.suffix], line) in found, found
    assert {c for c, _, _ in found} <= set(BLOCK)


# -- the corpus: changes through the gate -------------------------------------------------

_TEMPLATE: dict[str, Path] = {}


def _adopted(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A repository that adopted harness-gate with an approved plan covering the format's
    files: built once, copied for each case (the approval travels with the history)."""
    if "repo" not in _TEMPLATE:
        path = tmp_path_factory.mktemp("tasks-template") / "repo"
        path.mkdir()
        repo = Repo(path)
        repo.git("init", "-q")
        monkeypatch.chdir(path)
        adopt(repo, ("harness-tasks.json", "harness-progress.txt", "harness-tasks.json.bak", "src/**"))
        _TEMPLATE["repo"] = path
    dest = tmp_path_factory.mktemp("tasks-case") / "repo"
    shutil.copytree(_TEMPLATE["repo"], dest, symlinks=True)
    monkeypatch.chdir(dest)
    return Repo(dest)


def adopt(repo: Repo, boundary: tuple[str, ...]) -> None:
    repo.write("README.md", "x\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt")
    repo.new_plan("p1", boundary)
    repo.approve()
    repo.git("add", "-A")
    repo.git("commit", "-qm", "plan")


def _move(repo: Repo, case: Path) -> list[tuple[str, str, int | None]]:
    for name in FILES:
        if (case / "before" / name).is_file():
            shutil.copyfile(case / "before" / name, repo.path / name)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "before", "--allow-empty")
    for name in FILES:
        if (case / "after" / name).is_file():
            shutil.copyfile(case / "after" / name, repo.path / name)
        elif (case / "before" / name).is_file():
            (repo.path / name).unlink()
    repo.git("add", "-A")
    return _findings(repo.cli("check", "--staged", "--format", "json"))


@pytest.mark.parametrize("case", _params(_cases("positive", dirs=True)))
def test_positive_change_passes_the_gate(
    case: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _move(_adopted(tmp_path_factory, monkeypatch), case) == []


@pytest.mark.parametrize("case", _params(_cases("negative", dirs=True)))
def test_negative_change_is_blocked(
    case: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, line = _expected(case)
    found = _move(_adopted(tmp_path_factory, monkeypatch), case)
    assert (code, "harness-progress.txt" if code == "HG616" else "harness-tasks.json", line) in found, found
    assert {c for c, _, _ in found} <= {"HG618", "HG619", "HG616"}


# -- completion needs fresh evidence: real records on real trees ----------------------------


def _task_file(command: str, status: str) -> str:
    task = {
        "id": "task-001",
        "title": "Build it",
        "status": status,
        "depends_on": [],
        "attempts": 1 if status == "completed" else 0,
        "max_attempts": 3,
        "validation": {"command": command, "timeout_seconds": 60},
        "completed_at": "2025-07-01T10:15:30Z" if status == "completed" else None,
    }
    return json.dumps({"version": 2, "tasks": [task]}, indent=2) + "\n"


def _codes(repo: Repo) -> list[str]:
    return [c for c, _, _ in _findings(repo.cli("check", "--staged", "--format", "json"))]


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["exact", "shell"])
def test_completion_needs_a_fresh_pass_for_the_validation_command(repo: Repo, tmp_path: Path, spelling: str) -> None:
    """Blocked with no evidence, with evidence for another tree and with a FAIL; allowed
    once a PASS of the task's validation command on exactly the staged tree is staged, and
    the commit then passes the pre-push check too."""
    flag = tmp_path / "flag"  # outside the repository: the same command fails, then passes
    if spelling == "exact":
        argv = [PY, "-c", f"import os, sys; sys.exit(not os.path.exists({str(flag)!r}))"]
        command = shlex.join(argv)
    else:
        command = f"test -f {shlex.quote(str(flag))} && echo ok"  # shell syntax: `sh -c`
        argv = ["sh", "-c", command]
    assert tasks.evidence_commands(command)[0] == shlex.join(argv)
    adopt(repo, ("harness-tasks.json", "src/**"))
    repo.write("harness-tasks.json", _task_file(command, "in_progress"))
    repo.git("add", "-A")
    repo.git("commit", "-qm", "start task-001")

    # Evidence recorded while the task was still in_progress is for another tree.
    flag.write_text("")
    assert repo.cli("record", "--id", "task-001", "--", *argv).exit_code == 0
    flag.unlink()
    repo.write("harness-tasks.json", _task_file(command, "completed"))
    repo.git("add", "-A")
    assert _codes(repo) == ["HG618"]

    # A FAIL on exactly this tree.
    assert repo.cli("record", "--id", "task-001", "--", *argv).exit_code == 1
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    [found] = json.loads(res.output)["findings"]
    assert (found["code"], found["line"]) == ("HG618", 7)
    assert "fail" in found["message"]

    # A PASS on exactly this tree, staged: allowed.
    flag.write_text("")
    assert repo.cli("record", "--id", "task-001", "--", *argv).exit_code == 0
    repo.git("add", "-A")
    assert _codes(repo) == []
    assert repo.cli("verify").exit_code == 0  # the plan's own required command, for pre-push
    repo.git("add", "-A")
    repo.git("commit", "-qm", "complete task-001")
    res = repo.cli("check", "--range", "HEAD~1..HEAD", "--format", "json")
    assert res.exit_code == 0, res.output

    # The same claim on a tree that moved on is not proven by that PASS.
    repo.git("reset", "-q", "--soft", "HEAD~1")
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    assert _codes(repo) == ["HG618"]


@pytest.mark.slow
def test_only_a_matching_spelling_proves_a_command(repo: Repo) -> None:
    """A record of the command's words without a shell does not prove shell text: `a && b`
    run as argv would hand `&&` to `a` as an argument."""
    assert tasks.evidence_commands("make test") == ["make test", "sh -c 'make test'"]
    assert tasks.evidence_commands("make test && echo ok") == ["sh -c 'make test && echo ok'"]
    assert tasks.evidence_commands("CI=1 make test") == ["sh -c 'CI=1 make test'"]
    assert tasks.evidence_commands("echo 'unclosed") == ["sh -c 'echo '\"'\"'unclosed'"]
    adopt(repo, ("harness-tasks.json",))
    command = "true && true"
    repo.write("harness-tasks.json", _task_file(command, "pending"))
    repo.git("add", "-A")
    repo.git("commit", "-qm", "task")
    repo.write("harness-tasks.json", _task_file(command, "completed"))
    assert repo.cli("record", "--id", "task-001", "--", "true", "&&", "true").exit_code == 0
    repo.git("add", "-A")
    assert _codes(repo) == ["HG618"]
    assert repo.cli("record", "--id", "task-001", "--", "sh", "-c", command).exit_code == 0
    repo.git("add", "-A")
    assert _codes(repo) == []


@pytest.mark.slow
def test_a_completed_task_cannot_be_repurposed(repo: Repo) -> None:
    """A task that stays completed while its validation.command changes claims a
    completion the old record never proved: blocked like a completion that sets its
    command (HG619), and HG618 too while nothing proves the new command."""
    adopt(repo, ("harness-tasks.json",))
    repo.write("harness-tasks.json", _task_file("true", "pending"))
    repo.git("add", "-A")
    repo.git("commit", "-qm", "task")
    repo.write("harness-tasks.json", _task_file("true", "completed"))
    assert repo.cli("record", "--id", "task-001", "--", "true").exit_code == 0
    repo.git("add", "-A")
    assert _codes(repo) == []
    repo.git("commit", "-qm", "complete task-001")

    # Only the title changes: still proven.
    repo.write("harness-tasks.json", _task_file("true", "completed").replace("Build it", "Build it well"))
    repo.git("add", "-A")
    assert _codes(repo) == []

    # The command changes while the task stays completed.
    repurposed = _task_file("false", "completed").replace("Build it", "Ship it")
    repo.write("harness-tasks.json", repurposed)
    repo.git("add", "-A")
    res = repo.cli("check", "--staged", "--format", "json")
    findings = json.loads(res.output)["findings"]
    assert sorted((f["code"], f["line"]) for f in findings) == [("HG618", 7), ("HG619", 12)], findings
    assert any("stays completed" in f["message"] for f in findings)
    # Even a PASS for the new command does not lift HG619: reopen the task first.
    repo.write("harness-tasks.json", _task_file("true && true", "completed"))
    assert repo.cli("record", "--id", "task-001", "--", "sh", "-c", "true && true").exit_code == 0
    repo.git("add", "-A")
    assert _codes(repo) == ["HG619"]


# -- status ---------------------------------------------------------------------------------


def test_status_shows_the_spec_example_counts(repo: Repo) -> None:
    doc = json.loads((CORPUS / "positive" / "spec-example.json").read_text())
    doc["tasks"][1]["attempts"] = 3  # task-002 failed for good: task-003 and task-004 blocked
    doc["tasks"][2]["depends_on"] = ["task-002"]
    doc["tasks"].append({**doc["tasks"][2], "id": "task-004", "depends_on": ["task-003"], "title": "D"})
    repo.write("ops/harness-tasks.json", json.dumps(doc, indent=2) + "\n")
    shutil.copyfile(CORPUS / "positive" / "spec-example.txt", repo.path / "ops" / "harness-progress.txt")
    res = repo.cli("formats", "status", "ops/harness-tasks.json", "--format", "json")
    assert res.exit_code == 0, res.output
    [row] = json.loads(res.output)["data"]["files"]
    lines = row["status"]
    assert row["valid"] is True
    assert lines[0] == (
        "tasks_total=4 completed=1 failed=1 pending=2 blocked=2 in_progress=0 attempts_total=4 checkpoints=0"
    )
    assert lines[1:5] == [
        "[completed] task-001: Implement user authentication (1/3)",
        "[failed] task-002: Add rate limiting (3/3)",
        "[pending] task-003: Add OAuth providers (0/3)",
        "[pending] task-004: D (0/3)",
    ]
    assert lines[5] == "sessions: 1, last session: 2025-07-01T10:20:02Z"
    assert lines[6] == "ops/harness-progress.txt (last 5 lines):"
    assert lines[-1].endswith(
        "STATS tasks_total=5 completed=1 failed=1 pending=3 blocked=0 attempts_total=2 checkpoints=1"
    )
    assert len(lines) == 12


def test_status_of_an_invalid_file_says_invalid(repo: Repo) -> None:
    repo.write("harness-tasks.json", "{")
    res = repo.cli("formats", "status", "--format", "json")
    assert res.exit_code == 1
    [row] = json.loads(res.output)["data"]["files"]
    assert (row["valid"], row["status"]) == (False, [])


# -- robustness -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\xef\xbb\xbf{}",
        b"[" * 100_000,
        b'{"version": 2, "tasks": [' + b"1" * 5000 + b"]}",
        b'{"version": 2, "tasks": "x", "tasks": 1}',
        b"\x00\xff\n\r",
        b'{"version": 2, "tasks": [{"id": "a", "depends_on": [1, {}]}]}',
    ],
)
def test_never_raises(data: bytes) -> None:
    ctx = formats.Context(_config(), formats.Files(Path(), None, worktree=True))
    for name in FILES:
        found = tasks.lint(name, data, ctx)
        assert all(f.code in BLOCK for f in found)
        judged = formats.Context(ctx.config, ctx.files, lambda command: "missing")
        for old, new in ((data, data + b"x"), (None, data), (data, None), (b"{}", data)):
            assert all(f.code in BLOCK for f in tasks.gate(name, old, new, judged))


def test_unterminated_string_of_escaped_quotes_is_linear() -> None:
    """Finding the line of a JSON error must not rescan an unterminated string from every
    escaped quote in it (quadratic: a megabyte took forty minutes)."""
    data = b'{"a": 1.5, "b": "' + b'\\"' * 500_000
    started = time.monotonic()
    found = tasks.lint("harness-tasks.json", data, None)  # type: ignore[arg-type]
    assert time.monotonic() - started < 5
    assert [(f.code, f.line) for f in found] == [("HG601", 1)]


@pytest.mark.slow
def test_long_dependency_chain_is_not_recursive() -> None:
    n = 5_000  # five times Python's default recursion limit: a recursive walk raises
    chain = [
        {
            "id": f"t{i}",
            "title": "t",
            "status": "pending",
            "depends_on": [f"t{(i + 1) % n}"],
            "attempts": 0,
            "max_attempts": 1,
        }
        for i in range(n)
    ]
    found = tasks.lint("harness-tasks.json", json.dumps({"version": 2, "tasks": chain}).encode(), None)  # type: ignore[arg-type]
    assert [f.code for f in found] == ["HG605"]
    assert found[0].message.startswith("circular dependency: t0 -> t1 -> ")
