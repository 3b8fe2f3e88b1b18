"""The real pre-commit framework: the manifest, try-repo, real commits and real pushes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_gate.hooks import local_config
from tests.helpers import Repo

# the real pre-commit framework, try-repo installs this checkout
pytestmark = [pytest.mark.slow, pytest.mark.integration]

PROJECT = Path(__file__).resolve().parent.parent
PY = sys.executable

# The configuration `harness-gate init` writes, with its entries run from this
# interpreter, so the tests exercise that very configuration through the framework's real
# invocation (env, stash, stages) without a network.
LOCAL_CONFIG = local_config().replace("entry: harness-gate ", f"entry: {PY} -m harness_gate ")
assert LOCAL_CONFIG.count(f"entry: {PY} -m harness_gate ") == 3


@pytest.fixture
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.getbasetemp() / "pre-commit-home"
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    return home


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository `try-repo` installs the hooks from: this checkout, or, run from an
    unpacked sdist (no git), a repository of one commit made from it."""
    if (PROJECT / ".git").exists():
        return PROJECT
    path = tmp_path_factory.mktemp("hook-repo") / "harness-gate"
    shutil.copytree(PROJECT, path, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".*_cache"))
    identity = ["-c", "user.name=harness-gate tests", "-c", "user.email=tests@example.invalid"]
    for args in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-qm", "the sdist", "--no-verify"]):
        subprocess.run(["git", *args], cwd=path, capture_output=True, check=True)
    return path


def pc(repo: Repo, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PY, "-m", "pre_commit", *args], cwd=repo.path, capture_output=True, check=False)


def git(repo: Repo, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=repo.path, capture_output=True, check=False)


@pytest.fixture
def installed(repo: Repo, pre_commit_home: Path) -> Repo:
    """A gated repository with the hooks installed through pre-commit itself."""
    repo.write("README.md", "hello\n")
    repo.write("src/a.py", "a = 1\n")
    repo.write("other.py", "x = 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-qm", "before harness-gate")
    assert repo.cli("init").exit_code == 0
    repo.write(".pre-commit-config.yaml", LOCAL_CONFIG)
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt harness-gate")
    res = pc(repo, "install")
    assert res.returncode == 0, res.stdout + res.stderr
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    repo.git("add", "-A")
    res = git(repo, "commit", "-qm", "plan p1")
    assert res.returncode == 0, res.stdout + res.stderr
    return repo


