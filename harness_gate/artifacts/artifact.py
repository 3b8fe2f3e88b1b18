"""A parsed artifact, apart from the parser: a plan read from the cache needs no parser
(`parse.py` and the Markdown reader under it are imported only to parse)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness_gate.artifacts.kinds import KindSpec


@dataclass(frozen=True)
class Artifact:
    """A syntactically valid artifact: its kind, exact-bytes hash and section values.

    `values` maps each section title to what it holds: a str (prose), a tuple of
    str (boundary patterns, commands, paths; empty for the `None` sentinel), or
    the JSON value under the block's key.
    """

    kind: KindSpec
    path: str
    sha256: str
    values: Mapping[str, Any]
    lines: Mapping[str, int]

    def value(self, title: str) -> Any:
        return self.values[title]

    def line(self, title: str) -> int:
        return self.lines[title]


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
