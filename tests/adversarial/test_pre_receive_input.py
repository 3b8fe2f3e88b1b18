"""The pre-receive hook's input is bounded and exact: anything but git's own
`<old> <new> <ref>\\n` lines, within the limits, is an error (exit 2, HG916), never a
shorter or a guessed push (docs/pre-receive.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_gate.cli import cli
from harness_gate.receive import MAX_LINE, MAX_UPDATES, matches
from tests.helpers import Repo, adopted_main

Z = "0" * 40


@pytest.fixture
def bare(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    adopted_main(repo)
    path = tmp_path / "server.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(path)], check=True)
    monkeypatch.chdir(path)
    return path, repo.git("rev-parse", "HEAD").decode().strip()


def run(data: bytes) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["pre-receive"], input=data, catch_exceptions=False)
    return res.exit_code, res.output


@pytest.mark.parametrize(
    "data",
    [
        b"",  # nothing to judge
        b"\n",
        f"{Z} {'a' * 40} refs/heads/x".encode(),  # cut short: no final newline
        f"{Z} {'a' * 40} refs/heads/x extra\n".encode(),
        f"{Z}  {'a' * 40} refs/heads/x\n".encode(),  # two spaces
        f"{Z}\t{'a' * 40}\trefs/heads/x\n".encode(),
        f"{Z} {'A' * 40} refs/heads/x\n".encode(),  # upper case is not git's
        f"{Z} {'a' * 39} refs/heads/x\n".encode(),
        f"{Z} {'a' * 64} refs/heads/x\n".encode(),  # sha1 beside sha256
        f"{Z} {Z} refs/heads/x\n".encode(),  # neither side
        f"{Z} {'a' * 40} heads/x\n".encode(),  # not under refs/
        f"{Z} {'a' * 40} refs/heads/../x\n".encode(),
        f"{Z} {'a' * 40} refs/heads/x\x1b[2J\n".encode(),
        f"{Z} {'a' * 40} refs/heads/x\r\n".encode(),
        f"{Z} {'a' * 40} refs/heads/x\n{Z} {'b' * 40} refs/heads/x\n".encode(),  # twice
        f"{Z} {'a' * 40} refs/heads/\xff\n".encode("latin-1"),  # not UTF-8
        f"{Z} {'a' * 40} refs/heads/{'x' * MAX_LINE}\n".encode(),
        f"{Z} {'a' * 40} refs/heads/x\n".encode() * 2,
        b"".join(f"{Z} {'a' * 40} refs/heads/b{i}\n".encode() for i in range(MAX_UPDATES + 1)),
    ],
)
def test_input_that_is_not_exactly_gits_is_an_error(bare: tuple[Path, str], data: bytes) -> None:
    code, out = run(data)
    assert code == 2, out
    assert "error HG916" in out


def test_an_endless_input_is_read_only_up_to_its_bound(bare: tuple[Path, str]) -> None:
    line = f"{Z} {'a' * 40} refs/heads/x\n".encode()
    code, out = run(line * (MAX_UPDATES * 200))
    assert code == 2 and "error HG916" in out


def test_an_update_naming_an_object_that_is_not_there_fails_closed(bare: tuple[Path, str]) -> None:
    _, main = bare
    code, out = run(f"{Z} {'a' * 40} refs/heads/x\n".encode())
    assert code == 2 and "error HG9" in out
    code, out = run(f"{main} {'b' * 40} refs/heads/main\n".encode())
    assert code != 0


def test_a_tag_of_a_tree_is_not_on_any_branch(bare: tuple[Path, str]) -> None:
    path, main = bare
    tree = subprocess.run(
        ["git", "rev-parse", f"{main}^{{tree}}"], cwd=path, capture_output=True, text=True, check=True
    ).stdout.strip()
    code, out = run(f"{Z} {tree} refs/tags/t\n".encode())
    assert code == 1 and "HG519" in out and "not a commit" in out


def test_a_head_that_names_no_branch_is_an_error(bare: tuple[Path, str]) -> None:
    path, main = bare
    subprocess.run(["git", "update-ref", "--no-deref", "HEAD", main], cwd=path, check=True)
    code, out = run(f"{Z} {main} refs/heads/x\n".encode())
    assert code == 2 and "error HG917" in out


def test_a_head_at_a_missing_branch_is_an_error(bare: tuple[Path, str]) -> None:
    path, main = bare
    subprocess.run(["git", "symbolic-ref", "HEAD", "refs/heads/trunk"], cwd=path, check=True)
    code, out = run(f"{Z} {main} refs/heads/x\n".encode())
    assert code == 2 and "error HG917" in out and "refs/heads/trunk" in out


@pytest.mark.parametrize(
    ("pattern", "ref", "expected"),
    [
        ("refs/heads/**", "refs/heads/a/b/c", True),
        ("refs/heads/*", "refs/heads/a/b", False),
        ("refs/heads/*", "refs/heads/a", True),
        ("refs/heads/release-*", "refs/heads/release-1.2", True),
        ("refs/heads/main", "refs/heads/mainx", False),
        ("refs/heads/a.b", "refs/heads/aXb", False),  # `.` is itself, not any character
        ("refs/heads/**", "refs/tags/v1", False),
    ],
)
def test_ref_patterns(pattern: str, ref: str, expected: bool) -> None:
    assert matches([pattern], ref) is expected
