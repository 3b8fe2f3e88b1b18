"""Format rules that span files, where a merge or a new iteration file brings them together."""

from __future__ import annotations

import json

import pytest

from tests.formats.test_tasks import adopt
from tests.helpers import Repo

SPEC = "---\nevaluation: backend\n---\n# spec\n"


def _check(repo: Repo, *args: str) -> tuple[int, list[str]]:
    res = repo.cli("check", *args, "--format", "json")
    return res.exit_code, [f["code"] for f in json.loads(res.output)["findings"]]


def _state(status: str, n: int) -> str:
    doc = {
        "iteration": n,
        "max_iterations": 10,
        "status": status,
        "eval_override": None,
        "yolo": False,
        "started_at": "2025-01-01T00:00:00Z",
    }
    return json.dumps(doc) + "\n"


def _verdict(result: str, n: int) -> str:
    return json.dumps({"result": result, "iteration": n}) + "\n"


def _commit(repo: Repo, msg: str) -> str:
    repo.git("add", "-A")
    repo.git("commit", "-qm", msg, "--no-verify")
    return repo.git("rev-parse", "HEAD").decode().strip()


@pytest.mark.slow
def test_a_merge_that_makes_passed_premature(repo: Repo) -> None:
    """x passes iteration 02 and sets `passed`; y adds a failing iteration 03. Each side is
    fine; the clean merge holds a `passed` state whose latest verdict fails."""
    adopt(repo, (".harness/**", "src/**"))
    repo.write(".harness/spec.md", SPEC)
    repo.write(".harness/state.json", _state("generating", 1))
    repo.write(".harness/iterations/01/verdict.json", _verdict("fail", 1))
    base = _commit(repo, "base")
    repo.git("checkout", "-qb", "x")
    repo.write(".harness/iterations/02/verdict.json", _verdict("pass", 2))
    repo.write(".harness/state.json", _state("passed", 2))
    _commit(repo, "x: passed")
    assert _check(repo, "--range", "HEAD^..HEAD", "--stage", "pre-commit") == (0, [])
    repo.git("checkout", "-qb", "y", base)
    repo.write(".harness/iterations/03/verdict.json", _verdict("fail", 3))
    _commit(repo, "y: iteration 03 fails")
    repo.git("checkout", "-q", "x")
    # The merge in the index (MERGE_HEAD), then as a commit.
    repo.git("merge", "-q", "--no-commit", "--no-ff", "y")
    assert _check(repo, "--staged") == (1, ["HG643"])
    repo.git("commit", "-qm", "merge y", "--no-verify")
    assert _check(repo, "--range", "HEAD^1..HEAD", "--stage", "pre-commit") == (1, ["HG643"])


def test_a_new_iteration_file_re_judges_a_passed_state(repo: Repo) -> None:
    """Any file of a new iteration (not only its verdict) makes `passed` premature again."""
    adopt(repo, (".harness/**", "src/**"))
    repo.write(".harness/spec.md", SPEC)
    repo.write(".harness/state.json", _state("passed", 1))
    repo.write(".harness/iterations/01/verdict.json", _verdict("pass", 1))
    _commit(repo, "passed")
    repo.write(".harness/iterations/02/notes.md", "x\n")
    repo.git("add", "-A")
    assert _check(repo, "--staged") == (1, ["HG643"])


@pytest.mark.slow
def test_a_merge_that_edits_a_frozen_spec(repo: Repo) -> None:
    """a edits spec.md while the loop is still planning (allowed); b starts iterating. The
    merge brings a's edit onto b's line, where the spec is frozen: HG648."""
    adopt(repo, (".harness/**", "src/**"))
    repo.write(".harness/spec.md", SPEC)
    repo.write(".harness/state.json", _state("planning", 0))
    base = _commit(repo, "base")
    repo.git("checkout", "-qb", "a")
    repo.write(".harness/spec.md", SPEC + "more\n")
    _commit(repo, "a edits spec while planning")
    assert _check(repo, "--range", "HEAD^..HEAD", "--stage", "pre-commit") == (0, [])
    repo.git("checkout", "-qb", "b", base)
    repo.write(".harness/iterations/01/verdict.json", _verdict("fail", 1))
    _commit(repo, "b starts iterating")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "a")
    assert _check(repo, "--range", "HEAD^1..HEAD", "--stage", "pre-commit") == (1, ["HG648"])


@pytest.mark.slow
def test_a_merge_does_not_re_report_older_problems(repo: Repo) -> None:
    """Format problems the first parent already had (committed before the gate was on, or
    with --no-verify) are not the merge's: a merge of two clean sides passes."""
    adopt(repo, (".harness/**", "src/**"))
    repo.write(".harness/spec.md", SPEC)
    repo.write(".harness/state.json", _state("generating", 1))
    for i in range(1, 4):
        repo.write(f".harness/iterations/{i:03d}/verdict.json", _verdict("fail", i))  # HG649: width 3
    base = _commit(repo, "base")
    repo.git("checkout", "-qb", "side")
    repo.write("src/a.txt", "x\n")
    _commit(repo, "side")
    repo.git("checkout", "-qb", "main2", base)
    repo.write("src/b.txt", "x\n")
    _commit(repo, "main2")
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    assert _check(repo, "--range", "HEAD^1..HEAD", "--stage", "pre-commit") == (0, [])
    assert "HG649" in repo.cli("lint", ".harness/iterations/001/verdict.json").output  # still there
