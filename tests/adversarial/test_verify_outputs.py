"""`verify_outputs` leaves out only what the commands themselves create or write during the
run. An untracked file that was there before `verify` ran, and that no command wrote, is
an input like any other: part of the tree the evidence speaks of, and named by HG310. So
evidence recorded with it is not fresh at CI, where the commit does not hold it."""

from __future__ import annotations

import pytest

from tests.adversarial.util import FOLDER, PY, commit, report, setup_gated
from tests.helpers import Repo

CI = ("check", "--base", "main", "--head", "HEAD", "--stage", "ci")
CONFIG = (
    'artifacts_dir = "harness"\nevidence_stages = ["ci"]\nreview_stages = []\ncompletion_stages = []\n'
    'verify_outputs = ["out/**"]\n'
)
# Passes only with out/input.json there; writes out/report.json, different each run.
COMMAND = (
    f"{PY} -c \"import os, sys, time; os.makedirs('out', exist_ok=True); "
    "open('out/report.json', 'w').write(str(time.time_ns())); sys.exit(not os.path.exists('out/input.json'))\""
)


def _gated(repo: Repo) -> Repo:
    setup_gated(repo, boundary=("src/**", "out/**"), config=CONFIG, verify=COMMAND)
    repo.git("checkout", "-qb", "pr")
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "code")
    return repo


@pytest.mark.slow
def test_an_untracked_input_matching_verify_outputs_is_not_left_out(repo: Repo) -> None:
    _gated(repo)
    repo.write("out/input.json", "{}\n")  # there before verify: the command reads it
    doc = report(repo, "verify")
    assert doc["exit_code"] == 0, doc
    [warning] = [f for f in doc["findings"] if f["code"] == "HG310"]
    assert "out/input.json" in warning["message"]
    assert "out/report.json" not in warning["message"]  # what the command wrote is its output
    repo.git("add", f"{FOLDER}/evidence.jsonl")  # the evidence, not the input
    repo.git("commit", "-qm", "evidence", "--no-verify")
    doc = report(repo, *CI)
    assert doc["exit_code"] == 1, doc
    assert {(f["code"], f["path"]) for f in doc["findings"]} == {("HG302", f"{FOLDER}/evidence.jsonl")}


@pytest.mark.slow
def test_an_output_an_earlier_run_left_is_still_an_output(repo: Repo) -> None:
    """The plain twin: out/report.json from the last run is written again by this one, so
    it stays out of the tree, with no warning; the evidence is fresh at CI."""
    _gated(repo)
    repo.write("out/input.json", "{}\n")
    repo.git("add", "-f", "out/input.json")  # the input is committed this time
    commit(repo, "the input")
    assert report(repo, "verify")["exit_code"] == 0
    doc = report(repo, "verify")  # out/report.json is there now, and rewritten
    assert doc["exit_code"] == 0, doc
    assert [f for f in doc["findings"] if f["code"] == "HG310"] == []
    repo.git("add", f"{FOLDER}/evidence.jsonl")
    repo.git("commit", "-qm", "evidence", "--no-verify")
    doc = report(repo, *CI)
    assert doc["exit_code"] == 0, doc["findings"]
