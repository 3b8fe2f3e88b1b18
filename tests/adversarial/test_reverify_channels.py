"""`--reverify` runs the change's own code on the runner. The runner reads its file-command
files (the next steps' environment and PATH, the step's outputs and summary) when the step
ends: a command gets neither their variables nor the runner's temporary folder, where
they live, and a command that writes them anyway, by their path, has them put back and
the change blocked (HG340)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.adversarial.util import FOLDER, PY, commit, run_json, setup_gated
from tests.helpers import Repo

CI = ("check", "--base", "main", "--head", "HEAD", "--stage", "ci", "--reverify")
STRICT = 'artifacts_dir = "harness"\nevidence_stages = ["ci"]\nreview_stages = []\ncompletion_stages = []\n'
CHANNELS = ("GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY")
# The plan's command: harmless when verified by its author; in CI it appends to every file
# under RUNNER_TEMP, and to the files HG_KNOWN names, and says what it saw in HG_PROBE.
PROBE = """\
import glob, json, os
probe = os.environ.get("HG_PROBE")
if probe:
    hits = []
    temp = os.environ.get("RUNNER_TEMP")
    for name in glob.glob(os.path.join(temp, "**", "*"), recursive=True) if temp else []:
        if os.path.isfile(name) and not os.path.islink(name):
            with open(name, "a") as fh:
                fh.write("result=pass\\nLD_PRELOAD=/tmp/evil.so\\n")
            hits.append(name)
    for name in filter(None, os.environ.get("HG_KNOWN", "").split(os.pathsep)):
        with open(name, "a") as fh:
            fh.write("PATH=/tmp/evil\\n")
    names = ("RUNNER_TEMP", "TMPDIR", "TEMP", "TMP") + tuple(n for n in os.environ if n.startswith("GITHUB_"))
    with open(probe, "w") as fh:
        json.dump({"env": {n: os.environ.get(n) for n in names}, "hits": hits, "cwd": os.getcwd()}, fh)
"""


@pytest.fixture
def runner(tmp_path: Path) -> dict[str, str]:
    """A runner's environment: its temporary folder with the file-command files in it."""
    temp = tmp_path / "runner-temp"
    (temp / "_runner_file_commands").mkdir(parents=True)
    env = {"RUNNER_TEMP": str(temp), "GITHUB_ACTIONS": "true", "HG_PROBE": str(tmp_path / "probe.json")}
    for name in CHANNELS:
        path = temp / "_runner_file_commands" / name.lower()
        path.write_text(f"{name.lower()} of an earlier step\n")
        env[name] = str(path)
    (temp / "event.json").write_text('{"pull_request": {}}\n')
    env["GITHUB_EVENT_PATH"] = str(temp / "event.json")
    return env


def _gated(repo: Repo) -> Repo:
    setup_gated(repo, config=STRICT, verify=f"{PY} src/probe.py")
    repo.git("checkout", "-qb", "pr")
    repo.write("src/probe.py", PROBE)
    commit(repo, "the code under test")
    return repo


def _channels(env: dict[str, str]) -> dict[str, bytes]:
    return {name: Path(env[name]).read_bytes() for name in (*CHANNELS, "GITHUB_EVENT_PATH")}


@pytest.mark.slow
def test_reverify_commands_get_no_runner_channel_nor_its_temp_folder(
    repo: Repo, runner: dict[str, str], tmp_path: Path
) -> None:
    _gated(repo)
    before = _channels(runner)
    code, doc, _ = run_json(repo, *CI, env=runner)
    seen = json.loads((tmp_path / "probe.json").read_text())  # the command ran
    assert _channels(runner) == before  # nothing reached the runner's files
    assert seen["hits"] == []
    env = seen["env"]
    for name in CHANNELS:
        assert env.get(name) is None, name
    assert env["RUNNER_TEMP"] != runner["RUNNER_TEMP"]
    assert env["TMPDIR"] == env["RUNNER_TEMP"] == env["TEMP"] == env["TMP"]
    assert not Path(env["TMPDIR"]).exists()  # its own, and removed once it ended
    assert Path(seen["cwd"]).resolve() == repo.path.resolve()  # the checkout
    assert code == 0, doc


@pytest.mark.slow
def test_a_command_that_writes_them_by_path_is_blocked_and_they_are_put_back(
    repo: Repo, runner: dict[str, str], tmp_path: Path
) -> None:
    _gated(repo)
    before = _channels(runner)
    known = os.pathsep.join([runner["GITHUB_ENV"], runner["GITHUB_OUTPUT"], runner["GITHUB_EVENT_PATH"]])
    code, doc, _ = run_json(repo, *CI, env={**runner, "HG_KNOWN": known})
    assert (tmp_path / "probe.json").exists()  # the command ran
    assert _channels(runner) == before
    assert code == 1, doc
    [found] = [f for f in doc["findings"] if f["code"] == "HG340"]
    assert found["path"] == f"{FOLDER}/evidence.jsonl"
    assert "GITHUB_ENV, GITHUB_OUTPUT, GITHUB_EVENT_PATH" in found["message"]
