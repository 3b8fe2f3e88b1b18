"""`init` follows no symbolic link: a linked `.gitattributes` or agent settings file would
have its target's bytes (any file outside the repository) merged in and committed by the
`git add` init prints, and a linked artifacts root would be written through. Each link
among the files and folders init writes, or reads to merge, is named, and nothing at all
is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.adversarial.util import commit
from tests.helpers import Repo

OUTSIDE_TEXT = "outside the repository\n"


def _snapshot(*roots: Path) -> dict[str, bytes | str]:
    """Every entry under `roots`: a file's bytes, a link's target, a folder's name."""
    out: dict[str, bytes | str] = {}
    for top in roots:
        for dirpath, dirnames, filenames in os.walk(top):
            if ".git" in dirnames:
                dirnames.remove(".git")
            for name in dirnames + filenames:
                full = Path(dirpath) / name
                if full.is_symlink():
                    out[str(full)] = "-> " + str(full.readlink())
                elif full.is_file():
                    out[str(full)] = full.read_bytes()
                else:
                    out[str(full)] = "dir"
    return out


# (what to link, where it points: a path under the outside folder), the agents to ask for,
# and the .harness-gate.toml to start with (None: init writes it).
CASES = [
    (".gitattributes", "secret.txt", (), None),
    (".pre-commit-config.yaml", "secret.txt", (), None),
    (".harness-gate.toml", "gate.toml", (), None),
    (".claude/settings.json", "settings.json", ("claude",), None),
    (".claude", "agent", ("claude",), None),
    (".codex/hooks.json", "settings.json", ("codex",), None),
    (".codex", "agent", ("codex",), None),
    ("harness", "artifacts", (), None),
    ("harness/plans", "artifacts", (), None),
    ("meta", "artifacts", (), 'artifacts_dir = "meta/harness"\n'),
]


@pytest.mark.parametrize(("link", "target", "agents", "config"), CASES, ids=[c[0] for c in CASES])
def test_init_refuses_a_symlink_it_would_write_or_read(
    repo: Repo, tmp_path: Path, link: str, target: str, agents: tuple[str, ...], config: str | None
) -> None:
    outside = tmp_path / "outside"
    (outside / "agent").mkdir(parents=True)
    (outside / "artifacts").mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_TEXT)
    (outside / "gate.toml").write_text('artifacts_dir = "harness"\n')
    (outside / "settings.json").write_text('{"env": {"TOKEN": "hunter2"}}\n')
    repo.write("README.md", "hello\n")
    if config is not None:
        repo.write(".harness-gate.toml", config)
    commit(repo, "init")
    where = repo.path / link
    where.parent.mkdir(parents=True, exist_ok=True)
    where.symlink_to(outside / target)
    before = _snapshot(repo.path, outside)
    res = repo.cli("init", *(a for agent in agents for a in ("--agent", agent)), "--format", "json")
    assert res.exit_code == 2, res.output
    assert link in res.output and "symbolic link" in res.output, res.output
    assert _snapshot(repo.path, outside) == before  # nothing written, here or through the link
    assert OUTSIDE_TEXT not in res.output


def test_init_still_writes_through_no_link_when_there_is_none(repo: Repo) -> None:
    """The twin without a link: init writes every file (the refusal is the link's alone)."""
    repo.write("README.md", "hello\n")
    commit(repo, "init")
    res = repo.cli("init", "--agent", "claude", "--agent", "codex")
    assert res.exit_code == 0, res.output
    for rel in (
        ".gitattributes",
        ".pre-commit-config.yaml",
        ".harness-gate.toml",
        ".claude/settings.json",
        ".codex/hooks.json",
        "harness/plans/.gitkeep",
    ):
        assert (repo.path / rel).is_file() and not (repo.path / rel).is_symlink(), rel
