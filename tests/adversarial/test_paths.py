"""Paths and names: control characters, bytes that are not UTF-8, case variants and
look-alikes of protected paths, symlinks that leave the boundary or the repository,
very long names, names that resemble the artifacts root, and git's own config files."""

from __future__ import annotations

import os

import pytest

from tests.adversarial.util import staged
from tests.helpers import Repo


def _stage_blob(repo: Repo, path: bytes, data: bytes = b"x\n", mode: str = "100644") -> None:
    """Stage `path` (any bytes git allows) without a file on disk."""
    blob = repo.git("hash-object", "-w", "--stdin", input=data).decode().strip()
    repo.git("update-index", "--add", "--index-info", input=f"{mode} {blob}\t".encode() + path + b"\n")


def _show(path: bytes) -> str:
    return path.decode("utf-8", "backslashreplace")


@pytest.mark.parametrize(
    "name",
    [b"src/new\nline.py", b"src/tab\there.py", b"src/esc\x1b[31m.py", b"src/del\x7f.py", b"src/cr\r.py",
     "src/c1\u009b31m.py".encode(), "src/nel\u0085.py".encode()],
    ids=["newline", "tab", "escape", "del", "cr", "c1-csi", "c1-nel"],
)  # fmt: skip
def test_control_characters_inside_the_boundary(gated: Repo, name: bytes) -> None:
    """Control characters (C0, DEL and C1) in a name block even inside the boundary."""
    (gated.path / os.fsdecode(name)).write_bytes(b"x\n")
    gated.git("add", "-A")
    assert staged(gated) == (1, [("HG103", _show(name))])