def test_manifest_is_valid() -> None:
    res = subprocess.run(
        [PY, "-m", "pre_commit", "validate-manifest", str(PROJECT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_lint_hook_takes_names_and_gates_every_hook() -> None:
    import yaml  # pre-commit's own dependency

    hooks = {h["id"]: h for h in yaml.safe_load((PROJECT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"harness-gate", "harness-gate-push", "harness-gate-lint"}
    # The lint takes every staged name and picks the artifacts under the configured root
    # itself: a `files:` regex here could only name the default root.
    lint = hooks["harness-gate-lint"]
    assert "files" not in lint and lint.get("pass_filenames", True) is True
    assert lint["entry"] == "harness-gate lint --artifacts-only"
    for gate in ("harness-gate", "harness-gate-push"):
        assert hooks[gate]["pass_filenames"] is False
        assert hooks[gate]["always_run"] is True
        assert hooks[gate]["require_serial"] is True
    readme = (PROJECT / "README.md").read_text()
    for hook_id in hooks:
        assert f"`{hook_id}`" in readme


def test_real_commit_is_blocked_and_allowed(installed: Repo) -> None:
    head = installed.git("rev-parse", "HEAD")
    installed.write("other.py", "x = 2\n")
    installed.git("add", "other.py")
    res = git(installed, "commit", "-m", "outside")
    assert res.returncode == 1
    assert b"HG101" in res.stdout + res.stderr
    assert installed.git("rev-parse", "HEAD") == head
    installed.git("reset", "-q", "other.py")
    installed.git("checkout", "-q", "--", "other.py")
    installed.write("src/a.py", "a = 2\n")
    installed.git("add", "src/a.py")
    res = git(installed, "commit", "-m", "inside")
    assert res.returncode == 0, res.stdout + res.stderr
    # A deletion-only commit outside the boundary is gated too (always_run).
    installed.git("rm", "-q", "other.py")
    res = git(installed, "commit", "-m", "delete")
    assert res.returncode == 1
    assert b"HG101" in res.stdout + res.stderr


def test_partially_staged_file_is_judged_on_the_index(installed: Repo) -> None:
    installed.write("src/a.py", "a = 3\n")
    installed.git("add", "src/a.py")
    installed.write("other.py", "unstaged edit\n")  # not staged: not part of the commit
    res = git(installed, "commit", "-m", "inside only")
    assert res.returncode == 0, res.stdout + res.stderr
    assert installed.read("other.py") == b"unstaged edit\n"  # the stash was restored


def test_real_push_is_blocked(installed: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    installed.git("remote", "add", "origin", str(remote))
    res = git(installed, "push", "-q", "origin", "main")  # the first push: a root push
    assert res.returncode == 0, (res.stdout + res.stderr).decode()
    remote_head = subprocess.run(["git", "rev-parse", "main"], cwd=remote, capture_output=True, check=True).stdout
    installed.write("other.py", "sneaky\n")
    installed.git("add", "-A")
    installed.git("commit", "-qm", "bypass", "--no-verify")
    res = git(installed, "push", "origin", "main")
    assert res.returncode != 0
    assert b"HG101" in res.stdout + res.stderr
    assert subprocess.run(["git", "rev-parse", "main"], cwd=remote, capture_output=True, check=True).stdout == (
        remote_head
    )
    # A new branch carrying the same commit is blocked as well.
    res = git(installed, "push", "origin", "main:refs/heads/feature")
    assert res.returncode != 0
    assert b"HG101" in res.stdout + res.stderr


def test_try_repo_with_the_manifest(repo: Repo, pre_commit_home: Path, hook_repo: Path) -> None:
    """pre-commit installs harness-gate from this checkout and runs the manifest's hook."""
    repo.write("README.md", "hello\n")
    repo.write("other.py", "x = 1\n")
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt harness-gate")
    repo.new_plan("p1", ("src/**",))
    repo.approve()
    repo.write("other.py", "x = 2\n")
    repo.git("add", "-A")
    res = pc(repo, "try-repo", str(hook_repo), "harness-gate", "--verbose")
    out = (res.stdout + res.stderr).decode()
    assert res.returncode == 1, out
    assert "HG101" in out
    assert "other.py" in out
    repo.git("checkout", "-q", "HEAD", "--", "other.py")
    res = pc(repo, "try-repo", str(hook_repo), "harness-gate")
    assert res.returncode == 0, (res.stdout + res.stderr).decode()


def test_the_shipped_lint_hook_follows_a_configured_artifacts_root(
    repo: Repo, pre_commit_home: Path, hook_repo: Path
) -> None:
    """`artifacts_dir = "meta/gate"`: the manifest's lint hook (installed by pre-commit from
    this checkout) lints a broken plan staged there, and leaves other files alone."""
    repo.write("README.md", "hello\n")
    repo.write(".harness-gate.toml", 'artifacts_dir = "meta/gate"\n')
    assert repo.cli("init").exit_code == 0
    repo.git("add", "-A")
    repo.git("commit", "-qm", "adopt harness-gate")
    repo.write("harness/plans/p1/plan.md", "not a plan, and not under the artifacts root\n")
    repo.write("src/a.py", "a = 1\n")
    repo.git("add", "-A")
    res = pc(repo, "try-repo", str(hook_repo), "harness-gate-lint", "--verbose")
    assert res.returncode == 0, (res.stdout + res.stderr).decode()
    assert b"Skipped" not in res.stdout  # it ran, and found nothing to lint
    repo.write("meta/gate/plans/p1/plan.md", "not a plan\n")
    repo.git("add", "-A")
    res = pc(repo, "try-repo", str(hook_repo), "harness-gate-lint")
    out = (res.stdout + res.stderr).decode()
    assert res.returncode == 1, out
    assert "meta/gate/plans/p1/plan.md" in out
    assert "harness/plans/p1/plan.md:" not in out.replace("meta/gate/plans/p1/plan.md", "")


def test_the_manifest_and_inits_configuration_come_from_one_definition() -> None:
    import yaml  # pre-commit's own dependency

    from harness_gate import hooks

    assert (PROJECT / ".pre-commit-hooks.yaml").read_text() == hooks.manifest(), "python -m harness_gate.hooks"
    config = yaml.safe_load(hooks.local_config())
    manifest = {h["id"]: h for h in yaml.safe_load(hooks.manifest())}
    assert config["default_install_hook_types"] == ["pre-commit", "pre-merge-commit", "pre-push"]
    for hook in config["repos"][0]["hooks"]:
        shipped = manifest[hook["id"]]
        assert hook["entry"] == shipped["entry"]
        assert hook["stages"] == [s for s in shipped["stages"] if s != "manual"]
        assert set(hook["stages"]) <= set(config["default_install_hook_types"])  # every stage is installed
