"""What the gate trusts comes only from where a pull request cannot write: the files that
configure it or anchor trust are protected wherever they live, history is read with every
side file that could rewrite it turned off, and the plan's commands (the change's own
code) run only after every other fact is established."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.util import BOUNDARY_ONLY, FOLDER, PY, check, codes_of, commit, report, rev, setup_gated
from tests.adversarial.util import staged as staged_codes
from tests.helpers import Repo, pass_review

CI = ("--base", "main", "--head", "HEAD", "--stage", "ci")
STRICT = 'artifacts_dir = "harness"\nevidence_stages = ["ci"]\nreview_stages = []\ncompletion_stages = []\n'


def branch(repo: Repo) -> None:
    repo.git("checkout", "-qb", "pr")


# -- item 4: [tool.harness-gate] in pyproject.toml ------------------------------------


@pytest.mark.parametrize("config_file", [True, False], ids=["config-file", "defaults"])
def test_pyproject_is_protected_when_the_gate_keeps_no_config_there(repo: Repo, config_file: bool) -> None:
    """The base keeps its configuration in `.harness-gate.toml`, or was adopted with the
    defaults (no configuration file at all); either way a boundary of `*.toml` does not let
    a pull request write pyproject.toml, where the gate's table could go."""
    setup_gated(repo, boundary=("src/**", "*.toml"), config=STRICT)
    if not config_file:
        (repo.path / ".harness-gate.toml").unlink()
        commit(repo, "the defaults")
    branch(repo)
    repo.write("pyproject.toml", "[tool.harness-gate]\nevidence_stages = []\n")
    commit(repo, "a table the next pull request would be judged by")
    code, found = check(repo, *CI)
    assert code == 1
    assert ("HG102", "pyproject.toml") in found


def test_a_table_beside_the_configuration_file_neither_weakens_nor_stops_the_gate(repo: Repo) -> None:
    """Once both exist (a plan named pyproject.toml exactly), `.harness-gate.toml` decides:
    the next change is judged by it, and the check still runs (no "found in both")."""
    setup_gated(repo, boundary=("src/**", "pyproject.toml"), config=STRICT)
    repo.write("pyproject.toml", "[tool.harness-gate]\nevidence_stages = []\n")
    commit(repo, "a table, approved by name")
    branch(repo)
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "code")
    code, found = check(repo, *CI)
    assert code == 1
    assert found == [("HG301", f"{FOLDER}/evidence.jsonl")]
    res = repo.cli("status")
    assert "its [tool.harness-gate] table is not read" in res.output


def test_a_pyproject_that_no_longer_parses_stops_nothing(repo: Repo) -> None:
    setup_gated(repo, boundary=("src/**", "pyproject.toml"), config=BOUNDARY_ONLY)
    repo.write("pyproject.toml", "[tool.harness-gate\n")
    commit(repo, "broken TOML, approved by name")
    branch(repo)
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "code")
    assert check(repo, *CI) == (0, [])


# -- item 5: a configuration named with --config -------------------------------------


def test_a_config_file_named_with_the_config_option_is_protected(repo: Repo, tmp_path: Path) -> None:
    setup_gated(repo, boundary=("src/**", "ci/**"), config=BOUNDARY_ONLY)
    repo.write("ci/gate.toml", STRICT)
    commit(repo, "the CI configuration")
    branch(repo)
    repo.write("ci/gate.toml", BOUNDARY_ONLY)
    commit(repo, "weaken it for the next pull request")
    code, found = check(repo, *CI, "--config", "ci/gate.toml")
    assert code == 1
    assert ("HG102", "ci/gate.toml") in found
    # A case variant of it is no way around.
    repo.git("reset", "-q", "--hard", "main")
    repo.write("ci/Gate.toml", BOUNDARY_ONLY)
    commit(repo, "a case variant beside it")
    code, found = check(repo, *CI, "--config", "ci/gate.toml")
    assert code == 1
    assert ("HG106", "ci/Gate.toml") in found
    # Nor is naming the file through a symlink to the repository.
    alias = tmp_path / "alias"
    alias.symlink_to(repo.path)
    repo.git("reset", "-q", "--hard", "main")
    repo.write("ci/gate.toml", BOUNDARY_ONLY)
    repo.git("add", "-A")
    assert staged_codes(repo, "--config", str(alias / "ci/gate.toml")) == (1, [("HG102", "ci/gate.toml")])


# -- item 8: the artifacts root holds known artifacts only -----------------------------


