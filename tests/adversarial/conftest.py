"""Fixtures of the adversarial suite (the parent conftest isolates git for every test)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """SSH keys for alice, bob and mallory (signed approvals and reviews)."""
    d = tmp_path_factory.mktemp("keys")
    out = {}
    for name in ("alice", "bob", "mallory"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(d / name)], check=True)
        out[name] = d / name
    return out
