"""A configuration named with `--config` (the Action's `config:` input) is read from the
trusted commit's objects by its repository path: the pull request's own symlinks never
decide which file that is, a symlink there is refused, and a path that names no
configuration is an error, never the defaults. A file named on disk (the index check) is
a regular file within a size cap: a FIFO or a device is refused at once."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adversarial.util import BOUNDARY_ONLY, FOLDER, check, commit, error_code, report, run_json, setup_gated
from tests.github_runner import run_action
from tests.helpers import Repo

CI = ("--base", "main", "--head", "HEAD", "--stage", "ci")
STRICT = 'artifacts_dir = "harness"\nevidence_stages = ["ci"]\nreview_stages = []\ncompletion_stages = []\n'


def _base_with_a_weaker_file(repo: Repo) -> None:
    """main: the CI configuration `ci/gate.toml` (evidence required) and another TOML file
    the base also has (a weaker configuration), which the plan's boundary names exactly."""
    setup_gated(repo, boundary=("src/**", "ci/**", "src/settings.toml"), config=BOUNDARY_ONLY)
    repo.write("ci/gate.toml", STRICT)
    repo.write("src/settings.toml", BOUNDARY_ONLY)
    commit(repo, "the CI configuration, and a file that looks like one")
    repo.git("checkout", "-qb", "pr")


def _redirect(repo: Repo, link: str, target: str) -> None:
    """The pull request replaces `link` by a symlink to `target`, and changes code with no
    evidence: only the weaker file's configuration would let that pass."""
    (repo.path / link).unlink()
    (repo.path / link).symlink_to(target)
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "point the CI configuration elsewhere")


@pytest.mark.slow
def test_the_pull_requests_symlink_does_not_choose_the_configuration(repo: Repo) -> None:
    _base_with_a_weaker_file(repo)
    _redirect(repo, "ci/gate.toml", "../src/settings.toml")
    code, found = check(repo, *CI, "--config", "ci/gate.toml")
    assert code == 1
    assert ("HG102", "ci/gate.toml") in found  # the configuration the base has, protected
    assert ("HG301", f"{FOLDER}/evidence.jsonl") in found


def test_a_symlinked_parent_folder_does_not_choose_it_either(repo: Repo) -> None:
    _base_with_a_weaker_file(repo)
    (repo.path / "conf").symlink_to("src")
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "a folder link the configuration is named through")
    doc = report(repo, "check", *CI, "--config", "conf/settings.toml")
    assert doc["exit_code"] == 2  # conf/ is not in the base: nothing is read through the link
    assert error_code(doc) == "HG902"
    assert "conf/settings.toml" in doc["error"]["message"]


@pytest.mark.parametrize(
    ("setup", "named", "says"),
    [
        (lambda r: (r.path / "ci/link.toml").symlink_to("../src/settings.toml"), "ci/link.toml", "symbolic link"),
        (lambda r: r.write("src/__init__.py", ""), "src/__init__.py", "sets nothing"),
        (lambda r: r.write("ci/pyproject.toml", "[project]\nname = 'x'\n"), "ci/pyproject.toml", "[tool.harness-gate]"),
        (lambda r: r.write("src/mod.py", "import os\n"), "src/mod.py", "not valid TOML"),
        (lambda r: None, "ci/missing.toml", "does not exist"),
    ],
    ids=["symlink-in-base", "empty-file", "pyproject-without-table", "python-file", "missing"],
)
def test_a_named_path_that_holds_no_configuration_is_an_error(
    repo: Repo, setup: Callable[[Repo], object], named: str, says: str
) -> None:
    """In the base itself: a symlink there is not followed, an empty file or a pyproject.toml
    without the gate's table is no configuration (never the defaults)."""
    setup_gated(repo, boundary=("src/**", "ci/**"), config=BOUNDARY_ONLY)
    repo.write("ci/gate.toml", STRICT)
    repo.write("src/settings.toml", BOUNDARY_ONLY)
    setup(repo)
    commit(repo, "base files")
    repo.git("checkout", "-qb", "pr")
    repo.write("src/a.py", "a = 2\n")
    commit(repo, "code")
    doc = report(repo, "check", *CI, "--config", named)
    assert doc["exit_code"] == 2, doc
    assert error_code(doc) == "HG902"
    assert says in doc["error"]["message"], doc["error"]


@pytest.mark.slow
@pytest.mark.integration
def test_the_actions_config_input_is_read_by_path_from_the_base(repo: Repo, runner_temp: Path) -> None:
    _base_with_a_weaker_file(repo)
    _redirect(repo, "ci/gate.toml", "../src/settings.toml")
    base = repo.git("rev-parse", "main").decode().strip()
    head = repo.git("rev-parse", "HEAD").decode().strip()
    payload = {"pull_request": {"base": {"sha": base, "ref": "main"}, "head": {"sha": head}}}
    out = run_action(repo.path, runner_temp, "pull_request", payload, config="ci/gate.toml")
    assert out.code == 1, out.stdout
    assert out.outputs["result"] == "blocked"
    assert "title=HG102" in out.stdout


# -- item 6: a configuration file on disk ----------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_as_config_is_refused_at_once(repo: Repo, tmp_path: Path) -> None:
    setup_gated(repo)
    fifo = tmp_path / "cfg.toml"
    os.mkfifo(fifo)
    repo.git("add", "-A")
    code, doc, _ = run_json(repo, "check", "--staged", "--config", str(fifo), timeout=20)
    assert code == 2
    assert error_code(doc) == "HG902"
    assert "not a regular file" in doc["error"]["message"]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_device_as_config_is_refused_at_once(repo: Repo) -> None:
    setup_gated(repo)
    code, doc, _ = run_json(repo, "check", "--staged", "--config", "/dev/zero", timeout=20)
    assert code == 2
    assert error_code(doc) == "HG902"
    assert "not a regular file" in doc["error"]["message"]


def test_a_config_over_the_size_cap_is_refused(repo: Repo, tmp_path: Path) -> None:
    setup_gated(repo)
    big = tmp_path / "big.toml"
    big.write_bytes(b"# " + b"x" * (2 * 1024 * 1024) + b"\n")
    code, doc, _ = run_json(repo, "check", "--staged", "--config", str(big), timeout=20)
    assert code == 2
    assert error_code(doc) == "HG902"
    assert "larger than" in doc["error"]["message"]
