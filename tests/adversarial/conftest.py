"""Fixtures of the adversarial suite (the parent conftest isolates git for every test)."""

from __future__ import annotations

import pytest

from tests.adversarial.util import setup_gated
from tests.helpers import Repo


@pytest.fixture
def gated(repo: Repo) -> Repo:
    """An approved plan for `src/**`, committed; evidence and reviews switched off."""
    return setup_gated(repo)
