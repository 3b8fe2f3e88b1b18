"""One rule of the catalogue: its stable code, its title, and the fix its findings hint."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    code: str
    title: str
    hint: str
