"""Real git repositories in tmp dirs, with a pinned, isolated git environment."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_gate.approvals import AGENT_MARKERS
from tests.adversarial.util import setup_gated
from tests.github_runner import action_venv, runner_temp  # noqa: F401  (fixtures for every test module)
from tests.helpers import Repo, from_template

ADVERSARIAL = Path(__file__).resolve().parent / "adversarial"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The adversarial suite is `slow` as a whole: hundreds of attacks, each a repository of
    its own. The fast loop (`-m "not slow"`) leaves it to the full suite, which CI runs."""
    for item in items:
        if item.path.is_relative_to(ADVERSARIAL):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def isolated_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global or system git config, an empty template dir, a pinned identity and clock."""
    home = tmp_path_factory.mktemp("home")
    template = tmp_path_factory.mktemp("template")
    for name in list(os.environ):
        # CLAUDE_PROJECT_DIR: a suite run inside Claude Code must not guard that project; the
        # agents' markers: `approve` refuses under them (HG908). CI: a suite run in CI must not
        # make every empty `check --staged` an HG950.
        # HARNESS_GATE_RULES_URL, HG_ACTION_*: where rule links point (rule_links), set per test.
        if name.startswith(("GIT_", "PRE_COMMIT", "HG_ACTION_")) or name in (
            "NO_COLOR",
            "GITHUB_ACTIONS",
            "CLAUDE_PROJECT_DIR",
            "CI",
            "HARNESS_GATE_RULES_URL",
            "HG_SERVER_URL",
            *AGENT_MARKERS,
        ):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Ada Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Ada Author")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "ada@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
    (home / "gitconfig").write_text("[init]\n\tdefaultBranch = main\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Repo]:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    monkeypatch.chdir(path)
    yield Repo(path)


@pytest.fixture
def gated(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """An approved plan for `src/**`, committed; evidence and reviews switched off (built
    once per run and copied: tests/helpers.py `from_template`)."""

    return from_template(repo, tmp_path_factory, "setup-gated", setup_gated)
