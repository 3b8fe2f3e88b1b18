"""pre-commit.ci (emulated): `pre-commit run --all-files` in a fresh clone, CI=true, no
network. The index of a fresh clone equals HEAD: the boundary hook has nothing to judge,
and printed "Passed" on a branch holding an out-of-boundary commit. It now fails closed with
one line pointing at the Action (HG950); and the configuration `init` writes tells
pre-commit.ci to skip the `language: system` hooks it cannot run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # pre-commit's own dependency

from harness_gate import hooks
from tests.helpers import PY, Repo, adopted_main, blocked_branch

pytestmark = pytest.mark.integration
# `init`'s configuration, its entries run from this interpreter (no harness-gate on PATH needed).
LOCAL_CONFIG = hooks.local_config().replace("entry: harness-gate ", f"entry: {sys.executable} -m harness_gate ")


def test_all_files_in_a_fresh_ci_clone_fails_closed(repo: Repo, tmp_path: Path) -> None:
    adopted_main(repo)
    repo.write(".pre-commit-config.yaml", LOCAL_CONFIG)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "pre-commit config")
    blocked_branch(repo, verify=f"{PY} -c pass")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--branch", "feature", str(repo.path), str(clone)], check=True)
    env = {
        **os.environ,
        "CI": "true",
        "PRE_COMMIT_HOME": str(tmp_path / "pc-home"),
        "PRE_COMMIT_COLOR": "never",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=clone,
        capture_output=True,
        env=env,
        check=False,
        timeout=300,
    )
    out = (proc.stdout + proc.stderr).decode()
    assert proc.returncode != 0, out
    assert "HG950" in out and "docs/action.md" in out, out
    # Out of CI, the same clean index is simply nothing to check (a local `--all-files`).
    env.pop("CI")
    local = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "harness-gate"],
        cwd=clone,
        capture_output=True,
        env=env,
        check=False,
        timeout=300,
    )
    assert local.returncode == 0, (local.stdout + local.stderr).decode()


def test_inits_configuration_has_pre_commit_ci_skip_its_system_hooks(tmp_path: Path) -> None:
    config = yaml.safe_load(hooks.local_config())
    ids = [h["id"] for h in config["repos"][0]["hooks"]]
    assert all(h["language"] == "system" for h in config["repos"][0]["hooks"])
    assert config["ci"]["skip"] == ids
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(hooks.local_config())
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(path)], capture_output=True, check=False
    )
    assert proc.returncode == 0 and b"Unexpected key" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_an_empty_commit_where_ci_is_set_is_an_ordinary_commit(repo: Repo, tmp_path: Path) -> None:
    """`git commit --allow-empty` with CI set (a CI job that commits, a developer's shell
    that exports CI) runs the hook with nothing staged; git marks every commit hook with
    GIT_INDEX_FILE, which `pre-commit run --all-files` does not set, so this is no HG950."""
    adopted_main(repo)
    repo.write(".pre-commit-config.yaml", LOCAL_CONFIG)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "pre-commit config")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc-home"), "PRE_COMMIT_COLOR": "never"}
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"], cwd=repo.path, env=env, check=True, capture_output=True
    )
    proc = subprocess.run(
        ["git", "commit", "--allow-empty", "-m", "empty"],
        cwd=repo.path,
        capture_output=True,
        env={**env, "CI": "true"},
        check=False,
        timeout=300,
    )
    out = (proc.stdout + proc.stderr).decode()
    assert proc.returncode == 0 and "HG950" not in out, out
    assert repo.git("log", "-1", "--format=%s").strip() == b"empty"