@pytest.mark.parametrize(
    ("path", "data", "mode", "why"),
    [
        ("harness/.gitkeep", b"#!/bin/sh\necho hi\n", 0o755, "non-executable"),
        ("harness/plans/.gitkeep", b"\x7fELF\x00\x01", 0o644, "must be empty"),
        ("harness/README.md", b"<script>alert(1)</script>\n", 0o644, "not an artifact"),
    ],
)
def test_the_artifacts_root_takes_no_arbitrary_bytes(repo: Repo, path: str, data: bytes, mode: int, why: str) -> None:
    setup_gated(repo, config=BOUNDARY_ONLY)
    branch(repo)
    target = repo.path / path
    target.write_bytes(data)
    target.chmod(mode)
    commit(repo, "bytes under the artifacts root")
    doc = report(repo, "check", *CI)
    code, found = codes_of(doc)
    assert code == 1, doc
    assert ("HG516", path) in found
    assert why in json.dumps(doc)


def test_allowed_signers_is_protected_in_unsigned_mode(repo: Repo) -> None:
    """A key added while signatures are off would be trusted the day they are switched on."""
    setup_gated(repo, config=BOUNDARY_ONLY)
    branch(repo)
    repo.write("harness/allowed_signers", "mallory@example.com ssh-ed25519 AAAA\n")
    commit(repo, "a key, waiting")
    code, found = check(repo, *CI)
    assert code == 1
    assert ("HG102", "harness/allowed_signers") in found


def test_allowed_signers_named_exactly_by_a_plan_may_change(repo: Repo) -> None:
    setup_gated(repo, boundary=("src/**", "harness/allowed_signers"), config=BOUNDARY_ONLY)
    branch(repo)
    repo.write("harness/allowed_signers", "alice@example.com ssh-ed25519 AAAA\n")
    commit(repo, "the team's keys, approved by name")
    assert check(repo, *CI) == (0, [])


def test_an_empty_gitkeep_is_still_fine(repo: Repo) -> None:
    setup_gated(repo, config=BOUNDARY_ONLY)
    branch(repo)
    repo.write("harness/.gitkeep", "")
    commit(repo, "an empty placeholder")
    assert check(repo, *CI) == (0, [])


# -- item 7: history read without the side files that rewrite it -----------------------


def _repoint_parent(repo: Repo, child: str, parent: str) -> None:
    """A crafted commit-graph: `child`'s first parent becomes `parent`, as a graft would."""
    repo.git("commit-graph", "write", "--reachable")
    path = repo.path / ".git/objects/info/commit-graph"
    data = bytearray(path.read_bytes())
    assert data[:4] == b"CGPH"
    table = {}
    for i in range(data[6] + 1):
        at = 8 + 12 * i
        table[bytes(data[at : at + 4])] = int.from_bytes(data[at + 4 : at + 12], "big")
    fanout, oidl, cdat = table[b"OIDF"], table[b"OIDL"], table[b"CDAT"]
    count = int.from_bytes(data[fanout + 255 * 4 : fanout + 256 * 4], "big")
    oids = [bytes(data[oidl + 20 * i : oidl + 20 * i + 20]).hex() for i in range(count)]
    record = cdat + oids.index(child) * 36
    data[record + 20 : record + 24] = oids.index(parent).to_bytes(4, "big")
    path.chmod(0o644)
    path.write_bytes(bytes(data))


def test_a_crafted_commit_graph_hides_no_commit_of_a_range(repo: Repo) -> None:
    """A commit outside the boundary, then commits inside it: with the second commit's
    parent pointed at the base in the graph, plain git lists no commit that left it (and
    each listed commit's own diff stays inside)."""
    setup_gated(repo, config=BOUNDARY_ONLY)
    base = rev(repo, "HEAD")
    repo.write("other.py", "evil = 1\n")
    commit(repo, "outside the boundary")
    repo.write("src/a.py", "a = 2\n")
    after = commit(repo, "code")
    repo.write("src/a.py", "a = 3\n")
    head = commit(repo, "more code")
    _repoint_parent(repo, after, base)
    listed = subprocess.run(["git", "rev-list", f"{base}..{head}"], cwd=repo.path, capture_output=True, check=True)
    assert listed.stdout.decode().split() == [head, after]
    code, found = check(repo, "--range", f"{base}..{head}")
    assert code == 1
    assert ("HG101", "other.py") in found


