"""One changed path: the value git's diff plumbing (harness_gate.git) produces and the
rules (harness_gate.rules) read. Here, apart from both, so the rules need no git to name it."""

from __future__ import annotations

from typing import NamedTuple

NO_MODE = "000000"  # the side of a change where the path does not exist


class Change(NamedTuple):
    """One changed path. For a merge's combined diff there is one old side per parent.

    A named tuple, not a dataclass: a large change set makes tens of thousands of them,
    and a tuple is built in a fraction of the time (docs/design.md)."""

    path: bytes
    old_modes: tuple[str, ...]
    new_mode: str
    old_oids: tuple[str, ...]
    new_oid: str
    status: str  # A, D, M, T (one letter per parent for merges)

    @property
    def display(self) -> str:
        return self.path.decode("utf-8", "backslashreplace")

    @property
    def deleted(self) -> bool:
        return self.new_mode == NO_MODE

    @property
    def added(self) -> bool:
        return all(m == NO_MODE for m in self.old_modes)