# -- item 2: the plan's commands run after every other fact ----------------------------


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")
def test_reverify_runs_after_the_signatures_are_judged(
    repo: Repo, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan's command is the change's code. Here it marks HEAD as a shallow cut, so that
    any history read after it would attribute the unsigned review to nobody (HG220)
    instead of to its unsigned commit (HG218). The review is judged first."""
    from tests.adversarial.test_signatures import BASE, adopt, config
    from tests.adversarial.test_signatures import commit as signed_commit

    adopt(repo, keys, signers=("alice", "bob"))
    config(repo, BASE.replace("evidence_stages = []", 'evidence_stages = ["ci"]') + "require_signed_reviews = true\n")
    # Only in the check below (the author's own verify leaves the repository alone).
    vandal = (
        "import os, subprocess; os.environ.get('HG_VANDAL') and open('.git/shallow', 'w')"
        ".write(subprocess.check_output(['git', 'rev-parse', 'HEAD']).decode())"
    )
    res = repo.cli(
        "plan", "new", "p1", "--objective", "x", "--boundary", "src/**", "--verify", f'tests={PY} -c "{vandal}"'
    )
    assert res.exit_code == 0, res.output
    repo.approve()
    signed_commit(repo, "plan", keys["alice"])
    repo.write("src/a.py", "x = 1\n")
    repo.git("add", "-A")
    assert repo.cli("verify").exit_code == 0
    signed_commit(repo, "code")
    pass_review(repo)
    signed_commit(repo, "review, unsigned")
    monkeypatch.setenv("HG_VANDAL", "1")
    code, found = check(repo, *CI, "--reverify")
    assert (repo.path / ".git/shallow").exists(), "the command ran"
    assert code == 1
    assert found == [("HG218", f"{FOLDER}/001-review.md")]


def test_no_git_fact_is_read_once_the_commands_started(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Structural: from the first `--reverify` command on, git runs only inside the runs
    themselves (the commands and the work tree's fingerprint after each). Two plans, so a
    second plan's facts read between the runs would show."""
    from harness_gate import freshness

    setup_gated(repo, config=STRICT)
    _p1_cancelled_then_p2(repo)
    runs, before = [0], [0]
    inside = [False]
    after: list[object] = []
    original_run, original_popen = freshness.reverify, subprocess.Popen

    def reverify(*args: Any, **kw: Any) -> Any:
        runs[0] += 1
        inside[0] = True
        try:
            return original_run(*args, **kw)
        finally:
            inside[0] = False

    def popen(argv: Any, *args: Any, **kw: Any) -> Any:
        if isinstance(argv, (list, tuple)) and argv and argv[0] == "git" and not inside[0]:
            if runs[0]:
                after.append(argv)
            else:
                before[0] += 1
        return original_popen(argv, *args, **kw)

    monkeypatch.setattr(freshness, "reverify", reverify)
    monkeypatch.setattr(subprocess, "Popen", popen)
    code, found = check(repo, *CI, "--reverify")
    assert runs[0] == 2 and before[0] > 0
    assert after == []
    assert code == 0, found


# -- item 6: ending a plan never ends the need to verify its code ---------------------


def _p1_cancelled_then_p2(repo: Repo) -> None:
    """On a branch: code under p1 (`a = 2`), p1 cancelled, then a plan p2 (`lib/**`),
    approved, and code under it."""
    branch(repo)
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "code under p1")
    res = repo.cli("complete", "--cancel", "--plan", "p1")
    assert res.exit_code == 0, res.output
    commit(repo, "cancel p1")
    res = repo.cli("plan", "new", "p2", "--objective", "x", "--boundary", "lib/**", "--verify", f"t={PY} -c pass")
    assert res.exit_code == 0, res.output
    repo.approve(plan="p2")
    commit(repo, "plan p2")
    repo.write("lib/b.py", "b = 1\n")
    commit(repo, "code under p2")


def test_reverify_runs_a_cancelled_plans_commands(repo: Repo) -> None:
    """Code under p1, p1 cancelled, more code under p2: CI with `--reverify` runs p1's
    command too, and p1's failing test blocks."""
    fails = f"{PY} -c \"import sys; sys.exit(open('src/a.py').read() != 'a = 1\\n')\""
    setup_gated(repo, config=STRICT, verify=fails)
    _p1_cancelled_then_p2(repo)  # p1's code breaks p1's own test
    code, found = check(repo, *CI, "--reverify")
    assert code == 1
    assert ("HG305", f"{FOLDER}/evidence.jsonl") in found
